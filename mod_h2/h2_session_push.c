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
/* Server push on the connection thread: PUSH_PROMISE for the paths a
 * worker found in a response, and the promised streams, which then run
 * like any request. */
#include <apr_strings.h>
#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_push.h"
#include "h2_session_int.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* The client's fields a pushed request carries: those it would send for
 * the resource itself (RFC 9113 8.4.1 leaves the choice to the server). */
static const char *const copied[] = {
    "user-agent", "accept-encoding", "accept-language", "cookie", "authorization",
};

typedef struct {
    h2_session *s;
    h2_stream *origin;
} push_ctx;

/* The promised request's fields, in the order of a request head. */
static int push_fields(h2_stream *origin, const char *path, nghttp2_nv *nv, int max)
{
    const char *names[4 + sizeof(copied) / sizeof(copied[0])];
    const char *values[4 + sizeof(copied) / sizeof(copied[0])];
    const char *policy = apr_table_get(origin->req.headers, "accept-push-policy");
    int n = 0, i;

    /* the client's accept-push-policy "head": it wants to know what is
     * pushed, not the bodies (h2_response.c announces the policy) */
    names[n] = ":method";
    values[n++] = (policy && !strcasecmp(policy, "head"))? "HEAD" : "GET";
    names[n] = ":scheme"; values[n++] = origin->req.scheme;
    names[n] = ":authority"; values[n++] = origin->req.authority;
    names[n] = ":path"; values[n++] = path;
    for (i = 0; i < (int)(sizeof(copied) / sizeof(copied[0])); ++i) {
        const char *v = apr_table_get(origin->req.headers, copied[i]);
        if (v) {
            names[n] = copied[i];
            values[n++] = v;
        }
    }
    for (i = 0; i < n && i < max; ++i) {
        nv[i].name = (uint8_t *)names[i];
        nv[i].namelen = strlen(names[i]);
        nv[i].value = (uint8_t *)values[i];
        nv[i].valuelen = strlen(values[i]);
        nv[i].flags = NGHTTP2_NV_FLAG_NONE;
    }
    return i;
}

/* The promised stream id: its request head, checked as a client's is. */
static void start_pushed(h2_session *s, h2_stream *origin, int32_t id,
                         const nghttp2_nv *nv, int n, int critical)
{
    h2_stream *ps = h2_session_stream_open(s, id, H2_ORIGIN_PUSH);
    h2_hdr_result res = H2_HDR_OK;
    int i;

    for (i = 0; i < n && res == H2_HDR_OK; ++i) {
        res = h2_req_head_add(&ps->req, (const char *)nv[i].name, nv[i].namelen,
                              (const char *)nv[i].value, nv[i].valuelen);
    }
    if (res == H2_HDR_OK) {
        res = h2_req_head_end(&ps->req);
    }
    if (res != H2_HDR_OK) {
        /* e.g. the connection's header budget is used up */
        h2_session_fail(s, id, H2_ERR_REFUSED_STREAM, h2_hdr_result_str(res));
        return;
    }
    ps->pushed_on = origin->id;
    ps->push_critical = critical;
    ps->prio = origin->prio;            /* wanted with the page */
    h2_x_c1_body_end(ps->x, NULL);      /* a pushed request has no body */
    h2_session_schedule_later(s, ps);
}

static int promise_one(void *ctx, const char *name, apr_size_t nlen,
                       const char *value, apr_size_t vlen)
{
    push_ctx *pc = ctx;
    h2_session *s = pc->s;
    h2_stream *origin = pc->origin;
    nghttp2_nv nv[4 + sizeof(copied) / sizeof(copied[0])];
    const char *path;
    int n;
    int32_t id;
    int critical = (nlen == 8 && !strncmp(name, "critical", 8));

    if (!critical && (nlen != 4 || strncmp(name, "path", 4))) {
        return 1;
    }
    if (s->pushed_open >= s->max_streams) {
        /* as many pushed streams open as the client may open streams:
         * pushing is an optimization, the client asks for the rest */
        return 0;
    }
    /* the chunk's values are not terminated */
    path = apr_pstrmemdup(origin->pool, value, vlen);
    if (!h2_push_diary_add(s->push_diary, origin->req.authority, path)) {
        return 1;   /* pushed on this connection before: not again */
    }
    n = push_fields(origin, path, nv, (int)(sizeof(nv) / sizeof(nv[0])));
    id = nghttp2_submit_push_promise(s->ngh, NGHTTP2_FLAG_NONE, origin->id, nv,
                                     (size_t)n, NULL);
    if (id < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21100)
                      "h2_session(%ld-%d): no push of %s: %s", s->id,
                      origin->id, path, nghttp2_strerror(id));
        return 1;
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21101)
                  "h2_session(%ld-%d): pushing %s on stream %d", s->id,
                  origin->id, path, id);
    start_pushed(s, origin, id, nv, n, critical);
    return 1;
}

void h2_session_push(h2_session *s, h2_stream *origin, const h2_hchunk *c)
{
    push_ctx ctx;

    /* pushes go on client streams still open for the response, to a
     * client that takes them, while the connection takes new streams */
    if (!s->push_on || (origin->id & 1) == 0 || origin->response_submitted
        || origin->state >= H2_SS_CLOSED || s->stop != H2_STOP_NONE
        || !origin->req.authority || !origin->req.scheme
        || !nghttp2_session_get_remote_settings(s->ngh, NGHTTP2_SETTINGS_ENABLE_PUSH)) {
        return;
    }
    if (!s->push_diary) {
        s->push_diary = h2_push_diary_create(
            s->pool, (int)h2_config_sget(s->s, H2_CONF_PUSH_DIARY_SIZE));
    }
    ctx.s = s;
    ctx.origin = origin;
    h2_hchunk_fields_do(c, promise_one, &ctx);
}

typedef struct {
    apr_pool_t *p;
    const char *ctype;
} ctype_ctx;

static int find_ctype(void *ctx, const char *name, apr_size_t nlen,
                      const char *value, apr_size_t vlen)
{
    ctype_ctx *cc = ctx;
    if (nlen == 12 && !strncasecmp(name, "content-type", 12)) {
        cc->ctype = apr_pstrmemdup(cc->p, value, vlen);
        return 0;
    }
    return 1;
}

void h2_session_push_prioritize(h2_session *s, h2_stream *ps, const h2_hchunk *c)
{
    nghttp2_stream *x = nghttp2_session_find_stream(s->ngh, ps->pushed_on);
    nghttp2_stream *parent;
    nghttp2_priority_spec spec;
    ctype_ctx cc;
    h2_push_dep dep;
    int32_t pid;
    int w, xw;

    h2_stream *page = h2_session_stream(s, ps->pushed_on);

    if (!x || !page) {
        return;     /* the client stream is gone: nothing to order against */
    }
    cc.p = ps->pool;
    cc.ctype = NULL;
    h2_hchunk_fields_do(c, find_ctype, &cc);
    h2_config_push_priority(s->s, cc.ctype, &dep, &w);
    if (ps->push_critical) {
        dep = H2_PUSH_BEFORE;
    }
    if (h2_session_prio_is_extensible(s)) {
        h2_session_prio_push(s, ps, page, dep);
        return;
    }
    parent = nghttp2_stream_get_parent(x);
    pid = parent? nghttp2_stream_get_stream_id(parent) : 0;
    xw = nghttp2_stream_get_weight(x);
    switch (dep) {
    case H2_PUSH_BEFORE:
        /* in the client stream's place, which waits for it */
        nghttp2_priority_spec_init(&spec, pid, xw, 0);
        h2_session_ngcheck(s, ps->id, "place the pushed stream",
            nghttp2_session_change_stream_priority(s->ngh, ps->id, &spec));
        nghttp2_priority_spec_init(&spec, ps->id, xw, 0);
        h2_session_ngcheck(s, ps->pushed_on, "place the client stream after",
            nghttp2_session_change_stream_priority(s->ngh, ps->pushed_on, &spec));
        break;
    case H2_PUSH_INTERLEAVED:
        /* a sibling of the client stream, its weight scaled */
        w = xw * w / 256;
        nghttp2_priority_spec_init(&spec, pid, w < 1? 1 : (w > 256? 256 : w), 0);
        h2_session_ngcheck(s, ps->id, "place the pushed stream",
            nghttp2_session_change_stream_priority(s->ngh, ps->id, &spec));
        break;
    default:
        nghttp2_priority_spec_init(&spec, ps->pushed_on, w, 0);
        h2_session_ngcheck(s, ps->id, "place the pushed stream",
            nghttp2_session_change_stream_priority(s->ngh, ps->id, &spec));
        break;
    }
}
