/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase: Kubernetes-owned netfilter state in both iptables backends and both families,
 * the native nf_tables tables Kubernetes creates, ipsets and IPVS, with the host firewall kept. */

/* Network state has no file-system root: this phase observes and changes the network namespace the
 * agent runs in, and ctx->root is ignored on purpose. The xtables lock is the live /run/xtables.lock
 * for the same reason: it serializes with the iptables of this node, not of a tree.
 *
 * Modes (the last "firewall" line wins; owned when there is none):
 * - owned: user chains named with an owned prefix (fwclass.h, plus "chain-prefix" lines), every
 *   rule that jumps or goes to one, and every rule whose comment marks it; policies and all other
 *   rules stay as they are.
 * - flush: kubespray/kubekey parity: in the iptables tables (filter nat mangle raw security of
 *   ip/ip6, both backends) every base chain policy to ACCEPT, every rule, every user chain.
 * - keep: the phase does nothing.
 * "nft-table" tables are deleted whole in owned and flush mode; other native nf_tables tables (a
 * host's "table inet filter") are never touched.
 *
 * Order: nf_tables (one transaction per family), legacy x_tables (one commit per table, under the
 * lock), then ipsets (once the rules that reference them are gone), then IPVS. */

#include <string.h>

#include "agent/phases/phases.h"
#include "agent/engine/phase.h"
#include "agent/engine/cmdline.h"
#include "agent/phases/firewall/firewall-ipset.h"
#include "agent/phases/firewall/firewall-ipvs-select.h"
#include "agent/phases/firewall/firewall-nft.h"
#include "agent/phases/firewall/firewall-settings.h"
#include "agent/phases/firewall/firewall-xtables.h"
#include "errno-util.h"
#include "macro.h"

#define PHASE "firewall"

static int keep_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0;
}

static const ActionOps keep_ops = {
        .kind = "firewall",
        .apply = keep_apply,
};

int phase_firewall_plan(Context *ctx, Plan *plan, char **reterr) {
        CLEANUP(firewall_settings_done) FirewallSettings s = {};
        const Manifest *m = ctx->manifest;
        Action *a;
        int r;

        r = firewall_settings_read(m, &s);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot read the firewall settings: %s", strerror(-r));
        if (s.keep) {
                a = plan_add(plan, &keep_ops, PHASE, "firewall", s.mode_reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip_code(a, "kept",
                                            "firewall keep: netfilter state, ipsets and IPVS left as they are");
        }
        r = firewall_plan_nft(plan, m, &s, reterr);
        if (r >= 0)
                r = firewall_plan_xtables(plan, &s, reterr);
        if (r >= 0)
                r = firewall_plan_ipsets(plan, m);
        if (r >= 0)
                r = phase_firewall_ipvs_plan(ctx, plan, m);
        return r;
}

const PhaseOption phase_firewall_options[] = {
        { "xtables-wait", PHASE_OPTION_REQUIRED_ARG, "DURATION", "How long to wait for /run/xtables.lock (10s)",
          firewall_xtables_parse_wait },
        {},
};
