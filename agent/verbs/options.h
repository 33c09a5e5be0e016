/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The program's options, as main.c parsed them, handed to every verb. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/base/output.h"
#include "agent/config/node-config.h"
#include "time-util.h"

typedef struct ProgramOptions {
        const char *root;         /* --root; NULL: the running node */
        NodeConfigOptions config; /* --profile, --manifest, --with-runtime */
        const char *phases;
        const char *skip_phases;
        bool yes;
        bool step;
        OutputMode output;
        bool all_actions; /* -v: the text report lists every action */
        unsigned timeout_sec;
        uint64_t started_usec; /* CLOCK_MONOTONIC at start: --timeout counts from here */
        bool lazy_unmount;
        /* orphan-check and --report-url; --kubeconfig and --node-name are --delete-node's too */
        const char *kubeconfig;
        const char *node_name;
        uint64_t for_sec;
        uint64_t probe_timeout_ms;
        const char *proxy;
        const char *report_url;
        char **report_headers;
        size_t n_report_headers;
        const char *report_header_file;
        const char *report_cacert;
        bool force; /* forget's --force, --plan, --stale-for and --etcd-gone */
        bool plan_only;
        uint64_t stale_for_sec; /* 0: forget's default */
        bool etcd_gone;
} ProgramOptions;

/* --timeout as a CLOCK_MONOTONIC deadline; 0: none. */
static inline uint64_t program_deadline_usec(const ProgramOptions *o) {
        return o->timeout_sec > 0 ? o->started_usec + (usec_t) o->timeout_sec * USEC_PER_SEC : 0;
}
