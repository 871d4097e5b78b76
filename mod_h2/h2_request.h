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
#ifndef H2_REQUEST_H
#define H2_REQUEST_H

#include <httpd.h>

#include "h2_response.h"

struct h2_x_req;

/* What the code that runs the stream (h2_c2.c) has a request do along the
 * way, and tells its response filter: this file calls nothing of the
 * secondary connection's. */
typedef struct h2_request_env {
    h2_resp_stream resp;
    void (*begins)(request_rec *r);     /* its request line and headers set */
    void (*websocket)(request_rec *r);  /* a WebSocket's, before post-read */
} h2_request_env;

/* Worker: turn the stream's validated request head into an httpd request on the
 * secondary connection c2 and run it through httpd's ordinary request
 * processing. *pr points at the request while it exists (the input
 * filter needs it for 100-continue and trailers). Returns when the
 * request is finished and its pool is gone. */
void h2_request_run(conn_rec *c2, const struct h2_x_req *xr,
                    const h2_request_env *env, request_rec **pr);

/* Child init: the process id the requests' H2_STREAM_TAG starts with. */
void h2_request_child_init(void);

#endif
