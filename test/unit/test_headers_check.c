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
/* Request header block validation, RFC 9113 sections 8.2 and 8.3. */
#include <string.h>
#include <apr_general.h>
#include <apr_strings.h>

#include "h2_headers_check.h"
#include "unit.h"

static apr_pool_t *pool;
static const h2_hdr_limits limits = { 8190, 100, 8190, 0 };

#define ADD(h, n, v) h2_req_head_add((h), (n), strlen(n), (v), strlen(v))

static void start(h2_req_head *h)
{
    h2_req_head_init(h, pool, &limits);
}

static void basic_request(h2_req_head *h)
{
    start(h);
    ADD(h, ":method", "GET");
    ADD(h, ":scheme", "https");
    ADD(h, ":authority", "example.org");
    ADD(h, ":path", "/index.html");
}

static void test_valid_request_becomes_method_path_and_host(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, "accept", "*/*") == H2_HDR_OK);
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(!strcmp(h.method, "GET"));
    CHECK(!strcmp(h.path, "/index.html"));
    CHECK(!strcmp(apr_table_get(h.headers, "host"), "example.org"));
    CHECK(!strcmp(apr_table_get(h.headers, "accept"), "*/*"));
    CHECK(h.content_length == -1);
}

static void test_names_must_be_lowercase_tokens(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, "Accept", "x") == H2_HDR_ERR_NAME);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(ADD(&h, "x y", "x") == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(ADD(&h, "x:y", "x") == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(h2_req_head_add(&h, "", 0, "x", 1) == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(h2_req_head_add(&h, "x\0y", 3, "x", 1) == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(h2_req_head_add(&h, "\0", 1, "x", 1) == H2_HDR_ERR_NAME);
    basic_request(&h);
    CHECK(h2_req_head_add(&h, "x\x80", 2, "x", 1) == H2_HDR_ERR_NAME);
    CHECK(h2_hdr_name_valid("x-custom_1.a~b", 14));
    CHECK(!h2_hdr_name_valid("a\0", 2));
}

static void test_values_reject_controls_del_and_edge_whitespace(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, "x", "a\x7f") == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(ADD(&h, "x", "a\x01b") == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(ADD(&h, "x", "a\x80\xff" "b\tc") == H2_HDR_OK);    /* obs-text, HTAB */
    basic_request(&h);
    CHECK(ADD(&h, "x", "a\r\nb: c") == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(h2_req_head_add(&h, "x", 1, "a\0b", 3) == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(ADD(&h, "x", " a") == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(ADD(&h, "x", "a\t") == H2_HDR_ERR_VALUE);
    basic_request(&h);
    CHECK(ADD(&h, "x", "a b") == H2_HDR_OK);
    CHECK(ADD(&h, "y", "") == H2_HDR_OK);
}

static void test_long_values_are_checked_at_every_position(void)
{
    /* 8 bytes at a time, then the tail: a bad byte is found wherever it
     * lies, and TAB or bytes from 0x80 up (which the word test flags too)
     * are still valid */
    char v[40];
    apr_size_t len, pos;
    for (len = 1; len <= sizeof(v); ++len) {
        for (pos = 1; pos + 1 < len; ++pos) {
            /* RFC 9110 5.5: controls but HTAB, and DEL */
            static const char bad[] = { '\0', '\r', '\n', 0x01, 0x0e, 0x1f, 0x7f };
            unsigned k;
            memset(v, 'a', len);
            v[pos] = '\t';
            CHECK(h2_hdr_value_valid(v, len));
            v[pos] = (char)0x8e;
            CHECK(h2_hdr_value_valid(v, len));
            v[pos] = (char)0xff;
            CHECK(h2_hdr_value_valid(v, len));
            v[pos] = ' ';
            CHECK(h2_hdr_value_valid(v, len));
            for (k = 0; k < sizeof(bad); ++k) {
                v[pos] = bad[k];
                CHECK(!h2_hdr_value_valid(v, len));
            }
        }
    }
}

static void test_connection_specific_fields_are_malformed(void)
{
    static const char *names[] = { "connection", "keep-alive", "proxy-connection",
                                   "transfer-encoding", "upgrade" };
    unsigned i;
    for (i = 0; i < sizeof(names)/sizeof(names[0]); ++i) {
        h2_req_head h;
        basic_request(&h);
        CHECK(ADD(&h, names[i], "x") == H2_HDR_ERR_CONN_SPECIFIC);
    }
}

static void test_te_allows_only_trailers(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, "te", "trailers") == H2_HDR_OK);
    basic_request(&h);
    CHECK(ADD(&h, "te", "gzip") == H2_HDR_ERR_TE);
}

static void test_pseudo_headers_rules(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, ":path", "/again") == H2_HDR_ERR_PSEUDO_DUP);
    basic_request(&h);
    ADD(&h, "accept", "x");
    CHECK(ADD(&h, ":foo", "x") == H2_HDR_ERR_PSEUDO_LATE);
    basic_request(&h);
    CHECK(ADD(&h, ":status", "200") == H2_HDR_ERR_PSEUDO_UNKNOWN);
    start(&h);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_PSEUDO_MISSING);
    start(&h);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    CHECK(h2_req_head_add(&h, ":path", 5, "", 0) == H2_HDR_ERR_PSEUDO_INVALID);
    start(&h);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    CHECK(ADD(&h, ":path", "/a b") == H2_HDR_ERR_PSEUDO_INVALID);
    start(&h);
    CHECK(ADD(&h, ":method", "G\rET") == H2_HDR_ERR_PSEUDO_INVALID);
    start(&h);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "relative");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_PSEUDO_INVALID);
    start(&h);
    CHECK(ADD(&h, ":authority", "user@example.org") == H2_HDR_ERR_PSEUDO_INVALID);
}

static void test_connect_needs_authority_only(void)
{
    h2_req_head h;
    start(&h);
    ADD(&h, ":method", "CONNECT");
    ADD(&h, ":authority", "example.org:443");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    start(&h);
    ADD(&h, ":method", "CONNECT");
    ADD(&h, ":authority", "example.org:443");
    ADD(&h, ":path", "/");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_PSEUDO_INVALID);
}

static h2_hdr_result extended_connect(h2_req_head *h, int enabled, const char *method,
                                      const char *protocol, int with_path)
{
    h2_hdr_limits lim = limits;
    lim.connect_protocol = enabled;
    h2_req_head_init(h, pool, &lim);
    ADD(h, ":method", method);
    if (ADD(h, ":protocol", protocol) != H2_HDR_OK) {
        return h->error;
    }
    ADD(h, ":scheme", "https");
    ADD(h, ":authority", "example.org");
    if (with_path) ADD(h, ":path", "/chat");
    ADD(h, "sec-websocket-version", "13");
    return h2_req_head_end(h);
}

static void test_extended_connect_for_websocket_becomes_an_upgrade_get(void)
{
    h2_req_head h;
    const char *key;
    CHECK(extended_connect(&h, 1, "CONNECT", "websocket", 1) == H2_HDR_OK);
    CHECK(h.websocket == 1);
    CHECK(!strcmp(h.method, "GET"));
    CHECK(!strcmp(h.path, "/chat"));
    CHECK(!strcmp(apr_table_get(h.headers, "upgrade"), "websocket"));
    CHECK(!strcmp(apr_table_get(h.headers, "connection"), "Upgrade"));
    key = apr_table_get(h.headers, "sec-websocket-key");
    /* 16 random bytes in base64 */
    CHECK(key && strlen(key) == 24 && !strcmp(key + 22, "=="));
    CHECK(key && strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        "0123456789+/") == 22);
}

static void test_extended_connect_rules(void)
{
    h2_req_head h;
    /* not announced: :protocol is unknown (RFC 8441 3) */
    CHECK(extended_connect(&h, 0, "CONNECT", "websocket", 1) == H2_HDR_ERR_PSEUDO_UNKNOWN);
    /* only with CONNECT, and with :path (RFC 8441 4) */
    CHECK(extended_connect(&h, 1, "GET", "websocket", 1) == H2_HDR_ERR_PSEUDO_INVALID);
    CHECK(extended_connect(&h, 1, "CONNECT", "websocket", 0) == H2_HDR_ERR_PSEUDO_MISSING);
    /* another protocol: 501 */
    CHECK(extended_connect(&h, 1, "CONNECT", "webtransport", 1)
          == H2_HDR_ERR_PROTOCOL_UNKNOWN);
    CHECK(h.websocket == 0);
}

static void test_options_asterisk_is_allowed(void)
{
    h2_req_head h;
    start(&h);
    ADD(&h, ":method", "OPTIONS");
    ADD(&h, ":scheme", "http");
    ADD(&h, ":path", "*");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
}

static void test_content_length_must_be_digits_and_agree(void)
{
    h2_req_head h;
    basic_request(&h);
    CHECK(ADD(&h, "content-length", "12") == H2_HDR_OK);
    CHECK(ADD(&h, "content-length", "12") == H2_HDR_OK);
    CHECK(h.content_length == 12);
    CHECK(ADD(&h, "content-length", "13") == H2_HDR_ERR_CONTENT_LENGTH);
    basic_request(&h);
    CHECK(ADD(&h, "content-length", "-1") == H2_HDR_ERR_CONTENT_LENGTH);
    basic_request(&h);
    CHECK(ADD(&h, "content-length", "1 2") == H2_HDR_ERR_VALUE
          || h.error == H2_HDR_ERR_CONTENT_LENGTH);
}

static void test_authority_replaces_a_differing_host(void)
{
    h2_req_head h;
    basic_request(&h);                     /* https, example.org */
    ADD(&h, "host", "Example.ORG");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(h.orig_host == NULL);            /* letter case is no difference */
    basic_request(&h);
    ADD(&h, "host", "example.org:443");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(h.orig_host == NULL);            /* nor is the default port */
    basic_request(&h);
    ADD(&h, "host", "example.org:80");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(h.orig_host && !strcmp(h.orig_host, "example.org:80"));
    basic_request(&h);
    ADD(&h, "host", "other.org");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(!strcmp(apr_table_get(h.headers, "host"), "example.org"));
    CHECK(h.orig_host && !strcmp(h.orig_host, "other.org"));
    CHECK(apr_table_elts(h.headers)->nelts == 1);   /* one host field */
}

static void test_cookie_crumbs_are_joined(void)
{
    h2_req_head h;
    basic_request(&h);
    ADD(&h, "cookie", "a=1");
    ADD(&h, "cookie", "b=2");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    CHECK(!strcmp(apr_table_get(h.headers, "cookie"), "a=1; b=2"));
}

static void test_cookie_join_is_linear_in_its_length(void)
{
    /* 4000 crumbs of 100 bytes: a join that copies the cookie so far for
     * every crumb would charge (and copy) about 800 MB; a linear one a
     * small multiple of the 400 KB it joins */
    h2_hdr_limits roomy = { 1 << 20, 100, 8190, 0 };
    h2_req_head h;
    char crumb[101];
    apr_size_t joined, i;
    const char *v;

    memset(crumb, 'c', 100);
    crumb[100] = 0;
    h2_req_head_init(&h, pool, &roomy);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    for (i = 0; i < 4000; ++i) {
        CHECK(ADD(&h, "cookie", crumb) == H2_HDR_OK);
    }
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    joined = 4000 * 100 + 3999 * 2;
    v = apr_table_get(h.headers, "cookie");
    CHECK(v && strlen(v) == joined);
    CHECK(v && !strncmp(v, crumb, 100) && !strncmp(v + 100, "; ", 2));
    CHECK(v && !strcmp(v + joined - 100, crumb));
    /* the buffers that doubled on the way, and the pseudo-headers */
    CHECK(h.charged <= 4 * joined + 200);
    /* one field for LimitRequestFields, as the Cookie line of HTTP/1.1 */
    CHECK(h.nfields == 1);
}

static void test_joined_cookie_is_held_against_field_size(void)
{
    /* "cookie: " + value <= 100: 23 crumbs "ab" join to 90 bytes, the
     * 24th makes 94 */
    h2_hdr_limits small = { 100, 100, 8190, 0 };
    h2_req_head h;
    int i, status = 0;

    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    for (i = 0; i < 23; ++i) {
        CHECK(ADD(&h, "cookie", "ab") == H2_HDR_OK);
    }
    CHECK(h.cookie_len == 90);
    CHECK(ADD(&h, "cookie", "ab") == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h.error_field && !strcmp(h.error_field, "cookie"));
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h2_hdr_result_as_status(h.error, &status) && status == 431);

    /* exactly at the limit is allowed: 8 + 92 = 100 */
    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    CHECK(ADD(&h, "cookie", "0123456789012345678901234567890123456789") == H2_HDR_OK);
    CHECK(ADD(&h, "cookie", "01234567890123456789012345678901234567890123456789")
          == H2_HDR_OK);
    CHECK(h.cookie_len == 92);
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
}

static void test_connection_budget_is_shared_and_given_back(void)
{
    h2_hdr_budget budget = { 0, 600 };
    h2_hdr_limits lim = { 8190, 100, 8190, 0, &budget };
    h2_req_head a, b;
    char v[201];

    memset(v, 'v', 200);
    v[200] = 0;
    h2_req_head_init(&a, pool, &lim);
    h2_req_head_init(&b, pool, &lim);
    CHECK(ADD(&a, "x-a", v) == H2_HDR_OK);          /* 3 + 200 + 24 = 227 */
    CHECK(ADD(&b, "x-b", v) == H2_HDR_OK);          /* 454 */
    CHECK(budget.used == 454 && a.charged == 227 && b.charged == 227);
    /* 681 would pass 600: refused before the field is kept */
    CHECK(ADD(&b, "x-c", v) == H2_HDR_ERR_CONN_BUDGET);
    CHECK(apr_table_get(b.headers, "x-c") == NULL);
    CHECK(budget.used == 454);
    h2_req_head_release(&a);
    CHECK(budget.used == 227 && a.charged == 0);
    h2_req_head_release(&a);                         /* twice is harmless */
    CHECK(budget.used == 227);
    h2_req_head_release(&b);
    CHECK(budget.used == 0);
}

static void test_repeated_fields_are_held_to_field_size_once_merged(void)
{
    /* "x-r: " + values joined by ", " <= 100: 9 values of 8 bytes make
     * 5 + 72 + 16 = 93, a 10th makes 103 */
    h2_hdr_limits small = { 100, 100, 8190, 0 };
    h2_req_head h;
    int i;

    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    for (i = 0; i < 9; ++i) {
        CHECK(ADD(&h, "x-r", "12345678") == H2_HDR_OK);
        CHECK(ADD(&h, "x-other", "1") == H2_HDR_OK);
    }
    CHECK(ADD(&h, "x-r", "12345678") == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h.error_merged && !strcmp(h.error_field, "x-r"));
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_FIELD_TOO_LARGE);
}

static void test_request_line_limit_bounds_each_pseudo_header(void)
{
    /* LimitRequestLine 30: a :path of 30 characters passes, 31 do not
     * (as stock applies it; the method does not count toward it) */
    h2_hdr_limits small = { 8190, 100, 30, 0 };
    h2_req_head h;
    int status = 0;

    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "OPTIONS");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/12345678901234567890123456789");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    CHECK(ADD(&h, ":path", "/123456789012345678901234567890") == H2_HDR_ERR_LINE_TOO_LONG);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_LINE_TOO_LONG);
    /* the other pseudo-headers alike, answered 414 */
    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":authority", "a123456789012345678901234567890.example");
    ADD(&h, ":path", "/");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_LINE_TOO_LONG);
    CHECK(h2_hdr_result_as_status(h.error, &status) && status == 414);
    /* a field over LimitRequestFieldSize after it: 431, as stock */
    h2_req_head_init(&h, pool, &small);
    h.limits.max_field_len = 10;
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/123456789012345678901234567890");
    CHECK(ADD(&h, "x-small", "1") == H2_HDR_ERR_LINE_TOO_LONG);
    CHECK(ADD(&h, "x-big", "12345") == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(!strcmp(h.error_field, "x-big"));
    /* a method over it is no request: reset, no answer */
    h2_req_head_init(&h, pool, &small);
    CHECK(ADD(&h, ":method", "ABCDEFGHIJABCDEFGHIJABCDEFGHIJK")
          == H2_HDR_ERR_METHOD_TOO_LONG);
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_METHOD_TOO_LONG);
    CHECK(!h2_hdr_result_as_status(h.error, &status));
    /* and one of 30 characters is a request (httpd decides about it) */
    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "ABCDEFGHIJABCDEFGHIJABCDEFGHIJ");
    ADD(&h, ":scheme", "https");
    ADD(&h, ":path", "/");
    CHECK(h2_req_head_end(&h) == H2_HDR_OK);
}

/* A GET for / with LimitRequestFieldSize 20, LimitRequestFields 10. */
static void small_limits_request(h2_req_head *h)
{
    static const h2_hdr_limits small = { 20, 10, 8190, 0 };
    h2_req_head_init(h, pool, &small);
    ADD(h, ":method", "GET");
    ADD(h, ":scheme", "https");
    ADD(h, ":path", "/");
}

#define BIG "0123456789012345678901234567890"     /* over 20 with any name */

/* n fields named <prefix><i> with value v; the result of the last. */
static h2_hdr_result add_fields(h2_req_head *h, const char *prefix, int n, const char *v)
{
    char name[16];
    h2_hdr_result res = H2_HDR_OK;
    int i;

    for (i = 0; i < n; ++i) {
        apr_snprintf(name, sizeof(name), "%s%d", prefix, i);
        res = ADD(h, name, v);
    }
    return res;
}

static void test_a_hundred_refused_fields_are_answered_more_are_reset(void)
{
    h2_req_head h;
    int status = 0;

    /* each over LimitRequestFieldSize: 100 get 431, the 101st a reset */
    small_limits_request(&h);
    add_fields(&h, "x-", 100, BIG);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h.nrefused == 100);
    CHECK(ADD(&h, "x-last", BIG) == H2_HDR_ERR_REFUSED_MANY);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_REFUSED_MANY);
    CHECK(!h2_hdr_result_as_status(h.error, &status));

    /* past LimitRequestFields (10): 100 more are answered, one more not */
    small_limits_request(&h);
    add_fields(&h, "x-", 110, "1");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_TOO_MANY);
    CHECK(ADD(&h, "x-last", "1") == H2_HDR_ERR_FIELDS_FLOOD);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_FIELDS_FLOOD);

    /* a field both past the count and over the size is refused once */
    small_limits_request(&h);
    add_fields(&h, "x-", 10, "1");
    add_fields(&h, "y-", 100, BIG);
    CHECK(h.nrefused == 100 && h.error == H2_HDR_ERR_FIELD_TOO_LARGE);

    /* fields refused for their size do not count toward the 10 */
    small_limits_request(&h);
    add_fields(&h, "y-", 100, BIG);
    CHECK(add_fields(&h, "x-", 10, "1") == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h.nrefused == 100);
    CHECK(ADD(&h, "x-11", "1") == H2_HDR_ERR_REFUSED_MANY);
}

static void test_malformed_after_a_limit_is_malformed(void)
{
    h2_req_head h;

    /* a value with DEL after a field over the size */
    small_limits_request(&h);
    CHECK(ADD(&h, "x-big", BIG) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(ADD(&h, "x-del", "a\x7f") == H2_HDR_ERR_VALUE);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_VALUE);
    /* a name in capitals, a connection-specific field, a late pseudo-header */
    small_limits_request(&h);
    ADD(&h, "x-big", BIG);
    CHECK(ADD(&h, "X-Up", "1") == H2_HDR_ERR_NAME && h.error == H2_HDR_ERR_NAME);
    small_limits_request(&h);
    ADD(&h, "x-big", BIG);
    ADD(&h, "connection", "close");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_CONN_SPECIFIC);
    small_limits_request(&h);
    ADD(&h, "x-big", BIG);
    ADD(&h, ":foo", "1");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_PSEUDO_LATE);
    /* a :path missing at the end */
    h2_req_head_init(&h, pool, &limits);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "https");
    ADD(&h, "x-big", BIG);
    h.limits.max_field_len = 20;
    CHECK(ADD(&h, "x-big2", BIG) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_PSEUDO_MISSING);
    /* once reset, the first reason stays */
    small_limits_request(&h);
    add_fields(&h, "x-", 101, BIG);
    ADD(&h, "x-del", "a\x7f");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_REFUSED_MANY);
}

/* 1 when a handler's response field can go out (or is left out quietly,
 * as a connection-specific one), as h2_hfields_build takes it. */
static int sendable(const char *name, const char *value)
{
    char lname[64];
    apr_size_t vl = strlen(value);
    return h2_hdr_out_field_checked(name, strlen(name), lname, &value, &vl) >= 0;
}

static void test_response_fields_with_controls_cannot_go_out(void)
{
    CHECK(sendable("X-Fine", "a value\twith tab"));
    CHECK(sendable("X-Empty", ""));
    CHECK(sendable("X-High", "caf\xc3\xa9"));    /* obs-text */
    CHECK(!sendable("X-Bad", "one\001two"));
    CHECK(!sendable("X-Bad", "one\r\ntwo: 2"));
    CHECK(!sendable("X-Bad", "del\x7f"));
    CHECK(!sendable("X Bad", "v"));
    CHECK(!sendable("", "v"));
    CHECK(!sendable("X-Bad\n", "v"));
    CHECK(!sendable("Date", "Mon\r\n"));
}

static void test_response_values_are_checked_at_every_position(void)
{
    char v[21];
    int i, k;
    static const char bad[] = { 0x01, 0x0a, 0x1f, 0x7f };

    for (i = 0; i < 20; ++i) {
        for (k = 0; k < 4; ++k) {
            memset(v, 'a', 20);
            v[20] = 0;
            v[i] = bad[k];
            CHECK(!sendable("X-V", v));
        }
        memset(v, '\xfe', 20);     /* high bytes flag a word, then pass */
        v[i] = '\t';
        CHECK(sendable("X-V", v));
        v[i] = '\x80';
        CHECK(sendable("X-V", v));
    }
}

static void test_limits_answer_with_status(void)
{
    h2_hdr_limits small = { 20, 2, 30, 0 };
    h2_req_head h;
    int status = 0;
    char big[100];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "http");
    ADD(&h, ":path", "/");
    CHECK(ADD(&h, "x", big) == H2_HDR_ERR_FIELD_TOO_LARGE);
    CHECK(h2_hdr_result_as_status(h.error, &status) && status == 431);

    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "http");
    ADD(&h, ":path", "/");
    ADD(&h, "a", "1");
    ADD(&h, "b", "2");
    CHECK(ADD(&h, "c", "3") == H2_HDR_ERR_TOO_MANY);

    h2_req_head_init(&h, pool, &small);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "http");
    ADD(&h, ":path", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    CHECK(h2_req_head_end(&h) == H2_HDR_ERR_LINE_TOO_LONG);
    CHECK(h2_hdr_result_as_status(h.error, &status) && status == 414);
    CHECK(!h2_hdr_result_as_status(H2_HDR_ERR_NAME, &status));
}

static void test_decoded_block_size_is_bounded(void)
{
    h2_hdr_limits lim = { 8190, 0, 8190, 1000 };
    h2_req_head h;
    int i, res = H2_HDR_OK;
    h2_req_head_init(&h, pool, &lim);
    ADD(&h, ":method", "GET");
    ADD(&h, ":scheme", "http");
    ADD(&h, ":path", "/");
    for (i = 0; i < 100 && res == H2_HDR_OK; ++i) {
        res = ADD(&h, "x-a", "0123456789");
    }
    CHECK(res == H2_HDR_ERR_BLOCK_TOO_LARGE);
    CHECK(i < 100);
}

static void test_trailers_refuse_pseudo_headers(void)
{
    h2_req_head h;
    apr_table_t *t = apr_table_make(pool, 2);
    h2_req_head_init_trailer(&h, pool, &limits, t);
    CHECK(ADD(&h, "x-checksum", "abc") == H2_HDR_OK);
    CHECK(ADD(&h, ":path", "/") == H2_HDR_ERR_PSEUDO_IN_TRAILER);
    CHECK(!strcmp(apr_table_get(t, "x-checksum"), "abc"));
}

static int out_field(const char *name, const char *value, char *lname,
                     const char **v, apr_size_t *vl)
{
    *v = value;
    *vl = strlen(value);
    return h2_hdr_out_field(name, strlen(name), lname, v, vl);
}

static void test_response_fields_go_out_lowercase_and_trimmed(void)
{
    char lname[64];
    const char *v;
    apr_size_t vl;

    CHECK(out_field("Content-Type", "text/html", lname, &v, &vl));
    CHECK(!memcmp(lname, "content-type", 12));
    CHECK(vl == 9 && !memcmp(v, "text/html", 9));
    CHECK(out_field("X-A", " \t1 2 \t", lname, &v, &vl));
    CHECK(!memcmp(lname, "x-a", 3) && vl == 3 && !memcmp(v, "1 2", 3));
    CHECK(out_field("X-Empty", "", lname, &v, &vl) && vl == 0);
    CHECK(out_field("X-Blank", "   ", lname, &v, &vl) && vl == 0);
    /* what HTTP/2 cannot carry is left out */
    CHECK(!out_field("Connection", "close", lname, &v, &vl));
    CHECK(!out_field("Transfer-Encoding", "chunked", lname, &v, &vl));
    CHECK(!out_field("UPGRADE", "h2c", lname, &v, &vl));
    CHECK(!out_field("Proxy-Connection", "x", lname, &v, &vl));
    CHECK(!out_field("Keep-Alive", "timeout=5", lname, &v, &vl));
    CHECK(!out_field("", "x", lname, &v, &vl));
    CHECK(!out_field("Bad Name", "x", lname, &v, &vl));
    CHECK(!out_field("Bad:Name", "x", lname, &v, &vl));
    CHECK(!out_field("X-Split", "a\r\nb", lname, &v, &vl));
    CHECK(!out_field("X-Lf", "a\nb", lname, &v, &vl));
    v = "x"; vl = 1;
    CHECK(!h2_hdr_out_field("a\0b", 3, lname, &v, &vl));
    /* httpd's own spellings take a shortcut, other spellings the long way */
    CHECK(out_field("Last-Modified", "x", lname, &v, &vl)
          && !memcmp(lname, "last-modified", 13));
    CHECK(out_field("LAST-MODIFIED", "x", lname, &v, &vl)
          && !memcmp(lname, "last-modified", 13));
    CHECK(out_field("Last-Modifiex", "x", lname, &v, &vl)
          && !memcmp(lname, "last-modifiex", 13));
    CHECK(!out_field("Last-Modifie:", "x", lname, &v, &vl));
    CHECK(out_field("ETag", "\"1\"", lname, &v, &vl) && !memcmp(lname, "etag", 4));
    CHECK(!out_field("Content-Type", "text/html\r\nX: y", lname, &v, &vl));
}

int main(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
    test_valid_request_becomes_method_path_and_host();
    test_names_must_be_lowercase_tokens();
    test_values_reject_controls_del_and_edge_whitespace();
    test_long_values_are_checked_at_every_position();
    test_connection_specific_fields_are_malformed();
    test_te_allows_only_trailers();
    test_pseudo_headers_rules();
    test_connect_needs_authority_only();
    test_extended_connect_for_websocket_becomes_an_upgrade_get();
    test_extended_connect_rules();
    test_options_asterisk_is_allowed();
    test_content_length_must_be_digits_and_agree();
    test_authority_replaces_a_differing_host();
    test_cookie_crumbs_are_joined();
    test_cookie_join_is_linear_in_its_length();
    test_joined_cookie_is_held_against_field_size();
    test_connection_budget_is_shared_and_given_back();
    test_repeated_fields_are_held_to_field_size_once_merged();
    test_request_line_limit_bounds_each_pseudo_header();
    test_a_hundred_refused_fields_are_answered_more_are_reset();
    test_malformed_after_a_limit_is_malformed();
    test_response_fields_with_controls_cannot_go_out();
    test_response_values_are_checked_at_every_position();
    test_limits_answer_with_status();
    test_decoded_block_size_is_bounded();
    test_trailers_refuse_pseudo_headers();
    test_response_fields_go_out_lowercase_and_trimmed();
    apr_pool_destroy(pool);
    apr_terminate();
    return unit_done("test_headers_check");
}
