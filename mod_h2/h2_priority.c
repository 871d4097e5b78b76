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
/* RFC 9218 priorities: a strict RFC 8941 dictionary reader that keeps only
 * the two parameters the scheme defines. */
#include "h2_priority.h"

/* What a member's value turned out to be, for the keys we keep. */
typedef enum { V_OTHER, V_INT, V_BOOL } vtype;

typedef struct cursor {
    const unsigned char *p, *end;
} cursor;

static int at(const cursor *c, unsigned char ch)
{
    return c->p < c->end && *c->p == ch;
}

static int is_lcalpha(int ch) { return ch >= 'a' && ch <= 'z'; }
static int is_alpha(int ch) { return is_lcalpha(ch) || (ch >= 'A' && ch <= 'Z'); }
static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }

static int is_tchar(int ch)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    const char *e;
    if (is_alpha(ch) || is_digit(ch)) return 1;
    for (e = extra; *e; ++e) {
        if (*e == ch) return 1;
    }
    return 0;
}

static int is_b64(int ch)
{
    return is_alpha(ch) || is_digit(ch) || ch == '+' || ch == '/' || ch == '=';
}

static void skip_sp(cursor *c)
{
    while (at(c, ' ')) c->p++;
}

static void skip_ows(cursor *c)
{
    while (at(c, ' ') || at(c, '\t')) c->p++;
}

/* key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ) */
static int parse_key(cursor *c, const unsigned char **k, size_t *klen)
{
    const unsigned char *start = c->p;
    if (!(c->p < c->end && (is_lcalpha(*c->p) || *c->p == '*'))) return 0;
    for (c->p++; c->p < c->end; c->p++) {
        int ch = *c->p;
        if (!(is_lcalpha(ch) || is_digit(ch) || ch == '_' || ch == '-'
              || ch == '.' || ch == '*')) break;
    }
    *k = start;
    *klen = (size_t)(c->p - start);
    return 1;
}

/* Integer or Decimal; *ival is the integer's value (or -1 when it is a
 * decimal, a negative number or beyond 7: not an urgency). */
static int parse_number(cursor *c, vtype *t, int *ival)
{
    int neg = 0, digits = 0, frac = 0;
    long v = 0;
    if (at(c, '-')) { neg = 1; c->p++; }
    while (c->p < c->end && is_digit(*c->p)) {
        if (++digits > 15) return 0;
        if (v < 100) v = v * 10 + (*c->p - '0');
        c->p++;
    }
    if (digits == 0) return 0;
    if (at(c, '.')) {
        if (digits > 12) return 0;
        for (c->p++; c->p < c->end && is_digit(*c->p); c->p++) {
            if (++frac > 3) return 0;
        }
        if (frac == 0) return 0;
        *t = V_OTHER;
        return 1;
    }
    *t = V_INT;
    *ival = (neg || v > 7)? -1 : (int)v;
    return 1;
}

static int parse_string(cursor *c)
{
    for (c->p++; c->p < c->end; c->p++) {
        int ch = *c->p;
        if (ch == '"') { c->p++; return 1; }
        if (ch == '\\') {
            c->p++;
            if (!(at(c, '"') || at(c, '\\'))) return 0;
        }
        else if (ch < 0x20 || ch > 0x7e) return 0;
    }
    return 0;
}

/* bare-item; for Integer and Boolean its value in *ival */
static int parse_bare_item(cursor *c, vtype *t, int *ival)
{
    int ch;
    *t = V_OTHER;
    if (c->p >= c->end) return 0;
    ch = *c->p;
    if (ch == '-' || is_digit(ch)) return parse_number(c, t, ival);
    if (ch == '"') return parse_string(c);
    if (ch == '?') {
        c->p++;
        if (!(at(c, '0') || at(c, '1'))) return 0;
        *t = V_BOOL;
        *ival = (*c->p++ == '1');
        return 1;
    }
    if (ch == ':') {
        for (c->p++; c->p < c->end && is_b64(*c->p); c->p++);
        if (!at(c, ':')) return 0;
        c->p++;
        return 1;
    }
    if (is_alpha(ch) || ch == '*') {
        for (c->p++; c->p < c->end && (is_tchar(*c->p) || *c->p == ':' || *c->p == '/'); c->p++);
        return 1;
    }
    return 0;
}

/* parameters = *( ";" *SP key [ "=" bare-item ] ): checked, not kept */
static int parse_params(cursor *c)
{
    const unsigned char *k;
    size_t klen;
    vtype t;
    int ival;
    while (at(c, ';')) {
        c->p++;
        skip_sp(c);
        if (!parse_key(c, &k, &klen)) return 0;
        if (at(c, '=')) {
            c->p++;
            if (!parse_bare_item(c, &t, &ival)) return 0;
        }
    }
    return 1;
}

/* inner-list = "(" *SP [ sf-item *( 1*SP sf-item ) *SP ] ")" parameters */
static int parse_inner_list(cursor *c)
{
    vtype t;
    int ival;
    c->p++;
    for (;;) {
        skip_sp(c);
        if (at(c, ')')) { c->p++; return parse_params(c); }
        if (!parse_bare_item(c, &t, &ival) || !parse_params(c)) return 0;
        if (!(at(c, ' ') || at(c, ')'))) return 0;
    }
}

/* member-value after "=", or the true of a bare key; *t and *ival as for
 * a bare item */
static int parse_member_value(cursor *c, vtype *t, int *ival)
{
    if (!at(c, '=')) {
        *t = V_BOOL;
        *ival = 1;
        return parse_params(c);
    }
    c->p++;
    if (at(c, '(')) {
        *t = V_OTHER;
        return parse_inner_list(c);
    }
    return parse_bare_item(c, t, ival) && parse_params(c);
}

void h2_prio_default(h2_prio *p)
{
    p->urgency = H2_PRIO_URGENCY_DEFAULT;
    p->incremental = 0;
}

int h2_prio_parse(const char *v, size_t len, h2_prio *p)
{
    cursor c;
    int u = -2, inc = -2;   /* -2: not seen; -1: seen, not valid */

    c.p = (const unsigned char *)v;
    c.end = c.p + len;
    skip_sp(&c);
    while (c.end > c.p && c.end[-1] == ' ') c.end--;
    while (c.p < c.end) {
        const unsigned char *k;
        size_t klen;
        vtype t;
        int ival = 0;
        if (!parse_key(&c, &k, &klen) || !parse_member_value(&c, &t, &ival)) {
            return 0;
        }
        /* a later member of the same key replaces an earlier one */
        if (klen == 1 && *k == 'u') {
            u = (t == V_INT && ival >= 0)? ival : -1;
        }
        else if (klen == 1 && *k == 'i') {
            inc = (t == V_BOOL)? ival : -1;
        }
        skip_ows(&c);
        if (c.p >= c.end) break;
        if (!at(&c, ',')) return 0;
        c.p++;
        skip_ows(&c);
        if (c.p >= c.end) return 0;     /* a trailing comma */
    }
    if (u >= 0) p->urgency = (unsigned char)u;
    if (inc >= 0) p->incremental = (unsigned char)inc;
    return 1;
}
