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
/* A client connection's I/O: reading frames in, gathering frames out into
 * one write per round. */

#include <stdlib.h>
#include <unistd.h>
#include <errno.h>
#include <apr_portable.h>
#include <apr_mmap.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <apr_strings.h>
#include <httpd.h>
#include <http_core.h>
#include <http_log.h>
#include <http_connection.h>
#include <util_filter.h>
#include <apr_optional.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c1_io.h"
#include "h2_fmap.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* Frame bytes are copied into one arena per connection and go down as
 * buckets pointing into it; every write is a blocking flush, so the arena
 * is free again when it returns. Full arenas are written right away. */
#define H2_IO_ARENA         (64 * 1024)
/* TLS copies all data through the arena: larger writes, fewer flushes */
#define H2_IO_ARENA_TLS     (256 * 1024)
#define H2_IO_READ_SIZE     (64 * 1024)
/* What the core's socket bucket reads at most at once (APR's bucket
 * buffer size); TLS records give up to 16 KB. */
#define H2_IO_SOCKET_READ   8000
/* Files are mapped in windows this large: one mmap serves 256 frames. */
#define H2_IO_MMAP_WINDOW   (4 * 1024 * 1024)
/* Without sendfile, file ranges smaller than this are copied, not mapped. */
#define H2_IO_MAP_MIN       (256 * 1024)
#define H2_IO_PAGE          4096
/* Pieces per writev: frame headers and file slices alternate. */
#define H2_IO_MAX_IOV       256

static APR_OPTIONAL_FN_TYPE(ap_logio_add_bytes_in) *logio_add_bytes_in;

/* H2_IN_DRAIN when every input filter of c is one whose work a direct
 * read does itself (the core's reading, mod_logio's counting). */
static int direct_in_mode(conn_rec *c, apr_socket_t *sock, int is_tls)
{
    ap_filter_t *f;

#ifdef MSG_DONTWAIT
    if (is_tls || !sock) {
        return H2_IN_FILTERS;
    }
    for (f = c->input_filters; f; f = f->next) {
        if (strcasecmp(f->frec->name, "core_in")
            && strcasecmp(f->frec->name, "log_input_output")) {
            return H2_IN_FILTERS;
        }
    }
    return H2_IN_DRAIN;
#else
    (void)c; (void)sock; (void)is_tls; (void)f;
    return H2_IN_FILTERS;
#endif
}

void h2_c1_io_init(h2_c1_io *io, conn_rec *c, server_rec *s, int is_tls)
{
    memset(io, 0, sizeof(*io));
    io->c = c;
    io->id = c->id;
    io->is_tls = is_tls;
    io->bb_in = apr_brigade_create(c->pool, c->bucket_alloc);
    io->bb_out = apr_brigade_create(c->pool, c->bucket_alloc);
    io->sock = ap_get_conn_socket(c);
    io->arena = is_tls? H2_IO_ARENA_TLS : H2_IO_ARENA;
    /* The core output filter writes at most a few iovecs per writev; our
     * frames alternate 9 header bytes with 16 KB of file data, so a 10 MB
     * response took ~160 writev calls where HTTP/1.1 needs 4. When nothing
     * but the core sits on the connection, we gather up to IOV_MAX pieces
     * per call ourselves. */
    io->direct = !is_tls && io->sock && c->output_filters
                 && !c->output_filters->next
                 && !strcasecmp(c->output_filters->frec->name, "core");
    io->in_direct = direct_in_mode(c, io->sock, is_tls);
    if (is_tls) {
        h2_tls_sizing_init(&io->tls, h2_config_sget(s, H2_CONF_TLS_WARMUP_SIZE),
                   apr_time_from_sec(h2_config_sget(s, H2_CONF_TLS_COOLDOWN_SECS)));
        /* We size our buckets to be exactly the TLS records we want;
         * mod_ssl's coalescing would merge small ones into larger records
         * and defeat the warm-up. */
        ap_remove_output_filter_byhandle(c->output_filters,
                                         "SSL/TLS Coalescing Filter");
    }
}

/* Arenas are only needed while a connection writes, which is at most as
 * many connections as the MPM has threads; a small per-child cache lets
 * them be reused across connections instead of each idle connection's
 * freed arena lingering in the malloc heap. */
#define H2_IO_ARENA_CACHE 32

static struct {
    apr_thread_mutex_t *mutex;
    void *free[2][H2_IO_ARENA_CACHE];   /* [0] cleartext, [1] TLS sizes */
    int nfree[2];
    int keep[2];                        /* at most this many (MaxMemFree) */
} arenas;

apr_status_t h2_c1_io_child_init(apr_pool_t *pchild)
{
    logio_add_bytes_in = APR_RETRIEVE_OPTIONAL_FN(ap_logio_add_bytes_in);
    arenas.keep[0] = h2_util_cache_max(H2_IO_ARENA_CACHE, H2_IO_ARENA);
    arenas.keep[1] = h2_util_cache_max(H2_IO_ARENA_CACHE, H2_IO_ARENA_TLS);
    return apr_thread_mutex_create(&arenas.mutex, APR_THREAD_MUTEX_DEFAULT, pchild);
}

static char *arena_get(h2_c1_io *io)
{
    int k = io->is_tls? 1 : 0;
    char *buf = NULL;
    if (arenas.mutex) {
        apr_thread_mutex_lock(arenas.mutex);
        if (arenas.nfree[k] > 0) {
            buf = arenas.free[k][--arenas.nfree[k]];
        }
        apr_thread_mutex_unlock(arenas.mutex);
    }
    if (!buf && !(buf = malloc(io->arena))) {
        abort();
    }
    return buf;
}

static void arena_put(h2_c1_io *io, char *buf)
{
    int k = io->is_tls? 1 : 0;
    if (arenas.mutex) {
        apr_thread_mutex_lock(arenas.mutex);
        if (arenas.nfree[k] < arenas.keep[k]) {
            arenas.free[k][arenas.nfree[k]++] = buf;
            buf = NULL;
        }
        apr_thread_mutex_unlock(arenas.mutex);
    }
    free(buf);
}

/* Put the arena bytes since the last bucket into a bucket of their own. */
static void emit_seg(h2_c1_io *io)
{
    if (io->buf_len > io->seg_start) {
        apr_size_t len = io->buf_len - io->seg_start;
        apr_bucket *b = apr_bucket_transient_create(io->buf + io->seg_start, len,
                                                    io->c->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(io->bb_out, b);
        if (io->is_tls) {
            h2_tls_sizing_written(&io->tls, len, apr_time_now());
        }
        io->seg_start = io->buf_len;
    }
    io->seg_max = 0;
}

/* The connection's TCP segment size now, 0 if unknown. Linux's
 * TCP_MAXSEG on a connected socket is the sending MSS with the options
 * every segment carries (timestamps) already taken off: 1448 on a 1500
 * byte MTU path with timestamps; on loopback tens of KB (half the largest
 * window the peer offered, up to 65483). The kernel updates it when the
 * connection sends or an ICMP "fragmentation needed" arrives. */
static apr_size_t segment_size(h2_c1_io *io)
{
#ifdef TCP_MAXSEG
    apr_os_sock_t fd;
    int mss = 0;
    socklen_t len = sizeof(mss);

    if (!io->sock || apr_os_sock_get(&fd, io->sock) != APR_SUCCESS) {
        return 0;
    }
    if (getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, errno, io->c, APLOGNO(21210)
                      "h2_c1(%ld): reading TCP_MAXSEG failed, TLS warm-up "
                      "records get the default size", io->id);
        return 0;
    }
    return (mss > 0)? (apr_size_t)mss : 0;
#else
    (void)io;
    return 0;
#endif
}

/* A warm-up starts: the path may differ from the last one (a new
 * connection, or routes and PMTU changed while it idled). */
static void warmup_start(h2_c1_io *io)
{
    apr_size_t mss = segment_size(io);

    h2_tls_sizing_set_segment(&io->tls, mss);
    if (APLOGctrace1(io->c)) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, io->c, APLOGNO(21211)
                      "h2_c1(%ld): TCP segment %lu bytes, TLS warm-up records "
                      "of %lu bytes", io->id, (unsigned long)mss,
                      (unsigned long)io->tls.small);
    }
}

/* Room in the arena for the current segment (TLS: up to its record size). */
static apr_size_t seg_room(h2_c1_io *io)
{
    apr_size_t room = io->arena - io->buf_len;
    if (io->is_tls) {
        apr_size_t used;
        if (!io->seg_max) {
            apr_time_t now = apr_time_now();
            if (h2_tls_sizing_warmup_due(&io->tls, now)) {
                warmup_start(io);
            }
            io->seg_max = h2_tls_sizing_next(&io->tls, now);
        }
        used = io->buf_len - io->seg_start;
        if (room > io->seg_max - used) {
            room = io->seg_max - used;
        }
    }
    return room;
}

/* A DATA frame shorter than this is not worth ending a record with. */
#define H2_IO_MIN_FIT_FRAME 512

apr_size_t h2_c1_io_record_fit(h2_c1_io *io)
{
    apr_size_t room;

    if (!io->is_tls) {
        return 0;
    }
    room = seg_room(io);
    if (io->seg_max < H2_TLS_LARGE_RECORD) {
        /* warming up: a record holds a piece of a frame either way, and
         * frames as small as records would only add headers */
        return 0;
    }
    if (room < H2_FRAME_HDR_LEN + H2_IO_MIN_FIT_FRAME) {
        /* too little left: let the frame fill the next record too */
        room += h2_tls_sizing_next(&io->tls, apr_time_now());
    }
    return room;
}

/* Make room: close a full TLS record, or write out a full arena. */
static apr_status_t make_room(h2_c1_io *io)
{
    if (!io->buf) {
        io->buf = arena_get(io);
    }
    if (io->is_tls && io->seg_max && io->buf_len - io->seg_start >= io->seg_max) {
        emit_seg(io);
    }
    if (io->buf_len >= io->arena) {
        return h2_c1_io_flush(io);
    }
    return APR_SUCCESS;
}

apr_status_t h2_c1_io_append(h2_c1_io *io, const char *data, apr_size_t len)
{
    apr_status_t rv = APR_SUCCESS;

    while (len > 0 && rv == APR_SUCCESS) {
        apr_size_t n = seg_room(io);
        if (!io->buf || n == 0) {
            rv = make_room(io);
            continue;
        }
        if (n > len) {
            n = len;
        }
        memcpy(io->buf + io->buf_len, data, n);
        io->buf_len += n;
        io->pending += n;
        data += n;
        len -= n;
    }
    return rv;
}

/* The slice [off, off+len) of f from a mapped window, mapping a new
 * window of up to H2_IO_MMAP_WINDOW when off is outside the current one.
 * NULL if the file cannot be mapped. */
static apr_bucket *mmap_slice(h2_c1_io *io, apr_file_t *f, apr_off_t off,
                              apr_size_t len, apr_pool_t *p, void **pmm,
                              apr_off_t *pmm_off)
{
    apr_bucket *mb = *pmm, *slice;

    if (mb) {
        if (off < *pmm_off || off + (apr_off_t)len > *pmm_off + (apr_off_t)mb->length) {
            apr_bucket_destroy(mb);
            *pmm = mb = NULL;
        }
    }
    if (!mb) {
        apr_finfo_t finfo;
        apr_mmap_t *mm;
        apr_status_t rv;
        apr_off_t start = off & ~((apr_off_t)H2_IO_PAGE - 1), end;

        /* one fstat serves the cache lookup and the window */
        rv = apr_file_info_get(&finfo, H2_FMAP_FINFO, f);
        if ((rv != APR_SUCCESS && rv != APR_INCOMPLETE)
            || !(finfo.valid & APR_FINFO_SIZE)) {
            return NULL;
        }
        if ((mb = h2_fmap_bucket_create(f, &finfo, io->c->bucket_alloc)) != NULL) {
            /* the whole file, from the per-child cache of mappings */
            *pmm = mb;
            *pmm_off = 0;
        }
        else {
            end = start + H2_IO_MMAP_WINDOW;
            if (end > finfo.size) end = finfo.size;
            if (end < off + (apr_off_t)len
                || apr_mmap_create(&mm, f, start, (apr_size_t)(end - start),
                                   APR_MMAP_READ, p) != APR_SUCCESS) {
                return NULL;
            }
            *pmm = mb = apr_bucket_mmap_create(mm, 0, (apr_size_t)(end - start),
                                               io->c->bucket_alloc);
            *pmm_off = start;
        }
    }
    apr_bucket_copy(mb, &slice);     /* shares the mapping's refcount */
    slice->start = (apr_size_t)(off - *pmm_off);
    slice->length = len;
    return slice;
}

/* Read len bytes of f at off into the arena (TLS: in records). */
static apr_status_t copy_file(h2_c1_io *io, apr_file_t *f, apr_off_t off,
                              apr_size_t len)
{
    apr_os_file_t fd;
    apr_status_t rv = APR_SUCCESS;

    apr_os_file_get(&fd, f);
    while (len > 0 && rv == APR_SUCCESS) {
        apr_size_t n = seg_room(io);
        ssize_t r;
        if (!io->buf || n == 0) {
            rv = make_room(io);
            continue;
        }
        if (n > len) {
            n = len;
        }
        do {
            r = pread(fd, io->buf + io->buf_len, n, off);
        } while (r < 0 && errno == EINTR);
        if (r <= 0) {
            return r < 0? APR_FROM_OS_ERROR(errno) : APR_EOF;
        }
        io->buf_len += (apr_size_t)r;
        io->pending += (apr_size_t)r;
        off += r;
        len -= (apr_size_t)r;
    }
    return rv;
}

apr_status_t h2_c1_io_append_file(h2_c1_io *io, apr_file_t *f, apr_off_t off,
                                  apr_size_t len, apr_off_t range_left,
                                  int can_mmap, apr_pool_t *p,
                                  void **pmm, apr_off_t *pmm_off)
{
    if (!*pmm && range_left < H2_IO_MAP_MIN
        && (io->is_tls || !(apr_file_flags_get(f) & APR_SENDFILE_ENABLED))) {
        /* Small, and sendfile is off: copying costs less than mapping
         * (mmap, page faults and munmap all take the process's memory map
         * lock, which many connection threads then queue for). */
        return copy_file(io, f, off, len);
    }
    if (!io->is_tls) {
        apr_bucket *b = NULL;
        emit_seg(io);
        if (can_mmap) {
            b = mmap_slice(io, f, off, len, p, pmm, pmm_off);
        }
        if (!b) {
            if (!io->corked && io->sock) {
                /* frame headers and file data go out in separate syscalls;
                 * corking lets the kernel pack them into full segments */
                if (apr_socket_opt_set(io->sock, APR_TCP_NOPUSH, 1) == APR_SUCCESS) {
                    io->corked = 1;
                }
            }
            b = apr_bucket_file_create(f, off, len, p, io->c->bucket_alloc);
            apr_bucket_file_enable_mmap(b, 0);
            io->has_file = 1;
        }
        APR_BRIGADE_INSERT_TAIL(io->bb_out, b);
        io->pending += len / 64;  /* files cost no memory, just time */
        return APR_SUCCESS;
    }
    else {
        /* TLS encrypts from memory anyway: copy into the record buffers
         * from the mapped window (one copy, no syscall per record), or
         * read with pread where mmap is off. */
        apr_bucket *slice = can_mmap? mmap_slice(io, f, off, len, p, pmm, pmm_off) : NULL;
        apr_status_t rv;
        if (slice) {
            const char *data;
            apr_size_t dlen;
            rv = apr_bucket_read(slice, &data, &dlen, APR_BLOCK_READ);
            if (rv == APR_SUCCESS) {
                rv = h2_c1_io_append(io, data, dlen);
            }
            apr_bucket_destroy(slice);
            return rv;
        }
        return copy_file(io, f, off, len);
    }
}

int h2_c1_io_needs_flush(h2_c1_io *io)
{
    return io->pending >= io->arena / 4 * 3;
}

void h2_c1_io_set_lowat(h2_c1_io *io, apr_size_t n)
{
#ifdef SO_RCVLOWAT
    apr_os_sock_t fd;
    int v = (n > 0)? (int)n : 1;

    if (n == io->lowat || !io->sock || apr_os_sock_get(&fd, io->sock) != APR_SUCCESS) {
        return;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)) == 0) {
        io->lowat = n;
    }
    else if (n) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, errno, io->c, APLOGNO(21104)
                      "h2_c1(%ld): setting SO_RCVLOWAT to %d failed, waits "
                      "for input wake at every byte", io->id, v);
    }
#else
    (void)io; (void)n;
#endif
}

int h2_c1_io_has_output(h2_c1_io *io)
{
    return io->buf_len > 0 || !APR_BRIGADE_EMPTY(io->bb_out);
}

void h2_c1_io_idle(h2_c1_io *io)
{
    if (io->buf && !h2_c1_io_has_output(io)) {
        arena_put(io, io->buf);
        io->buf = NULL;
    }
}

/* Write bb_out (memory buckets only) with as few writev calls as the
 * kernel allows, blocking up to the socket's timeout. */
static apr_status_t write_direct(h2_c1_io *io)
{
    struct iovec vec[H2_IO_MAX_IOV];
    apr_bucket *b = APR_BRIGADE_FIRST(io->bb_out);
    apr_status_t rv = APR_SUCCESS;

    while (b != APR_BRIGADE_SENTINEL(io->bb_out) && rv == APR_SUCCESS) {
        int n = 0, i = 0;
        apr_size_t total = 0, written;

        for (; b != APR_BRIGADE_SENTINEL(io->bb_out) && n < H2_IO_MAX_IOV;
             b = APR_BUCKET_NEXT(b)) {
            const char *data;
            apr_size_t len;
            if (APR_BUCKET_IS_METADATA(b)) continue;
            rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
            if (rv != APR_SUCCESS) break;
            if (!len) continue;
            vec[n].iov_base = (void *)data;
            vec[n].iov_len = len;
            total += len;
            ++n;
        }
        while (rv == APR_SUCCESS && total > 0) {
            rv = apr_socket_sendv(io->sock, vec + i, n - i, &written);
            total -= written;
            /* skip what went out, resume within a partly written piece */
            while (written > 0 && i < n) {
                if (written >= vec[i].iov_len) {
                    written -= vec[i].iov_len;
                    ++i;
                }
                else {
                    vec[i].iov_base = (char *)vec[i].iov_base + written;
                    vec[i].iov_len -= written;
                    written = 0;
                }
            }
            if (APR_STATUS_IS_EAGAIN(rv)) {
                rv = APR_SUCCESS;   /* sendv waited out the timeout already */
            }
        }
    }
    return rv;
}

apr_status_t h2_c1_io_flush(h2_c1_io *io)
{
    apr_status_t rv = APR_SUCCESS;

    emit_seg(io);
    if (io->direct && !io->has_file && !APR_BRIGADE_EMPTY(io->bb_out)) {
        rv = write_direct(io);
        apr_brigade_cleanup(io->bb_out);
    }
    else if (!APR_BRIGADE_EMPTY(io->bb_out)) {
        APR_BRIGADE_INSERT_TAIL(io->bb_out,
                                apr_bucket_flush_create(io->c->bucket_alloc));
        rv = ap_pass_brigade(io->c->output_filters, io->bb_out);
        apr_brigade_cleanup(io->bb_out);
    }
    io->buf_len = io->seg_start = 0;
    io->seg_max = 0;
    io->pending = 0;
    io->has_file = 0;
    if (io->corked) {
        apr_socket_opt_set(io->sock, APR_TCP_NOPUSH, 0);
        io->corked = 0;
    }
    if (rv != APR_SUCCESS) {
        io->c->aborted = 1;
    }
    return rv;
}

#ifdef MSG_DONTWAIT
/* Non-blocking reads of H2_IN_DIRECT: one recv() of up to H2_IO_READ_SIZE
 * per turn of the session, as through the filters (reading pauses between
 * turns when bodies fill the budget), into a borrowed arena. Through the
 * core, each 8000 bytes cost a read() and a bucket: 138k reads per GB of
 * an h2c upload, as many as HTTP/1.1, and the connection thread's share
 * of the server's CPU per GB was what h2c paid over HTTP/1.1
 * (bench/upload.py). */
static apr_status_t read_direct(h2_c1_io *io, h2_c1_io_feed *feed, void *ctx)
{
    apr_os_sock_t fd;
    apr_status_t rv;
    ssize_t n;
    apr_size_t want;
    char *buf;

    if ((rv = apr_os_sock_get(&fd, io->sock)) != APR_SUCCESS) {
        return rv;
    }
    buf = arena_get(io);
    want = (io->arena < H2_IO_READ_SIZE)? io->arena : H2_IO_READ_SIZE;
    do {
        n = recv(fd, buf, want, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    /* less than asked for: the socket is empty now (a stream socket's
     * recv takes all that is queued, up to the size) */
    io->in_drained = (n > 0 && (apr_size_t)n < want);
    if (n > 0) {
        if (logio_add_bytes_in) {
            logio_add_bytes_in(io->c, (apr_off_t)n);
        }
        rv = feed(ctx, buf, (apr_size_t)n);
    }
    else if (n == 0) {
        rv = APR_EOF;
    }
    else {
        rv = (errno == EAGAIN || errno == EWOULDBLOCK)? APR_EAGAIN : APR_FROM_OS_ERROR(errno);
    }
    arena_put(io, buf);
    return rv;      /* after input, the end or an error shows on the next call */
}
#endif

apr_status_t h2_c1_io_read(h2_c1_io *io, apr_read_type_e block,
                           h2_c1_io_feed *feed, void *ctx)
{
    apr_status_t rv, fed = APR_SUCCESS;
    apr_bucket *b;
    apr_size_t got = 0, before;

#ifdef MSG_DONTWAIT
    if (io->in_direct == H2_IN_DIRECT && block == APR_NONBLOCK_READ) {
        return read_direct(io, feed, ctx);
    }
#endif
    if (io->in_direct == H2_IN_DIRECT) {
        /* a blocking read may leave bytes with the core */
        io->in_direct = H2_IN_DRAIN;
    }

    /* The core hands out one socket read (8000 bytes) per call: an upload
     * takes what has arrived, up to H2_IO_READ_SIZE, in one turn of the
     * session, so workers and the client get one wakeup and one
     * WINDOW_UPDATE per turn instead of one per 8000 bytes. A read that
     * came back short found the socket empty: asking again would only
     * cost a system call (a request's turn is one read, not two). */
    do {
        before = got;
        rv = ap_get_brigade(io->c->input_filters, io->bb_in, AP_MODE_READBYTES,
                            got? APR_NONBLOCK_READ : block, H2_IO_READ_SIZE - got);
        while (rv == APR_SUCCESS && fed == APR_SUCCESS && !APR_BRIGADE_EMPTY(io->bb_in)) {
            const char *data;
            apr_size_t len;

            b = APR_BRIGADE_FIRST(io->bb_in);
            if (APR_BUCKET_IS_EOS(b)) {
                rv = APR_EOF;
            }
            else if (!APR_BUCKET_IS_METADATA(b)) {
                rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
                if (rv == APR_SUCCESS && len > 0) {
                    got += len;
                    fed = feed(ctx, data, len);
                }
            }
            apr_bucket_delete(b);
        }
        apr_brigade_cleanup(io->bb_in);
    } while (rv == APR_SUCCESS && fed == APR_SUCCESS && got - before >= H2_IO_SOCKET_READ
             && got < H2_IO_READ_SIZE);
    if (fed != APR_SUCCESS) {
        return fed;
    }
    if (got) {
        /* the end, an error or no more for now: the next call sees it,
         * after what came before it was answered */
        return APR_SUCCESS;
    }
    /* the core answers a non-blocking read without data with success,
     * and holds nothing then */
    if (rv == APR_SUCCESS && block == APR_NONBLOCK_READ && io->in_direct == H2_IN_DRAIN) {
        io->in_direct = H2_IN_DIRECT;
        if (APLOGctrace2(io->c)) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, io->c,
                          "h2_c1(%ld): input filters hold nothing, reading the "
                          "socket directly", io->id);
        }
    }
    return (rv == APR_SUCCESS)? APR_EAGAIN : rv;
}
