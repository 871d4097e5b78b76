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
/* Unit tests of the Priority field reader (h2_priority.c): RFC 9218 4 on
 * top of RFC 8941's dictionary rules. */
#include <string.h>

#include "h2_priority.h"
#include "unit.h"

/* parse v onto the default; returns the parse result, p is the outcome */
static int parse(const char *v, h2_prio *p)
{
    h2_prio_default(p);
    return h2_prio_parse(v, strlen(v), p);
}

static int is(const h2_prio *p, int u, int i)
{
    return p->urgency == u && p->incremental == i;
}

static void test_defaults_and_plain_values(void)
{
    h2_prio p;
    CHECK(parse("", &p) && is(&p, 3, 0));
    CHECK(parse("u=0", &p) && is(&p, 0, 0));
    CHECK(parse("u=7", &p) && is(&p, 7, 0));
    CHECK(parse("i", &p) && is(&p, 3, 1));
    CHECK(parse("i=?1", &p) && is(&p, 3, 1));
    CHECK(parse("i=?0", &p) && is(&p, 3, 0));
    CHECK(parse("u=1, i", &p) && is(&p, 1, 1));
    CHECK(parse("i,u=5", &p) && is(&p, 5, 1));
    CHECK(parse("  u=2 ,\ti  ", &p) && is(&p, 2, 1));
    CHECK(parse("u=1\t", &p) && is(&p, 1, 0));     /* OWS after a member */
}

static void test_invalid_parameters_are_ignored(void)
{
    h2_prio p;
    /* out of range, wrong type: the parameter keeps its value */
    CHECK(parse("u=8", &p) && is(&p, 3, 0));
    CHECK(parse("u=-1", &p) && is(&p, 3, 0));
    CHECK(parse("u=1.5", &p) && is(&p, 3, 0));
    CHECK(parse("u=\"1\"", &p) && is(&p, 3, 0));
    CHECK(parse("u=?1", &p) && is(&p, 3, 0));
    CHECK(parse("u=(1 2)", &p) && is(&p, 3, 0));
    CHECK(parse("i=1", &p) && is(&p, 3, 0));
    CHECK(parse("i=tok", &p) && is(&p, 3, 0));
    CHECK(parse("u=1000000000000000", &p) == 0);    /* 16 digits */
    /* the last of a repeated key counts, even when it is invalid */
    CHECK(parse("u=1, u=6", &p) && is(&p, 6, 0));
    CHECK(parse("u=1, u=9", &p) && is(&p, 3, 0));
    /* unknown keys, parameters and other item types are fine */
    CHECK(parse("foo=:aGk=:, u=4;x=1, bar=(a \"b\");y, baz=*tok/x:y", &p)
          && is(&p, 4, 0));
    CHECK(parse("u=2;p=?1, i;q=-3.25", &p) && is(&p, 2, 1));
}

static void test_malformed_values_change_nothing(void)
{
    static const char *bad[] = {
        "u=", "U=1", "u=1,", ",u=1", "u=1,,i", "u=1 i", "u==1", "1=u",
        "u=1;", "u=1;U=2", "u=\"x", "u=\"\\x\"", "u=?2", "u=:ab", "u=(1",
        "u=(1,2)", "u=1.", "u=1.2345", "u=-", "\tu=1", "u=@",
        "u=1234567890123.1", "u=\"\x01\"",
    };
    size_t k;
    for (k = 0; k < sizeof(bad) / sizeof(bad[0]); ++k) {
        h2_prio p = { 1, 1 };
        int ok = h2_prio_parse(bad[k], strlen(bad[k]), &p);
        if (ok || !is(&p, 1, 1)) {
            fprintf(stderr, "accepted: '%s'\n", bad[k]);
        }
        CHECK(!ok && is(&p, 1, 1));
    }
}

static void test_parse_onto_a_priority_keeps_what_is_absent(void)
{
    /* RFC 9218 8: a response's field changes only what it names */
    h2_prio p = { 5, 0 };
    CHECK(h2_prio_parse("i", 1, &p) && is(&p, 5, 1));
    CHECK(h2_prio_parse("u=0", 3, &p) && is(&p, 0, 1));
    /* not NUL-terminated: only len bytes count */
    CHECK(h2_prio_parse("u=6, garbage", 3, &p) && is(&p, 6, 1));
}

int main(void)
{
    test_defaults_and_plain_values();
    test_invalid_parameters_are_ignored();
    test_malformed_values_change_nothing();
    test_parse_onto_a_priority_keeps_what_is_absent();
    return unit_done("test_priority");
}
