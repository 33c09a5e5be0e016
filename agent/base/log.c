/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging for the agent: the journal with structured fields when stderr is the journal, else stderr. */

/* The fields name the code location themselves (CODE_FUNC), so sd_journal_sendv() is the plain call. */
#define SD_JOURNAL_SUPPRESS_LOCATION 1
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/param.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "agent/base/log.h"
#include "escape.h"
#include "macro.h"
#include "dlib/dlopen.h"
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

        /* systemd's own rule: the journal only when stderr is connected to it, else stderr would only
         * duplicate the structured entries. $INVOCATION_ID says nothing about where stderr goes
         * (systemd-run -t, a CI runner, a timer with StandardError=file:) nor that journald runs. Without
         * libsystemd, stderr it is. */
        journal = stderr_is_journal() && dlib_load(DLIB_LIBSYSTEMD) >= 0;
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

/* The format is the caller's literal, but its %s arguments are names from the node, error texts
 * from a runtime, a kubeconfig, an HTTP peer: the whole message is escaped once formatted (a log
 * line is one line; its own newline is added after), on stderr and in the journal's MESSAGE alike,
 * so the line an operator greps is the same in both. Stack buffers only, as this also reports
 * running out of memory; four bytes of escape per byte of message always fit. */
#define LOG_LINE_MAX 2048
#define LOG_FIELDS_MAX 10

/* sd_journal_send() is variadic with no va_list twin, so a library loaded at run time cannot be
 * handed its arguments: the fields are formatted here, one stack buffer each, and sent as iovecs.
 * A NULL field (an optional one left out) is skipped. */
typedef struct JournalFields {
        struct iovec iov[LOG_FIELDS_MAX];
        char buf[LOG_FIELDS_MAX][LOG_LINE_MAX * 4 + 64];
        int n;
} JournalFields;

static void field_add(JournalFields *j, const char *fmt, ...) _printf_(2, 3);
static void field_add(JournalFields *j, const char *fmt, ...) {
        va_list ap;
        int k;

        if (!fmt || j->n >= LOG_FIELDS_MAX)
                return;
        va_start(ap, fmt);
        k = vsnprintf(j->buf[j->n], sizeof j->buf[j->n], fmt, ap);
        va_end(ap);
        if (k < 0)
                return;
        j->iov[j->n] = (struct iovec) { j->buf[j->n], MIN((size_t) k, sizeof j->buf[j->n] - 1) };
        j->n++;
}

static void log_write(int level, int error, const char *func, const char *message_id, const char *raw) {
        char buf[LOG_LINE_MAX * 4];

        (void) text_escape_buf(raw, buf, sizeof buf);
        if (journal) {
                JournalFields j;

                j.n = 0;
                field_add(&j, "MESSAGE=%s", buf);
                if (message_id)
                        field_add(&j, "MESSAGE_ID=%s", message_id);
                field_add(&j, "PRIORITY=%d", level);
                field_add(&j, "SYSLOG_IDENTIFIER=node-reset");
                field_add(&j, "CODE_FUNC=%s", func);
                if (error)
                        field_add(&j, "ERRNO=%d", -error);
                (void) sd_journal_sendv(j.iov, j.n);
        } else
                fprintf(stderr, "node-reset: %s\n", buf);
}

int log_internal(int level, int error, const char *func, const char *fmt, ...) {
        char buf[LOG_LINE_MAX];
        va_list ap;

        if (error > 0)
                error = -error;
        if (level > max_level)
                return error;

        errno = -error;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);

        log_write(level, error, func, NULL, buf);
        return error;
}

int log_message_id(int level, const char *message_id, const char *func, const char *fmt, ...) {
        char buf[LOG_LINE_MAX];
        va_list ap;

        if (level > max_level)
                return 0;
        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        log_write(level, 0, func, message_id, buf);
        return 0;
}

void log_action_event(const char *phase, const char *kind, const char *target, const char *result, bool failed,
                      int error, const char *message) {
        char raw[LOG_LINE_MAX], msg[LOG_LINE_MAX * 4];
        int level = failed ? LOG_ERR : LOG_INFO;
        JournalFields j;

        if (!journal) {
                if (failed || max_level >= LOG_DEBUG)
                        log_internal(level, error, __func__, "%s %s %s: %s%s%s", phase, kind, target, result,
                                     message ? ": " : "", strempty(message));
                return;
        }
        /* MESSAGE is for people, escaped like every text output; the NODE_RESET_* fields are for
         * programs and keep the exact bytes (the journal stores binary field values safely), so a
         * query by target still finds the name as it is on disk. */
        (void) snprintf(raw, sizeof raw, "%s %s %s: %s%s%s", phase, kind, target, result, message ? ": " : "",
                        strempty(message));
        (void) text_escape_buf(raw, msg, sizeof msg);
        j.n = 0;
        field_add(&j, "MESSAGE=%s", msg);
        field_add(&j, "PRIORITY=%d", level);
        field_add(&j, "SYSLOG_IDENTIFIER=node-reset");
        field_add(&j, "NODE_RESET_PHASE=%s", phase);
        field_add(&j, "NODE_RESET_KIND=%s", kind);
        field_add(&j, "NODE_RESET_TARGET=%s", target);
        field_add(&j, "NODE_RESET_RESULT=%s", result);
        /* a failure is an event to find across a fleet; the rest are details */
        if (failed)
                field_add(&j, "MESSAGE_ID=%s", LOG_MESSAGE_ACTION_FAILED);
        if (error)
                field_add(&j, "ERRNO=%d", -error);
        (void) sd_journal_sendv(j.iov, j.n);
}
