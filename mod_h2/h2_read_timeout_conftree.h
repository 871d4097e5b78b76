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
#ifndef H2_READ_TIMEOUT_CONFTREE_H
#define H2_READ_TIMEOUT_CONFTREE_H

#include <httpd.h>

/* At start-up: give every server the read timeouts HTTP/1.1 has there.
 * With mod_reqtimeout loaded, those are its RequestReadTimeout values
 * (its own defaults where none is set), read from the configuration;
 * without it, the same defaults (see h2_read_timeouts_default). */
apr_status_t h2_read_timeout_post_config(apr_pool_t *p, server_rec *s_main);

#endif
