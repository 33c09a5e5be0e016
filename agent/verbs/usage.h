/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A usage error as the command line reports it: one line, then a pointer to --help. */
#pragma once

/* "node-reset: MESSAGE" (escaped) and "Try 'node-reset --help'." on stderr; returns -EINVAL. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
