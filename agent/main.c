/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node-reset: the command line — the program's options, the verb table and dispatch. Each verb
 * lives in agent/verbs/, the rest in modules. */

#include <getopt.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/base/log.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/profile.h"
#include "agent/engine/cmdline.h"
#include "agent/engine/libraries.h"
#include "agent/orphan/orphan.h"
#include "agent/phases/phases.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/forget.h"
#include "agent/verbs/manifest.h"
#include "agent/verbs/options.h"
#include "agent/verbs/orphan-check.h"
#include "agent/verbs/plan.h"
#include "agent/verbs/run.h"
#include "agent/verbs/status.h"
#include "agent/verbs/usage.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

static ProgramOptions arg = {
        .output = OUTPUT_TEXT,
        .for_sec = ORPHAN_FOR_DEFAULT_SEC,
        .probe_timeout_ms = ORPHAN_PROBE_TIMEOUT_DEFAULT_MS,
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
               "     --node-name=NAME   orphan-check, --delete-node, forget: this node's name (from its client\n"
               "                        certificate)\n"
               "     --for=DURATION     orphan-check: how long the evidence must persist (30m)\n"
               "     --probe-timeout=DURATION  orphan-check: bound the API request (10s)\n"
               "     --proxy=URL        Use this HTTP proxy (none by default, whatever the environment)\n"
               "     --report-url=URL   run: POST the status and the report to URL (start and end)\n"
               "     --report-header='NAME: VALUE'  ... with this header (repeatable)\n"
               "     --report-header-file=FILE  ... with the headers in FILE, one per line\n"
               "     --report-cacert=FILE  ... trusting the CA certificates in FILE\n"
               "     --plan             forget: print the plan only (dry run)\n"
               "     --stale-for=DURATION  forget: the Node's Ready heartbeat and Lease must be this old (5m)\n"
               "     --force            forget: do not wait for --stale-for (never forgets a member that answers)\n"
               "     --etcd-gone        forget: with no etcd here, a control plane's member is known to be gone\n\n"
               "Phases, in order: backup, drain, etcd, services-early, node-object, pods, services-late, processes,\n"
               "cgroups, mounts, firewall, network, files, reload, verify.\n"
               "See node-reset(8) for the manifest grammar and the exit status.\n");
}

static int add_manifest_arg(const char *path) {
        int r = strv_extend(&arg.config.manifests, path);

        if (r >= 0)
                arg.config.n_manifests++;
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
        ARG_STALE_FOR,
        ARG_ETCD_GONE,
};

static int add_report_header_arg(const char *h) {
        int r = strv_extend(&arg.report_headers, h);

        if (r >= 0)
                arg.n_report_headers++;
        return r;
}

static int parse_orphan_report_option(int c, const char *optarg_) {
        uint64_t sec;

        switch (c) {
        case ARG_KUBECONFIG:
                arg.kubeconfig = optarg_;
                return 0;
        case ARG_NODE_NAME:
                arg.node_name = optarg_;
                return 0;
        case ARG_FOR:
                if (duration_parse(optarg_, &arg.for_sec) < 0 || arg.for_sec == 0)
                        return usage_error("invalid --for '%s': expected a positive duration such as 90s, 30m, 2h, 1d",
                                           optarg_);
                return 0;
        case ARG_PROBE_TIMEOUT:
                if (duration_parse(optarg_, &sec) < 0 || sec == 0 || sec > 3600)
                        return usage_error("invalid --probe-timeout '%s': expected a duration from 1s to 1h", optarg_);
                arg.probe_timeout_ms = sec * 1000;
                return 0;
        case ARG_PROXY:
                arg.proxy = optarg_;
                return 0;
        case ARG_REPORT_URL:
                arg.report_url = optarg_;
                return 0;
        case ARG_REPORT_HEADER:
                return add_report_header_arg(optarg_) < 0 ? log_oom() : 0;
        case ARG_REPORT_HEADER_FILE:
                arg.report_header_file = optarg_;
                return 0;
        case ARG_REPORT_CACERT:
                arg.report_cacert = optarg_;
                return 0;
        case ARG_FORCE:
                arg.force = true;
                return 0;
        case ARG_PLAN:
                arg.plan_only = true;
                return 0;
        case ARG_STALE_FOR:
                if (duration_parse(optarg_, &arg.stale_for_sec) < 0 || arg.stale_for_sec == 0)
                        return usage_error("invalid --stale-for '%s': expected a positive duration such as 90s, 5m, 1h",
                                           optarg_);
                return 0;
        case ARG_ETCD_GONE:
                arg.etcd_gone = true;
                return 0;
        }
        return usage_error("internal: unhandled option %s", "");
}

static int parse_long_only(int c, const char *optarg_) {
        switch (c) {
        case 'T':
                if (cmdline_parse_seconds(optarg_, &arg.timeout_sec) < 0 || arg.timeout_sec == 0)
                        return usage_error("invalid --timeout '%s': expected a positive number of seconds", optarg_);
                return 0;
        case 'L':
                arg.lazy_unmount = true;
                return 0;
        case ARG_PROFILE:
                if (!profile_is_selectable(optarg_))
                        return usage_error(
                                "invalid --profile '%s': expected kubeadm, kubespray, kubekey, k3s, rke2 or all",
                                optarg_);
                arg.config.profile = optarg_;
                return 0;
        case ARG_WITH_RUNTIME:
                if (optarg_ && !streq(optarg_, "containerd") && !streq(optarg_, "crio") && !streq(optarg_, "docker"))
                        return usage_error("invalid --with-runtime '%s': expected containerd, crio or docker", optarg_);
                arg.config.with_runtime = true;
                arg.config.runtime = optarg_;
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
        { "stale-for", required_argument, NULL, ARG_STALE_FOR },
        { "etcd-gone", no_argument, NULL, ARG_ETCD_GONE },
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
                arg.all_actions = true;
                break;
        case 'q':
                log_set_max_level(LOG_WARNING);
                break;
        case 'R':
                arg.root = optarg_;
                break;
        case 'm':
                if (add_manifest_arg(optarg_) < 0)
                        return log_oom();
                break;
        case 'P':
                arg.phases = optarg_;
                break;
        case 'S':
                arg.skip_phases = optarg_;
                break;
        case 'y':
                arg.yes = true;
                break;
        case 's':
                arg.step = true;
                break;
        case 'o':
                arg.output = output_mode_from_string(optarg_);
                if (arg.output < 0)
                        return usage_error("invalid --output '%s': expected 'text' or 'json'", optarg_);
                break;
        default:
                return parse_long_only(c, optarg_);
        }
        return 0;
}

static int parse_program_option(int c, const char *optarg_, void *userdata) {
        return parse_option(c, optarg_);
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

/* forget takes the program's options it shares with the others, and its own. */
static int verb_forget_main(const ProgramOptions *o, int argc, char *argv[]) {
        ForgetOptions f = {
                .root = o->root,
                .kubeconfig = o->kubeconfig,
                .node_name = o->node_name,
                .stale_for_sec = o->stale_for_sec,
                .force = o->force,
                .etcd_gone = o->etcd_gone,
                .plan_only = o->plan_only,
                .yes = o->yes,
                .all_actions = o->all_actions,
                .output = o->output,
                .deadline_usec = program_deadline_usec(o),
        };

        return verb_forget(&f, argc, argv);
}

typedef struct Verb {
        const char *name;
        int (*run)(const ProgramOptions *o, int argc, char *argv[]);
        bool no_operands;  /* anything after the verb is a usage error, before anything runs */
        bool force_option; /* it takes --force, --plan, --stale-for and --etcd-gone */
} Verb;

/* One file a verb in agent/verbs/. */
static const Verb verbs[] = {
        { "plan", verb_plan, true, false },
        { "run", verb_run, true, false },
        { "status", verb_status, true, false },
        { "orphan-check", verb_orphan_check, false, false }, /* its usage errors exit 255: it checks itself */
        { "manifest", verb_manifest, false, false },
        { "forget", verb_forget_main, false, true },
};

static const Verb *verb_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

static int dispatch(int argc, char *argv[]) {
        const Verb *v;

        if (argc < 1)
                return usage_error("a command is needed: plan, run, status, manifest, orphan-check or forget"),
                       EXIT_USAGE;
        v = verb_find(argv[0]);
        if ((arg.force || arg.plan_only || arg.stale_for_sec || arg.etcd_gone) && !(v && v->force_option))
                return usage_error("--force, --plan, --stale-for and --etcd-gone are forget's options"), EXIT_USAGE;
        if (!v)
                return usage_error("unknown command '%s'", argv[0]), EXIT_USAGE;
        /* "run status" must not reset the node and exit 0: reject, like util-linux. */
        if (v->no_operands && argc > 1)
                return usage_error("'%s' takes no operands, got '%s'", argv[0], argv[1]), EXIT_USAGE;
        return v->run(&arg, argc, argv);
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

        arg.started_usec = now(CLOCK_MONOTONIC);
        reset_phases_register();
        log_setup();
        keep_freed_memory();
        raise_nofile_limit();
        r = parse_argv(argc, argv);
        if (r <= 0)
                r = r < 0 ? usage_exit_status(argc, argv) : EXIT_CLEAN;
        else
                r = dispatch(argc - optind, argv + optind);
        strv_free(arg.config.manifests);
        strv_free(arg.report_headers);
        return r;
}
