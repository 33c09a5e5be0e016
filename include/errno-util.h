/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* errno helpers for the "negative errno on failure" convention used everywhere. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Turn a libc-style failure (-1 with errno set) into a negative errno that is never 0. */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* A libc-style return value to a negative errno, or the value itself on success. */
static inline int RET_NERRNO(int r) {
        return r < 0 ? negative_errno() : r;
}

static inline int errno_or_else(int fallback) {
        return errno > 0 ? -errno : -abs(fallback);
}

/* Set *reterr (when the caller asked for it and nothing is set yet) to a formatted,
 * malloc'd message. Returns r, so that "return set_errmsg(reterr, -EINVAL, ...)" reads well.
 *
 * The message out-parameters are named for what they carry, the same in agent/, netreset/, cri/:
 *   char **reterr      a whole sentence for the operator about a failure this code decided
 *                      ("FILE:LINE: unknown directive"), printed as it is (parsers, Phase.plan);
 *   char **reterr_msg  why a call failed, in the words of what failed below (the kernel's extack,
 *                      gRPC's grpc-message, systemd's bus error, a refusal's reason), for the caller
 *                      to quote in its own sentence; set on failure only;
 *   char **ret_msg     what happened, on success as on failure (an action's apply() and check(),
 *                      services_disable()'s list of changes). */
int set_errmsg(char **reterr, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
