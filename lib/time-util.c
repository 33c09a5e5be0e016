/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading the clocks, deadlines, and durations as people write them ("1h30m"). */

#include "time-util.h"

usec_t now(clockid_t clock) {
        struct timespec ts;

        (void) clock_gettime(clock, &ts);
        return timespec_load(&ts);
}

usec_t usec_left(usec_t deadline) {
        usec_t n;

        if (deadline == USEC_INFINITY)
                return USEC_INFINITY;
        n = now(CLOCK_MONOTONIC);
        return deadline > n ? deadline - n : 0;
}

/* Durations as people write them on a command line, in seconds. */
static uint64_t duration_unit_sec(char u) {
        switch (u) {
        case 's':
                return 1;
        case 'm':
                return 60;
        case 'h':
                return 3600;
        case 'd':
                return 86400;
        }
        return 0;
}

int duration_parse(const char *s, uint64_t *ret_sec) {
        const uint64_t max = 366ULL * 86400;
        uint64_t total = 0;
        const char *p = s;

        if (isempty(s))
                return -EINVAL;
        while (*p) {
                uint64_t v = 0, unit;

                if (!ascii_isdigit(*p))
                        return -EINVAL;
                for (; ascii_isdigit(*p); p++) {
                        v = v * 10 + (uint64_t) (*p - '0');
                        if (v > max)
                                return -ERANGE;
                }
                /* A bare number is seconds, but only on its own: "1h30" is a typo, not 1h30s. */
                if (!*p && p == s + strspn(s, "0123456789"))
                        unit = 1;
                else if (!*p || (unit = duration_unit_sec(*p++)) == 0)
                        return -EINVAL;
                total += v * unit;
                if (total > max)
                        return -ERANGE;
        }
        *ret_sec = total;
        return 0;
}

void duration_format(uint64_t sec, char *buf, size_t size) {
        static const struct {
                char unit;
                uint64_t sec;
        } units[] = {
                { 'd', 86400 },
                { 'h', 3600 },
                { 'm', 60 },
                { 's', 1 },
        };
        size_t n = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(units) && n < size; i++) {
                uint64_t v = sec / units[i].sec;

                if (v == 0)
                        continue;
                n += (size_t) snprintf(buf + n, size - n, "%" PRIu64 "%c", v, units[i].unit);
                sec %= units[i].sec;
        }
        if (buf[0] == '\0')
                snprintf(buf, size, "0s");
}
