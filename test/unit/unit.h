/* A minimal check harness for mod_h2's C unit tests: CHECK records a
 * pass or a failure with its location, unit_done() prints the closing
 * "N passed, N failed" line and gives the exit code. */
#ifndef H2_UNIT_H
#define H2_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed;

#define CHECK(cond) do { \
    if (cond) { unit_passed++; } \
    else { unit_failed++; \
           fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

static int unit_done(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
    return unit_failed? 1 : 0;
}

#endif
