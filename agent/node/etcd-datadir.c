/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The etcd data directory rule: one function, so that the etcd phase's words and the files phase's
 * deeds cannot disagree. Anything the rule cannot prove safe keeps the data, and says why. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/node/etcd.h"
#include "macro.h"
#include "string-util.h"

int node_etcd_data_dir_fate(const NodeEtcdFacts *f, char **ret_reason) {
        const char *why;
        int remove = 1;

        if (f->left)
                why = "this member left its cluster";
        else if (f->last_voter && f->snapshot)
                why = "the last voting member: the whole cluster is deleted, its snapshot is in the backup";
        else if (f->none_answered && f->db_copied)
                why = "no member answered: the backup holds a copy of its member/snap/db";
        else if (!f->observed && f->own_silent && f->db_copied)
                /* --root on a rescue system: the etcd phase does not run, and the member did not
                 * answer the backup's snapshot call. */
                why = "the etcd phase did not run and this node's member did not answer: the backup holds a "
                      "copy of its member/snap/db";
        else {
                remove = 0;
                if (f->last_voter)
                        why = "the last voting member of its cluster, and the backup holds no complete "
                              "snapshot of it: kept";
                else if (f->none_answered || (!f->observed && f->own_silent))
                        why = "no member answered, and the backup holds no copy of its member/snap/db: kept";
                else if (!f->observed)
                        why = "the etcd phase did not ask the cluster in this run: whether this member "
                              "left is unknown, kept";
                else
                        why = f->why ?: "this member is still part of its cluster: kept";
        }
        *ret_reason = strdup(why);
        return *ret_reason ? remove : -ENOMEM;
}

int node_etcd_data_dir_find(Context *ctx, const char **ret) {
        NodeEtcdRun *run = node_etcd_run(ctx);
        NodeEtcd l = {};
        int r;

        if (!run)
                return -ENOMEM;
        if (!run->data_dir) {
                r = node_etcd_find(ctx, &l, NULL);
                if (r > 0 && !l.external)
                        run->data_dir = TAKE_PTR(l.data_dir);
                node_etcd_done(&l);
                if (r < 0)
                        return r;
        }
        *ret = run->data_dir;
        return 0;
}
