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
#ifndef H2_C1_H
#define H2_C1_H

#include <httpd.h>

struct h2_session;

/* The client ("primary") connection: deciding that it speaks HTTP/2,
 * running its session in the MPM's thread and handing it back to the MPM
 * while it is idle. */

typedef struct h2_c1_ctx {
    const char *protocol;         /* "h2" or "h2c" once it is HTTP/2 */
    struct h2_session *session;
    int checked;                  /* looked at it already */
    server_rec *server;           /* vhost TLS SNI selected, if any */
} h2_c1_ctx;

/* Our state for c1, created when create is set. */
h2_c1_ctx *h2_c1_ctx_get(conn_rec *c, int create);

/* 1 if c's TLS parameters allow h2 where H2ModernTLSOnly (of s) asks for
 * it; -1 while they are not negotiated yet. Connections without TLS
 * always pass. */
int h2_c1_tls_ok(conn_rec *c, server_rec *s);

int h2_c1_process_connection(conn_rec *c);
int h2_c1_pre_close(conn_rec *c);

/* Serve c as HTTP/2 after r's Upgrade: h2c was answered with 101. Returns
 * when the connection is done. */
apr_status_t h2_c1_run_upgraded(conn_rec *c, request_rec *r);

#endif
