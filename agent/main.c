/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset: the command line — verbs, options, exit status. Everything else lives in modules. */

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/console.h"
#include "agent/embedded.h"
#include "agent/engine.h"
#include "agent/lock.h"
#include "agent/log.h"
#include "agent/manifest.h"
#include "agent/report.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define SYSTEM_MANIFEST "/etc/node-reset/manifest.conf"

enum {
        EXIT_CLEAN = 0,
        EXIT_RESIDUE = 1,       /* an action failed or residue remains */
        EXIT_USAGE = 2,         /* bad usage or a manifest error */
        EXIT_REFUSED = 3,       /* lock held, not root, not confirmed */
};

static const char *arg_root;
static char **arg_manifests;
static size_t arg_n_manifests;
static const char *arg_phases;
static const char *arg_skip_phases;
static bool arg_yes;
static bool arg_step;
static OutputMode arg_output = OUTPUT_TEXT;
static unsigned arg_timeout_sec;
static bool arg_lazy_unmount;
static bool arg_group_delete = true;
static unsigned arg_xtables_wait_sec = 10;

static void help(void) {
        printf("Usage: node-reset [OPTIONS...] COMMAND\n\n"
               "Bring a Kubernetes node back to a clean, rejoinable state.\n\n"
               "Commands:\n"
               "  plan                  Show what a reset would do (dry run)\n"
               "  run                   Plan, confirm, reset, then verify\n"
               "  status                Show what is left (residue); exit 0 when clean\n"
               "  manifest check FILE…  Validate manifest files\n"
               "  manifest print        Show the effective manifest\n\n"
               "Options:\n"
               "  -h --help             Show this help\n"
               "     --version          Show the version\n"
               "     --root=DIR         Act on the tree beneath DIR (file system state only)\n"
               "  -m --manifest=FILE    Use FILE instead of the default manifest (repeatable)\n"
               "     --phases=LIST      Only these phases (comma separated)\n"
               "     --skip-phases=LIST Skip these phases\n"
               "  -y --yes              Do not ask for confirmation\n"
               "     --step             Ask before each phase: yes, skip or quit (needs a terminal)\n"
               "  -o --output=FORMAT    Report as 'text' (default) or 'json'\n"
               "     --timeout=SECONDS  Bound the whole run\n"
               "     --lazy-unmount     Detach busy mounts lazily instead of failing them\n"
               "     --no-group-delete  Delete links one by one (no IFLA_GROUP fast path)\n"
               "     --xtables-wait=SECONDS  How long to wait for /run/xtables.lock (10)\n\n"
               "Phases, in order: mounts, firewall, network, files, verify.\n"
               "See node-reset(8) for the manifest grammar and the exit status.\n");
}

/* One line and a pointer to --help, never the whole help (util-linux's convention). */
__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...) {
        va_list ap;

        fputs("node-reset: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputs("\nTry 'node-reset --help'.\n", stderr);
        return -EINVAL;
}

static int parse_seconds(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v > UINT_MAX / 2 || s[0] == '-')
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static int add_manifest_arg(const char *path) {
        char **n = reallocarray(arg_manifests, arg_n_manifests + 2, sizeof(char *));

        if (!n)
                return -ENOMEM;
        arg_manifests = n;
        arg_manifests[arg_n_manifests] = strdup(path);
        if (!arg_manifests[arg_n_manifests])
                return -ENOMEM;
        arg_manifests[++arg_n_manifests] = NULL;
        return 0;
}

static int parse_long_only(int c, const char *optarg_) {
        switch (c) {
        case 'T':
                if (parse_seconds(optarg_, &arg_timeout_sec) < 0 || arg_timeout_sec == 0)
                        return usage_error("invalid --timeout '%s': expected a positive number of seconds", optarg_);
                return 0;
        case 'X':
                if (parse_seconds(optarg_, &arg_xtables_wait_sec) < 0)
                        return usage_error("invalid --xtables-wait '%s': expected seconds", optarg_);
                return 0;
        case 'L':
                arg_lazy_unmount = true;
                return 0;
        case 'G':
                arg_group_delete = false;
                return 0;
        }
        return usage_error("internal: unhandled option %s", "");
}

static int parse_argv(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "root", required_argument, NULL, 'R' },
                { "manifest", required_argument, NULL, 'm' },
                { "phases", required_argument, NULL, 'P' },
                { "skip-phases", required_argument, NULL, 'S' },
                { "yes", no_argument, NULL, 'y' },
                { "step", no_argument, NULL, 's' },
                { "output", required_argument, NULL, 'o' },
                { "timeout", required_argument, NULL, 'T' },
                { "lazy-unmount", no_argument, NULL, 'L' },
                { "no-group-delete", no_argument, NULL, 'G' },
                { "xtables-wait", required_argument, NULL, 'X' },
                {}
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "hm:yo:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("node-reset %s\n", NODE_RESET_VERSION);
                        return 0;
                case 'R':
                        arg_root = optarg;
                        break;
                case 'm':
                        if (add_manifest_arg(optarg) < 0)
                                return log_oom();
                        break;
                case 'P':
                        arg_phases = optarg;
                        break;
                case 'S':
                        arg_skip_phases = optarg;
                        break;
                case 'y':
                        arg_yes = true;
                        break;
                case 's':
                        arg_step = true;
                        break;
                case 'o':
                        arg_output = output_mode_from_string(optarg);
                        if (arg_output < 0)
                                return usage_error("invalid --output '%s': expected 'text' or 'json'", optarg);
                        break;
                case '?':
                        fputs("Try 'node-reset --help'.\n", stderr);
                        return -EINVAL;
                default:
                        r = parse_long_only(c, optarg);
                        if (r < 0)
                                return r;
                }
        return 1;
}

static int load_manifest(Manifest **ret) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;
        int r = 0;

        if (!m)
                return log_oom();
        if (arg_n_manifests > 0)
                for (size_t i = 0; r >= 0 && i < arg_n_manifests; i++)
                        r = manifest_parse_file(m, arg_manifests[i], &err);
        else if (access(SYSTEM_MANIFEST, F_OK) >= 0)
                r = manifest_parse_file(m, SYSTEM_MANIFEST, &err);
        else
                r = manifest_parse_string(m, EMBEDDED_MANIFEST_NAME, embedded_default_manifest(), NULL, &err);
        if (r < 0) {
                manifest_free(m);
                log_error("%s", err ?: strerror(-r));
                return r;
        }
        *ret = m;
        return 0;
}

typedef struct Setup {
        Context ctx;
        Manifest *manifest;
        PhaseSelection sel;
        char *root;
} Setup;

static void setup_done(Setup *s) {
        mount_table_free(s->ctx.mounts);
        (void) close_nointr(s->ctx.root_fd);
        manifest_free(s->manifest);
        free(s->root);
}

/* Everything a node-observing verb needs; returns an exit status > 0 when it must stop. */
static int setup(Setup *s) {
        cleanup_free char *err = NULL;

        *s = (Setup) { .ctx.root_fd = -EBADF };
        if (geteuid() != 0 && !arg_root) {
                log_error("Refusing to act on this node without root privileges (use --root DIR for a tree).");
                return EXIT_REFUSED;
        }
        if (phase_selection_parse(&s->sel, arg_phases, arg_skip_phases, &err) < 0)
                return usage_error("%s", err), EXIT_USAGE;
        if (load_manifest(&s->manifest) < 0)
                return EXIT_USAGE;
        s->root = realpath(arg_root ?: "/", NULL);
        if (!s->root)
                return log_error_errno(negative_errno(), "Cannot resolve --root %s: %m", arg_root), EXIT_USAGE;
        s->ctx.root_fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->ctx.root_fd < 0)
                return log_error_errno(negative_errno(), "Cannot open %s: %m", s->root), EXIT_USAGE;
        s->ctx.root = s->root;
        s->ctx.manifest = s->manifest;
        s->ctx.lazy_unmount = arg_lazy_unmount;
        s->ctx.link_group_delete = arg_group_delete;
        s->ctx.xtables_wait_sec = arg_xtables_wait_sec;
        if (arg_timeout_sec > 0)
                s->ctx.deadline_usec = now_usec() + (uint64_t) arg_timeout_sec * 1000000ULL;
        return 0;
}

static uint64_t realtime_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

static void emit_report(const Setup *s, ReportInfo *info, const Plan *plan, const Plan *residue) {
        Emitter e;

        info->root = s->root;
        info->manifests = s->manifest->files;
        info->finished_usec = realtime_usec();
        emitter_init(&e, stdout, arg_output, color_wanted(stdout));
        report_emit(&e, info, plan, residue);
}

static int verb_plan(int argc, char *argv[]) {
        ReportInfo info = { .command = "plan", .started_usec = realtime_usec() };
        cleanup_free char *err = NULL;
        Setup s;
        Plan *plan;
        int r;

        r = setup(&s);
        if (r > 0)
                goto finish;
        plan = plan_new();
        if (!plan) {
                (void) log_oom();
                r = EXIT_RESIDUE;
                goto finish;
        }
        r = engine_plan(&s.ctx, &s.sel, plan, &err);
        if (r < 0)
                log_error("Cannot build the plan: %s", err ?: strerror(-r));
        info.exit_status = r < 0 ? EXIT_RESIDUE : EXIT_CLEAN;
        emit_report(&s, &info, plan, NULL);
        r = info.exit_status;
        plan_free(plan);
finish:
        setup_done(&s);
        return r;
}

/* The plan as a person reads it before confirming. stdout carries only the report: in JSON mode
 * this goes to stderr. */
static void show_plan(const Plan *plan) {
        FILE *f = arg_output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, f, OUTPUT_TEXT, color_wanted(f));
        report_plan_text(&e, plan);
        fflush(f);
}

/* Without --yes a person must type "yes" on a terminal; anything else refuses. */
static bool confirmed(const Plan *plan) {
        char answer[64] = "";

        show_plan(plan);
        if (!isatty(STDIN_FILENO)) {
                log_error("Refusing to reset without --yes: standard input is not a terminal to confirm on.");
                return false;
        }
        fputs("Type 'yes' to reset this node: ", stderr);
        if (!fgets(answer, sizeof answer, stdin) || !streq(answer, "yes\n")) {
                log_error("Not confirmed; nothing was changed.");
                return false;
        }
        return true;
}

/* Per-phase questions need a person at a terminal; the plan is shown first either way. */
static bool step_possible(const Plan *plan) {
        show_plan(plan);
        if (!isatty(STDIN_FILENO)) {
                log_error("--step needs a terminal to ask on; nothing was changed.");
                return false;
        }
        return true;
}

static int take_lock(const Setup *s, int *ret_fd) {
        pid_t holder;
        int fd;

        fd = lock_acquire(s->ctx.root_fd, &holder);
        if (fd == -EWOULDBLOCK) {
                if (holder > 0)
                        log_error("Another node-reset (PID %d) holds %s/run/node-reset.lock; refusing to run.",
                                  (int) holder, streq(s->root, "/") ? "" : s->root);
                else
                        log_error("Another process holds %s/run/node-reset.lock; refusing to run.",
                                  streq(s->root, "/") ? "" : s->root);
                return EXIT_REFUSED;
        }
        if (fd < 0) {
                log_error_errno(fd, "Cannot take the lock %s/run/node-reset.lock: %m",
                                streq(s->root, "/") ? "" : s->root);
                return EXIT_REFUSED;
        }
        *ret_fd = fd;
        return 0;
}

static int exit_status_of(const Plan *plan, const Plan *residue) {
        if (plan && plan_count(plan, NULL, ACTION_FAILED) > 0)
                return EXIT_RESIDUE;
        if (residue && residue->n_actions > 0)
                return EXIT_RESIDUE;
        return EXIT_CLEAN;
}

static int verb_run(int argc, char *argv[]) {
        ReportInfo info = { .command = "run", .started_usec = realtime_usec(), .executed = true };
        ExecuteHooks hooks;
        Console console;
        cleanup_close int lock_fd = -EBADF;
        cleanup_free char *err = NULL;
        Plan *plan = NULL, *residue = NULL;
        Setup s;
        int r;

        r = setup(&s);
        if (r > 0)
                goto finish;
        r = take_lock(&s, &lock_fd);
        if (r > 0)
                goto finish;
        plan = plan_new();
        if (!plan || engine_plan(&s.ctx, &s.sel, plan, &err) < 0) {
                log_error("Cannot build the plan, nothing was changed: %s", err ?: "out of memory");
                r = EXIT_RESIDUE;
                goto finish;
        }
        /* --step confirms phase by phase instead of once. */
        if (arg_step ? !step_possible(plan) : !arg_yes && !confirmed(plan)) {
                r = EXIT_REFUSED;
                goto finish;
        }
        console_init(&console, stdin, stderr, arg_step);
        hooks = console_hooks(&console);
        (void) engine_execute(&s.ctx, plan, &hooks);
        if (s.sel.verify && engine_verify(&s.ctx, &s.sel, &residue, &err) < 0)
                log_error("Cannot verify the result: %s", err ?: "out of memory");
        info.verified = residue != NULL;
        info.exit_status = r = exit_status_of(plan, residue);
        if (s.sel.verify && !residue)
                info.exit_status = r = EXIT_RESIDUE;
        emit_report(&s, &info, plan, residue);
finish:
        plan_free(plan);
        plan_free(residue);
        setup_done(&s);
        return r;
}

static int verb_status(int argc, char *argv[]) {
        ReportInfo info = { .command = "status", .started_usec = realtime_usec(), .verified = true };
        cleanup_free char *err = NULL;
        Plan *residue = NULL;
        Setup s;
        int r;

        r = setup(&s);
        if (r > 0)
                goto finish;
        r = engine_verify(&s.ctx, &s.sel, &residue, &err);
        if (r < 0) {
                log_error("Cannot observe the node: %s", err ?: strerror(-r));
                r = EXIT_RESIDUE;
                goto finish;
        }
        info.exit_status = r = exit_status_of(NULL, residue);
        emit_report(&s, &info, NULL, residue);
finish:
        plan_free(residue);
        setup_done(&s);
        return r;
}

static int manifest_check(char **files, int n) {
        int ret = EXIT_CLEAN;

        if (n == 0)
                return usage_error("'manifest check' needs at least one FILE"), EXIT_USAGE;
        for (int i = 0; i < n; i++) {
                Manifest *m = manifest_new();
                cleanup_free char *err = NULL;

                if (!m)
                        return log_oom(), EXIT_RESIDUE;
                if (manifest_parse_file(m, files[i], &err) < 0) {
                        fprintf(stderr, "%s\n", err ?: files[i]);
                        ret = EXIT_USAGE;
                } else
                        printf("%s: ok, %zu directives\n", files[i], m->n_entries);
                manifest_free(m);
        }
        return ret;
}

static int verb_manifest(int argc, char *argv[]) {
        Manifest *m;

        if (argc < 2)
                return usage_error("'manifest' needs a subcommand: check or print"), EXIT_USAGE;
        if (streq(argv[1], "check"))
                return manifest_check(argv + 2, argc - 2);
        if (!streq(argv[1], "print"))
                return usage_error("unknown 'manifest' subcommand '%s'", argv[1]), EXIT_USAGE;
        if (argc > 2)
                return usage_error("'manifest print' takes no arguments; use --manifest FILE"), EXIT_USAGE;
        if (load_manifest(&m) < 0)
                return EXIT_USAGE;
        (void) manifest_print(m, stdout);
        manifest_free(m);
        return EXIT_CLEAN;
}

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[]);
} Verb;

static const Verb verbs[] = {
        { "plan", verb_plan },
        { "run", verb_run },
        { "status", verb_status },
        { "manifest", verb_manifest },
};

static int dispatch(int argc, char *argv[]) {
        if (argc < 1)
                return usage_error("a command is needed: plan, run, status or manifest"), EXIT_USAGE;
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[0]))
                        return verbs[i].run(argc, argv);
        return usage_error("unknown command '%s'", argv[0]), EXIT_USAGE;
}

/* The removal walk holds one directory fd per level of a tree: allow as many as the hard limit. */
static void raise_nofile_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(negative_errno(), "Cannot raise RLIMIT_NOFILE, ignoring: %m");
}

int main(int argc, char *argv[]) {
        int r;

        log_setup();
        raise_nofile_limit();
        r = parse_argv(argc, argv);
        if (r <= 0)
                r = r < 0 ? EXIT_USAGE : EXIT_CLEAN;
        else
                r = dispatch(argc - optind, argv + optind);
        strv_free(arg_manifests);
        return r;
}
