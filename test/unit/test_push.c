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
/* Server push: which preload links are pushed, and the push diary. */
#include <string.h>
#include <apr_general.h>
#include <apr_strings.h>

#include "h2_push.h"
#include "unit.h"

static apr_pool_t *pool;

/* The paths of value's links, joined by " ". */
static const char *links(const char *value)
{
    apr_array_header_t *paths = apr_array_make(pool, 4, sizeof(const char *));
    h2_push_links(pool, value, "https", "example.org:8443", paths);
    return apr_array_pstrcat(pool, paths, ' ');
}

static void test_preload_links_are_pushed(void)
{
    CHECK(!strcmp(links("</a.css>; rel=preload"), "/a.css"));
    CHECK(!strcmp(links("</a.css>;rel=preload; as=style, </b.js>; rel=\"preload\""),
                  "/a.css /b.js"));
    CHECK(!strcmp(links("</a.css>; rel=\"prefetch preload\""), "/a.css"));
    CHECK(!strcmp(links("</a.css>; REL=PRELOAD"), "/a.css"));
    CHECK(!strcmp(links("<https://example.org:8443/c.png>; rel=preload"), "/c.png"));
    CHECK(!strcmp(links("</q?x=1;y=2>; rel=preload"), "/q?x=1;y=2"));
}

static void test_other_links_are_not_pushed(void)
{
    CHECK(!strcmp(links("</a.css>; rel=preload; nopush"), ""));
    CHECK(!strcmp(links("</a.css>; rel=stylesheet"), ""));
    CHECK(!strcmp(links("</a.css>; rel=\"preloaded\""), ""));
    CHECK(!strcmp(links("</a.css>"), ""));
    /* another origin, scheme or port */
    CHECK(!strcmp(links("<https://other.org/c.png>; rel=preload"), ""));
    CHECK(!strcmp(links("<http://example.org:8443/c.png>; rel=preload"), ""));
    CHECK(!strcmp(links("<https://example.org/c.png>; rel=preload"), ""));
    CHECK(!strcmp(links("<//other.org/c.png>; rel=preload"), ""));
    /* relative, or not a path a request may carry */
    CHECK(!strcmp(links("<c.png>; rel=preload"), ""));
    CHECK(!strcmp(links("</c d.png>; rel=preload"), ""));
    /* broken values end the list, nothing else */
    CHECK(!strcmp(links("</a.css; rel=preload"), ""));
    CHECK(!strcmp(links("junk, </b.js>; rel=preload"), "/b.js"));
    CHECK(!strcmp(links("</a>; title=\"x, y\"; rel=preload, </b>; rel=preload"), "/a /b"));
}

static void test_diary_remembers_the_last_pushes(void)
{
    h2_push_diary *d = h2_push_diary_create(pool, 2);
    CHECK(h2_push_diary_add(d, "example.org", "/a") == 1);
    CHECK(h2_push_diary_add(d, "example.org", "/a") == 0);
    CHECK(h2_push_diary_add(d, "EXAMPLE.org", "/a") == 0);
    CHECK(h2_push_diary_add(d, "other.org", "/a") == 1);
    /* full: /a, the oldest, makes room for /b */
    CHECK(h2_push_diary_add(d, "example.org", "/b") == 1);
    CHECK(h2_push_diary_add(d, "example.org", "/a") == 1);
    d = h2_push_diary_create(pool, 0);
    CHECK(h2_push_diary_add(d, "example.org", "/a") == 1);
    CHECK(h2_push_diary_add(d, "example.org", "/a") == 1);
}

int main(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
    test_preload_links_are_pushed();
    test_other_links_are_not_pushed();
    test_diary_remembers_the_last_pushes();
    apr_pool_destroy(pool);
    apr_terminate();
    return unit_done("test_push");
}
