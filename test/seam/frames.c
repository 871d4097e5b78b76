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

/* Client frames for the seam's tests, and a reader of the server's. */

#include <stdlib.h>
#include <string.h>

#include "frames.h"

static void put(fbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 256;
        b->data = realloc(b->data, b->cap);
        if (!b->data) abort();
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void fb_init(fbuf *b)
{
    memset(b, 0, sizeof(*b));
    if (nghttp2_hd_deflate_new(&b->deflater, 4096) != 0) abort();
}

void fb_free(fbuf *b)
{
    free(b->data);
    nghttp2_hd_deflate_del(b->deflater);
}

void fb_reset(fbuf *b)
{
    b->len = 0;
}

void fb_frame(fbuf *b, int type, int flags, int32_t sid, const void *payload, size_t len)
{
    unsigned char h[9];
    h[0] = (unsigned char)(len >> 16); h[1] = (unsigned char)(len >> 8);
    h[2] = (unsigned char)len; h[3] = (unsigned char)type; h[4] = (unsigned char)flags;
    h[5] = (unsigned char)((sid >> 24) & 0x7f); h[6] = (unsigned char)(sid >> 16);
    h[7] = (unsigned char)(sid >> 8); h[8] = (unsigned char)sid;
    put(b, h, 9);
    if (len) put(b, payload, len);
}

void fb_preface(fbuf *b)
{
    put(b, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
    fb_frame(b, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
}

void fb_headers(fbuf *b, int32_t sid, int flags, const char *const *nv)
{
    nghttp2_nv fields[64];
    uint8_t block[16384];
    size_t n = 0;
    ssize_t len;

    for (; nv[0] && n < 64; nv += 2, ++n) {
        fields[n].name = (uint8_t *)nv[0];
        fields[n].namelen = strlen(nv[0]);
        fields[n].value = (uint8_t *)nv[1];
        fields[n].valuelen = strlen(nv[1]);
        fields[n].flags = NGHTTP2_NV_FLAG_NONE;
    }
    len = nghttp2_hd_deflate_hd(b->deflater, block, sizeof(block), fields, n);
    if (len < 0) abort();
    fb_frame(b, NGHTTP2_HEADERS, flags | NGHTTP2_FLAG_END_HEADERS, sid, block, (size_t)len);
}

void fb_data(fbuf *b, int32_t sid, int flags, const void *data, size_t len)
{
    fb_frame(b, NGHTTP2_DATA, flags, sid, data, len);
}

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

void fb_rst(fbuf *b, int32_t sid, uint32_t code)
{
    unsigned char p[4];
    be32(p, code);
    fb_frame(b, NGHTTP2_RST_STREAM, 0, sid, p, 4);
}

void fb_window(fbuf *b, int32_t sid, uint32_t increment)
{
    unsigned char p[4];
    be32(p, increment);
    fb_frame(b, NGHTTP2_WINDOW_UPDATE, 0, sid, p, 4);
}

uint32_t frame_u32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int frames_parse(const unsigned char *data, size_t len, h2frame *out, int max)
{
    size_t off = 0;
    int n = 0;

    while (off < len) {
        size_t flen;
        if (len - off < 9 || n == max) return -1;
        flen = ((size_t)data[off] << 16) | ((size_t)data[off + 1] << 8) | data[off + 2];
        if (len - off - 9 < flen) return -1;
        out[n].type = data[off + 3];
        out[n].flags = data[off + 4];
        out[n].sid = (int32_t)(frame_u32(data + off + 5) & 0x7fffffff);
        out[n].len = flen;
        out[n].payload = data + off + 9;
        off += 9 + flen;
        n++;
    }
    return n;
}

int frames_find(const h2frame *f, int n, int type, int32_t sid, int from)
{
    int i;
    for (i = from; i < n; ++i) {
        if (f[i].type == type && (sid < 0 || f[i].sid == sid)) return i;
    }
    return -1;
}

int frame_fields(nghttp2_hd_inflater *inf, const h2frame *f, h2fields *out)
{
    const uint8_t *in = f->payload;
    size_t inlen = f->len;

    out->n = 0;
    if (f->flags & NGHTTP2_FLAG_PADDED) {
        size_t pad = in[0];
        if (pad + 1 > inlen) return 0;
        in++; inlen -= 1 + pad;
    }
    if (f->flags & NGHTTP2_FLAG_PRIORITY) {
        if (inlen < 5) return 0;
        in += 5; inlen -= 5;
    }
    for (;;) {
        nghttp2_nv nv;
        int flags = 0;
        ssize_t rv = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, inlen, 1);
        if (rv < 0) return 0;
        in += rv; inlen -= (size_t)rv;
        if ((flags & NGHTTP2_HD_INFLATE_EMIT) && out->n < 32
            && nv.namelen < 64 && nv.valuelen < 256) {
            memcpy(out->name[out->n], nv.name, nv.namelen);
            out->name[out->n][nv.namelen] = 0;
            memcpy(out->value[out->n], nv.value, nv.valuelen);
            out->value[out->n][nv.valuelen] = 0;
            out->n++;
        }
        if (flags & NGHTTP2_HD_INFLATE_FINAL) {
            nghttp2_hd_inflate_end_headers(inf);
            return 1;
        }
        if (inlen == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT)) return 0;
    }
}

const char *fields_get(const h2fields *fl, const char *name)
{
    int i;
    for (i = 0; i < fl->n; ++i) {
        if (!strcmp(fl->name[i], name)) return fl->value[i];
    }
    return NULL;
}
