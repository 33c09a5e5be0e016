/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Run a piece of a cmocka test as root in a forked child (one that unshares its mount namespace, say). */
#pragma once

#include <stdio.h>

/* In the child: a failed check ends it with status 1, saying which. */
#define CHECK(expr)                                                                              \
        do {                                                                                     \
                if (!(expr)) {                                                                   \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
                        return 1;                                                                \
                }                                                                                \
        } while (0)

/* Run a shell command line (printf-style) and fail the test unless it exits 0. */
void test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Skip the test unless root; run fn(userdata) in a child; skip it when the child exits 77 (a facility
 * is missing), fail it on any other status but 0. */
void test_run_in_child(int (*fn)(void *userdata), void *userdata);
