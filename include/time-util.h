/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Time in one unit, microseconds, read from one place. */
#pragma once

#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;

#define USEC_INFINITY ((usec_t) UINT64_MAX)
#define USEC_PER_MSEC ((usec_t) 1000ULL)
#define USEC_PER_SEC ((usec_t) 1000000ULL)
#define NSEC_PER_USEC ((uint64_t) 1000ULL)

static inline usec_t timespec_load(const struct timespec *ts) {
        return (usec_t) ts->tv_sec * USEC_PER_SEC + (usec_t) ts->tv_nsec / NSEC_PER_USEC;
}

/* CLOCK_MONOTONIC for deadlines and durations, CLOCK_REALTIME for what a person reads. */
static inline usec_t now(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return timespec_load(&ts);
}

/* a + b that saturates at USEC_INFINITY instead of wrapping. */
static inline usec_t usec_add(usec_t a, usec_t b) {
        return a > USEC_INFINITY - b ? USEC_INFINITY : a + b;
}

/* Time left until deadline (0 once it passed; USEC_INFINITY for no deadline). */
static inline usec_t usec_left(usec_t deadline) {
        usec_t n;

        if (deadline == USEC_INFINITY)
                return USEC_INFINITY;
        n = now(CLOCK_MONOTONIC);
        return deadline > n ? deadline - n : 0;
}
