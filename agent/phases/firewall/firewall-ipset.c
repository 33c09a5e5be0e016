/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's ipset rows: the sets "ipset" lines name, flushed and destroyed once the rules
 * that reference them are gone. */

#include <errno.h>
#include <stdlib.h>
#include <sys/param.h>

#include "agent/base/path.h"
#include "agent/engine/libraries.h"
#include "agent/phases/firewall/firewall-ipset.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/ipset.h"
#include "string-util.h"

#define PHASE "firewall"

static void ipset_apply_batch(Action **actions, size_t n, Context *ctx) {
        cleanup_free char **names = calloc(n + 1, sizeof(char *)), **msgs = calloc(n + 1, sizeof(char *));
        cleanup_free Action **mine = calloc(n + 1, sizeof(Action *));
        cleanup_free int *results = calloc(n + 1, sizeof(int));
        size_t k = 0;

        if (!names || !msgs || !results || !mine) {
                for (size_t i = 0; i < n; i++)
                        action_record(actions[i], -ENOMEM, NULL);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (!actions[i]->data) {
                        action_recordf(actions[i], 0, "no set matches");
                        continue;
                }
                mine[k] = actions[i];
                names[k++] = actions[i]->data;
        }
        (void) ipset_remove_sets(names, k, results, msgs);
        for (size_t i = 0; i < k; i++) {
                if (results[i] < 0)
                        action_record(mine[i], results[i], TAKE_PTR(msgs[i]));
                else
                        action_recordf(mine[i], results[i], results[i] > 0 ? "flushed and destroyed" : "already gone");
                free(msgs[i]);
        }
}

static int ipset_check(Action *a, Context *ctx, char **ret_msg) {
        IpsetInfo info = {};
        int r;

        if (!a->data)
                return 0;
        r = ipset_get_set(a->data, &info, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        *ret_msg = strprintf("still present, %u reference%s", info.references, info.references == 1 ? "" : "s");
        ipset_info_done(&info);
        return 1;
}

static const ActionOps ipset_ops = {
        .kind = "ipset",
        .apply_batch = ipset_apply_batch,
        .check = ipset_check,
        .free_data = free,
};

static const ManifestEntry *ipset_selected_by(const Manifest *m, const char *name) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_IPSET)
                if (path_name_match(e->args[0], name))
                        return e;
        return NULL;
}

static int plan_ipset(Plan *plan, const IpsetInfo *info, const ManifestEntry *e) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL;
        char *name = strdup(info->name);
        Action *a;

        target = strprintf("ipset %s", info->name);
        if (!reason || !name || !target) {
                free(name);
                return -ENOMEM;
        }
        a = plan_add(plan, &ipset_ops, PHASE, target, reason, name);
        if (!a)
                return -ENOMEM;
        return action_set_detail(a, "%s, %u entr%s, %u reference%s", strna(info->type), info->entries,
                                 info->entries == 1 ? "y" : "ies", info->references, info->references == 1 ? "" : "s");
}

static int plan_ipset_placeholder(Plan *plan, const ManifestEntry *e, const char *skip) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL;
        Action *a;

        target = strprintf("ipset %s", e->args[0]);
        if (!reason || !target)
                return -ENOMEM;
        a = plan_add(plan, &ipset_ops, PHASE, target, reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        if (skip)
                return action_set_skip(a, "%s", skip);
        return action_set_detail(a, "no set matches");
}

static bool manifest_has(const Manifest *m, DirectiveType t) {
        MANIFEST_FOREACH(e, m, t)
                return true;
        return false;
}

int firewall_plan_ipsets(Plan *plan, const Manifest *m) {
        cleanup_free char *err = NULL, *skip = NULL;
        cleanup_free bool *used = NULL;
        IpsetInfo *sets = NULL;
        size_t n = 0;
        int r = 0;

        if (!manifest_has(m, DIRECTIVE_IPSET))
                return 0;
        r = libraries_plan_missing(plan, PHASE, DLIB_LIBIPSET, "ipset lines");
        if (r != 0)
                return MIN(r, 0);
        /* A kernel without ip_set, or a listing that fails, leaves the sets alone with the reason. */
        if (ipset_list_sets(&sets, &n, &err) < 0 && !(skip = strprintf("cannot list ipsets: %s", strna(err))))
                return -ENOMEM;
        used = calloc(m->n_entries + 1, sizeof(bool));
        if (!used)
                r = -ENOMEM;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const ManifestEntry *e = ipset_selected_by(m, sets[i].name);

                if (!e)
                        continue;
                used[e - m->entries] = true;
                r = plan_ipset(plan, &sets[i], e);
        }
        ipset_infos_free(sets, n);
        for (size_t i = 0; i < m->n_entries && r >= 0; i++)
                if (m->entries[i].type == DIRECTIVE_IPSET && !used[i])
                        r = plan_ipset_placeholder(plan, &m->entries[i], skip);
        return r;
}
