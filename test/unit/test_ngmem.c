/* Copyright 2026 The mod_h2 authors
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
/* nghttp2's per-session memory: blocks are recycled by size class, never
 * beyond the per-class bound, and keep their contents across realloc. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "h2_ngmem.h"
#include "unit.h"

int main(void)
{
    h2_ngmem m;
    nghttp2_mem *mem;
    char *a, *b, *c, *blocks[8];
    int i;

    h2_ngmem_init(&m, 4);
    mem = &m.mem;

    a = mem->malloc(40, mem->mem_user_data);
    CHECK(a != NULL);
    CHECK(((uintptr_t)a % sizeof(max_align_t)) == 0);
    memset(a, 'x', 40);
    mem->free(a, mem->mem_user_data);
    CHECK(m.nfree[1] == 1);               /* 40 bytes: the 64 byte class */
    b = mem->malloc(60, mem->mem_user_data);
    CHECK(b == a);                        /* recycled */
    CHECK(m.nfree[1] == 0);
    memset(b, 'x', 60);

    /* realloc within the class keeps the block, beyond it moves the data */
    c = mem->realloc(b, 64, mem->mem_user_data);
    CHECK(c == b);
    c = mem->realloc(b, 1000, mem->mem_user_data);
    CHECK(c != NULL && c != b);
    CHECK(c[0] == 'x' && c[59] == 'x');
    CHECK(m.nfree[1] == 1);
    mem->free(c, mem->mem_user_data);

    /* calloc zeroes a recycled block */
    a = mem->malloc(32, mem->mem_user_data);
    memset(a, 0xff, 32);
    mem->free(a, mem->mem_user_data);
    b = mem->calloc(4, 8, mem->mem_user_data);
    CHECK(b == a);
    for (i = 0; i < 32; ++i) CHECK(b[i] == 0);
    mem->free(b, mem->mem_user_data);
    CHECK(mem->calloc(SIZE_MAX / 2, 4, mem->mem_user_data) == NULL);

    /* blocks beyond the largest class come from malloc and go back to it */
    a = mem->malloc(100000, mem->mem_user_data);
    CHECK(a != NULL);
    memset(a, 1, 100000);
    a = mem->realloc(a, 200000, mem->mem_user_data);
    CHECK(a != NULL && a[99999] == 1);
    mem->free(a, mem->mem_user_data);
    mem->free(NULL, mem->mem_user_data);

    /* at most max_free blocks per class stay cached */
    for (i = 0; i < 8; ++i) blocks[i] = mem->malloc(100, mem->mem_user_data);
    for (i = 0; i < 8; ++i) mem->free(blocks[i], mem->mem_user_data);
    CHECK(m.nfree[2] == 4);
    h2_ngmem_trim(&m);
    for (i = 0; i < H2_NGMEM_CLASSES; ++i) {
        CHECK(m.nfree[i] == 0 && m.free[i] == NULL);
    }
    return unit_done("test_ngmem");
}
