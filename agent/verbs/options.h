/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options several verbs take, each declared once (options.c), and the values the command line
 * gave them, handed to every verb. A verb lists the ones it takes in its own table (verb.h); an
 * option only one verb takes is declared in that verb's file. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/base/output.h"
#include "agent/config/node-config.h"
#include "agent/engine/cmdline.h"
#include "time-util.h"

typedef struct ProgramOptions {
        const char *root;         /* --root; NULL: the running node */
        NodeConfigOptions config; /* --profile, --manifest, --with-runtime */
        const char *phases;
        const char *skip_phases;
        bool yes;
        bool step; /* run's --step */
        /* -o; OUTPUT_NONE once -q has taken the text report away (program_options_finish()) */
        OutputMode output;
        bool quiet;       /* -q */
        bool all_actions; /* -v: the text report lists every action */
        unsigned timeout_sec;
        uint64_t started_usec; /* CLOCK_MONOTONIC at start: --timeout counts from here */
        bool lazy_unmount;
        /* --kubeconfig and --node-name: --delete-node's, --drain's, forget's and drain's */
        const char *kubeconfig;
        const char *node_name;
        const char *proxy;
        /* run's --report-url and its headers */
        const char *report_url;
        char **report_headers;
        size_t n_report_headers;
        const char *report_header_file;
        const char *report_cacert;
        bool plan_only; /* forget's and drain's --plan */
} ProgramOptions;

/* What the command line said; the options' parse() write it, main() hands it to the verb. */
extern ProgramOptions program_options;
/* After the parsing: -q leaves a text report unprinted (OUTPUT_NONE). */
void program_options_finish(void);
void program_options_done(void);

/* --timeout as a CLOCK_MONOTONIC deadline; 0: none. */
static inline uint64_t program_deadline_usec(const ProgramOptions *o) {
        return o->timeout_sec > 0 ? o->started_usec + (usec_t) o->timeout_sec * USEC_PER_SEC : 0;
}

/* Every verb's: -h, -v, -q. */
extern const CmdlineOption option_help, option_verbose, option_quiet;
/* The program's own, without a verb: -V. */
extern const CmdlineOption option_version;
/* Every verb that prints (all but completion): -o. */
extern const CmdlineOption option_output;
/* The node's tree and configuration, and the phases' selection (plan, run, status, manifest print). */
extern const CmdlineOption option_root, option_manifest, option_profile, option_with_runtime;
extern const CmdlineOption option_phases, option_skip_phases, option_lazy_unmount;
/* Shared by a few verbs each. */
extern const CmdlineOption option_yes, option_timeout, option_kubeconfig, option_node_name, option_proxy, option_plan;

#define OPTIONS_COMMON &option_help, &option_verbose, &option_quiet
