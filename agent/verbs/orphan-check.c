/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The orphan-check verb, for ExecCondition=: the kubelet's kubeconfig beneath --root, the evidence
 * agent/orphan/ gathers, and an exit status systemd reads (0 proceed, 1 skip, 255 fail loudly). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/kubeconfig.h"
#include "agent/orphan/orphan.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/root.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "time-util.h"

/* A relative --kubeconfig is relative to the working directory, which has no meaning beneath --root. */
static int orphan_kubeconfig_path(const ProgramOptions *o, char **ret) {
        const char *k = o->kubeconfig ?: KUBECONFIG_DEFAULT;
        cleanup_free char *cwd = NULL;

        if (k[0] == '/')
                *ret = strdup(k);
        else if (o->root)
                return usage_error("--kubeconfig must be an absolute node path with --root");
        else if (!(cwd = get_current_dir_name()) || asprintf(ret, "%s/%s", cwd, k) < 0)
                *ret = NULL;
        return *ret ? 0 : log_oom();
}

static void orphan_check_report(const ProgramOptions *o, const OrphanOptions *oo, const OrphanCheck *c, int r,
                                int status) {
        Emitter e;

        if (r < 0)
                log_error("orphan-check cannot decide: %s", c->error);
        /* In text mode the error line above is the whole story; JSON readers get an object. */
        if (r >= 0 || o->output == OUTPUT_JSON) {
                emitter_init(&e, stdout, o->output, color_wanted(stdout));
                orphan_check_emit(&e, oo, c, status);
        }
}

static unsigned arg_for_sec = ORPHAN_FOR_DEFAULT_SEC;
static unsigned arg_probe_timeout_sec = ORPHAN_PROBE_TIMEOUT_DEFAULT_MS / 1000;

static int run_orphan_check(const ProgramOptions *o, int argc, char *argv[]) {
        OrphanOptions oo = {
                .node_name = o->node_name,
                .proxy = o->proxy,
                .for_sec = arg_for_sec,
                .timeout_ms = (uint64_t) arg_probe_timeout_sec * 1000,
                .now = now(CLOCK_REALTIME) / USEC_PER_SEC,
        };
        cleanup_free char *root = NULL, *kubeconfig = NULL;
        cleanup_close int root_fd = -EBADF;
        OrphanCheck c;
        int r, status;

        if (orphan_kubeconfig_path(o, &kubeconfig) < 0)
                return EXIT_ORPHAN_ERROR;
        if (root_open(o->root, &root, &root_fd) < 0)
                return EXIT_ORPHAN_ERROR;
        oo.root = root;
        oo.root_fd = root_fd;
        oo.kubeconfig = kubeconfig;
        r = orphan_check(&oo, &c);
        status = r < 0 ? EXIT_ORPHAN_ERROR : c.orphaned ? EXIT_ORPHANED : EXIT_NOT_ORPHANED;
        orphan_check_report(o, &oo, &c, r, status);
        orphan_check_done(&c);
        return status;
}

static int parse_for(const char *v, char **reterr) {
        return cmdline_parse_duration("for", v, 1, CMDLINE_DURATION_MAX, &arg_for_sec, reterr);
}

static const CmdlineOption option_for = {
        .name = "for",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DURATION",
        .help = "How long the evidence must persist (30m)",
        .parse = parse_for,
};

static int parse_probe_timeout(const char *v, char **reterr) {
        return cmdline_parse_duration("probe-timeout", v, 1, 3600, &arg_probe_timeout_sec, reterr);
}

static const CmdlineOption option_probe_timeout = {
        .name = "probe-timeout",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DURATION",
        .help = "Bound the API request (10s)",
        .parse = parse_probe_timeout,
};

/* Not option_kubeconfig: this one is the kubelet's, a node path read beneath --root. */
static const CmdlineOption option_kubelet_kubeconfig = {
        .name = "kubeconfig",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FILE",
        .help = "The kubelet's kubeconfig (" KUBECONFIG_DEFAULT "), beneath --root",
        .string = &program_options.kubeconfig,
        .complete = CMDLINE_COMPLETE_FILE,
};

static const CmdlineOption *const orphan_check_options[] = {
        OPTIONS_COMMON,
        &option_output,
        &option_root,
        &option_kubelet_kubeconfig,
        &option_node_name,
        &option_proxy,
        &option_for,
        &option_probe_timeout,
        NULL,
};

const Verb orphan_check_verb = {
        .name = "orphan-check",
        .summary = "Exit 0 when this worker's control plane has been gone --for long",
        .options = orphan_check_options,
        .run = run_orphan_check,
        /* ExecCondition= reads 1..254 as "skip": it fails loudly (255) on a usage error too. */
        .usage_status = EXIT_ORPHAN_ERROR,
};
