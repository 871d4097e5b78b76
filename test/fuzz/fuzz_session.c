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
/* libFuzzer target for the protocol core: arbitrary client frame sequences
 * fed to a session through the test seam (test/seam/), with fake handlers
 * answering the streams.
 *
 * Input: byte 0 picks the handler (low 3 bits), small limits (0x08: 3
 * streams, 0x10: 1 KB stream buffers, 0x20: a 16 KB window) and whether
 * time passes before the end (0x40, timeouts); byte 1 the size of the
 * pieces the rest arrives in (0: one piece); the rest is what the client
 * sends after the connection preface. Besides not crashing (ASan/UBSan
 * watch that), the session must log no invalid transition and no error
 * (the memory budget back at zero at teardown is one), and its output must
 * be whole frames. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <nghttp2/nghttp2.h>

#include "seam.h"
#include "frames.h"

static h2frame frames[65536];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seam_opts o;
    seam *t;
    size_t piece, off, olen;
    const unsigned char *out;

    if (size < 2) {
        return 0;
    }
    memset(&o, 0, sizeof(o));
    o.handler = (seam_handler)((data[0] & 7) % 5);
    o.big_len = 70000;
    o.max_stream_errors = -1;
    if (data[0] & 0x08) o.max_streams = 3;
    if (data[0] & 0x10) o.stream_max_mem = 1024;
    if (data[0] & 0x20) o.window_size = 16384;
    piece = data[1]? (size_t)data[1] * 4 : size;

    t = seam_new(&o);
    seam_feed(t, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
    for (off = 2; off < size; off += piece) {
        seam_feed(t, data + off, size - off < piece? size - off : piece);
        if (seam_run(t)) break;
    }
    if (data[0] & 0x40) {
        seam_wait(t, 6LL * 1000000);
    }
    seam_eof(t);
    seam_run(t);
    out = seam_out(t, &olen);
    if (frames_parse(out, olen, frames, 65536) < 0 && olen < 65536 * 9) {
        abort();   /* not a sequence of whole frames */
    }
    seam_free(t);
    if (seam_problems()) {
        abort();   /* rerun the input with SEAM_LOG=1 to see what */
    }
    return 0;
}
