/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging for the agent: stderr always, the journal with structured fields under systemd. */

#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "agent/log.h"
#include "macro.h"
#include "string-util.h"

static int max_level = LOG_INFO;
static bool journal;

/* stderr is connected to the journal when $JOURNAL_STREAM names its device and inode. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return (unsigned long long) st.st_dev == dev && (unsigned long long) st.st_ino == ino;
}

void log_setup(void) {
        const char *e = getenv("NODE_RESET_LOG_LEVEL");

        /* Under systemd the journal gets the structured entries; stderr would only duplicate them. */
        journal = stderr_is_journal() || getenv("INVOCATION_ID");
        if (e && streq(e, "debug"))
                max_level = LOG_DEBUG;
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

bool log_to_journal(void) {
        return journal;
}

int log_internal(int level, int error, const char *func, const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        if (error > 0)
                error = -error;
        if (level > max_level)
                return error;

        errno = -error;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);

        if (journal)
                (void) sd_journal_send("MESSAGE=%s", buf, "PRIORITY=%d", level,
                                       "SYSLOG_IDENTIFIER=node-reset", "CODE_FUNC=%s", func,
                                       error ? "ERRNO=%d" : NULL, -error, NULL);
        else
                fprintf(stderr, "node-reset: %s\n", buf);
        return error;
}

void log_action(const Action *a) {
        const char *result = action_result_to_string(a->result);
        int level = a->result == ACTION_FAILED ? LOG_ERR : LOG_INFO;

        if (!journal) {
                if (a->result == ACTION_FAILED || max_level >= LOG_DEBUG)
                        log_internal(level, a->error, __func__, "%s %s %s: %s%s%s", a->phase,
                                     a->ops->kind, a->target, result, a->message ? ": " : "",
                                     strempty(a->message));
                return;
        }
        (void) sd_journal_send("MESSAGE=%s %s %s: %s%s%s", a->phase, a->ops->kind, a->target, result,
                               a->message ? ": " : "", strempty(a->message),
                               "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=node-reset",
                               "NODE_RESET_PHASE=%s", a->phase, "NODE_RESET_KIND=%s", a->ops->kind,
                               "NODE_RESET_TARGET=%s", a->target, "NODE_RESET_RESULT=%s", result,
                               NULL);
}
