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
/* Server push: preload links to paths, and the push diary (h2_push.h). */
#include <string.h>
#include <apr_strings.h>
#include <apr_lib.h>

#include "h2_push.h"

int h2_push_path_ok(const char *path)
{
    const unsigned char *s = (const unsigned char *)path;
    if (!s || s[0] != '/' || s[1] == '/') {
        return 0;
    }
    for (; *s; ++s) {
        if (*s <= 0x20 || *s == 0x7f) return 0;
    }
    return 1;
}

/* The path of uri if it is one of scheme://authority's resources, or NULL. */
static const char *same_origin_path(apr_pool_t *p, const char *uri, apr_size_t len,
                                    const char *scheme, const char *authority)
{
    apr_size_t slen = strlen(scheme), alen = strlen(authority);
    const char *path;

    if (len > 0 && uri[0] == '/') {
        path = apr_pstrmemdup(p, uri, len);
    }
    else if (len > slen + 3 + alen && !strncasecmp(uri, scheme, slen)
             && !strncmp(uri + slen, "://", 3)
             && !strncasecmp(uri + slen + 3, authority, alen)
             && uri[slen + 3 + alen] == '/') {
        path = apr_pstrmemdup(p, uri + slen + 3 + alen, len - slen - 3 - alen);
    }
    else {
        return NULL;
    }
    return h2_push_path_ok(path)? path : NULL;
}

/* 1 when the rel parameter's value (a token or a quoted list of them)
 * holds "preload". */
static int rel_is_preload(const char *v, apr_size_t len)
{
    apr_size_t i = 0, start;
    while (i < len) {
        while (i < len && (v[i] == ' ' || v[i] == '"' || v[i] == '\t')) ++i;
        start = i;
        while (i < len && v[i] != ' ' && v[i] != '"' && v[i] != '\t') ++i;
        if (i - start == 7 && !strncasecmp(v + start, "preload", 7)) return 1;
    }
    return 0;
}

/* Reads one link-param at *ps (after its ';'): name and value bounds.
 * Returns 0 at the end of the link (',' or the end of value). */
static int next_param(const char **ps, const char **name, apr_size_t *nlen,
                      const char **val, apr_size_t *vlen)
{
    const char *s = *ps;
    while (*s == ' ' || *s == '\t') ++s;
    if (*s != ';') {
        *ps = s;
        return 0;
    }
    ++s;
    while (*s == ' ' || *s == '\t') ++s;
    *name = s;
    while (*s && *s != '=' && *s != ';' && *s != ',' && *s != ' ' && *s != '\t') ++s;
    *nlen = (apr_size_t)(s - *name);
    while (*s == ' ' || *s == '\t') ++s;
    *val = s;
    *vlen = 0;
    if (*s == '=') {
        ++s;
        while (*s == ' ' || *s == '\t') ++s;
        *val = s;
        if (*s == '"') {
            for (++s; *s && *s != '"'; ++s) {
                if (*s == '\\' && s[1]) ++s;
            }
            if (*s == '"') ++s;
        }
        else {
            while (*s && *s != ';' && *s != ',' && *s != ' ' && *s != '\t') ++s;
        }
        *vlen = (apr_size_t)(s - *val);
    }
    *ps = s;
    return 1;
}

void h2_push_links(apr_pool_t *p, const char *value, const char *scheme,
                   const char *authority, apr_array_header_t *paths)
{
    const char *s = value, *uri, *name, *val, *path;
    apr_size_t ulen, nlen, vlen;
    int preload, nopush;

    while (s && *s) {
        while (*s == ' ' || *s == '\t' || *s == ',') ++s;
        if (*s != '<') {
            /* not a link: skip to the next one */
            s = strchr(s, ',');
            continue;
        }
        uri = ++s;
        while (*s && *s != '>') ++s;
        if (!*s) {
            return;
        }
        ulen = (apr_size_t)(s - uri);
        ++s;
        preload = nopush = 0;
        while (next_param(&s, &name, &nlen, &val, &vlen)) {
            if (nlen == 3 && !strncasecmp(name, "rel", 3)) {
                preload |= rel_is_preload(val, vlen);
            }
            else if (nlen == 6 && !strncasecmp(name, "nopush", 6)) {
                nopush = 1;
            }
        }
        if (preload && !nopush
            && (path = same_origin_path(p, uri, ulen, scheme, authority)) != NULL) {
            APR_ARRAY_PUSH(paths, const char *) = path;
        }
        /* whatever follows up to the next link is not ours to read */
        while (*s && *s != ',') ++s;
    }
}

h2_push_diary *h2_push_diary_create(apr_pool_t *p, int size)
{
    h2_push_diary *d = apr_pcalloc(p, sizeof(*d));
    d->size = size > 0? size : 0;
    if (d->size) {
        d->hashes = apr_pcalloc(p, sizeof(apr_uint64_t) * (apr_size_t)d->size);
    }
    return d;
}

/* FNV-1a, 64 bit: 8 bytes per entry, as the manual counts the diary */
static apr_uint64_t hash_of(const char *authority, const char *path)
{
    apr_uint64_t h = APR_UINT64_C(14695981039346656037);
    const unsigned char *s;
    for (s = (const unsigned char *)authority; *s; ++s) {
        h = (h ^ apr_tolower(*s)) * APR_UINT64_C(1099511628211);
    }
    h = (h ^ ' ') * APR_UINT64_C(1099511628211);
    for (s = (const unsigned char *)path; *s; ++s) {
        h = (h ^ *s) * APR_UINT64_C(1099511628211);
    }
    return h;
}

int h2_push_diary_add(h2_push_diary *d, const char *authority, const char *path)
{
    apr_uint64_t h;
    int i;

    if (!d->size) {
        return 1;
    }
    h = hash_of(authority, path);
    for (i = 0; i < d->used; ++i) {
        if (d->hashes[i] == h) return 0;
    }
    /* full: the oldest entry makes room */
    d->hashes[d->next] = h;
    d->next = (d->next + 1) % d->size;
    if (d->used < d->size) ++d->used;
    return 1;
}
