/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset: the command line — verbs, options, exit status. Everything else lives in modules. */

#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/engine/cmdline.h"
#include "agent/engine/console.h"
#include "agent/config/detect.h"
#include "agent/config/embedded.h"
#include "agent/engine/engine.h"
#include "agent/engine/libraries.h"
#include "agent/config/kubeconfig.h"
#include "agent/engine/lock.h"
#include "agent/base/log.h"
#include "agent/config/manifest.h"
#include "agent/config/node-name.h"
#include "agent/orphan/orphan.h"
#include "agent/config/profile.h"
#include "agent/report/report-url.h"
#include "agent/phases/phases.h"
#include "agent/phases/rejoin-check.h"
#include "agent/report/report.h"
#include "agent/os/services.h"
#include "agent/verbs/forget.h"
#include "errno-util.h"
#include "escape.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

#define SYSTEM_MANIFEST "/etc/node-reset/manifest.conf"

enum {
        EXIT_CLEAN = 0,
        EXIT_RESIDUE = 1, /* an action failed or residue remains */
        EXIT_USAGE = 2,   /* bad usage or a manifest error */
        EXIT_REFUSED = 3, /* lock held, not root, not confirmed */
};

static const char *arg_root;
static char **arg_manifests;
static size_t arg_n_manifests;
static const char *arg_phases;
static const char *arg_skip_phases;
static bool arg_yes;
static bool arg_step;
static OutputMode arg_output = OUTPUT_TEXT;
static bool arg_all_actions; /* -v: the text report lists every action */
static unsigned arg_timeout_sec;
static uint64_t started_usec; /* CLOCK_MONOTONIC at start: --timeout counts from here */
static bool arg_lazy_unmount;
static const char *arg_profile;
static bool arg_with_runtime;
static const char *arg_runtime;
/* orphan-check and --report-url; --kubeconfig and --node-name are --delete-node's too */
static const char *arg_kubeconfig;
static const char *arg_node_name;
static uint64_t arg_for_sec = ORPHAN_FOR_DEFAULT_SEC;
static uint64_t arg_probe_timeout_ms = ORPHAN_PROBE_TIMEOUT_DEFAULT_MS;
static const char *arg_proxy;
static const char *arg_report_url;
static char **arg_report_headers;
static size_t arg_n_report_headers;
static const char *arg_report_header_file;
static const char *arg_report_cacert;
static bool arg_force; /* forget's --force and --plan */
static bool arg_plan_only;

/* orphan-check's exit status is read by ExecCondition=: 0 proceeds, 1..254 skip quietly, 255
 * fails the unit loudly. */
enum {
        EXIT_ORPHANED = 0,
        EXIT_NOT_ORPHANED = 1,
        EXIT_ORPHAN_ERROR = 255,
};

static void help(void) {
        printf("Usage: node-reset [OPTIONS...] COMMAND\n\n"
               "Bring a Kubernetes node back to a clean, rejoinable state.\n\n"
               "Commands:\n"
               "  plan                  Show what a reset would do (dry run)\n"
               "  run                   Plan, confirm, reset, then verify\n"
               "  status                Show what is left (residue); exit 0 when clean\n"
               "  manifest check FILE…  Validate manifest files\n"
               "  manifest print        Show the effective manifest\n"
               "  orphan-check          Exit 0 when this worker's control plane has been gone --for long\n"
               "  forget NODE           From a surviving control plane: remove a gone node's etcd member and Node\n\n"
               "Options:\n"
               "  -h --help             Show this help\n"
               "  -V --version          Show the version\n"
               "  -v --verbose          Log debug messages too; the text report lists every action\n"
               "  -q --quiet            Log only warnings and errors\n"
               "     --root=DIR         Act on the tree beneath DIR (only mounts, files unless --phases)\n"
               "  -m --manifest=FILE    Use FILE instead of the detected profile (repeatable)\n"
               "     --profile=NAME     kubeadm, kubespray, kubekey, k3s, rke2 or all, instead of detecting\n"
               "     --with-runtime[=RUNTIME]  Also stop the runtime kubelet used, remove its config and state\n"
               "     --phases=LIST      Only these phases (comma separated)\n"
               "     --skip-phases=LIST Skip these phases\n"
               "  -y --yes              Do not ask for confirmation\n"
               "     --step             Ask before each phase: yes, skip or quit (needs a terminal)\n"
               "  -o --output=FORMAT    Report as 'text' (default) or 'json'\n"
               "     --timeout=SECONDS  Bound the whole run\n"
               "     --lazy-unmount     Detach busy mounts lazily instead of failing them\n");
        /* Each phase's own options, in the phases' order (declared in agent/phases/). */
        cmdline_help_phases(stdout);
        printf("\nOrphaned workers and status reporting:\n"
               "     --kubeconfig=FILE  orphan-check: the kubelet's kubeconfig (" KUBECONFIG_DEFAULT ");\n"
               "                        --delete-node: credentials that may delete Nodes\n"
               "     --node-name=NAME   orphan-check, --delete-node: the node's name (from its client certificate)\n"
               "     --for=DURATION     orphan-check: how long the evidence must persist (30m)\n"
               "     --probe-timeout=DURATION  orphan-check: bound the API request (10s)\n"
               "     --proxy=URL        Use this HTTP proxy (none by default, whatever the environment)\n"
               "     --report-url=URL   run: POST the status and the report to URL (start and end)\n"
               "     --report-header='NAME: VALUE'  ... with this header (repeatable)\n"
               "     --report-header-file=FILE  ... with the headers in FILE, one per line\n"
               "     --report-cacert=FILE  ... trusting the CA certificates in FILE\n"
               "     --force            forget: remove the etcd member even though it still answers\n"
               "     --plan             forget: print the plan only (dry run)\n\n"
               "Phases, in order: backup, drain, etcd, services-early, node-object, pods, services-late, processes,\n"
               "cgroups, mounts, firewall, network, files, reload, verify.\n"
               "See node-reset(8) for the manifest grammar and the exit status.\n");
}

/* One line and a pointer to --help, never the whole help (util-linux's convention). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...) {
        char buf[2048];
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* The arguments echo what was typed or read from a manifest: escaped, like every text output. */
        fputs("node-reset: ", stderr);
        fputs_escaped(buf, stderr);
        fputs("\nTry 'node-reset --help'.\n", stderr);
        return -EINVAL;
}

static int add_manifest_arg(const char *path) {
        int r = strv_extend(&arg_manifests, path);

        if (r >= 0)
                arg_n_manifests++;
        return r;
}

enum {
        ARG_KUBECONFIG = 0x1000,
        ARG_NODE_NAME,
        ARG_FOR,
        ARG_PROBE_TIMEOUT,
        ARG_PROXY,
        ARG_REPORT_URL,
        ARG_REPORT_HEADER,
        ARG_REPORT_HEADER_FILE,
        ARG_REPORT_CACERT,
        ARG_PROFILE,
        ARG_WITH_RUNTIME,
        ARG_FORCE,
        ARG_PLAN,
};

static int add_report_header_arg(const char *h) {
        int r = strv_extend(&arg_report_headers, h);

        if (r >= 0)
                arg_n_report_headers++;
        return r;
}

static int parse_orphan_report_option(int c, const char *optarg_) {
        uint64_t sec;

        switch (c) {
        case ARG_KUBECONFIG:
                arg_kubeconfig = optarg_;
                return 0;
        case ARG_NODE_NAME:
                arg_node_name = optarg_;
                return 0;
        case ARG_FOR:
                if (duration_parse(optarg_, &arg_for_sec) < 0 || arg_for_sec == 0)
                        return usage_error("invalid --for '%s': expected a positive duration such as 90s, 30m, 2h, 1d",
                                           optarg_);
                return 0;
        case ARG_PROBE_TIMEOUT:
                if (duration_parse(optarg_, &sec) < 0 || sec == 0 || sec > 3600)
                        return usage_error("invalid --probe-timeout '%s': expected a duration from 1s to 1h", optarg_);
                arg_probe_timeout_ms = sec * 1000;
                return 0;
        case ARG_PROXY:
                arg_proxy = optarg_;
                return 0;
        case ARG_REPORT_URL:
                arg_report_url = optarg_;
                return 0;
        case ARG_REPORT_HEADER:
                return add_report_header_arg(optarg_) < 0 ? log_oom() : 0;
        case ARG_REPORT_HEADER_FILE:
                arg_report_header_file = optarg_;
                return 0;
        case ARG_REPORT_CACERT:
                arg_report_cacert = optarg_;
                return 0;
        case ARG_FORCE:
                arg_force = true;
                return 0;
        case ARG_PLAN:
                arg_plan_only = true;
                return 0;
        }
        return usage_error("internal: unhandled option %s", "");
}

static int parse_long_only(int c, const char *optarg_) {
        switch (c) {
        case 'T':
                if (cmdline_parse_seconds(optarg_, &arg_timeout_sec) < 0 || arg_timeout_sec == 0)
                        return usage_error("invalid --timeout '%s': expected a positive number of seconds", optarg_);
                return 0;
        case 'L':
                arg_lazy_unmount = true;
                return 0;
        case ARG_PROFILE:
                if (!profile_is_selectable(optarg_))
                        return usage_error(
                                "invalid --profile '%s': expected kubeadm, kubespray, kubekey, k3s, rke2 or all",
                                optarg_);
                arg_profile = optarg_;
                return 0;
        case ARG_WITH_RUNTIME:
                if (optarg_ && !streq(optarg_, "containerd") && !streq(optarg_, "crio") && !streq(optarg_, "docker"))
                        return usage_error("invalid --with-runtime '%s': expected containerd, crio or docker", optarg_);
                arg_with_runtime = true;
                arg_runtime = optarg_;
                return 0;
        }
        return parse_orphan_report_option(c, optarg_);
}

static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "verbose", no_argument, NULL, 'v' },
        { "quiet", no_argument, NULL, 'q' },
        { "root", required_argument, NULL, 'R' },
        { "manifest", required_argument, NULL, 'm' },
        { "phases", required_argument, NULL, 'P' },
        { "skip-phases", required_argument, NULL, 'S' },
        { "yes", no_argument, NULL, 'y' },
        { "step", no_argument, NULL, 's' },
        { "output", required_argument, NULL, 'o' },
        { "timeout", required_argument, NULL, 'T' },
        { "lazy-unmount", no_argument, NULL, 'L' },
        { "kubeconfig", required_argument, NULL, ARG_KUBECONFIG },
        { "node-name", required_argument, NULL, ARG_NODE_NAME },
        { "for", required_argument, NULL, ARG_FOR },
        { "probe-timeout", required_argument, NULL, ARG_PROBE_TIMEOUT },
        { "proxy", required_argument, NULL, ARG_PROXY },
        { "report-url", required_argument, NULL, ARG_REPORT_URL },
        { "report-header", required_argument, NULL, ARG_REPORT_HEADER },
        { "report-header-file", required_argument, NULL, ARG_REPORT_HEADER_FILE },
        { "report-cacert", required_argument, NULL, ARG_REPORT_CACERT },
        { "profile", required_argument, NULL, ARG_PROFILE },
        { "with-runtime", optional_argument, NULL, ARG_WITH_RUNTIME },
        { "force", no_argument, NULL, ARG_FORCE },
        { "plan", no_argument, NULL, ARG_PLAN },
        {},
};

/* One option getopt_long() returned: 0 to go on, 1 when the command is done (--help, --version),
 * < 0 for an error already said. */
static int parse_option(int c, const char *optarg_) {
        switch (c) {
        case 'h':
                help();
                return 1;
        case 'V':
                printf("node-reset %s\noptional libraries:\n", NODE_RESET_VERSION);
                libraries_print(stdout);
                return 1;
        case 'v':
                log_set_max_level(LOG_DEBUG);
                arg_all_actions = true;
                break;
        case 'q':
                log_set_max_level(LOG_WARNING);
                break;
        case 'R':
                arg_root = optarg_;
                break;
        case 'm':
                if (add_manifest_arg(optarg_) < 0)
                        return log_oom();
                break;
        case 'P':
                arg_phases = optarg_;
                break;
        case 'S':
                arg_skip_phases = optarg_;
                break;
        case 'y':
                arg_yes = true;
                break;
        case 's':
                arg_step = true;
                break;
        case 'o':
                arg_output = output_mode_from_string(optarg_);
                if (arg_output < 0)
                        return usage_error("invalid --output '%s': expected 'text' or 'json'", optarg_);
                break;
        default:
                return parse_long_only(c, optarg_);
        }
        return 0;
}

static int parse_program_option(int c, const char *arg, void *userdata) {
        return parse_option(c, arg);
}

/* 1 to go on with a verb, 0 when done (--help, --version), < 0 for a usage error already said. The
 * phases' options are theirs to parse (cmdline.h); the program's go to parse_option(). */
static int parse_argv(int argc, char *argv[]) {
        cleanup_free char *err = NULL;
        int r;

        r = cmdline_parse(argc, argv, ":hVvqm:yo:", options, parse_program_option, NULL, &err);
        if (r < 0 && err)
                return usage_error("%s", err);
        return r;
}

/* What the manifest is made of, in order: a built-in profile (--profile, else the detected one
 * unless a manifest is given), the --manifest files (or /etc/node-reset/manifest.conf when there is
 * neither), and with --with-runtime the runtime's fragment when nothing included it yet. */
typedef struct Selection {
        const char *profile; /* NULL when a manifest replaces the profile */
        const char *why;
} Selection;

static void selection_decide(const Detection *d, Selection *ret) {
        *ret = (Selection) {};
        if (arg_profile)
                *ret = (Selection) { arg_profile, "--profile" };
        else if (arg_n_manifests == 0 && access(SYSTEM_MANIFEST, F_OK) < 0)
                ret->profile = profile_for_detection(d, &ret->why);
}

static bool runtime_included(const Manifest *m) {
        for (size_t i = 0; i < m->n_files; i++)
                if (startswith(m->files[i], PROFILE_PREFIX "runtime-"))
                        return true;
        return false;
}

static int parse_include(Manifest *m, const char *source, const char *profile, char **err) {
        cleanup_free char *line = strprintf("include " PROFILE_PREFIX "%s\n", profile);

        if (!line)
                return -ENOMEM;
        return manifest_parse_string(m, source, line, NULL, err);
}

static int load_manifest(const Selection *sel, Manifest **ret) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;
        int r = 0;

        if (!m)
                return log_oom();
        if (sel->profile)
                r = parse_include(m, sel->why && streq(sel->why, "--profile") ? "--profile" : "detection", sel->profile,
                                  &err);
        for (size_t i = 0; r >= 0 && i < arg_n_manifests; i++)
                r = manifest_parse_file(m, arg_manifests[i], &err);
        if (r >= 0 && !sel->profile && arg_n_manifests == 0)
                r = manifest_parse_file(m, SYSTEM_MANIFEST, &err);
        if (r >= 0 && arg_with_runtime && !runtime_included(m) && !streq_ptr(sel->profile, "all"))
                r = parse_include(m, "--with-runtime", "runtime", &err);
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
        char *hostname; /* node_host_name(): the tree's under --root, NULL when unknown */
        Detection detection;
        ProfileSettings profile_settings;
        Selection selection;
} Setup;

static void setup_done(Setup *s) {
        mount_table_free(s->ctx.mounts);
        phase_table_done(&s->ctx);
        (void) close_nointr(s->ctx.root_fd);
        manifest_free(s->manifest);
        free(s->root);
        free(s->hostname);
        profile_configure(NULL);
        detection_done(&s->detection);
}

/* Detection first: the profile and the run-time fragments depend on it. */
static int setup_profile(Setup *s) {
        if (detect_node(s->ctx.root_fd, streq(s->root, "/"), &s->detection) < 0)
                return log_oom();
        s->profile_settings = (ProfileSettings) {
                .detection = &s->detection,
                .with_runtime = arg_with_runtime,
                .runtime = arg_runtime,
        };
        profile_configure(&s->profile_settings);
        selection_decide(&s->detection, &s->selection);
        return load_manifest(&s->selection, &s->manifest);
}

/* Everything a node-observing verb needs; returns an exit status > 0 when it must stop. */
static int setup(Setup *s) {
        cleanup_free char *err = NULL;

        *s = (Setup) { .ctx.root_fd = -EBADF };
        if (geteuid() != 0 && !arg_root) {
                log_error("Refusing to act on this node without root privileges (use --root DIR for a tree).");
                return EXIT_REFUSED;
        }
        if (phase_selection_parse(&s->sel, arg_phases, arg_skip_phases, arg_root && !arg_phases, &err) < 0)
                return usage_error("%s", err), EXIT_USAGE;
        if (arg_root && !arg_phases)
                log_info("--root: only the phases that act on the tree (backup, mounts, files) run; name others with "
                         "--phases to act on the running system.");
        s->root = realpath(arg_root ?: "/", NULL);
        if (!s->root)
                return log_error_errno(negative_errno(), "Cannot resolve --root %s: %m", arg_root), EXIT_USAGE;
        s->ctx.root_fd = open(s->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->ctx.root_fd < 0)
                return log_error_errno(negative_errno(), "Cannot open %s: %m", s->root), EXIT_USAGE;
        if (setup_profile(s) < 0)
                return EXIT_USAGE;
        if (node_host_name(s->ctx.root_fd, streq(s->root, "/"), &s->hostname) < 0)
                return log_oom(), EXIT_USAGE;
        s->ctx.root = s->root;
        s->ctx.manifest = s->manifest;
        s->ctx.cni_config = s->detection.cni_loaded;
        s->ctx.lazy_unmount = arg_lazy_unmount;
        phase_node_object_identity(arg_kubeconfig, arg_node_name);
        phase_drain_identity(arg_kubeconfig, arg_node_name);
        if (arg_timeout_sec > 0)
                s->ctx.deadline_usec = started_usec + (usec_t) arg_timeout_sec * USEC_PER_SEC;
        return 0;
}

static void emit_report(const Setup *s, ReportInfo *info, const Plan *plan, const Plan *residue) {
        Emitter e;

        info->root = s->root;
        info->hostname = s->hostname;
        info->manifests = s->manifest->files;
        info->detection = &s->detection;
        info->profile = s->selection.profile;
        info->profile_why = s->selection.why;
        if (info->finished_usec == 0)
                info->finished_usec = now(CLOCK_REALTIME);
        emitter_init(&e, stdout, arg_output, color_wanted(stdout));
        e.all_actions = arg_all_actions;
        report_emit(&e, info, plan, residue);
}

static int verb_plan(int argc, char *argv[]) {
        ReportInfo info = { .command = "plan", .started_usec = now(CLOCK_REALTIME) };
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
static void show_plan(const Setup *s, const Plan *plan) {
        FILE *f = arg_output == OUTPUT_JSON ? stderr : stdout;
        Emitter e;

        emitter_init(&e, f, OUTPUT_TEXT, color_wanted(f));
        e.all_actions = arg_all_actions;
        detection_emit(&e, &s->detection, s->selection.profile, s->selection.why);
        report_plan_text(&e, plan);
        fflush(f);
}

/* Without --yes a person must type "yes" on a terminal; anything else refuses. */
static bool confirmed(const Setup *s, const Plan *plan) {
        show_plan(s, plan);
        return console_confirm(stdin, stderr, "reset this node");
}

/* Per-phase questions need a person at a terminal; the plan is shown first either way. */
static bool step_possible(const Setup *s, const Plan *plan) {
        show_plan(s, plan);
        if (!isatty(STDIN_FILENO)) {
                log_error("--step needs a terminal to ask on; nothing was changed.");
                return false;
        }
        return true;
}

static int take_lock(const Setup *s, int *ret_fd) {
        cleanup_free char *err = NULL;
        pid_t holder;
        int fd;

        fd = lock_acquire(s->ctx.root_fd, &holder, &err);
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
                log_error("Cannot take the lock %s/run/node-reset.lock: %s", streq(s->root, "/") ? "" : s->root,
                          err ?: strerror(-fd));
                return EXIT_REFUSED;
        }
        *ret_fd = fd;
        return 0;
}

/* --report-url is checked (its files read) before anything is locked or changed. */
static int report_url_setup(ReportUrl **ret) {
        cleanup_free char *err = NULL;

        *ret = NULL;
        if (!arg_report_url) {
                if (arg_report_headers || arg_report_header_file || arg_report_cacert)
                        return usage_error(
                                       "--report-header, --report-header-file and --report-cacert need --report-url"),
                               EXIT_USAGE;
                return 0;
        }
        if (report_url_new(arg_report_url, arg_report_headers, arg_report_header_file, arg_report_cacert, arg_proxy,
                           ret, &err) < 0)
                return log_error("%s", err ?: "Out of memory."), EXIT_USAGE;
        return 0;
}

/* The final POST carries the report as stdout gets it, finished at the same instant. */
static void post_final_report(const Setup *s, ReportInfo *info, ReportUrl *u, const Plan *plan, const Plan *residue) {
        if (!u)
                return;
        info->root = s->root;
        info->hostname = s->hostname;
        info->manifests = s->manifest->files;
        info->detection = &s->detection;
        info->profile = s->selection.profile;
        info->profile_why = s->selection.why;
        info->finished_usec = now(CLOCK_REALTIME);
        report_url_post_final(u, info, plan, residue);
}

/* Residue, and a verdict of "unknown" (a phase that could not observe), are both not clean. */
static int exit_status_of(const Plan *plan, const Plan *residue, const Plan *unobserved) {
        if (plan && plan_count(plan, NULL, ACTION_FAILED) > 0)
                return EXIT_RESIDUE;
        if (residue && !streq(report_verdict(residue, unobserved), "clean"))
                return EXIT_RESIDUE;
        return EXIT_CLEAN;
}

/* A phase with a gate (the backup, the drain) that failed stops the run before anything later is
 * done, unless the failure is one its gate lets through (a backup with no room: the files phase then
 * keeps what has no other copy, phase-backup.h): the console's hooks are wrapped so that every phase
 * after it is quit, and said why afterwards. */
typedef struct RunHooks {
        ExecuteHooks inner;
        const Phase *gate; /* the gate that failed, NULL while none did */
} RunHooks;

static PhaseDecision run_phase_begin(const Plan *plan, size_t first, size_t n, void *userdata) {
        RunHooks *h = userdata;

        for (size_t i = 0; i < first && !h->gate; i++) {
                const Phase *ph = phase_find(plan->actions[i]->phase);

                if (ph && ph->gate && plan->actions[i]->result == ACTION_FAILED &&
                    !(ph->gate_passes && ph->gate_passes(plan->actions[i]->error)))
                        h->gate = ph;
        }
        if (h->gate)
                return PHASE_QUIT;
        return h->inner.phase_begin ? h->inner.phase_begin(plan, first, n, h->inner.userdata) : PHASE_RUN;
}

static void run_progress(const Plan *plan, size_t first, size_t n, size_t done, uint64_t elapsed_usec, void *userdata) {
        RunHooks *h = userdata;

        if (h->inner.progress)
                h->inner.progress(plan, first, n, done, elapsed_usec, h->inner.userdata);
}

static void run_phase_end(const Plan *plan, size_t first, size_t n, uint64_t elapsed_usec, void *userdata) {
        RunHooks *h = userdata;

        if (h->inner.phase_end)
                h->inner.phase_end(plan, first, n, elapsed_usec, h->inner.userdata);
}

static void explain_gate_failure(Plan *plan, const Phase *gate) {
        PLAN_FOREACH(a, plan)
                if (!streq(a->phase, gate->name) && a->result == ACTION_SKIPPED && !a->skip_reason) {
                        free(a->message);
                        a->message = strprintf("not run: %s", gate->gate);
                        a->code = "refused";
                }
}

static void log_run_result(const Setup *s, const Plan *plan, const Plan *residue, const Plan *unobserved, int status) {
        const char *verdict = report_verdict(residue, unobserved);
        size_t failed = plan_count(plan, NULL, ACTION_FAILED);

        log_event(status == EXIT_CLEAN ? LOG_NOTICE : LOG_ERR, LOG_MESSAGE_RUN_RESULT,
                  "Reset of %s finished: %zu changed, %zu unchanged, %zu failed, %zu skipped, %s; exit status %d.",
                  s->root, plan_count(plan, NULL, ACTION_CHANGED), plan_count(plan, NULL, ACTION_UNCHANGED), failed,
                  plan_count(plan, NULL, ACTION_SKIPPED),
                  !verdict                    ? "not verified"
                  : streq(verdict, "residue") ? "residue remains"
                  : streq(verdict, "unknown") ? "no residue seen, but a phase could not observe (verdict unknown)"
                                              : "no residue",
                  status);
}

/* A node with no residue that kubeadm join still refuses (a port in use, a kept runtime that does not
 * answer, a kubeconfig left) is not a success: exit 1 and say why. A warning is said, and is no failure. */
static int rejoin_verdict(Setup *s, Rejoin *rejoin, bool prepared, ReportInfo *info, int status) {
        if (!prepared || rejoin_check(&s->ctx, &s->sel, rejoin) < 0) {
                log_error("Cannot make the rejoin verdict: %s", prepared ? "out of memory" : "not prepared");
                return status == EXIT_CLEAN ? EXIT_RESIDUE : status;
        }
        info->rejoin = rejoin;
        for (size_t i = 0; i < rejoin->n_warnings; i++)
                log_warning("Rejoin warning: %s: %s", rejoin->warnings[i].name, rejoin->warnings[i].message);
        if (rejoin_is_rejoinable(rejoin))
                return status;
        for (size_t i = 0; i < rejoin->n_checks; i++)
                if (rejoin->checks[i].state == REJOIN_FAILED)
                        log_error("Not rejoinable: %s: %s", rejoin->checks[i].name, rejoin->checks[i].message);
        return status == EXIT_CLEAN ? EXIT_RESIDUE : status;
}

static int verb_run(int argc, char *argv[]) {
        ReportInfo info = { .command = "run", .started_usec = now(CLOCK_REALTIME), .executed = true };
        ExecuteHooks hooks;
        RunHooks run_hooks;
        Console console;
        cleanup_close int lock_fd = -EBADF;
        cleanup_free char *err = NULL;
        Plan *plan = NULL, *residue = NULL, *unobserved = NULL;
        ReportUrl *report_url = NULL;
        Rejoin rejoin = {};
        bool prepared = false;
        Setup s;
        int r;

        r = setup(&s);
        if (r > 0)
                goto finish;
        r = report_url_setup(&report_url);
        if (r > 0)
                goto finish;
        info.report_url = report_url ? &report_url->outcome : NULL;
        if (report_url)
                report_url->hostname = s.hostname;
        r = take_lock(&s, &lock_fd);
        if (r > 0)
                goto finish;
        plan = plan_new();
        if (!plan || engine_plan(&s.ctx, &s.sel, plan, &err) < 0) {
                log_error("Cannot build the plan, nothing was changed: %s", err ?: "out of memory");
                report_url_post_final(report_url, NULL, NULL, NULL);
                r = EXIT_RESIDUE;
                goto finish;
        }
        /* --step confirms phase by phase instead of once. */
        if (arg_step ? !step_possible(&s, plan) : !arg_yes && !confirmed(&s, plan)) {
                r = EXIT_REFUSED;
                goto finish;
        }
        /* What the run removes (the pod ranges, the runtimes it keeps) is read before it does. */
        prepared = s.sel.verify && rejoin_prepare(&s.ctx, &rejoin) >= 0;
        console_init(&console, stdin, stderr, arg_step);
        run_hooks = (RunHooks) { .inner = console_hooks(&console) };
        hooks = (ExecuteHooks) { run_phase_begin, run_progress, run_phase_end, &run_hooks };
        report_url_post_start(report_url);
        log_event(LOG_NOTICE, LOG_MESSAGE_RUN_START, "Reset of %s started: %zu actions, %zu with something to do.",
                  s.root, plan->n_actions, plan_count_present(plan));
        (void) engine_execute(&s.ctx, plan, &hooks);
        if (run_hooks.gate)
                explain_gate_failure(plan, run_hooks.gate);
        console_done(&console);
        if (s.sel.verify && engine_verify(&s.ctx, &s.sel, &residue, &unobserved, &err) < 0)
                log_error("Cannot verify the result: %s", err ?: "out of memory");
        info.verified = residue != NULL;
        info.unobserved = unobserved;
        info.exit_status = r = exit_status_of(plan, residue, unobserved);
        if (s.sel.verify && !residue)
                info.exit_status = r = EXIT_RESIDUE;
        if (residue)
                info.exit_status = r = rejoin_verdict(&s, &rejoin, prepared, &info, r);
        log_run_result(&s, plan, residue, unobserved, r);
        post_final_report(&s, &info, report_url, plan, residue);
        emit_report(&s, &info, plan, residue);
finish:
        rejoin_done(&rejoin);
        plan_free(plan);
        plan_free(residue);
        plan_free(unobserved);
        report_url_free(report_url);
        setup_done(&s);
        return r;
}

static int verb_status(int argc, char *argv[]) {
        ReportInfo info = { .command = "status", .started_usec = now(CLOCK_REALTIME), .verified = true };
        cleanup_free char *err = NULL;
        Plan *residue = NULL, *unobserved = NULL;
        Rejoin rejoin = {};
        bool prepared;
        Setup s;
        int r;

        r = setup(&s);
        if (r > 0)
                goto finish;
        prepared = rejoin_prepare(&s.ctx, &rejoin) >= 0;
        r = engine_verify(&s.ctx, &s.sel, &residue, &unobserved, &err);
        if (r < 0) {
                log_error("Cannot observe the node: %s", err ?: strerror(-r));
                r = EXIT_RESIDUE;
                goto finish;
        }
        info.unobserved = unobserved;
        info.exit_status = r = exit_status_of(NULL, residue, unobserved);
        info.exit_status = r = rejoin_verdict(&s, &rejoin, prepared, &info, r);
        emit_report(&s, &info, NULL, residue);
finish:
        rejoin_done(&rejoin);
        plan_free(residue);
        plan_free(unobserved);
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
                        fputs_escaped(err ?: files[i], stderr);
                        fputc('\n', stderr);
                        ret = EXIT_USAGE;
                } else {
                        fputs_escaped(files[i], stdout);
                        printf(": ok, %zu directives\n", m->n_entries);
                }
                manifest_free(m);
        }
        return ret;
}

/* The manifest "plan" would use on this node (or --root tree): detection included. */
static int manifest_print_effective(void) {
        Setup s = { .ctx.root_fd = -EBADF };
        int r = EXIT_USAGE;

        s.root = realpath(arg_root ?: "/", NULL);
        if (!s.root)
                log_error_errno(negative_errno(), "Cannot resolve --root %s: %m", arg_root);
        else if ((s.ctx.root_fd = open(s.root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
                log_error_errno(negative_errno(), "Cannot open %s: %m", s.root);
        else if (setup_profile(&s) >= 0) {
                (void) manifest_print(s.manifest, stdout);
                r = EXIT_CLEAN;
        }
        setup_done(&s);
        return r;
}

static int verb_manifest(int argc, char *argv[]) {

        if (argc < 2)
                return usage_error("'manifest' needs a subcommand: check or print"), EXIT_USAGE;
        if (streq(argv[1], "check"))
                return manifest_check(argv + 2, argc - 2);
        if (!streq(argv[1], "print"))
                return usage_error("unknown 'manifest' subcommand '%s'", argv[1]), EXIT_USAGE;
        if (argc > 2)
                return usage_error("'manifest print' takes no arguments; use --manifest FILE"), EXIT_USAGE;
        return manifest_print_effective();
}

/* A relative --kubeconfig is relative to the working directory, which has no meaning beneath --root. */
static int orphan_kubeconfig_path(char **ret) {
        const char *k = arg_kubeconfig ?: KUBECONFIG_DEFAULT;
        cleanup_free char *cwd = NULL;

        if (k[0] == '/')
                *ret = strdup(k);
        else if (arg_root)
                return usage_error("--kubeconfig must be an absolute node path with --root");
        else if (!(cwd = get_current_dir_name()) || asprintf(ret, "%s/%s", cwd, k) < 0)
                *ret = NULL;
        return *ret ? 0 : log_oom();
}

static int verb_orphan_check(int argc, char *argv[]) {
        OrphanOptions o = {
                .node_name = arg_node_name,
                .proxy = arg_proxy,
                .for_sec = arg_for_sec,
                .timeout_ms = arg_probe_timeout_ms,
                .now = now(CLOCK_REALTIME) / USEC_PER_SEC,
        };
        cleanup_free char *root = NULL, *kubeconfig = NULL;
        cleanup_close int root_fd = -EBADF;
        OrphanCheck c;
        Emitter e;
        int r, status;

        if (argc > 1)
                return usage_error("'orphan-check' takes no arguments"), EXIT_ORPHAN_ERROR;
        if (orphan_kubeconfig_path(&kubeconfig) < 0)
                return EXIT_ORPHAN_ERROR;
        root = realpath(arg_root ?: "/", NULL);
        if (!root)
                return log_error_errno(negative_errno(), "Cannot resolve --root %s: %m", arg_root), EXIT_ORPHAN_ERROR;
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return log_error_errno(negative_errno(), "Cannot open %s: %m", root), EXIT_ORPHAN_ERROR;
        o.root = root;
        o.root_fd = root_fd;
        o.kubeconfig = kubeconfig;
        r = orphan_check(&o, &c);
        status = r < 0 ? EXIT_ORPHAN_ERROR : c.orphaned ? EXIT_ORPHANED : EXIT_NOT_ORPHANED;
        if (r < 0)
                log_error("orphan-check cannot decide: %s", c.error);
        /* In text mode the error line above is the whole story; JSON readers get an object. */
        if (r >= 0 || arg_output == OUTPUT_JSON) {
                emitter_init(&e, stdout, arg_output, color_wanted(stdout));
                orphan_check_emit(&e, &o, &c, status);
        }
        orphan_check_done(&c);
        return status;
}

static int verb_forget_main(int argc, char *argv[]) {
        ForgetOptions o = {
                .root = arg_root,
                .kubeconfig = arg_kubeconfig,
                .force = arg_force,
                .plan_only = arg_plan_only,
                .yes = arg_yes,
                .all_actions = arg_all_actions,
                .output = arg_output,
                .deadline_usec = arg_timeout_sec > 0 ? started_usec + (usec_t) arg_timeout_sec * USEC_PER_SEC : 0,
        };

        return verb_forget(&o, argc, argv);
}

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char *argv[]);
        bool no_operands; /* anything after the verb is a usage error, before anything runs */
} Verb;

static const Verb verbs[] = {
        { "plan", verb_plan, true },
        { "run", verb_run, true },
        { "status", verb_status, true },
        { "orphan-check", verb_orphan_check, false }, /* its usage errors exit 255: it checks itself */
        { "manifest", verb_manifest, false },
        { "forget", verb_forget_main, false }, /* agent/verbs/forget.c */
};

static int dispatch(int argc, char *argv[]) {
        if (argc < 1)
                return usage_error("a command is needed: plan, run, status, manifest, orphan-check or forget"),
                       EXIT_USAGE;
        if ((arg_force || arg_plan_only) && !streq(argv[0], "forget"))
                return usage_error("--force and --plan are forget's options"), EXIT_USAGE;
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, argv[0])) {
                        /* "run status" must not reset the node and exit 0: reject, like util-linux. */
                        if (verbs[i].no_operands && argc > 1)
                                return usage_error("'%s' takes no operands, got '%s'", argv[0], argv[1]), EXIT_USAGE;
                        return verbs[i].run(argc, argv);
                }
        return usage_error("unknown command '%s'", argv[0]), EXIT_USAGE;
}

/* A run reads the same large state up to three times (the plan; the act, under the xtables lock;
 * the verify), and a legacy table read is a whole-table copy out of the kernel plus libiptc's copy
 * of each rule: megabytes for a node with a few thousand Services. Freed memory is kept for the
 * next read instead of being handed back and faulted in again (the bench node: 1,000 page faults
 * fewer, 3,560 -> 2,540); the tool is a short-lived process, its peak unchanged. */
static void keep_freed_memory(void) {
        (void) mallopt(M_MMAP_THRESHOLD, 32 << 20);
        (void) mallopt(M_TRIM_THRESHOLD, 64 << 20);
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

/* ExecCondition= reads 1..254 as "skip": orphan-check fails loudly (255) on a usage error too. */
static int usage_exit_status(int argc, char *argv[]) {
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "orphan-check"))
                        return EXIT_ORPHAN_ERROR;
        return EXIT_USAGE;
}

int main(int argc, char *argv[]) {
        int r;

        started_usec = now(CLOCK_MONOTONIC);
        reset_phases_register();
        log_setup();
        keep_freed_memory();
        raise_nofile_limit();
        r = parse_argv(argc, argv);
        if (r <= 0)
                r = r < 0 ? usage_exit_status(argc, argv) : EXIT_CLEAN;
        else
                r = dispatch(argc - optind, argv + optind);
        strv_free(arg_manifests);
        strv_free(arg_report_headers);
        return r;
}
