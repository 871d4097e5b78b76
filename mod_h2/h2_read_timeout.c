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
/* Request read timeouts as mod_reqtimeout defines them, for HTTP/2: the
 * pure part (values, their parser, the deadlines they set). Where they are
 * found in httpd's configuration is h2_read_timeout_conftree.c's. */
#include <stdlib.h>
#include <string.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include "h2_read_timeout.h"

void h2_read_timeouts_default(h2_read_timeouts *rt)
{
    rt->header.min = apr_time_from_sec(20);
    rt->header.max = apr_time_from_sec(40);
    rt->header.rate = 500;
    rt->body.min = apr_time_from_sec(20);
    rt->body.max = 0;
    rt->body.rate = 500;
}

/* A whole number of seconds (or bytes a second) at s, up to a stop
 * character; -1 when s holds none. */
static long number(const char *s, const char **pend)
{
    char *end;
    long v;
    if (!apr_isdigit(*s)) {
        return -1;
    }
    v = strtol(s, &end, 10);
    *pend = end;
    return (v < 0 || v > 86400 * 365)? -1 : v;
}

const char *h2_read_timeouts_parse(h2_read_timeouts *rt, apr_pool_t *p,
                                   const char *arg)
{
    h2_read_limit lim = { 0, 0, 0 }, *dst;
    const char *s = strchr(arg, '='), *end;
    long a, b = 0;

    if (!s) {
        return apr_psprintf(p, "'%s' is not stage=timeout", arg);
    }
    if (!strncasecmp(arg, "header=", 7)) dst = &rt->header;
    else if (!strncasecmp(arg, "body=", 5)) dst = &rt->body;
    else if (!strncasecmp(arg, "handshake=", 10)) return NULL;  /* TLS, not ours */
    else return apr_psprintf(p, "unknown stage in '%s'", arg);

    if ((a = number(s + 1, &end)) < 0) {
        return apr_psprintf(p, "no timeout in '%s'", arg);
    }
    if (*end == '-' && (b = number(end + 1, &end)) < a) {
        return apr_psprintf(p, "bad maximum in '%s'", arg);
    }
    if (*end == ',') {
        long r;
        if (strncasecmp(end + 1, "MinRate=", 8)
            || (r = number(end + 9, &end)) <= 0) {
            return apr_psprintf(p, "bad MinRate in '%s'", arg);
        }
        lim.rate = (apr_size_t)r;
    }
    if (*end) {
        return apr_psprintf(p, "junk at the end of '%s'", arg);
    }
    lim.min = apr_time_from_sec(a);
    lim.max = apr_time_from_sec(b);
    if (a == 0) {
        lim.rate = 0;   /* 0 switches the stage off */
        lim.max = 0;
    }
    *dst = lim;
    return NULL;
}

apr_time_t h2_read_deadline(const h2_read_limit *lim, apr_time_t start,
                            apr_off_t bytes)
{
    apr_interval_time_t allowed = lim->min;

    if (!lim->min) {
        return 0;
    }
    if (lim->rate && bytes > 0) {
        /* every MinRate bytes buy a second more, up to the maximum (none
         * given: without end, as mod_reqtimeout does) */
        allowed += (apr_interval_time_t)((apr_uint64_t)bytes * APR_USEC_PER_SEC
                                         / lim->rate);
        if (lim->max && allowed > lim->max) {
            allowed = lim->max;
        }
    }
    return start + allowed;
}
