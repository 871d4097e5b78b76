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
#ifndef H2_SEAM_FRAMES_H
#define H2_SEAM_FRAMES_H

/* Writing a client's frames and reading a server's, for tests that drive a
 * session through the seam (seam.h). HPACK by nghttp2's deflater/inflater. */

#include <stddef.h>
#include <stdint.h>
#include <nghttp2/nghttp2.h>

typedef struct fbuf {
    unsigned char *data;
    size_t len, cap;
    nghttp2_hd_deflater *deflater;
} fbuf;

void fb_init(fbuf *b);
void fb_free(fbuf *b);
void fb_reset(fbuf *b);          /* empty, keeps the HPACK state */

/* The connection preface and an empty SETTINGS frame. */
void fb_preface(fbuf *b);
void fb_frame(fbuf *b, int type, int flags, int32_t sid, const void *payload, size_t len);
/* A HEADERS frame of name/value pairs (a NULL name ends them). */
void fb_headers(fbuf *b, int32_t sid, int flags, const char *const *nv);
void fb_data(fbuf *b, int32_t sid, int flags, const void *data, size_t len);
void fb_rst(fbuf *b, int32_t sid, uint32_t code);
void fb_window(fbuf *b, int32_t sid, uint32_t increment);

typedef struct h2frame {
    int type, flags;
    int32_t sid;
    size_t len;
    const unsigned char *payload;
} h2frame;

/* Split a server's output into frames; returns how many, or -1 when the
 * bytes are not a sequence of whole frames. */
int frames_parse(const unsigned char *data, size_t len, h2frame *out, int max);

/* The first frame of type on stream sid from index *from on (-1: any
 * stream); its index, or -1. */
int frames_find(const h2frame *f, int n, int type, int32_t sid, int from);

/* The fields of a decoded header block. */
typedef struct h2fields {
    int n;
    char name[32][64];
    char value[32][256];
} h2fields;

/* Decode a HEADERS frame's block (each block once, in order: HPACK keeps
 * state); 0 when it does not decode. */
int frame_fields(nghttp2_hd_inflater *inf, const h2frame *f, h2fields *out);

/* The value of field name, or NULL. */
const char *fields_get(const h2fields *fl, const char *name);

uint32_t frame_u32(const unsigned char *p);

#endif
