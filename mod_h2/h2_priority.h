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
/* RFC 9218 extensible priorities, the pure part: reading a Priority field
 * value (RFC 8941 dictionary) into urgency and incremental. Either thread
 * may call it. */
#ifndef H2_PRIORITY_H
#define H2_PRIORITY_H

#include <stddef.h>

#define H2_PRIO_URGENCY_DEFAULT  3
#define H2_PRIO_URGENCY_LEVELS   8   /* 0 (most urgent) .. 7 */

typedef struct h2_prio {
    unsigned char urgency;          /* u: 0..7 */
    unsigned char incremental;      /* i: 0 or 1 */
} h2_prio;

/* The longest Priority field value a PRIORITY_UPDATE frame may carry for
 * us to read it; longer ones are ignored as values that do not parse. */
#define H2_PRIO_UPDATE_MAX 256

/* The default priority: u=3, not incremental. */
void h2_prio_default(h2_prio *p);

/* Read the Priority field value v (len bytes) into p: the parameters it
 * carries valid (u an Integer 0..7, i a Boolean) replace p's, the others
 * stay. Returns 1 if v is a dictionary; 0 if it does not parse (then p is
 * left as it was: RFC 9218 4 says to ignore such a field). */
int h2_prio_parse(const char *v, size_t len, h2_prio *p);

#endif
