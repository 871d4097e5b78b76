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
#ifndef H2_VARS_H
#define H2_VARS_H

#include <httpd.h>

/* The variables HTTP/2 requests have (HTTP2, H2_STREAM_ID, ...) for
 * ap_expr (Require expr, <If>, ...) and for other modules through the
 * optional functions mod_http2 defines (mod_http2.h): http2_is_h2,
 * http2_var_lookup, http2_get_num_workers. */
void h2_vars_register_hooks(void);

#endif
