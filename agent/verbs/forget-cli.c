/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The forget verb's command line: the options it takes (its own --stale-for, --force, --etcd-gone and
 * the shared ones it lists), its operand, and the call into forget (forget.h), which knows nothing of
 * the command line. */

#include "agent/config/node-name.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/forget.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verb.h"

static ForgetOptions arg_forget;

static int parse_stale_for(const char *v, char **reterr) {
        unsigned sec;
        int r;

        r = cmdline_parse_duration("stale-for", v, 1, CMDLINE_DURATION_MAX, &sec, reterr);
        if (r >= 0)
                arg_forget.stale_for_sec = sec;
        return r;
}

static const CmdlineOption option_stale_for = {
        .name = "stale-for",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DURATION",
        .help = "The Node's Ready heartbeat and Lease must be this old (5m)",
        .parse = parse_stale_for,
};

static const CmdlineOption option_force = {
        .name = "force",
        .help = "Do not wait for --stale-for (never forgets a member that answers)",
        .flag = &arg_forget.force,
};

static const CmdlineOption option_etcd_gone = {
        .name = "etcd-gone",
        .help = "With no etcd here, a control plane's member is known to be gone",
        .flag = &arg_forget.etcd_gone,
};

static int run_forget(const ProgramOptions *o, int argc, char *argv[]) {
        if (argc != 2 || !node_name_is_valid(argv[1]))
                return usage_error("'forget' takes one NODE, a node name%s", argc == 2 ? ": not a valid one" : ""),
                       EXIT_USAGE;
        arg_forget.root = o->root;
        arg_forget.kubeconfig = o->kubeconfig;
        arg_forget.node_name = o->node_name;
        arg_forget.plan_only = o->plan_only;
        arg_forget.yes = o->yes;
        arg_forget.all_actions = o->all_actions;
        arg_forget.output = o->output;
        arg_forget.deadline_usec = program_deadline_usec(o);
        return verb_forget(&arg_forget, argc, argv);
}

static const CmdlineOption *const forget_options[] = {
        OPTIONS_COMMON, &option_output,  &option_root,      &option_kubeconfig, &option_node_name, &option_yes,
        &option_plan,   &option_timeout, &option_stale_for, &option_force,      &option_etcd_gone, NULL,
};

const Verb forget_verb = {
        .name = "forget",
        .operands = "NODE",
        .summary = "From a surviving control plane: remove a gone node's etcd member and Node",
        .options = forget_options,
        .run = run_forget,
};
