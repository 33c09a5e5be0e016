/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging for the agent: the journal with structured fields when stderr is the journal, else stderr. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

void log_setup(void);
void log_set_max_level(int level);
int log_get_max_level(void);
bool log_to_journal(void);

/* Logs at level (with %m meaning strerror(-error)) and returns error, negative, for tail calls. */
int log_internal(int level, int error, const char *func, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Stable MESSAGE_IDs (docs/node-reset.catalog): "journalctl MESSAGE_ID=..." finds every reset. */
#define LOG_MESSAGE_RUN_START "979a302e64384f6493cb74ebc3148d52"
#define LOG_MESSAGE_RUN_RESULT "07ba51c9bd9b409bbe3d77ed3da6a954"
#define LOG_MESSAGE_ACTION_FAILED "80cba3a00ece423498e2fcf09edc0139"

/* Logs one event with a MESSAGE_ID in the journal (on stderr, the message alone). */
int log_message_id(int level, const char *message_id, const char *func, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
#define log_event(level, message_id, ...) log_message_id(level, message_id, __func__, __VA_ARGS__)

/* The journal entry for one executed action, with NODE_RESET_PHASE/_KIND/_TARGET/_RESULT fields (on
 * stderr: failures, or everything at debug level). error is a -errno or 0. */
void log_action_event(const char *phase, const char *kind, const char *target, const char *result, bool failed,
                      int error, const char *message);

#define log_full_errno(level, error, ...) log_internal(level, error, __func__, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_error(...) log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_warning(...) log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")
