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
/* The H2* directives: their table, parsing, defaults and lookups per server
 * and directory. */

#include <apr_lib.h>
#include <apr_strings.h>
#include <httpd.h>
#include <http_config.h>
#include <http_core.h>
#include <http_log.h>
#include <ap_mpm.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_push.h"

extern module AP_MODULE_DECLARE_DATA http2_module;
APLOG_USE_MODULE(http2);

typedef enum {
    H2_VT_FLAG,     /* on|off */
    H2_VT_NUM,      /* plain integer */
    H2_VT_TIME,     /* time interval, seconds unless a unit is given */
} h2_var_type;

#define H2_CTX_SRV     0x1   /* server config and virtual hosts */
#define H2_CTX_GLOBAL  0x2   /* main server config only */
#define H2_CTX_DIR     0x4   /* directory sections and .htaccess */
#define H2_CTX_SRV_DIR (H2_CTX_SRV|H2_CTX_DIR)
#define H2_CTX_SRV_SECT H2_CTX_SRV_DIR    /* the same, .htaccess excepted */

typedef struct {
    const char *name;
    h2_var_type type;
    apr_int64_t def;
    apr_int64_t min, max;
    int ctx;
    const char *help;
} h2_var_def;


/* Defaults follow the documented defaults of the H2* directives so that
 * existing configurations behave the same. */
#define H2_CONF_DEF(id, n, t, d, mn, mx, ctx, help) \
    [H2_CONF_##id] = { n, H2_VT_##t, d, mn, mx, H2_CTX_##ctx, help },
static const h2_var_def var_defs[H2_CONF_COUNT] = {
    H2_CONF_VARS(H2_CONF_DEF)
};

static h2_config *config_create(apr_pool_t *p)
{
    h2_config *conf = apr_pcalloc(p, sizeof(*conf));
    int i;
    for (i = 0; i < H2_CONF_COUNT; ++i) {
        conf->v[i] = H2_CONF_UNSET;
    }
    return conf;
}

void *h2_config_create_srv(apr_pool_t *p, server_rec *s)
{
    return config_create(p);
}

void *h2_config_create_dir(apr_pool_t *p, char *dir)
{
    return config_create(p);
}

void *h2_config_merge(apr_pool_t *p, void *basev, void *addv)
{
    h2_config *base = basev, *add = addv, *n = config_create(p);
    int i;
    for (i = 0; i < H2_CONF_COUNT; ++i) {
        n->v[i] = (add->v[i] != H2_CONF_UNSET)? add->v[i] : base->v[i];
    }
    if (base->early_hints && add->early_hints) {
        n->early_hints = apr_array_append(p, base->early_hints, add->early_hints);
    }
    else {
        n->early_hints = add->early_hints? add->early_hints : base->early_hints;
    }
    n->push_priorities = add->push_priorities? add->push_priorities
                                              : base->push_priorities;
    if (base->push_resources && add->push_resources) {
        n->push_resources = apr_array_append(p, base->push_resources, add->push_resources);
    }
    else {
        n->push_resources = add->push_resources? add->push_resources : base->push_resources;
    }
    return n;
}

apr_int64_t h2_config_default(h2_conf_var var)
{
    return var_defs[var].def;
}

apr_int64_t h2_config_sget(server_rec *s, h2_conf_var var)
{
    h2_config *conf = ap_get_module_config(s->module_config, &http2_module);
    if (conf && conf->v[var] != H2_CONF_UNSET) {
        return conf->v[var];
    }
    if (var == H2_CONF_STREAM_TIMEOUT) {
        return s->timeout;
    }
    return var_defs[var].def;
}

const h2_read_timeouts *h2_config_read_timeouts(server_rec *s)
{
    static h2_read_timeouts defaults;
    static int defaults_set;
    h2_config *conf = ap_get_module_config(s->module_config, &http2_module);

    if (conf && conf->read_timeouts) {
        return conf->read_timeouts;
    }
    if (!defaults_set) {
        h2_read_timeouts_default(&defaults);
        defaults_set = 1;
    }
    return &defaults;
}

void h2_config_set_read_timeouts(server_rec *s, const h2_read_timeouts *rt)
{
    h2_config *conf = ap_get_module_config(s->module_config, &http2_module);
    if (conf) {
        conf->read_timeouts = rt;
    }
}

apr_int64_t h2_config_rget(request_rec *r, h2_conf_var var)
{
    h2_config *dconf = ap_get_module_config(r->per_dir_config, &http2_module);
    if (dconf && dconf->v[var] != H2_CONF_UNSET) {
        return dconf->v[var];
    }
    return h2_config_sget(r->server, var);
}

/* The array at offset off of r's directory config if it has one, else
 * of its server's. */
static apr_array_header_t *dir_or_srv_array(request_rec *r, apr_size_t off)
{
    h2_config *dconf = ap_get_module_config(r->per_dir_config, &http2_module);
    h2_config *sconf = ap_get_module_config(r->server->module_config, &http2_module);
    apr_array_header_t *a = dconf? *(apr_array_header_t **)((char *)dconf + off) : NULL;
    if (a) {
        return a;
    }
    return sconf? *(apr_array_header_t **)((char *)sconf + off) : NULL;
}

apr_array_header_t *h2_config_early_hints(request_rec *r)
{
    return dir_or_srv_array(r, APR_OFFSETOF(h2_config, early_hints));
}

apr_array_header_t *h2_config_push_resources(request_rec *r)
{
    return dir_or_srv_array(r, APR_OFFSETOF(h2_config, push_resources));
}

int h2_config_mpm_threaded(void)
{
    int threaded = 0;
    ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded);
    return threaded != AP_MPMQ_NOT_SUPPORTED;
}

void h2_config_workers(server_rec *s, int *pmin, int *pmax, int *pidle_secs)
{
    int threads = 1, threaded = h2_config_mpm_threaded(), minw, maxw;

    /* Like HTTP/1.1 requests, h2 requests are bounded by the threads the
     * MPM runs per child. A prefork child runs one request at a time, as
     * over HTTP/1.1: prefork is what httpd runs for modules that are not
     * thread-safe (Debian switches to it for mod_php), so its connection's
     * streams take turns on one worker. Only an explicit H2MaxWorkers, the
     * admin's word that the modules are thread-safe, gives it more
     * (h2_config_check_workers warns at start-up). */
    ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads);
    if (!threaded || threads <= 1) {
        threads = 1;
    }
    minw = (int)h2_config_sget(s, H2_CONF_MIN_WORKERS);
    maxw = (int)h2_config_sget(s, H2_CONF_MAX_WORKERS);
    if (minw == H2_CONF_UNSET) {
        minw = threads < 25? threads : 25;
    }
    if (maxw == H2_CONF_UNSET && !threaded) {
        maxw = 1;
    }
    else if (maxw == H2_CONF_UNSET) {
        maxw = (threads == 1)? 16 : threads * 3 / 2;
        if (maxw < 4) maxw = 4;
    }
    if (minw > maxw) {
        minw = maxw;
    }
    *pmin = minw;
    *pmax = maxw;
    *pidle_secs = (int)h2_config_sget(s, H2_CONF_MAX_WORKER_IDLE);
}

/* Under prefork, a server whose sessions run one stream at a time does
 * not announce H2WebSockets (h2_session.c read_config): say so once. */
static void check_websockets(server_rec *s, int maxw)
{
    server_rec *v;

    for (v = s; v; v = v->next) {
        apr_int64_t msw = h2_config_sget(v, H2_CONF_MAX_SESSION_WORKERS);
        if (h2_config_sget(v, H2_CONF_WEBSOCKETS) == 1
            && (maxw <= 1 || (msw != H2_CONF_UNSET && msw <= 1))) {
            ap_log_error(APLOG_MARK, APLOG_WARNING, 0, v, APLOGNO(21201)
                         "mod_h2: H2WebSockets on (server %s) is not announced "
                         "under the prefork MPM with one request at a time: "
                         "an open WebSocket would hold the connection's only "
                         "worker and stall its other requests. Clients open "
                         "WebSockets over HTTP/1.1 instead",
                         v->server_hostname? v->server_hostname : "?");
            return;
        }
    }
}

const char *h2_config_check_workers(server_rec *s, apr_pool_t *p)
{
    int minw, maxw, idle;

    h2_config_workers(s, &minw, &maxw, &idle);
    if (h2_config_mpm_threaded()) {
        return apr_psprintf(p, "workers %d-%d", minw, maxw);
    }
    check_websockets(s, maxw);
    if (maxw <= 1) {
        return apr_psprintf(p, "workers %d-%d, one request at a time per child",
                            minw, maxw);
    }
    /* honoured, as the admin asked for it, but said out loud: the modules
     * prefork was chosen for fail under concurrency, in ways that look
     * like anything but this directive */
    ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s, APLOGNO(21200)
                 "mod_h2: H2MaxWorkers %d under the prefork MPM: a child runs "
                 "up to %d HTTP/2 requests at once, in threads. Modules that "
                 "are not thread-safe (mod_php and others prefork is chosen "
                 "for) crash or mix up requests then; without H2MaxWorkers a "
                 "prefork child runs one request at a time", maxw, maxw);
    return apr_psprintf(p, "workers %d-%d, up to %d requests at once per child "
                        "(H2MaxWorkers)", minw, maxw, maxw);
}

/* httpd's parser takes a word by its first letter ("soon" is 0 s): only
 * digits followed by a unit it knows pass here. */
static int time_arg_ok(const char *arg)
{
    static const char *units[] = { "", "s", "sec", "secs", "second", "seconds",
        "ms", "mi", "min", "mins", "minute", "minutes", "h", "hr", "hour", "hours" };
    apr_size_t i;

    if (!apr_isdigit(*arg)) {
        return 0;
    }
    while (apr_isdigit(*arg)) {
        ++arg;
    }
    for (i = 0; i < sizeof(units) / sizeof(units[0]); ++i) {
        if (!strcasecmp(arg, units[i])) {
            return 1;
        }
    }
    return 0;
}

static const char *set_var(cmd_parms *cmd, void *dirconf, const char *arg)
{
    h2_conf_var var = (h2_conf_var)(apr_uintptr_t)cmd->info;
    const h2_var_def *def = &var_defs[var];
    h2_config *conf;
    apr_int64_t val;
    const char *err;

    if (def->ctx & H2_CTX_GLOBAL) {
        if ((err = ap_check_cmd_context(cmd, GLOBAL_ONLY)) != NULL) {
            return err;
        }
    }
    if (cmd->path) {
        conf = dirconf;
    }
    else {
        conf = ap_get_module_config(cmd->server->module_config, &http2_module);
    }

    switch (def->type) {
    case H2_VT_FLAG:
        if (!strcasecmp(arg, "on")) val = 1;
        else if (!strcasecmp(arg, "off")) val = 0;
        else return apr_pstrcat(cmd->pool, def->name, ": '", arg,
                                "' is neither 'on' nor 'off'", NULL);
        break;
    case H2_VT_TIME: {
        apr_interval_time_t t;
        if (!time_arg_ok(arg) || ap_timeout_parameter_parse(arg, &t, "s") != APR_SUCCESS
            || t < 0) {
            return apr_pstrcat(cmd->pool, def->name, ": '", arg, "' is not a "
                               "time interval of 0 or more (seconds, or with "
                               "a unit: ms, s, mi, h)", NULL);
        }
        val = t;
        break;
    }
    default: {
        char *end;
        if (apr_strtoff(&val, arg, &end, 10) != APR_SUCCESS || *end
            || val < def->min || val > def->max) {
            return apr_psprintf(cmd->pool, "%s: '%s' is not a number in %"
                                APR_INT64_T_FMT "..%" APR_INT64_T_FMT,
                                def->name, arg, def->min, def->max);
        }
        break;
    }
    }
    conf->v[var] = val;
    return NULL;
}

static const char *set_early_hint(cmd_parms *cmd, void *dirconf,
                                  const char *name, const char *value)
{
    h2_config *conf = cmd->path? dirconf
        : ap_get_module_config(cmd->server->module_config, &http2_module);
    if (!conf->early_hints) {
        conf->early_hints = apr_array_make(cmd->pool, 4, sizeof(const char *));
    }
    APR_ARRAY_PUSH(conf->early_hints, const char *) = apr_pstrdup(cmd->pool, name);
    APR_ARRAY_PUSH(conf->early_hints, const char *) = apr_pstrdup(cmd->pool, value);
    return NULL;
}

/* A resource H2PushResource names is pushed (H2Push on, a client that
 * takes pushes) and announced as a preload Link in 103 Early Hints (with
 * H2EarlyHints on), which is what browsers act on today. */
static const char *set_push_resource(cmd_parms *cmd, void *dirconf,
                                     const char *arg1, const char *arg2,
                                     const char *arg3)
{
    const char *path = arg1;
    h2_config *conf;
    if (!strcasecmp(arg1, "add")) {
        path = arg2;
        arg2 = arg3;
    }
    if (!path) {
        return "H2PushResource needs a path";
    }
    if (arg2 && strcasecmp(arg2, "critical")) {
        return apr_pstrcat(cmd->pool, "H2PushResource: unknown option '", arg2,
                           "'", NULL);
    }
    if (!h2_push_path_ok(path)) {
        return apr_pstrcat(cmd->pool, "H2PushResource: '", path, "' is not a "
                           "path of this server (/...)", NULL);
    }
    conf = cmd->path? dirconf
        : ap_get_module_config(cmd->server->module_config, &http2_module);
    if (!conf->push_resources) {
        conf->push_resources = apr_array_make(cmd->pool, 4, sizeof(const char *));
    }
    /* "!" marks a critical one: pushed ahead of the response */
    APR_ARRAY_PUSH(conf->push_resources, const char *) =
        apr_pstrcat(cmd->pool, arg2? "!" : "", path, NULL);
    return NULL;
}

typedef struct {
    const char *mime;       /* lowercase type/subtype, or "*" */
    h2_push_dep dep;
    int weight;
} push_rule;

static const char *set_push_priority(cmd_parms *cmd, void *dirconf,
                                     const char *mime, const char *arg2,
                                     const char *arg3)
{
    h2_config *conf = ap_get_module_config(cmd->server->module_config, &http2_module);
    push_rule *rule;
    const char *wtext = NULL;
    char *end;
    long w;

    rule = apr_pcalloc(cmd->pool, sizeof(*rule));
    rule->mime = apr_pstrdup(cmd->pool, mime);
    ap_str_tolower((char *)rule->mime);
    rule->dep = H2_PUSH_AFTER;
    wtext = arg3;
    if (arg2 && !strcasecmp(arg2, "before")) {
        rule->dep = H2_PUSH_BEFORE;
    }
    else if (arg2 && !strcasecmp(arg2, "interleaved")) {
        rule->dep = H2_PUSH_INTERLEAVED;
    }
    else if (arg2 && strcasecmp(arg2, "after")) {
        if (arg3) {
            return apr_pstrcat(cmd->pool, "H2PushPriority: '", arg2, "' is none of "
                               "After, Before, Interleaved", NULL);
        }
        wtext = arg2;       /* "mime weight" is an After rule */
    }
    rule->weight = (rule->dep == H2_PUSH_INTERLEAVED)? 256 : 16;
    if (wtext) {
        if (rule->dep == H2_PUSH_BEFORE) {
            return "H2PushPriority: a Before rule takes no weight (it is the "
                   "client stream's)";
        }
        w = strtol(wtext, &end, 10);
        if (*end || w < 1 || w > (rule->dep == H2_PUSH_INTERLEAVED? 512 : 256)) {
            return apr_pstrcat(cmd->pool, "H2PushPriority: weight '", wtext,
                               "' is not a number in 1..256 (Interleaved: 1..512)",
                               NULL);
        }
        rule->weight = (int)w;
    }
    if (!conf->push_priorities) {
        conf->push_priorities = apr_array_make(cmd->pool, 4, sizeof(push_rule));
    }
    APR_ARRAY_PUSH(conf->push_priorities, push_rule) = *rule;
    return NULL;
}

void h2_config_push_priority(server_rec *s, const char *ctype, h2_push_dep *dep,
                             int *weight)
{
    h2_config *conf = ap_get_module_config(s->module_config, &http2_module);
    const push_rule *rules, *any = NULL, *hit = NULL;
    apr_size_t len = 0;
    int i, n;

    *dep = H2_PUSH_AFTER;
    *weight = 16;
    if (!conf || !conf->push_priorities) {
        return;
    }
    if (ctype) {
        len = strcspn(ctype, "; \t");
    }
    rules = (const push_rule *)conf->push_priorities->elts;
    n = conf->push_priorities->nelts;
    for (i = 0; i < n && !hit; ++i) {
        if (!strcmp(rules[i].mime, "*")) any = any? any : &rules[i];
        else if (ctype && strlen(rules[i].mime) == len
                 && !strncasecmp(rules[i].mime, ctype, len)) hit = &rules[i];
    }
    if ((hit = hit? hit : any) != NULL) {
        *dep = hit->dep;
        *weight = hit->weight;
    }
}

/* Directives mod_http2 retired: accepted, so that old configurations still
 * load, with a warning that they do nothing. */
static const char *set_obsolete(cmd_parms *cmd, void *dirconf, const char *arg)
{
    ap_log_error(APLOG_MARK, APLOG_WARNING, 0, cmd->server, APLOGNO(21096)
                 "%s is obsolete and has no effect (in mod_http2 neither): "
                 "'%s %s' in %s:%d can go", cmd->cmd->name, cmd->cmd->name, arg,
                 cmd->directive->filename, cmd->directive->line_num);
    return NULL;
}

#define H2_OVR_SRV     RSRC_CONF
#define H2_OVR_GLOBAL  RSRC_CONF
#define H2_OVR_SRV_DIR (RSRC_CONF|ACCESS_CONF|OR_FILEINFO)
#define H2_OVR_SRV_SECT (RSRC_CONF|ACCESS_CONF)
#define H2_CONF_CMD(id, n, t, d, mn, mx, ctx, help) \
    AP_INIT_TAKE1(n, set_var, (void *)(apr_uintptr_t)H2_CONF_##id, H2_OVR_##ctx, help),

const command_rec h2_cmds[] = {
    H2_CONF_VARS(H2_CONF_CMD)
    AP_INIT_TAKE2("H2EarlyHint", set_early_hint, NULL, H2_OVR_SRV_DIR,
                  "add a response header to 103 Early Hints"),
    AP_INIT_TAKE123("H2PushResource", set_push_resource, NULL, H2_OVR_SRV_DIR,
                    "push a resource with the responses of a location and "
                    "announce it in 103 Early Hints"),
    AP_INIT_TAKE123("H2PushPriority", set_push_priority, NULL, H2_OVR_SRV,
                    "priority of pushed responses by content type: mime-type "
                    "[After, Before or Interleaved] [weight]"),
    AP_INIT_TAKE1("H2SessionExtraFiles", set_obsolete, NULL, RSRC_CONF,
                  "obsolete, no effect"),
    AP_INIT_TAKE1(NULL, NULL, NULL, 0, NULL)
};
