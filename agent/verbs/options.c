/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options several verbs take, declared once: their --help line, how a shell completes them, and
 * the value each parse() keeps in program_options. */

#include <errno.h>
#include <stdio.h>

#include "agent/base/log.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/node-name.h"
#include "agent/engine/libraries.h"
#include "agent/verbs/options.h"
#include "errno-util.h"
#include "string-util.h"
#include "strv.h"

ProgramOptions program_options = {
        .output = OUTPUT_TEXT,
};

void program_options_finish(void) {
        if (program_options.quiet && program_options.output == OUTPUT_TEXT)
                program_options.output = OUTPUT_NONE;
}

void program_options_done(void) {
        program_options.config.manifests = strv_free(program_options.config.manifests);
        program_options.report_headers = strv_free(program_options.report_headers);
}

static int parse_help(const char *v, char **reterr) {
        return CMDLINE_HELP;
}

const CmdlineOption option_help = {
        .name = "help",
        .help = "Show this help",
        .parse = parse_help,
        .short_name = 'h',
};

static int parse_version(const char *v, char **reterr) {
        printf("node-reset %s\noptional libraries:\n", NODE_RESET_VERSION);
        libraries_print(stdout);
        return CMDLINE_DONE;
}

const CmdlineOption option_version = {
        .name = "version",
        .help = "Show the version and the optional libraries",
        .parse = parse_version,
        .short_name = 'V',
};

static int parse_verbose(const char *v, char **reterr) {
        log_set_max_level(LOG_DEBUG);
        program_options.all_actions = true;
        program_options.quiet = false;
        return 0;
}

const CmdlineOption option_verbose = {
        .name = "verbose",
        .help = "Log debug messages too; the text report lists every action",
        .parse = parse_verbose,
        .short_name = 'v',
};

static int parse_quiet(const char *v, char **reterr) {
        log_set_max_level(LOG_ERR);
        program_options.all_actions = false;
        program_options.quiet = true;
        return 0;
}

const CmdlineOption option_quiet = {
        .name = "quiet",
        .help = "Print only errors: no text report (the exit status says it), no progress",
        .parse = parse_quiet,
        .short_name = 'q',
};

static int parse_output(const char *v, char **reterr) {
        program_options.output = output_mode_from_string(v);
        if (program_options.output < 0) {
                cleanup_free char *names = strjoin_nth(output_mode_nth, "', '", "' or '");

                return set_errmsg(reterr, -EINVAL, "invalid --output '%s': expected '%s'", v, strna(names));
        }
        return 0;
}

const CmdlineOption option_output = {
        .name = "output",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FORMAT",
        .help = "The report's format (text by default)",
        .parse = parse_output,
        .short_name = 'o',
        .complete = CMDLINE_COMPLETE_WORD,
        .value_nth = output_mode_nth,
};

const CmdlineOption option_root = {
        .name = "root",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DIR",
        .help = "Act on the tree beneath DIR (only mounts, files unless --phases)",
        .string = &program_options.root,
        .complete = CMDLINE_COMPLETE_DIR,
};

static int parse_manifest(const char *v, char **reterr) {
        if (strv_extend(&program_options.config.manifests, v) < 0)
                return -ENOMEM;
        program_options.config.n_manifests++;
        return 0;
}

const CmdlineOption option_manifest = {
        .name = "manifest",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FILE",
        .help = "Use FILE instead of the detected profile (repeatable)",
        .parse = parse_manifest,
        .short_name = 'm',
        .complete = CMDLINE_COMPLETE_FILE,
};

static int parse_profile(const char *v, char **reterr) {
        cleanup_free char *names = NULL;

        if (profile_is_selectable(v)) {
                program_options.config.profile = v;
                return 0;
        }
        names = strjoin_nth(profile_selectable_nth, ", ", " or ");
        return set_errmsg(reterr, -EINVAL, "invalid --profile '%s': expected %s", v, strna(names));
}

const CmdlineOption option_profile = {
        .name = "profile",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "NAME",
        .help = "This built-in profile instead of detecting",
        .parse = parse_profile,
        .complete = CMDLINE_COMPLETE_WORD,
        .value_nth = profile_selectable_nth,
};

static int parse_with_runtime(const char *v, char **reterr) {
        cleanup_free char *names = NULL;

        if (!v || profile_runtime_is_known(v)) {
                program_options.config.with_runtime = true;
                program_options.config.runtime = v;
                return 0;
        }
        names = strjoin_nth(profile_runtime_nth, ", ", " or ");
        return set_errmsg(reterr, -EINVAL, "invalid --with-runtime '%s': expected %s", v, strna(names));
}

const CmdlineOption option_with_runtime = {
        .name = "with-runtime",
        .arg = CMDLINE_OPTIONAL_ARG,
        .metavar = "RUNTIME",
        .help = "Also stop the runtime kubelet used (the detected one),\nremove its config and state",
        .parse = parse_with_runtime,
        .complete = CMDLINE_COMPLETE_WORD,
        .value_nth = profile_runtime_nth,
};

const CmdlineOption option_phases = {
        .name = "phases",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "LIST",
        .help = "Only these phases (comma separated)",
        .string = &program_options.phases,
        .complete = CMDLINE_COMPLETE_LIST,
        .value_nth = cmdline_phase_name_nth,
};

const CmdlineOption option_skip_phases = {
        .name = "skip-phases",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "LIST",
        .help = "Skip these phases",
        .string = &program_options.skip_phases,
        .complete = CMDLINE_COMPLETE_LIST,
        .value_nth = cmdline_phase_name_nth,
};

const CmdlineOption option_lazy_unmount = {
        .name = "lazy-unmount",
        .help = "Detach busy mounts lazily instead of failing them",
        .flag = &program_options.lazy_unmount,
};

const CmdlineOption option_yes = {
        .name = "yes",
        .help = "Do not ask for confirmation",
        .flag = &program_options.yes,
        .short_name = 'y',
};

static int parse_timeout(const char *v, char **reterr) {
        return cmdline_parse_duration("timeout", v, 1, CMDLINE_DURATION_MAX, &program_options.timeout_sec, reterr);
}

const CmdlineOption option_timeout = {
        .name = "timeout",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "DURATION",
        .help = "Bound the whole command (90, 90s, 15m, 1h)",
        .parse = parse_timeout,
};

const CmdlineOption option_kubeconfig = {
        .name = "kubeconfig",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "FILE",
        .help = "Credentials that may delete Nodes and evict pods\n(default: the node's administrator kubeconfig)",
        .string = &program_options.kubeconfig,
        .complete = CMDLINE_COMPLETE_FILE,
};

static int parse_node_name(const char *v, char **reterr) {
        /* A Node's name is a DNS-1123 subdomain: anything else names no Node, and would be asked for,
         * or planned as a skipped row, instead of refused. */
        if (!node_name_is_valid(v))
                return set_errmsg(reterr, -EINVAL,
                                  "invalid --node-name '%s': a node name is a DNS-1123 subdomain (lower case letters, "
                                  "digits, '-' and '.')",
                                  v);
        program_options.node_name = v;
        return 0;
}

const CmdlineOption option_node_name = {
        .name = "node-name",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "NAME",
        .help = "This node's name (default: from its client certificate)",
        .parse = parse_node_name,
};

const CmdlineOption option_proxy = {
        .name = "proxy",
        .arg = CMDLINE_REQUIRED_ARG,
        .metavar = "URL",
        .help = "Use this HTTP proxy (none by default, whatever the environment)",
        .string = &program_options.proxy,
};

const CmdlineOption option_plan = {
        .name = "plan",
        .help = "Print the plan only (dry run); exit as the run would",
        .flag = &program_options.plan_only,
};
