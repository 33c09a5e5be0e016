/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The operator's side of a run: per-phase questions (--step) and progress, on stderr. */

#include <ctype.h>
#include <time.h>
#include <unistd.h>

#include "agent/engine/console.h"
#include "agent/base/log.h"
#include "agent/base/output.h"
#include "macro.h"
#include "time-util.h"
#include "string-util.h"

void console_init(Console *c, FILE *in, FILE *out, bool step) {
        *c = (Console) {
                .in = in,
                .out = out,
                .tty = isatty(fileno(out)) && !streq_ptr(getenv("TERM"), "dumb"),
                .color = color_wanted(out),
                .step = step,
                .heartbeat_usec = CONSOLE_HEARTBEAT_USEC,
                .lock = PTHREAD_MUTEX_INITIALIZER,
        };
        (void) pthread_cond_init(&c->wake, NULL);
}

/* Logs where the phase stands every heartbeat until the phase ends (c->phase becomes NULL). */
static void *heartbeat(void *userdata) {
        Console *c = userdata;

        (void) pthread_mutex_lock(&c->lock);
        while (c->phase) {
                struct timespec until;
                const char *phase = c->phase;

                (void) clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += (time_t) (c->heartbeat_usec / 1000000ULL);
                until.tv_nsec += (long) (c->heartbeat_usec % 1000000ULL) * 1000L;
                if (until.tv_nsec >= 1000000000L) {
                        until.tv_sec++;
                        until.tv_nsec -= 1000000000L;
                }
                if (pthread_cond_timedwait(&c->wake, &c->lock, &until) != ETIMEDOUT || c->phase != phase)
                        continue;
                log_info("%s: %zu/%zu actions done, running for %.0f s", phase, c->done, c->n,
                         (now(CLOCK_MONOTONIC) - c->phase_start_usec) / 1e6);
        }
        (void) pthread_mutex_unlock(&c->lock);
        return NULL;
}

static void heartbeat_start(Console *c, const char *phase, size_t n) {
        (void) pthread_mutex_lock(&c->lock);
        c->phase = phase;
        c->done = 0;
        c->n = n;
        c->phase_start_usec = now(CLOCK_MONOTONIC);
        (void) pthread_mutex_unlock(&c->lock);
        if (c->heartbeat_usec > 0 && pthread_create(&c->heartbeat, NULL, heartbeat, c) == 0)
                c->beating = true;
}

static void heartbeat_stop(Console *c) {
        (void) pthread_mutex_lock(&c->lock);
        c->phase = NULL;
        (void) pthread_cond_signal(&c->wake);
        (void) pthread_mutex_unlock(&c->lock);
        if (c->beating)
                (void) pthread_join(c->heartbeat, NULL);
        c->beating = false;
}

void console_done(Console *c) {
        heartbeat_stop(c);
        (void) pthread_cond_destroy(&c->wake);
}

int phase_decision_from_string(const char *s, PhaseDecision *ret) {
        char word[16];
        size_t n = 0;

        while (*s && isspace((unsigned char) *s))
                s++;
        while (*s && !isspace((unsigned char) *s) && n < sizeof word - 1)
                word[n++] = (char) tolower((unsigned char) *s++);
        word[n] = '\0';
        if (streq(word, "yes") || streq(word, "y"))
                *ret = PHASE_RUN;
        else if (streq(word, "skip") || streq(word, "s"))
                *ret = PHASE_SKIP;
        else if (streq(word, "quit") || streq(word, "q"))
                *ret = PHASE_QUIT;
        else
                return -EINVAL;
        return 0;
}

static size_t count_present(const Plan *plan, size_t first, size_t n) {
        size_t k = 0;

        for (size_t i = first; i < first + n; i++)
                if (plan->actions[i]->present && !plan->actions[i]->skip_reason)
                        k++;
        return k;
}

/* Without a terminal, nothing is redrawn: the phase says it starts, and a heartbeat follows it. */
static PhaseDecision phase_start(Console *c, const Plan *plan, size_t first, size_t n) {
        if (c->tty)
                return PHASE_RUN;
        log_info("%s: starting, %zu actions, %zu with something to do", plan->actions[first]->phase, n,
                 count_present(plan, first, n));
        heartbeat_start(c, plan->actions[first]->phase, n);
        return PHASE_RUN;
}

static PhaseDecision ask(const Plan *plan, size_t first, size_t n, void *userdata) {
        Console *c = userdata;
        char line[64];

        if (!c->step)
                return phase_start(c, plan, first, n);
        for (;;) {
                PhaseDecision d;

                fprintf(c->out, "%sphase %s%s: %zu actions, %zu with something to do. Run it? [yes/skip/quit] ",
                        c->color ? "\033[1m" : "", plan->actions[first]->phase, c->color ? "\033[0m" : "", n,
                        count_present(plan, first, n));
                fflush(c->out);
                if (!fgets(line, sizeof line, c->in)) {
                        fputs("\n", c->out);
                        c->quit = true;
                        return PHASE_QUIT; /* end of input: stop rather than guess */
                }
                if (phase_decision_from_string(line, &d) >= 0) {
                        c->quit = d == PHASE_QUIT;
                        return d;
                }
                fputs("Please answer yes, skip or quit.\n", c->out);
        }
}

static void progress(const Plan *plan, size_t first, size_t n, size_t done, uint64_t elapsed_usec, void *userdata) {
        Console *c = userdata;

        if (!c->tty) {
                (void) pthread_mutex_lock(&c->lock);
                c->done = done;
                (void) pthread_mutex_unlock(&c->lock);
                return;
        }
        fprintf(c->out, "\r\033[K  %s: %zu/%zu actions, %.1f s", plan->actions[first]->phase, done, n,
                elapsed_usec / 1e6);
        fflush(c->out);
}

static void phase_end(const Plan *plan, size_t first, size_t n, uint64_t elapsed_usec, void *userdata) {
        const char *phase = plan->actions[first]->phase;
        Console *c = userdata;
        size_t failed = plan_count(plan, phase, ACTION_FAILED);

        heartbeat_stop(c);
        if (c->tty)
                fprintf(c->out, "\r\033[K%s%s: %zu changed, %zu unchanged, %zu failed, %zu skipped (%.1f s)%s\n",
                        c->color && failed ? "\033[1;31m" : "", phase, plan_count(plan, phase, ACTION_CHANGED),
                        plan_count(plan, phase, ACTION_UNCHANGED), failed, plan_count(plan, phase, ACTION_SKIPPED),
                        elapsed_usec / 1e6, c->color && failed ? "\033[0m" : "");
        else
                log_info("%s: %zu changed, %zu unchanged, %zu failed, %zu skipped (%.1f s)", phase,
                         plan_count(plan, phase, ACTION_CHANGED), plan_count(plan, phase, ACTION_UNCHANGED), failed,
                         plan_count(plan, phase, ACTION_SKIPPED), elapsed_usec / 1e6);
}

ExecuteHooks console_hooks(Console *c) {
        return (ExecuteHooks) {
                .phase_begin = ask,
                .progress = progress,
                .phase_end = phase_end,
                .userdata = c,
        };
}

bool console_confirm(FILE *in, FILE *out, const char *what) {
        char answer[64] = "";

        if (!isatty(fileno(in))) {
                log_error("Refusing to %s without --yes: standard input is not a terminal to confirm on.", what);
                return false;
        }
        fprintf(out, "Type 'yes' to %s: ", what);
        fflush(out);
        if (!fgets(answer, sizeof answer, in) || !streq(answer, "yes\n")) {
                log_error("Not confirmed; nothing was changed.");
                return false;
        }
        return true;
}
