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
#ifndef H2_H
#define H2_H

/* Definitions shared by every part of mod_h2. */

#define MOD_H2_VERSION "0.1.0"

/* RFC 9113 section 7 error codes. We always put one of these on the
 * wire, never a library-internal number. */
typedef enum {
    H2_ERR_NO_ERROR            = 0x0,
    H2_ERR_PROTOCOL_ERROR      = 0x1,
    H2_ERR_INTERNAL_ERROR      = 0x2,
    H2_ERR_FLOW_CONTROL_ERROR  = 0x3,
    H2_ERR_SETTINGS_TIMEOUT    = 0x4,
    H2_ERR_STREAM_CLOSED       = 0x5,
    H2_ERR_FRAME_SIZE_ERROR    = 0x6,
    H2_ERR_REFUSED_STREAM      = 0x7,
    H2_ERR_CANCEL              = 0x8,
    H2_ERR_COMPRESSION_ERROR   = 0x9,
    H2_ERR_CONNECT_ERROR       = 0xa,
    H2_ERR_ENHANCE_YOUR_CALM   = 0xb,
    H2_ERR_INADEQUATE_SECURITY = 0xc,
    H2_ERR_HTTP_1_1_REQUIRED   = 0xd,
} h2_error;

/* The connection preface a client sends first (RFC 9113 section 3.4). */
#define H2_PREFACE     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24

#define H2_FRAME_HDR_LEN 9
/* nghttp2's default bound on a header block it sends */
#define H2_NGHTTP2_HEADERS_MAX 65536
#define H2_MAX_FRAME_PAYLOAD_DEFAULT 16384

/* Bodies of HTTP/1.1 requests that upgrade to h2c arrive before the
 * HTTP/2 preface (the wire puts them first) and are held in memory until
 * stream 1 reads them; larger ones are served over HTTP/1.1 instead. */
#define H2_UPGRADE_BODY_MAX (1024 * 1024)

/* Name of the HTTP/2 protocols as httpd's Protocols directive knows them. */
#define H2_PROTO_TLS   "h2"
#define H2_PROTO_CLEAR "h2c"

#endif /* H2_H */
