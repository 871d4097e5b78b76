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
/* libFuzzer target for the Priority field reader (h2_priority.c), which
 * reads request and response fields and PRIORITY_UPDATE payloads.
 *
 * Input: a field value. Besides not crashing or reading past its end
 * (ASan/UBSan), a value that does not parse must leave the priority as
 * it was, and one that parses must leave it in range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h2_priority.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so that ASan sees any read past the end */
    char *v = malloc(size? size : 1);
    h2_prio p = { 6, 1 };

    memcpy(v, data, size);
    if (!h2_prio_parse(v, size, &p)) {
        if (p.urgency != 6 || p.incremental != 1) abort();
    }
    else if (p.urgency > 7 || p.incremental > 1) {
        abort();
    }
    free(v);
    return 0;
}
