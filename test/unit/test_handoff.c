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
/* Handoff chunks: writes fill chunks in order, accounting follows the
 * queued bytes, fields survive serialization. */
#include <string.h>
#include <apr_general.h>
#include <apr_tables.h>
#include <apr_strings.h>

#include "h2_handoff.h"
#include "unit.h"

static int count_fields(void *ctx, const char *n, apr_size_t nl,
                        const char *v, apr_size_t vl)
{
    apr_table_t *t = ctx;
    apr_table_addn(t, apr_pstrmemdup(apr_table_elts(t)->pool, n, nl),
                   apr_pstrmemdup(apr_table_elts(t)->pool, v, vl));
    return 1;
}

static int nbad_seen;

static void note_bad(void *ctx, const char *name)
{
    (void)ctx;
    (void)name;
    ++nbad_seen;
}

/* Built ahead on the worker: the same fields as h2_hchunk_fields makes
 * of good ones; the bad ones (controls, names no token) are counted and
 * named instead of quietly left out; the head bytes are HTTP/1.1's. */
static void test_fields_built_ahead_check_and_serialize_in_one_pass(apr_pool_t *pool,
                                                                    h2_hpool *hp)
{
    apr_table_t *t = apr_table_make(pool, 4), *back = apr_table_make(pool, 4);
    h2_hfields hf;
    h2_hchunk *c;

    apr_table_add(t, "Content-Type", "text/plain");
    apr_table_add(t, "X-Padded", " \tv w\t ");
    apr_table_add(t, "Connection", "close");
    apr_table_add(t, "X-Empty", "");
    CHECK(h2_hfields_build(pool, t, &hf, note_bad, NULL) == 0);
    CHECK(hf.built && hf.nfields == 3);
    c = h2_hchunk_hfields(hp, H2_HC_HEADERS, 204, &hf);
    CHECK(c->status == 204 && c->nfields == 3 && c->end == hf.len);
    h2_hchunk_fields_do(c, count_fields, back);
    CHECK(!strcmp(apr_table_get(back, "content-type"), "text/plain"));
    CHECK(!strcmp(apr_table_get(back, "x-padded"), "v w"));
    CHECK(!strcmp(apr_table_get(back, "x-empty"), ""));
    CHECK(apr_table_get(back, "connection") == NULL);
    h2_hpool_put(hp, c);

    apr_table_add(t, "Bad Name", "x");
    apr_table_add(t, "X-Split", "a\r\nb");
    apr_table_add(t, "X-Del", "a\x7f");
    apr_table_add(t, "Connection", "a\001b");     /* bad, not just dropped */
    nbad_seen = 0;
    CHECK(h2_hfields_build(pool, t, &hf, note_bad, NULL) == 4);
    CHECK(nbad_seen == 4 && hf.nfields == 3);

    CHECK(h2_hfields_build(pool, apr_table_make(pool, 1), &hf, NULL, NULL) == 0);
    c = h2_hchunk_hfields(hp, H2_HC_TRAILERS, 0, &hf);
    CHECK(c->nfields == 0 && c->end == 0);
    h2_hpool_put(hp, c);
}

int main(void)
{
    apr_pool_t *pool;
    h2_hpool hp;
    h2_hqueue q = { NULL, NULL, 0 }, q2 = { NULL, NULL, 0 };
    static char data[40000];
    apr_size_t i, total = 0;
    h2_hchunk *c;
    apr_table_t *t, *back;

    memset(&hp, 0, sizeof(hp));
    hp.max_free = 4;
    apr_initialize();
    apr_pool_create(&pool, NULL);
    for (i = 0; i < sizeof(data); ++i) data[i] = (char)(i * 7);

    h2_hqueue_write(&q, &hp, data, 1000);
    h2_hqueue_write(&q, &hp, data + 1000, sizeof(data) - 1000);
    CHECK(q.mem == sizeof(data));
    for (c = q.first; c; c = c->next) {
        CHECK(c->type == H2_HC_DATA);
        CHECK(!memcmp(c->data + c->start, data + total, c->end - c->start));
        total += c->end - c->start;
    }
    CHECK(total == sizeof(data));
    /* a small first write gets a small chunk, later ones grow to 16 KB,
     * and every chunk but the last is filled up */
    CHECK(q.first->cap == H2_HCHUNK_MIN);
    for (c = q.first; c && c->next; c = c->next) {
        CHECK(c->end == c->cap);
        CHECK(c->cap <= H2_HCHUNK_SIZE);
    }
    CHECK(q.last->cap == H2_HCHUNK_SIZE);

    {
        /* a chunk handed on as a bucket: its data from start, no copy; the
         * bucket frees it (ASan/valgrind in CI watch that) */
        apr_bucket_alloc_t *ba = apr_bucket_alloc_create(pool);
        apr_bucket *b;
        const char *d;
        apr_size_t len;
        h2_hchunk *first = h2_hqueue_pop(&q);
        first->start = 10;
        b = h2_hchunk_bucket(first, ba);
        CHECK(apr_bucket_read(b, &d, &len, APR_BLOCK_READ) == APR_SUCCESS);
        CHECK(len == first->end - 10 && d == first->data + 10 && !memcmp(d, data + 10, len));
        apr_bucket_destroy(b);
        total = 0;
        for (c = q.first; c; c = c->next) total += c->end - c->start;
        CHECK(q.mem == total);
        h2_hqueue_write(&q2, &hp, data, 10);    /* (q2 is empty again below) */
        h2_hqueue_clear(&q2, &hp);
    }

    c = h2_hpool_get(&hp, H2_HC_FILE, 0);
    c->flen = 123456;
    h2_hqueue_append(&q, c);
    CHECK(q.mem == total + H2_HCHUNK_FILE_COST);
    h2_hqueue_move(&q2, &q);
    CHECK(q.first == NULL && q.mem == 0);
    CHECK(q2.mem == total + H2_HCHUNK_FILE_COST);
    h2_hqueue_clear(&q2, &hp);
    CHECK(q2.first == NULL && q2.mem == 0);
    CHECK(hp.nclass[H2_HCLASSES - 1] <= 4);  /* recycled, but bounded */
    h2_hpool_trim(&hp, 0);
    CHECK(hp.nfree == 0 && hp.free[H2_HCLASSES - 1] == NULL);

    t = apr_table_make(pool, 4);
    apr_table_add(t, "Content-Type", "text/plain");
    apr_table_add(t, "Set-Cookie", "a=1");
    apr_table_add(t, "Set-Cookie", "b=2");
    apr_table_add(t, "X-Empty", "");
    apr_table_add(t, "X-Padded", " \tv w\t ");
    apr_table_add(t, "Connection", "close");
    apr_table_add(t, "Keep-Alive", "timeout=5");
    apr_table_add(t, "Bad Name", "x");
    apr_table_add(t, "X-Split", "a\r\nb");
    c = h2_hchunk_fields(&hp, H2_HC_HEADERS, 200, t);
    CHECK(c->status == 200);
    CHECK(c->nfields == 5);
    back = apr_table_make(pool, 4);
    h2_hchunk_fields_do(c, count_fields, back);
    CHECK(apr_table_elts(back)->nelts == 5);
    /* names come back lowercase, values trimmed, the rest left out */
    CHECK(!strcmp(((apr_table_entry_t *)apr_table_elts(back)->elts)[0].key,
                  "content-type"));
    CHECK(!strcmp(apr_table_get(back, "content-type"), "text/plain"));
    CHECK(!strcmp(apr_table_get(back, "x-empty"), ""));
    CHECK(!strcmp(apr_table_get(back, "x-padded"), "v w"));
    CHECK(apr_table_get(back, "connection") == NULL);
    CHECK(apr_table_get(back, "keep-alive") == NULL);
    CHECK(apr_table_get(back, "bad name") == NULL);
    CHECK(apr_table_get(back, "x-split") == NULL);
    h2_hpool_put(&hp, c);
    c = h2_hchunk_fields(&hp, H2_HC_TRAILERS, 0, NULL);
    CHECK(c->nfields == 0 && c->end == 0);
    h2_hpool_put(&hp, c);

    test_fields_built_ahead_check_and_serialize_in_one_pass(pool, &hp);

    /* small chunks come in size classes and are recycled per class */
    c = h2_hpool_get(&hp, H2_HC_EOS, 0);
    CHECK(c->cap == 0);
    h2_hpool_put(&hp, c);
    CHECK(h2_hpool_get(&hp, H2_HC_EOS, 0) == c);
    h2_hpool_put(&hp, c);
    c = h2_hpool_get(&hp, H2_HC_HEADERS, 700);
    CHECK(c->cap == 1024);
    h2_hpool_put(&hp, c);
    CHECK(h2_hpool_get(&hp, H2_HC_DATA, 1000) == c);
    h2_hpool_put(&hp, c);
    c = h2_hpool_get(&hp, H2_HC_DATA, 3000);
    CHECK(c->cap == 4096);
    h2_hpool_put(&hp, c);
    c = h2_hpool_get(&hp, H2_HC_HEADERS, 40000);   /* too big for a class */
    CHECK(c->cap == 40000);
    h2_hpool_put(&hp, c);
    CHECK(hp.nfree == 3);
    h2_hpool_trim(&hp, 0);
    CHECK(hp.nfree == 0);

    /* the cache holds at most H2_HPOOL_MAX_FREE_BYTES of capacity */
    {
        h2_hchunk *many[40];
        hp.max_free = 64;
        for (i = 0; i < 40; ++i) many[i] = h2_hpool_get(&hp, H2_HC_DATA, H2_HCHUNK_SIZE);
        for (i = 0; i < 40; ++i) h2_hpool_put(&hp, many[i]);
        CHECK(hp.free_bytes <= H2_HPOOL_MAX_FREE_BYTES);
        CHECK(hp.nfree == H2_HPOOL_MAX_FREE_BYTES / H2_HCHUNK_SIZE);
        h2_hpool_trim(&hp, 0);
        CHECK(hp.nfree == 0 && hp.free_bytes == 0);
    }

    apr_pool_destroy(pool);
    apr_terminate();
    return unit_done("test_handoff");
}
