/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What one run knows of this node's etcd, kept in its Context: who owns it, its data directory, the
 * facts the backup and etcd phases establish, the other members' client URLs; and --etcd-timeout. */

#include <errno.h>
#include <stdlib.h>

#include "agent/engine/cmdline.h"
#include "agent/node/etcd.h"
#include "errno-util.h"
#include "macro.h"
#include "strv.h"

/* --etcd-timeout: configuration, set once by the command line before any run; 0: each caller's
 * default. */
static unsigned arg_etcd_timeout_sec;

static void run_done(void *p) {
        NodeEtcdRun *run = p;

        if (run->scope)
                etcd_scope_done(run->scope);
        free(run->scope);
        free(run->data_dir);
        free(run->facts.why);
        strv_free(run->learned_endpoints);
}

static const ContextStateType run_type = {
        .name = "etcd",
        .size = sizeof(NodeEtcdRun),
        .done = run_done,
};

NodeEtcdRun *node_etcd_run(Context *ctx) {
        return context_state(ctx, &run_type);
}

const NodeEtcdFacts *node_etcd_facts(const Context *ctx) {
        static const NodeEtcdFacts none = {};
        const NodeEtcdRun *run = context_state_peek(ctx, &run_type);

        return run ? &run->facts : &none;
}

const char *node_etcd_data_dir(const Context *ctx) {
        const NodeEtcdRun *run = context_state_peek(ctx, &run_type);

        return run ? run->data_dir : NULL;
}

const EtcdScope *node_etcd_scope_decided(const Context *ctx) {
        const NodeEtcdRun *run = context_state_peek(ctx, &run_type);

        return run ? run->scope : NULL;
}

int node_etcd_scope(Context *ctx, const EtcdScope **ret) {
        NodeEtcdRun *run = node_etcd_run(ctx);
        EtcdScope *s;
        int r;

        if (!run)
                return -ENOMEM;
        if (!run->scope) {
                s = calloc(1, sizeof *s);
                if (!s)
                        return -ENOMEM;
                r = etcd_scope_decide(ctx->root_fd, ctx->installer, s);
                if (r < 0) {
                        free(s);
                        return r;
                }
                run->scope = s;
        }
        *ret = run->scope;
        return 0;
}

usec_t node_etcd_timeout(void) {
        return (usec_t) arg_etcd_timeout_sec * USEC_PER_SEC;
}

static int parse_etcd_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("etcd-timeout", arg, 1, 3600, &arg_etcd_timeout_sec, reterr);
}

/* The etcd phase's row lists them (phases.c): it is the phase the option is named for. */
const PhaseOption node_etcd_options[] = {
        { "etcd-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION", "Bound the etcd phase's calls each time it asks (30s)",
          parse_etcd_timeout },
        {},
};
