/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A usage error: one line and a pointer to --help, never the whole help (util-linux's convention). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "agent/verbs/usage.h"
#include "escape.h"

static const char *usage_command;

void usage_set_command(const char *command) {
        usage_command = command;
}

int usage_error(const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* The arguments echo what was typed or read from a manifest: escaped, like every text output. */
        fputs("node-reset: ", stderr);
        fputs_escaped(buf, stderr);
        if (usage_command)
                fprintf(stderr, "\nTry 'node-reset %s --help'.\n", usage_command);
        else
                fputs("\nTry 'node-reset --help'.\n", stderr);
        return -EINVAL;
}
