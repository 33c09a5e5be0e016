/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Cleanup attributes, ownership transfer and one-line helpers shared by every module (all inline: no .c). */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLEANUP(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))
#define _sentinel_ __attribute__((sentinel))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline size_t size_min(size_t a, size_t b) {
        return a < b ? a : b;
}

static inline uint64_t u64_min(uint64_t a, uint64_t b) {
        return a < b ? a : b;
}

/* Hand ownership of a pointer or fd out of a cleanup-scoped variable. */
#define TAKE_PTR(p)                       \
        ({                                \
                __typeof__(p) _tp_ = (p); \
                (p) = NULL;               \
                _tp_;                     \
        })
#define TAKE_FD(fd)              \
        ({                       \
                int _tf_ = (fd); \
                (fd) = -EBADF;   \
                _tf_;            \
        })

/* Define a cleanup function "name##p" that calls func(*p) when *p is non-NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) {   \
                if (*p)                         \
                        (void) func(*p);        \
        }

static inline void freep(void *p) {
        free(*(void **) p);
}
#define cleanup_free CLEANUP(freep)

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                (void) close(*fd);
                errno = saved;
        }
}
#define cleanup_close CLEANUP(closep)

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}
#define cleanup_fclose CLEANUP(fclosep)

/* A NULL-terminated vector of malloc'd strings. */
static inline char **strv_free(char **l) {
        if (l) {
                for (char **i = l; *i; i++)
                        free(*i);
                free(l);
        }
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define cleanup_strv CLEANUP(strv_freep)

#define STRV_FOREACH(s, l) for (char **s = (l); s && *s; s++)

static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

static inline int close_nointr(int fd) {
        if (fd >= 0)
                (void) close(fd);
        return -EBADF;
}
