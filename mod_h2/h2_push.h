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
/* Server push (RFC 9113 8.4), the parts that are pure logic: which paths
 * a response's preload links name, and the connection's diary of what it
 * pushed. Either thread may call them. */
#ifndef H2_PUSH_H
#define H2_PUSH_H

#include <apr_pools.h>
#include <apr_tables.h>

/* Append to paths (of const char *) the path of each link in the Link
 * field value (RFC 8288) that asks for preload (rel=preload), does not say
 * nopush, and names a resource of the request's own origin: a path, or
 * an absolute URI with the request's scheme and authority. */
void h2_push_links(apr_pool_t *p, const char *value, const char *scheme,
                   const char *authority, apr_array_header_t *paths);

/* 1 when path is one a pushed request may carry: starts with one "/",
 * no whitespace or control characters. */
int h2_push_path_ok(const char *path);

/* What a connection pushed, the last size of them (H2PushDiarySize). */
typedef struct h2_push_diary {
    apr_uint64_t *hashes;
    int size, used, next;
} h2_push_diary;

h2_push_diary *h2_push_diary_create(apr_pool_t *p, int size);

/* 1 when authority + path was not in the diary (now it is), 0 when it was.
 * A diary of size 0 remembers nothing: always 1. */
int h2_push_diary_add(h2_push_diary *d, const char *authority, const char *path);

#endif
