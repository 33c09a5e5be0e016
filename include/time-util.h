/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Time in one unit, microseconds, read from one place. */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "string-util.h"

typedef uint64_t usec_t;

#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

static inline usec_t timespec_load(const struct timespec *ts) {
        return (usec_t) ts->tv_sec * USEC_PER_SEC + (usec_t) ts->tv_nsec / NSEC_PER_USEC;
}

/* CLOCK_MONOTONIC for deadlines and durations, CLOCK_REALTIME for what a person reads. */
usec_t now(clockid_t clock);

/* a + b that saturates at USEC_INFINITY instead of wrapping. */
static inline usec_t usec_add(usec_t a, usec_t b) {
        return a > USEC_INFINITY - b ? USEC_INFINITY : a + b;
}

/* Time left until deadline (0 once it passed; USEC_INFINITY for no deadline). */
usec_t usec_left(usec_t deadline);

/* "90s", "30m", "2h", "1d", "1h30m", or plain seconds; -EINVAL, or -ERANGE past a year. */
int duration_parse(const char *s, uint64_t *ret_sec);

/* "1h30m", "45s", "0s". */
void duration_format(uint64_t sec, char *buf, size_t size);
