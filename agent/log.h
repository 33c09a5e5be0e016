/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging for the agent: stderr always, the journal with structured fields under systemd. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

#include "agent/plan.h"

void log_setup(void);
void log_set_max_level(int level);
int log_get_max_level(void);
bool log_to_journal(void);

/* Logs at level (with %m meaning strerror(-error)) and returns error, negative, for tail calls. */
int log_internal(int level, int error, const char *func, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The journal entry for one executed action, with NODE_RESET_PHASE/_TARGET/_RESULT fields. */
void log_action(const Action *a);

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
