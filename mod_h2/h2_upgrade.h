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
#ifndef H2_UPGRADE_H
#define H2_UPGRADE_H

/* What the protocol hooks hand the session of an h2c upgrade (h2_upgrade.c
 * makes the request stream 1 of it): the request's body, which they read
 * before the 101, in the request pool's userdata under
 * H2_UPGRADE_BODY_KEY. */

#include <apr.h>

/* The body of a request that upgrades to h2c, read before the 101. */
typedef struct h2_upgrade_body {
    const char *data;
    apr_size_t len;
} h2_upgrade_body;
#define H2_UPGRADE_BODY_KEY "h2-upgrade-body"

#endif
