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
#ifndef H2_CONFIG_H
#define H2_CONFIG_H

#include <httpd.h>
#include <http_config.h>

#include "h2_read_timeout.h"

#define H2_CONF_UNSET (-1)
#define I64MAX APR_INT64_MAX

/* The H2* directives that set one value: X(id, name, type, default, min,
 * max, contexts, help); contexts: SRV (server config, virtual host),
 * GLOBAL (server config), SRV_DIR (also directory sections and
 * .htaccess), SRV_SECT (also directory sections, not .htaccess). One list makes the enum, the defaults, the ranges
 * and httpd's command table, so a directive is described exactly once. */
#define H2_CONF_VARS(X) \
    X(DIRECT, "H2Direct", FLAG, H2_CONF_UNSET, 0, 1, SRV, \
      "accept the HTTP/2 preface directly on cleartext connections") \
    X(UPGRADE, "H2Upgrade", FLAG, H2_CONF_UNSET, 0, 1, SRV_DIR, \
      "allow HTTP/1.1 Upgrade to h2c") \
    X(MAX_STREAMS, "H2MaxSessionStreams", NUM, 100, 1, 0x7fffffff, SRV, \
      "maximum number of concurrent streams per connection") \
    X(WIN_SIZE, "H2WindowSize", NUM, 65535, 1024, 0x7fffffff, SRV, \
      "initial stream window size for request bodies") \
    X(MIN_WORKERS, "H2MinWorkers", NUM, H2_CONF_UNSET, 1, 10000, GLOBAL, \
      "minimum number of h2 worker threads per child") \
    X(MAX_WORKERS, "H2MaxWorkers", NUM, H2_CONF_UNSET, 1, 10000, GLOBAL, \
      "maximum number of h2 worker threads per child") \
    X(MAX_SESSION_WORKERS, "H2MaxSessionWorkers", NUM, H2_CONF_UNSET, 1, 10000, SRV, \
      "workers one connection's streams may hold at once, default: half of H2MaxWorkers") \
    X(MAX_WORKER_IDLE, "H2MaxWorkerIdleSeconds", NUM, 600, 0, 86400*365, GLOBAL, \
      "seconds an h2 worker above the minimum may idle") \
    X(STREAM_MAX_MEM, "H2StreamMaxMemSize", NUM, 65536, 1024, I64MAX, SRV, \
      "response bytes buffered per stream before the handler waits") \
    X(MODERN_TLS_ONLY, "H2ModernTLSOnly", FLAG, 1, 0, 1, SRV, \
      "require TLS 1.2+ without blocklisted ciphers for h2") \
    X(TLS_WARMUP_SIZE, "H2TLSWarmUpSize", NUM, 1048576, 0, I64MAX, SRV, \
      "bytes written in small TLS records after a connection starts or idles") \
    X(TLS_COOLDOWN_SECS, "H2TLSCoolDownSecs", NUM, 1, 0, 86400, SRV, \
      "idle seconds after which TLS writes return to small records") \
    X(MAX_DATA_FRAME_LEN, "H2MaxDataFrameLen", NUM, 0, 0, 0xffffff, SRV, \
      "maximum DATA frame payload, 0 for the peer's limit") \
    X(OUTPUT_BUFFERING, "H2OutputBuffering", FLAG, 1, 0, 1, SRV, \
      "buffer response output instead of flushing every write") \
    X(PADDING, "H2Padding", NUM, 0, 0, 8, SRV, \
      "number of random padding bits added to frames") \
    X(MAX_STREAM_ERRORS, "H2MaxStreamErrors", NUM, 8, 0, 0x7fffffff, SRV, \
      "client caused stream errors tolerated per connection, 0 for no limit") \
    X(MAX_HEADER_BLOCK, "H2MaxHeaderBlockLen", NUM, 0, 0, 0x7fffffff, SRV, \
      "maximum decoded size of a request header block, 0 for the httpd limits") \
    X(STREAM_TIMEOUT, "H2StreamTimeout", TIME, H2_CONF_UNSET, 0, I64MAX, SRV_SECT, \
      "timeout for a stream's I/O, default: Timeout") \
    X(COPY_FILES, "H2CopyFiles", FLAG, 0, 0, 1, SRV_DIR, \
      "copy file data instead of passing file handles") \
    X(PUSH, "H2Push", FLAG, 1, 0, 1, SRV_DIR, \
      "server push of the resources a response's preload links name") \
    X(EARLY_HINTS, "H2EarlyHints", FLAG, 0, 0, 1, SRV, \
      "send 103 Early Hints") \
    X(PROXY_REQUESTS, "H2ProxyRequests", FLAG, 0, 0, 1, SRV, \
      "requests name their target as an absolute URI, for forward proxies") \
    X(WEBSOCKETS, "H2WebSockets", FLAG, 0, 0, 1, SRV, \
      "WebSockets over HTTP/2 (RFC 8441 extended CONNECT)") \
    X(SERIALIZE_HEADERS, "H2SerializeHeaders", FLAG, 0, 0, 1, SRV, \
      "obsolete, accepted and ignored") \
    X(PUSH_DIARY_SIZE, "H2PushDiarySize", NUM, 256, 0, 0x7fffffff, SRV, \
      "pushed resources remembered per connection, not to push them twice")

#define H2_CONF_ENUM(id, ...) H2_CONF_##id,
typedef enum {
    H2_CONF_VARS(H2_CONF_ENUM)
    H2_CONF_COUNT
} h2_conf_var;

/* Server and directory configs share one layout so that a lookup for a
 * request can fall back from directory to server to built-in default. */


typedef struct h2_config {
    apr_int64_t v[H2_CONF_COUNT];
    apr_array_header_t *early_hints;   /* H2EarlyHint name value pairs */
    apr_array_header_t *push_resources;/* H2PushResource paths */
    apr_array_header_t *push_priorities;  /* H2PushPriority rules */
    const h2_read_timeouts *read_timeouts;  /* servers only, post_config */
} h2_config;

extern const command_rec h2_cmds[];

void *h2_config_create_srv(apr_pool_t *p, server_rec *s);
void *h2_config_create_dir(apr_pool_t *p, char *dir);
void *h2_config_merge(apr_pool_t *p, void *base, void *add);

/* Value of var for a server, falling back to the built-in default. */
apr_int64_t h2_config_sget(server_rec *s, h2_conf_var var);

/* Value of var for a request: directory config, then server, then default. */
apr_int64_t h2_config_rget(request_rec *r, h2_conf_var var);

/* Built-in default of var (H2_CONF_UNSET where it depends on context). */
apr_int64_t h2_config_default(h2_conf_var var);

/* 1 when the MPM runs threads (event, worker), 0 for prefork and its kin. */
int h2_config_mpm_threaded(void);

/* Worker pool limits derived from the MPM when not configured; under a
 * non-threaded MPM 1-1 (one request at a time per child) unless
 * H2MaxWorkers says otherwise. */
void h2_config_workers(server_rec *s, int *pmin, int *pmax, int *pidle_secs);

/* The workers part of the start-up line; warns (AH21200) when an explicit
 * H2MaxWorkers lets a prefork child run requests concurrently. */
const char *h2_config_check_workers(server_rec *s, apr_pool_t *p);

/* The read timeouts of server s (h2_read_timeout_conftree.c sets them at start-up). */
const h2_read_timeouts *h2_config_read_timeouts(server_rec *s);
void h2_config_set_read_timeouts(server_rec *s, const h2_read_timeouts *rt);

/* Early hints configured for a request (array of name, value pairs). */
apr_array_header_t *h2_config_early_hints(request_rec *r);

/* How a pushed stream is placed against the stream it was promised on
 * (H2PushPriority). */
typedef enum { H2_PUSH_AFTER, H2_PUSH_BEFORE, H2_PUSH_INTERLEAVED } h2_push_dep;

/* The H2PushPriority rule of server s for a pushed response of content
 * type ctype (NULL: none): its dependency and weight ("* After 16" when
 * no rule matches). */
void h2_config_push_priority(server_rec *s, const char *ctype, h2_push_dep *dep,
                             int *weight);

/* Paths H2PushResource names for a request (array of const char *;
 * a path marked critical starts with "!"). */
apr_array_header_t *h2_config_push_resources(request_rec *r);

#endif
