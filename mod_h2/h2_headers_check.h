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
#ifndef H2_HEADERS_CHECK_H
#define H2_HEADERS_CHECK_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Validation of a request's header block as RFC 9113 sections 8.2 and 8.3
 * demand, and its collection into method, target and a header table.
 * Depends on APR only, so unit tests and the fuzzer link it alone. */

typedef enum {
    H2_HDR_OK = 0,
    H2_HDR_ERR_NAME,            /* empty, uppercase or non-token name */
    H2_HDR_ERR_VALUE,           /* NUL/CR/LF, or leading/trailing whitespace */
    H2_HDR_ERR_CONN_SPECIFIC,   /* connection, keep-alive, upgrade, ... */
    H2_HDR_ERR_TE,              /* te other than "trailers" */
    H2_HDR_ERR_PSEUDO_UNKNOWN,  /* a pseudo-header we do not know */
    H2_HDR_ERR_PSEUDO_DUP,      /* the same pseudo-header twice */
    H2_HDR_ERR_PSEUDO_LATE,     /* pseudo-header after a regular one */
    H2_HDR_ERR_PSEUDO_MISSING,  /* :method, :scheme or :path missing */
    H2_HDR_ERR_PSEUDO_INVALID,  /* e.g. empty :path, :path not "/..." */
    H2_HDR_ERR_PSEUDO_IN_TRAILER,
    H2_HDR_ERR_CONTENT_LENGTH,  /* malformed or disagreeing content-length */
    H2_HDR_ERR_FIELD_TOO_LARGE, /* over LimitRequestFieldSize */
    H2_HDR_ERR_TOO_MANY,        /* over LimitRequestFields */
    H2_HDR_ERR_LINE_TOO_LONG,   /* a pseudo-header but :method over
                                 * LimitRequestLine */
    H2_HDR_ERR_METHOD_TOO_LONG, /* :method over LimitRequestLine */
    H2_HDR_ERR_BLOCK_TOO_LARGE, /* decoded block over its limit */
    H2_HDR_ERR_CONN_BUDGET,     /* the connection holds too much already */
    H2_HDR_ERR_PROTOCOL_UNKNOWN,/* an extended CONNECT for another protocol
                                 * than websocket */
    H2_HDR_ERR_REFUSED_MANY,    /* more than H2_HDR_MAX_REFUSED fields over
                                 * LimitRequestFieldSize or LimitRequestFields */
    H2_HDR_ERR_FIELDS_FLOOD,    /* more than H2_HDR_FIELDS_SLACK fields past
                                 * LimitRequestFields */
} h2_hdr_result;

/* A head that breaks httpd's limits is answered (431, 414) while it stays
 * near them; beyond these it is not worth an answer, and its stream is
 * reset (the counts stock keeps). */
#define H2_HDR_MAX_REFUSED 100
#define H2_HDR_FIELDS_SLACK 100

/* What the header blocks of one connection's streams may hold together.
 * Every block charges the fields it keeps before it keeps them, and
 * gives the charge back when its stream is freed (h2_req_head_release). */
typedef struct h2_hdr_budget {
    apr_size_t used;
    apr_size_t max;             /* 0: no limit */
} h2_hdr_budget;

typedef struct h2_hdr_limits {
    apr_size_t max_field_len;   /* "name: value" length */
    int max_fields;             /* number of regular fields, 0: no limit */
    apr_size_t max_line_len;    /* LimitRequestLine: each pseudo-header's
                                 * value at most */
    apr_size_t max_block_len;   /* decoded header block, 0: no limit */
    h2_hdr_budget *budget;      /* the connection's, NULL: none */
    int connect_protocol;       /* SETTINGS_ENABLE_CONNECT_PROTOCOL sent:
                                 * :protocol allowed (RFC 8441) */
} h2_hdr_limits;


typedef struct h2_req_head {
    apr_pool_t *pool;
    h2_hdr_limits limits;
    const char *method;
    const char *scheme;
    const char *authority;
    const char *path;
    const char *protocol;       /* :protocol of an extended CONNECT */
    int websocket;              /* an extended CONNECT for a WebSocket, now a
                                 * GET with Upgrade (h2_ws.c) */
    apr_table_t *headers;       /* regular fields, lowercase names */
    apr_off_t content_length;   /* -1 when absent */
    apr_size_t block_len;       /* decoded bytes seen so far */
    int nfields;                /* regular fields as LimitRequestFields
                                 * counts them, refused ones too */
    int nrefused;               /* fields over LimitRequestFieldSize or
                                 * past LimitRequestFields */
    apr_uint64_t names_seen;    /* a bit per name hash: repeats are rare */
    int has_repeats;            /* a name came more than once */
    int seen_regular;
    int is_trailer;             /* collecting a trailer block */
    char *cookie;               /* cookie crumbs joined by "; " so far */
    apr_size_t cookie_len;      /*   their length */
    apr_size_t cookie_cap;      /*   the room in cookie */
    apr_size_t charged;         /* bytes charged to limits.budget */
    h2_hdr_result error;        /* first error seen, H2_HDR_OK if none; one
                                 * answered with a status gives way to a
                                 * later one answered with a reset */
    const char *error_field;    /* the field that was too large, for logs */
    int error_merged;           /*   too large once merged with its repeats */
    const char *orig_host;      /* a host field :authority replaced */
} h2_req_head;

/* Start collecting a request header block in pool p. */
void h2_req_head_init(h2_req_head *h, apr_pool_t *p, const h2_hdr_limits *lim);

/* Start collecting a trailer block into the table trailers. */
void h2_req_head_init_trailer(h2_req_head *h, apr_pool_t *p,
                              const h2_hdr_limits *lim, apr_table_t *trailers);

/* Add one decoded field. After the first error, further fields are only
 * checked and counted, not kept; the error stays available in h->error.
 * As nghttp2 checks every field before stock sees it, a malformed field
 * (or a pseudo-header missing at the end) makes the stream malformed
 * even after a limit was broken. */
h2_hdr_result h2_req_head_add(h2_req_head *h, const char *name, apr_size_t nlen,
                              const char *value, apr_size_t vlen);

/* Finish the block: required pseudo-headers, host/authority agreement.
 * Sets the "host" field from :authority and joins the cookie crumbs into
 * one "cookie" field. */
h2_hdr_result h2_req_head_end(h2_req_head *h);

/* Give back what h charged to its connection's budget. */
void h2_req_head_release(h2_req_head *h);

/* 1 when name (nlen bytes) is a valid lowercase field name token. */
int h2_hdr_name_valid(const char *name, apr_size_t nlen);

/* 1 when value (vlen bytes) may appear in an HTTP/2 field value: RFC 9110
 * 5.5 (no controls but HTAB, no DEL), no blanks at its ends (RFC 9113). */
int h2_hdr_value_valid(const char *value, apr_size_t vlen);

/* 1 when the field is connection-specific and forbidden in HTTP/2. */
int h2_hdr_is_connection_specific(const char *name, apr_size_t nlen);

/* Prepare a response field for HTTP/2: write name (nlen bytes) lowercased
 * to lname and trim blanks around *value (*vlen bytes). Returns 0 when the
 * field cannot go out in HTTP/2 (invalid name or value, connection-specific
 * field); lname's content is undefined then. */
int h2_hdr_out_field(const char *name, apr_size_t nlen, char *lname,
                     const char **value, apr_size_t *vlen);

/* h2_hdr_out_field for a response field as a handler set it, which can
 * go out when its name is a token and its value has no control characters
 * but HTAB (RFC 9110 5.5; blanks at its ends are trimmed). Returns 1 when
 * it goes out, 0 when it is connection-specific (left out quietly), -1
 * when HTTP cannot carry it. */
int h2_hdr_out_field_checked(const char *name, apr_size_t nlen, char *lname,
                             const char **value, apr_size_t *vlen);

/* 1 when the error is better answered with an HTTP status than a reset:
 * the request is well-formed but beyond our limits. Its status in *pstatus. */
int h2_hdr_result_as_status(h2_hdr_result res, int *pstatus);

/* A short text for logs and GOAWAY/RST debug data. */
const char *h2_hdr_result_str(h2_hdr_result res);

#endif
