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
/* Request heads checked as RFC 9113 8.1-8.3 and httpd's limits say, with
 * their budget (pure logic). */

#include <string.h>
#include <apr_strings.h>
#include <apr_general.h>
#include <apr_time.h>
#include <apr_lib.h>

#include "h2_headers_check.h"

/* RFC 9110 tchar, mapped to its lowercase form; 0 for anything else.
 * HTTP/2 field names must be lowercase: a name is valid when every byte
 * maps to itself. */
#define TC(c) [c] = c
#define UC(c) [c] = (c) + ('a' - 'A')
static const unsigned char tchar_lower[256] = {
    TC('!'), TC('#'), TC('$'), TC('%'), TC('&'), TC('\''), TC('*'), TC('+'),
    TC('-'), TC('.'), TC('^'), TC('_'), TC('`'), TC('|'), TC('~'),
    TC('0'), TC('1'), TC('2'), TC('3'), TC('4'), TC('5'), TC('6'), TC('7'),
    TC('8'), TC('9'),
    TC('a'), TC('b'), TC('c'), TC('d'), TC('e'), TC('f'), TC('g'), TC('h'),
    TC('i'), TC('j'), TC('k'), TC('l'), TC('m'), TC('n'), TC('o'), TC('p'),
    TC('q'), TC('r'), TC('s'), TC('t'), TC('u'), TC('v'), TC('w'), TC('x'),
    TC('y'), TC('z'),
    UC('A'), UC('B'), UC('C'), UC('D'), UC('E'), UC('F'), UC('G'), UC('H'),
    UC('I'), UC('J'), UC('K'), UC('L'), UC('M'), UC('N'), UC('O'), UC('P'),
    UC('Q'), UC('R'), UC('S'), UC('T'), UC('U'), UC('V'), UC('W'), UC('X'),
    UC('Y'), UC('Z'),
};
#undef TC
#undef UC

#define IS_NAME(n, nl, lit) ((nl) == sizeof(lit) - 1 && !memcmp((n), (lit), (nl)))

/* 1 when s is a non-empty RFC 9110 token; uppercase only if allowed. */
static int token_valid(const char *s, apr_size_t len, int upper_ok)
{
    apr_size_t i;
    if (len == 0) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        unsigned char ch = (unsigned char)s[i], lc = tchar_lower[ch];
        if (!lc || (lc != ch && !upper_ok)) {
            return 0;
        }
    }
    return 1;
}

int h2_hdr_name_valid(const char *name, apr_size_t nlen)
{
    return token_valid(name, nlen, 0);
}

#define H2_ONES  0x0101010101010101ULL
#define H2_HIGHS 0x8080808080808080ULL
/* 1 when one of the 8 bytes of w is below n (n <= 0x80); bytes of 0x80
 * and up may flag too, so a hit is checked byte by byte. */
#define HAS_BELOW(w, n) ((((w) - (n) * H2_ONES) & ~(w) & H2_HIGHS) != 0)

static int ctl_byte(unsigned char ch)
{
    return (ch < 0x20 && ch != '\t') || ch == 0x7f;
}

/* 1 when the 8 bytes at p hold no control but HTAB, and no DEL. */
static int word_sendable(const char *p)
{
    apr_uint64_t w;
    int j;

    memcpy(&w, p, 8);
    if (HAS_BELOW(w, 0x20) || HAS_BELOW(w ^ (0x7f * H2_ONES), 1)) {
        for (j = 0; j < 8; ++j) {
            if (ctl_byte((unsigned char)p[j])) {
                return 0;
            }
        }
    }
    return 1;
}

/* 1 when value has no control characters but HTAB, and no DEL: RFC 9110
 * 5.5's field-content, blanks at the ends aside. */
static int value_sendable(const char *value, apr_size_t vlen)
{
    apr_size_t i = 0;

    /* 8 bytes a step: this runs for every field of every message */
    for (; i + 8 <= vlen; i += 8) {
        if (!word_sendable(value + i)) {
            return 0;
        }
    }
    if (i < vlen && vlen >= 8) {
        /* the rest as the last 8 bytes, overlapping what was checked */
        return word_sendable(value + vlen - 8);
    }
    for (; i < vlen; ++i) {
        if (ctl_byte((unsigned char)value[i])) {
            return 0;
        }
    }
    return 1;
}

int h2_hdr_value_valid(const char *value, apr_size_t vlen)
{
    /* RFC 9113 8.2.1: no blanks at the ends; RFC 9110 5.5: no controls
     * but HTAB, no DEL, as stock (nghttp2's check) refuses them too */
    if (vlen > 0 && (value[0] == ' ' || value[0] == '\t'
                     || value[vlen-1] == ' ' || value[vlen-1] == '\t')) {
        return 0;
    }
    return value_sendable(value, vlen);
}

int h2_hdr_is_connection_specific(const char *name, apr_size_t nlen)
{
    return IS_NAME(name, nlen, "connection")
        || IS_NAME(name, nlen, "keep-alive")
        || IS_NAME(name, nlen, "proxy-connection")
        || IS_NAME(name, nlen, "transfer-encoding")
        || IS_NAME(name, nlen, "upgrade");
}

/* The lowercase form of name if it is a response field name as httpd
 * itself spells it, else NULL. Most responses carry only these, and a
 * compare or two of fixed length (inlined) replaces the byte-wise
 * lowercasing and checking. */
static const char *known_lower(const char *name, apr_size_t nlen)
{
#define KNOWN(n, l) if (!memcmp(name, n, sizeof(n) - 1)) return l
    switch (nlen) {
    case 4:
        KNOWN("Date", "date");
        KNOWN("ETag", "etag");
        KNOWN("Vary", "vary");
        break;
    case 6:
        KNOWN("Server", "server");
        break;
    case 7:
        KNOWN("Expires", "expires");
        break;
    case 8:
        KNOWN("Location", "location");
        break;
    case 10:
        KNOWN("Set-Cookie", "set-cookie");
        break;
    case 12:
        KNOWN("Content-Type", "content-type");
        break;
    case 13:
        KNOWN("Accept-Ranges", "accept-ranges");
        KNOWN("Last-Modified", "last-modified");
        KNOWN("Cache-Control", "cache-control");
        break;
    case 14:
        KNOWN("Content-Length", "content-length");
        break;
    case 16:
        KNOWN("Content-Encoding", "content-encoding");
        break;
    }
#undef KNOWN
    return NULL;
}

/* Write name lowercased to lname: 1 when it may go out, 0 for a
 * connection-specific field, -1 when it is no token. */
static int out_name(const char *name, apr_size_t nlen, char *lname)
{
    const char *lower;
    apr_size_t i;

    if (nlen == 0) {
        return -1;
    }
    if ((lower = known_lower(name, nlen)) != NULL) {
        /* valid and not connection-specific */
        memcpy(lname, lower, nlen);
        return 1;
    }
    /* one pass: lowercase and check, no locale lookups */
    for (i = 0; i < nlen; ++i) {
        unsigned char lc = tchar_lower[(unsigned char)name[i]];
        if (!lc) {
            return -1;
        }
        lname[i] = (char)lc;
    }
    return h2_hdr_is_connection_specific(lname, nlen)? 0 : 1;
}

/* handlers may leave blanks around values; HTTP/2 forbids them */
static void trim_blanks(const char **value, apr_size_t *vlen)
{
    const char *v = *value;
    apr_size_t vl = *vlen;

    while (vl > 0 && (v[0] == ' ' || v[0] == '\t')) {
        ++v; --vl;
    }
    while (vl > 0 && (v[vl-1] == ' ' || v[vl-1] == '\t')) {
        --vl;
    }
    *value = v;
    *vlen = vl;
}

int h2_hdr_out_field(const char *name, apr_size_t nlen, char *lname,
                     const char **value, apr_size_t *vlen)
{
    const char *v = *value;
    apr_size_t vl = *vlen;

    if (out_name(name, nlen, lname) <= 0) {
        return 0;
    }
    trim_blanks(&v, &vl);
    if (!h2_hdr_value_valid(v, vl)) {
        return 0;
    }
    *value = v;
    *vlen = vl;
    return 1;
}

int h2_hdr_out_field_checked(const char *name, apr_size_t nlen, char *lname,
                             const char **value, apr_size_t *vlen)
{
    int res;

    if (!value_sendable(*value, *vlen) || (res = out_name(name, nlen, lname)) < 0) {
        return -1;
    }
    if (res == 0) {
        return 0;
    }
    /* a value with no controls has no NUL, CR or LF: trimmed, it is valid */
    trim_blanks(value, vlen);
    return 1;
}

void h2_req_head_init(h2_req_head *h, apr_pool_t *p, const h2_hdr_limits *lim)
{
    memset(h, 0, sizeof(*h));
    h->pool = p;
    h->limits = *lim;
    h->headers = apr_table_make(p, 16);
    h->content_length = -1;
}

void h2_req_head_init_trailer(h2_req_head *h, apr_pool_t *p,
                              const h2_hdr_limits *lim, apr_table_t *trailers)
{
    h2_req_head_init(h, p, lim);
    h->headers = trailers;
    h->is_trailer = 1;
    h->seen_regular = 1;
}

/* 1 when res is answered with a status: the head is well-formed. */
static int answered(h2_hdr_result res)
{
    int status;
    return h2_hdr_result_as_status(res, &status);
}

/* Which of two errors a head is answered for, as stock decides: a reset
 * over any status (nghttp2 refuses a malformed head before stock looks
 * at its limits, and a head far beyond them gets no answer at all), a
 * field's 431 over a pseudo-header's 414 or 501. */
static int rank(h2_hdr_result res)
{
    if (res == H2_HDR_OK) {
        return 0;
    }
    if (!answered(res)) {
        return 3;
    }
    return (res == H2_HDR_ERR_LINE_TOO_LONG || res == H2_HDR_ERR_PROTOCOL_UNKNOWN)? 1 : 2;
}

static h2_hdr_result fail(h2_req_head *h, h2_hdr_result res)
{
    if (rank(res) > rank(h->error)) {
        h->error = res;
    }
    return res;
}

static int all_digits(const char *s, apr_size_t len)
{
    apr_size_t i;
    if (len == 0 || len > 18) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (!apr_isdigit(s[i])) return 0;
    }
    return 1;
}

static h2_hdr_result add_pseudo(h2_req_head *h, const char *name, apr_size_t nlen,
                                const char *value, apr_size_t vlen)
{
    const char **slot;
    apr_size_t i;

    if (h->is_trailer) {
        return fail(h, H2_HDR_ERR_PSEUDO_IN_TRAILER);
    }
    if (h->seen_regular) {
        return fail(h, H2_HDR_ERR_PSEUDO_LATE);
    }
    if (IS_NAME(name, nlen, ":method")) slot = &h->method;
    else if (IS_NAME(name, nlen, ":scheme")) slot = &h->scheme;
    else if (IS_NAME(name, nlen, ":authority")) slot = &h->authority;
    else if (IS_NAME(name, nlen, ":path")) slot = &h->path;
    else if (IS_NAME(name, nlen, ":protocol") && h->limits.connect_protocol) {
        slot = &h->protocol;
    }
    else return fail(h, H2_HDR_ERR_PSEUDO_UNKNOWN);

    if (*slot) {
        return fail(h, H2_HDR_ERR_PSEUDO_DUP);
    }
    /* Pseudo-header values end up in the request line: no whitespace or
     * control characters at all, so nothing can be smuggled into it. */
    for (i = 0; i < vlen; ++i) {
        unsigned char ch = (unsigned char)value[i];
        if (ch <= 0x20 || ch == 0x7f) {
            return fail(h, H2_HDR_ERR_PSEUDO_INVALID);
        }
    }
    if (slot == &h->method && !token_valid(value, vlen, 1)) {
        /* methods are case-sensitive tokens */
        return fail(h, H2_HDR_ERR_PSEUDO_INVALID);
    }
    if (slot == &h->path && vlen == 0) {
        return fail(h, H2_HDR_ERR_PSEUDO_INVALID);
    }
    if (slot == &h->authority && memchr(value, '@', vlen)) {
        /* RFC 9113 8.3.1: no userinfo in :authority */
        return fail(h, H2_HDR_ERR_PSEUDO_INVALID);
    }
    *slot = apr_pstrmemdup(h->pool, value, vlen);
    if (h->limits.max_line_len && vlen > h->limits.max_line_len) {
        /* LimitRequestLine holds each pseudo-header, as stock applies it:
         * HTTP/2 has no request line, and a :path of LimitRequestLine
         * characters passes (HTTP/1.1's count of the whole line would
         * refuse it). A method that long is no request worth an answer:
         * its stream is reset, as by stock. */
        return fail(h, slot == &h->method? H2_HDR_ERR_METHOD_TOO_LONG
                                          : H2_HDR_ERR_LINE_TOO_LONG);
    }
    return H2_HDR_OK;
}

/* HPACK's per-field overhead (RFC 7541 4.1), counted toward the decoded
 * block size for every field, so that empty fields are not free. */
#define H2_HDR_FIELD_OVERHEAD 32
/* What keeping a field costs beyond its bytes: the table entry and the
 * strings' terminators and alignment. */
#define H2_HDR_FIELD_KEEP 24

/* Charge n bytes to the block and its connection's budget; 0 when the
 * budget has no room left for them. */
static int charge(h2_req_head *h, apr_size_t n)
{
    h2_hdr_budget *b = h->limits.budget;
    if (b) {
        if (b->max && (b->used > b->max || n > b->max - b->used)) {
            return 0;
        }
        b->used += n;
    }
    h->charged += n;
    return 1;
}

void h2_req_head_release(h2_req_head *h)
{
    if (h->limits.budget) {
        h->limits.budget->used -= h->charged;
    }
    h->charged = 0;
}

static h2_hdr_result too_large(h2_req_head *h, const char *name, apr_size_t nlen)
{
    fail(h, H2_HDR_ERR_FIELD_TOO_LARGE);
    if (h->error == H2_HDR_ERR_FIELD_TOO_LARGE && !h->error_field) {
        /* enough of the name for the log line */
        h->error_field = apr_pstrmemdup(h->pool, name, nlen > 64? 64 : nlen);
    }
    return H2_HDR_ERR_FIELD_TOO_LARGE;
}

/* The length of "name: v1, v2, ..." once httpd merges the fields of
 * this name kept so far with one more value of vlen bytes. */
typedef struct {
    const char *name;
    apr_size_t len;
} merged_len;

static int add_len(void *ctx, const char *key, const char *val)
{
    merged_len *m = ctx;
    m->len += strlen(val) + 2;
    return 1;
}

/* A field repeated under one name is one field for httpd, its values
 * joined with ", " (as HTTP/1.1 merges repeated header lines), and that
 * is what LimitRequestFieldSize must bound: otherwise many small repeats
 * add up to any size. Only names seen before are looked up. */
static int merged_too_large(h2_req_head *h, const char *name, apr_size_t nlen,
                            apr_size_t vlen)
{
    apr_uint64_t bit = (apr_uint64_t)1 << ((nlen * 31 + (unsigned char)name[0]
                                           + (unsigned char)name[nlen - 1]) & 63);
    merged_len m;

    if (!(h->names_seen & bit)) {
        h->names_seen |= bit;
        return 0;
    }
    m.name = apr_pstrmemdup(h->pool, name, nlen);
    m.len = nlen + 2 + vlen;
    apr_table_do(add_len, &m, h->headers, m.name, NULL);
    if (m.len > nlen + 2 + vlen) {
        h->has_repeats = 1;
    }
    return h->limits.max_field_len && m.len > h->limits.max_field_len;
}

/* RFC 9113 8.2.3: cookie crumbs are joined with "; " into the one field
 * HTTP/1.1 would have sent, and that field is held against the limits of
 * one field. The buffer doubles as it grows, so joining costs time and
 * memory linear in the joined length, however many crumbs it takes. */
static h2_hdr_result add_crumb(h2_req_head *h, const char *value, apr_size_t vlen)
{
    apr_size_t sep = h->cookie? 2 : 0, need = h->cookie_len + sep + vlen;

    if (h->limits.max_field_len
        && sizeof("cookie: ") - 1 + need > h->limits.max_field_len) {
        return too_large(h, "cookie", 6);
    }
    if (!h->cookie && h->limits.max_fields && ++h->nfields > h->limits.max_fields) {
        return fail(h, H2_HDR_ERR_TOO_MANY);
    }
    if (need >= h->cookie_cap) {
        apr_size_t cap = h->cookie_cap? 2 * h->cookie_cap : 128;
        char *buf;
        while (cap <= need) {
            cap *= 2;
        }
        if (!charge(h, cap)) {
            return fail(h, H2_HDR_ERR_CONN_BUDGET);
        }
        buf = apr_palloc(h->pool, cap);
        if (h->cookie_len) {
            memcpy(buf, h->cookie, h->cookie_len);
        }
        h->cookie = buf;
        h->cookie_cap = cap;
    }
    if (sep) {
        memcpy(h->cookie + h->cookie_len, "; ", 2);
    }
    memcpy(h->cookie + h->cookie_len + sep, value, vlen);
    h->cookie_len = need;
    h->cookie[need] = '\0';
    return H2_HDR_OK;
}

/* What makes a regular field malformed (RFC 9113 8.2), checked for every
 * field of a head, also after a limit was broken. */
static h2_hdr_result check_regular(const h2_req_head *h, const char *name,
                                   apr_size_t nlen, const char *value, apr_size_t vlen)
{
    if (!h2_hdr_name_valid(name, nlen)) {
        return H2_HDR_ERR_NAME;
    }
    if (!h2_hdr_value_valid(value, vlen)) {
        return H2_HDR_ERR_VALUE;
    }
    if (h2_hdr_is_connection_specific(name, nlen)) {
        return H2_HDR_ERR_CONN_SPECIFIC;
    }
    if (IS_NAME(name, nlen, "te")
        && !(vlen == 8 && !strncasecmp(value, "trailers", 8))) {
        return H2_HDR_ERR_TE;
    }
    if (IS_NAME(name, nlen, "content-length") && !h->is_trailer
        && !all_digits(value, vlen)) {
        return H2_HDR_ERR_CONTENT_LENGTH;
    }
    return H2_HDR_OK;
}

/* A field refused for a limit: answered with 431 while they are few. */
static h2_hdr_result refuse(h2_req_head *h, h2_hdr_result res,
                            const char *name, apr_size_t nlen)
{
    if (++h->nrefused > H2_HDR_MAX_REFUSED) {
        return fail(h, H2_HDR_ERR_REFUSED_MANY);
    }
    return res == H2_HDR_ERR_FIELD_TOO_LARGE? too_large(h, name, nlen) : fail(h, res);
}

/* LimitRequestFields and LimitRequestFieldSize for a regular field other
 * than a cookie crumb (over: it is over the size): H2_HDR_OK when it is
 * within both. A field over the size is refused and not counted toward
 * LimitRequestFields, until the head is past that count: then every
 * field counts, as stock counts them. */
static h2_hdr_result count_regular(h2_req_head *h, const char *name, apr_size_t nlen,
                                   int over)
{
    int max = h->limits.max_fields;

    if (max && h->nfields > max) {
        if (++h->nfields - max > H2_HDR_FIELDS_SLACK) {
            return fail(h, H2_HDR_ERR_FIELDS_FLOOD);
        }
        return refuse(h, H2_HDR_ERR_TOO_MANY, name, nlen);
    }
    if (over) {
        return refuse(h, H2_HDR_ERR_FIELD_TOO_LARGE, name, nlen);
    }
    if (max && ++h->nfields > max) {
        return refuse(h, H2_HDR_ERR_TOO_MANY, name, nlen);
    }
    return H2_HDR_OK;
}

h2_hdr_result h2_req_head_add(h2_req_head *h, const char *name, apr_size_t nlen,
                              const char *value, apr_size_t vlen)
{
    h2_hdr_result res;
    int over;
    char *n;

    h->block_len += nlen + vlen + H2_HDR_FIELD_OVERHEAD;
    if (h->limits.max_block_len && h->block_len > h->limits.max_block_len) {
        fail(h, H2_HDR_ERR_BLOCK_TOO_LARGE);
    }
    if (h->error != H2_HDR_OK && !answered(h->error)) {
        return h->error;    /* the stream is reset: nothing more to know */
    }
    if (nlen > 0 && name[0] == ':') {
        if (!charge(h, vlen + H2_HDR_FIELD_KEEP)) {
            return fail(h, H2_HDR_ERR_CONN_BUDGET);
        }
        return add_pseudo(h, name, nlen, value, vlen);
    }
    h->seen_regular = 1;
    if ((res = check_regular(h, name, nlen, value, vlen)) != H2_HDR_OK) {
        return fail(h, res);
    }
    if (IS_NAME(name, nlen, "cookie")) {
        /* charges the joined buffer, the only copy kept */
        return h->error != H2_HDR_OK? h->error : add_crumb(h, value, vlen);
    }
    over = h->limits.max_field_len && nlen + 2 + vlen > h->limits.max_field_len;
    if (!over && h->error == H2_HDR_OK && merged_too_large(h, name, nlen, vlen)) {
        h->error_merged = over = 1;
    }
    if ((res = count_regular(h, name, nlen, over)) != H2_HDR_OK) {
        return res;
    }
    if (h->error != H2_HDR_OK) {
        return h->error;    /* refused already: nothing more is kept */
    }
    if (IS_NAME(name, nlen, "content-length") && !h->is_trailer) {
        apr_off_t len = apr_atoi64(apr_pstrmemdup(h->pool, value, vlen));
        if (h->content_length >= 0) {
            if (len != h->content_length) {
                return fail(h, H2_HDR_ERR_CONTENT_LENGTH);
            }
            return H2_HDR_OK; /* identical duplicate: keep one */
        }
        h->content_length = len;
    }
    /* before anything of the field is kept */
    if (!charge(h, nlen + vlen + H2_HDR_FIELD_KEEP)) {
        return fail(h, H2_HDR_ERR_CONN_BUDGET);
    }
    n = apr_pstrmemdup(h->pool, name, nlen);
    apr_table_addn(h->headers, n, apr_pstrmemdup(h->pool, value, vlen));
    return H2_HDR_OK;
}

/* a without a port equal to b, or the other way round */
static int same_but_default_port(const char *a, const char *b, const char *port)
{
    apr_size_t alen = strlen(a), plen = strlen(port);
    return alen > plen && !strcasecmp(a + alen - plen, port)
        && strlen(b) == alen - plen && !strncasecmp(a, b, alen - plen);
}

/* An extended CONNECT for a WebSocket (RFC 8441) becomes what HTTP/1.1
 * opens one with (RFC 6455 4.1): a GET with Upgrade, so that
 * mod_proxy_http, mod_proxy_wstunnel and other handlers take it as they
 * take one over HTTP/1.1. HTTP/2 has no Sec-WebSocket-Key (:protocol
 * replaces the handshake), but backends insist on one: a fresh nonce. */
static void ws_as_upgrade(h2_req_head *h)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char nonce[18] = { 0 };    /* 16 bytes, 2 of padding */
    char *key = apr_palloc(h->pool, 25);
    int i, o = 0;

    h->method = "GET";
    h->websocket = 1;
    apr_table_setn(h->headers, "upgrade", "websocket");
    apr_table_setn(h->headers, "connection", "Upgrade");
    if (!apr_table_get(h->headers, "sec-websocket-key")) {
        if (apr_generate_random_bytes(nonce, 16) != APR_SUCCESS) {
            apr_time_t now = apr_time_now();
            memcpy(nonce, &now, sizeof(now));   /* a nonce, not a secret */
        }
        for (i = 0; i < 18; i += 3) {
            unsigned v = ((unsigned)nonce[i] << 16) | ((unsigned)nonce[i + 1] << 8)
                         | nonce[i + 2];
            key[o++] = b64[(v >> 18) & 63];
            key[o++] = b64[(v >> 12) & 63];
            key[o++] = b64[(v >> 6) & 63];
            key[o++] = b64[v & 63];
        }
        key[22] = key[23] = '=';            /* 16 bytes end in "==" */
        key[24] = 0;
        apr_table_setn(h->headers, "sec-websocket-key", key);
    }
}

/* 1 when host and authority name the same origin: letter case and a
 * default port make no difference. */
static int same_authority(const char *host, const char *authority,
                          const char *scheme)
{
    const char *port = (scheme && !strcasecmp(scheme, "https"))? ":443" : ":80";
    return !strcasecmp(host, authority)
        || same_but_default_port(host, authority, port)
        || same_but_default_port(authority, host, port);
}

/* What a request head must hold (RFC 9113 8.3.1, RFC 8441 4). */
static h2_hdr_result check_pseudo(const h2_req_head *h)
{
    if (!h->method) {
        return H2_HDR_ERR_PSEUDO_MISSING;
    }
    if (h->protocol) {
        /* RFC 8441 4: an extended CONNECT names its target in full */
        if (strcmp(h->method, "CONNECT")) {
            return H2_HDR_ERR_PSEUDO_INVALID;
        }
        if (!h->scheme || !h->path || !h->authority) {
            return H2_HDR_ERR_PSEUDO_MISSING;
        }
        if (h->path[0] != '/') {
            return H2_HDR_ERR_PSEUDO_INVALID;
        }
        if (strcasecmp(h->protocol, "websocket")) {
            return H2_HDR_ERR_PROTOCOL_UNKNOWN;
        }
    }
    else if (!strcmp(h->method, "CONNECT")) {
        /* RFC 9113 8.5: only :authority, no :scheme or :path */
        if (!h->authority) {
            return H2_HDR_ERR_PSEUDO_MISSING;
        }
        if (h->scheme || h->path) {
            return H2_HDR_ERR_PSEUDO_INVALID;
        }
    }
    else {
        if (!h->scheme || !h->path) {
            return H2_HDR_ERR_PSEUDO_MISSING;
        }
        if (h->path[0] != '/'
            && !(h->path[0] == '*' && !h->path[1] && !strcmp(h->method, "OPTIONS"))) {
            /* absolute-form targets belong to forward proxies, which see
             * :scheme and :authority instead */
            return H2_HDR_ERR_PSEUDO_INVALID;
        }
    }
    return H2_HDR_OK;
}

h2_hdr_result h2_req_head_end(h2_req_head *h)
{
    const char *host;
    h2_hdr_result res;

    if (h->error != H2_HDR_OK && !answered(h->error)) {
        return h->error;
    }
    if (!h->is_trailer && (res = check_pseudo(h)) != H2_HDR_OK) {
        /* a head over a limit that is malformed too is malformed */
        fail(h, res);
    }
    if (h->error != H2_HDR_OK) {
        return h->error;
    }
    if (h->cookie) {
        apr_table_setn(h->headers, "cookie", h->cookie);
    }
    if (h->has_repeats) {
        /* one field per name, as HTTP/1.1 hands them to httpd */
        apr_table_compress(h->headers, APR_OVERLAP_TABLES_MERGE);
    }
    if (h->is_trailer) {
        return H2_HDR_OK;
    }
    if (h->protocol) {
        ws_as_upgrade(h);
    }
    host = apr_table_get(h->headers, "host");
    if (h->authority) {
        /* RFC 9113 8.3.1 makes refusing a differing host a SHOULD; what
         * matters is that everything in httpd sees one authority. So
         * :authority wins, and the host sent is kept for the record. */
        if (host && !same_authority(host, h->authority, h->scheme)) {
            h->orig_host = host;
        }
        apr_table_setn(h->headers, "host", h->authority);
    }
    return H2_HDR_OK;
}

int h2_hdr_result_as_status(h2_hdr_result res, int *pstatus)
{
    switch (res) {
    case H2_HDR_ERR_FIELD_TOO_LARGE:
    case H2_HDR_ERR_TOO_MANY:
    case H2_HDR_ERR_BLOCK_TOO_LARGE:
        *pstatus = 431;
        return 1;
    case H2_HDR_ERR_LINE_TOO_LONG:
        *pstatus = 414;
        return 1;
    case H2_HDR_ERR_PROTOCOL_UNKNOWN:
        *pstatus = 501;
        return 1;
    default:
        return 0;
    }
}

const char *h2_hdr_result_str(h2_hdr_result res)
{
    switch (res) {
    case H2_HDR_OK: return "ok";
    case H2_HDR_ERR_NAME: return "invalid header field name";
    case H2_HDR_ERR_VALUE: return "invalid header field value";
    case H2_HDR_ERR_CONN_SPECIFIC: return "connection-specific header field";
    case H2_HDR_ERR_TE: return "te header other than trailers";
    case H2_HDR_ERR_PSEUDO_UNKNOWN: return "unknown pseudo-header";
    case H2_HDR_ERR_PSEUDO_DUP: return "duplicate pseudo-header";
    case H2_HDR_ERR_PSEUDO_LATE: return "pseudo-header after regular field";
    case H2_HDR_ERR_PSEUDO_MISSING: return "required pseudo-header missing";
    case H2_HDR_ERR_PSEUDO_INVALID: return "invalid pseudo-header value";
    case H2_HDR_ERR_PSEUDO_IN_TRAILER: return "pseudo-header in trailers";
    case H2_HDR_ERR_CONTENT_LENGTH: return "invalid content-length";
    case H2_HDR_ERR_FIELD_TOO_LARGE: return "header field too large";
    case H2_HDR_ERR_TOO_MANY: return "too many header fields";
    case H2_HDR_ERR_LINE_TOO_LONG: return "pseudo-header over LimitRequestLine";
    case H2_HDR_ERR_METHOD_TOO_LONG: return ":method over LimitRequestLine";
    case H2_HDR_ERR_REFUSED_MANY:
        return "more than 100 fields over LimitRequestFieldSize or LimitRequestFields";
    case H2_HDR_ERR_FIELDS_FLOOD:
        return "more than 100 fields past LimitRequestFields";
    case H2_HDR_ERR_BLOCK_TOO_LARGE: return "header block too large";
    case H2_HDR_ERR_CONN_BUDGET:
        return "the connection's header budget is used up";
    case H2_HDR_ERR_PROTOCOL_UNKNOWN:
        return "extended CONNECT for a protocol other than websocket";
    }
    return "unknown";
}
