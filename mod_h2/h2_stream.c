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
/* A stream on the connection thread: its pool and its transitions. */

#include <httpd.h>
#include <http_log.h>
#include <ap_mpm.h>
#include <mpm_common.h>
#include <apr_allocator.h>

#include "h2.h"
#include "h2_session_int.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* Stream pools come from one allocator per child, shared by all its
 * connections: a connection's own allocator would keep each finished
 * stream's memory for as long as the (possibly idle) connection lives. */
static apr_allocator_t *stream_allocator;
/* Guards the allocator's replacement and the count of the pools that use
 * it: a quiet child replaces it when no stream pool is left
 * (h2_stream_child_quiet), which frees what it kept. */
static apr_thread_mutex_t *stream_mutex;
static int stream_pools;

/* What the shared stream allocator may keep free: MaxMemFree for each
 * MPM thread it serves. Over HTTP/1.1 each of those threads' allocators
 * may keep that much for its requests; capped at one MaxMemFree, the
 * many streams in flight at -m 100 (thousands per child, one 8 KB block
 * each) overflowed the cap with every wave of them, and each freed block
 * became a munmap, whose TLB shootdown interrupts every CPU (a quarter
 * more CPU per request). */
static apr_size_t stream_max_free(void)
{
    int threads = 1;

    if (ap_max_mem_free == APR_ALLOCATOR_MAX_FREE_UNLIMITED) {
        return APR_ALLOCATOR_MAX_FREE_UNLIMITED;
    }
    if (ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads) != APR_SUCCESS || threads < 1) {
        threads = 1;
    }
    return (apr_size_t)ap_max_mem_free * (apr_size_t)threads;
}

apr_status_t h2_stream_child_init(apr_pool_t *pchild)
{
    apr_thread_mutex_t *mutex;
    apr_status_t rv;

    if ((rv = apr_allocator_create(&stream_allocator)) != APR_SUCCESS
        || (rv = apr_thread_mutex_create(&mutex, APR_THREAD_MUTEX_DEFAULT,
                                         pchild)) != APR_SUCCESS) {
        stream_allocator = NULL;
        return rv;
    }
    apr_allocator_mutex_set(stream_allocator, mutex);
    apr_allocator_max_free_set(stream_allocator, stream_max_free());
    return apr_thread_mutex_create(&stream_mutex, APR_THREAD_MUTEX_DEFAULT, pchild);
}

int h2_stream_child_quiet(void)
{
    apr_allocator_t *fresh;
    int held;

    if (!stream_mutex) {
        return 0;
    }
    apr_thread_mutex_lock(stream_mutex);
    /* What the allocator keeps (up to MaxMemFree per MPM thread) is what
     * the busiest moment left: thousands of streams held by clients that
     * do not read left tens of MB for good. No pool uses it now, so a
     * fresh one takes its place and the old one's blocks go back. */
    if (stream_pools == 0 && stream_allocator
        && apr_allocator_create(&fresh) == APR_SUCCESS) {
        apr_allocator_max_free_set(fresh, stream_max_free());
        apr_allocator_mutex_set(fresh, apr_allocator_mutex_get(stream_allocator));
        apr_allocator_destroy(stream_allocator);
        stream_allocator = fresh;
    }
    held = (stream_pools > 0);
    apr_thread_mutex_unlock(stream_mutex);
    return held;
}

h2_stream *h2_stream_create(h2_session *session, int id, apr_pool_t *parent)
{
    apr_pool_t *pool;
    h2_stream *stream;

    /* A child of the connection's pool, as httpd's requests are, so that
     * walking up from it reaches the process's root pool (apr-util keeps
     * its driver table there: under a root of our own that we destroy, its
     * next user crashed). Linking takes the lock of the connection pool's
     * allocator if it has one; only this connection's thread creates or
     * destroys its children. The session's teardown (a pre-cleanup of the
     * connection's pool) destroys every stream before the pool's children
     * would go. */
    apr_allocator_t *allocator;

    if (stream_mutex) {
        apr_thread_mutex_lock(stream_mutex);
        stream_pools++;
    }
    allocator = stream_allocator;
    if (stream_mutex) {
        apr_thread_mutex_unlock(stream_mutex);
    }
    if (apr_pool_create_ex(&pool, parent, NULL, allocator) != APR_SUCCESS) {
        abort();
    }
    apr_pool_tag(pool, "h2_stream");
    stream = apr_pcalloc(pool, sizeof(*stream));
    stream->id = id;
    stream->session = session;
    stream->pool = pool;
    stream->state = H2_SS_IDLE;
    stream->created = apr_time_now();
    h2_prio_default(&stream->prio);
    h2_req_head_init(&stream->req, pool, &session->hdr_limits);
    stream->x = h2_x_c1_create(session->xc, pool, id, stream);
    stream->trace = session->xset.loglevel;
    return stream;
}

void h2_stream_transit_note(h2_stream *stream, h2_stream_event ev)
{
    h2_stream_state old = stream->state;
    int n = h2_stream_next(old, ev);
    conn_rec *c1 = stream->session->c1;

    if (n < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, c1, APLOGNO(21091)
                      "h2_stream(%ld-%d): invalid transition %s -[%s]->",
                      stream->session->id, stream->id, h2_stream_state_str(old),
                      h2_stream_event_str(ev));
        return;
    }
    stream->state = (h2_stream_state)n;
    if (n != (int)old) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, c1,
                      "h2_stream(%ld-%d): %s -[%s]-> %s", stream->session->id, stream->id,
                      h2_stream_state_str(old), h2_stream_event_str(ev),
                      h2_stream_state_str(stream->state));
    }
}

void h2_stream_destroy(h2_stream *stream)
{
    h2_req_head_release(&stream->req);
    h2_req_head_release(&stream->trailer_head);
    h2_x_c1_destroy(stream->x);
    apr_pool_destroy(stream->pool);
    if (stream_mutex) {
        apr_thread_mutex_lock(stream_mutex);
        stream_pools--;
        apr_thread_mutex_unlock(stream_mutex);
    }
}
