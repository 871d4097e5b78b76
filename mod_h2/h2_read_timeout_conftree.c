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
/* Finds mod_reqtimeout's RequestReadTimeout directives in httpd's
 * configuration tree at start-up, per server, so that HTTP/2 connections
 * honour them (h2_read_timeout.c parses their values). */
#include <apr_strings.h>
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_log.h>
#include <mod_so.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_read_timeout.h"
#include "h2_read_timeout_conftree.h"

APLOG_USE_MODULE(http2);

/* 1 when a module of that name ("mod_foo.c" or "foo_module") is loaded. */
static int module_loaded(server_rec *s, const char *name)
{
    APR_OPTIONAL_FN_TYPE(ap_find_loaded_module_symbol) *find_symbol;

    if (ap_find_linked_module(name)) {
        return 1;
    }
    find_symbol = APR_RETRIEVE_OPTIONAL_FN(ap_find_loaded_module_symbol);
    return find_symbol && find_symbol(s, name) != NULL;
}

/* 1 when the section's condition holds, as httpd evaluated it: only
 * <IfModule> and <IfDefine> are followed; other sections (<IfFile>, ...)
 * are not looked into. */
static int section_holds(server_rec *s, const ap_directive_t *d)
{
    const char *arg = d->args;
    int negate = (*arg == '!');
    char *name;
    int holds;

    if (negate) ++arg;
    name = apr_pstrdup(s->process->pool, arg);
    if (*name && name[strlen(name) - 1] == '>') name[strlen(name) - 1] = '\0';
    if (!strcasecmp(d->directive, "<IfModule")) {
        holds = module_loaded(s, name);
    }
    else if (!strcasecmp(d->directive, "<IfDefine")) {
        holds = ap_exists_config_define(name);
    }
    else {
        return 0;
    }
    return negate? !holds : holds;
}

/* Apply the RequestReadTimeout directives among d and its siblings (and
 * inside conditional sections that hold) to rt, in order. */
static void apply_level(apr_pool_t *p, server_rec *s, const ap_directive_t *d,
                        h2_read_timeouts *rt)
{
    for (; d; d = d->next) {
        if (!strcasecmp(d->directive, "RequestReadTimeout")) {
            const char *args = d->args, *arg;
            while (*(arg = ap_getword_conf(p, &args))) {
                const char *err = h2_read_timeouts_parse(rt, p, arg);
                if (err) {
                    /* mod_reqtimeout refused the configuration then */
                    ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, APLOGNO(21084)
                                 "h2: RequestReadTimeout at %s:%d: %s",
                                 d->filename, d->line_num, err);
                }
            }
        }
        else if (d->first_child && strncasecmp(d->directive, "<VirtualHost", 12)
                 && section_holds(s, d)) {
            apply_level(p, s, d->first_child, rt);
        }
    }
}

/* The <VirtualHost> section that defined server s, or NULL. */
static const ap_directive_t *vhost_section(const ap_directive_t *d, server_rec *s)
{
    const ap_directive_t *found;
    for (; d; d = d->next) {
        if (!strcasecmp(d->directive, "<VirtualHost")) {
            if (s->defn_name && d->filename && (unsigned)d->line_num == s->defn_line_number
                && !strcmp(d->filename, s->defn_name)) {
                return d;
            }
        }
        else if (d->first_child && section_holds(s, d)
                 && (found = vhost_section(d->first_child, s)) != NULL) {
            return found;
        }
    }
    return NULL;
}

apr_status_t h2_read_timeout_post_config(apr_pool_t *p, server_rec *s_main)
{
    h2_read_timeouts *base = apr_palloc(p, sizeof(*base));
    server_rec *s;

    h2_read_timeouts_default(base);
    if (!module_loaded(s_main, "mod_reqtimeout.c")) {
        /* HTTP/2 framing needs the protection anyway: the defaults */
        for (s = s_main; s; s = s->next) {
            h2_config_set_read_timeouts(s, base);
        }
        return APR_SUCCESS;
    }
    apply_level(p, s_main, ap_conftree, base);
    h2_config_set_read_timeouts(s_main, base);
    for (s = s_main->next; s; s = s->next) {
        const ap_directive_t *vh = vhost_section(ap_conftree, s);
        h2_read_timeouts *rt = base;
        if (vh && vh->first_child) {
            rt = apr_pmemdup(p, base, sizeof(*rt));
            apply_level(p, s, vh->first_child, rt);
        }
        h2_config_set_read_timeouts(s, rt);
    }
    return APR_SUCCESS;
}
