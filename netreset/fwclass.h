/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which netfilter chains and rules Kubernetes and the CNIs own: pure classification, no kernel. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

/* What a firewall reset removes. */
typedef enum FwMode {
        FW_MODE_OWNED, /* owned chains, rules jumping to them, rules marked by a comment */
        FW_MODE_FLUSH, /* everything: policies ACCEPT, every rule, every user chain */
        _FW_MODE_MAX,
        _FW_MODE_INVALID = -1,
} FwMode;

const char *fw_mode_to_string(FwMode m);
FwMode fw_mode_from_string(const char *s);

/* Counts for one table, as observed (plan) or as removed (apply). */
typedef struct FwCounts {
        unsigned chains;       /* user chains in the table */
        unsigned rules;        /* rules in the table */
        unsigned owned_chains; /* user chains to delete */
        unsigned owned_rules;  /* rules to delete: inside deleted chains or owned themselves */
        unsigned kept_rules;   /* rules that stay */
        unsigned policies;     /* base chain policies to set to ACCEPT (flush mode) */
        bool rules_uncounted;  /* rules were not read one by one (nf_tables flush mode): rules and
                                * owned_rules only say whether there is any (1) or none (0) */
} FwCounts;

/* Something to do in the table? */
static inline bool fw_counts_any(const FwCounts *c) {
        return c->owned_chains > 0 || c->owned_rules > 0 || c->policies > 0;
}

typedef struct FwClass FwClass;

/* A classifier holding the built-in owned prefixes (KUBE-, KUBE-ROUTER-, CNI-, cali-, CILIUM_,
 * FLANNEL-) and comment markers (see fwclass.c). */
FwClass *fwclass_new(void);

/* The built-in chain prefixes (kube-proxy's and the CNIs'), for the test that keeps them equal to
 * agent/config/cnis.c's table: netreset/ may not include agent/. */
const char *const *fwclass_builtin_prefixes(size_t *ret_n);
FwClass *fwclass_free(FwClass *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(FwClass *, fwclass_free);
FwClass *fwclass_dup(const FwClass *c);

/* Another owned chain name prefix (the manifest's chain-prefix). -EINVAL for an empty prefix. */
int fwclass_add_prefix(FwClass *c, const char *prefix);

/* A user chain whose name starts with an owned prefix. */
bool fwclass_chain_owned(const FwClass *c, const char *chain);

/* A rule comment that marks the rule as created by kube-proxy, kube-router or a CNI. */
bool fwclass_comment_owned(const FwClass *c, const char *comment);

/* A rule in a chain that is not itself owned is owned when it jumps or goes to an owned chain
 * (jump_target: the chain name of a jump/goto verdict, or NULL) or when any of its comments
 * (n_comments strings, NULL entries ignored) is an owned marker. */
bool fwclass_rule_owned(const FwClass *c, const char *jump_target, const char *const *comments, size_t n_comments);
