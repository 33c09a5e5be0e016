/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The mounts phase: unmount what kubelet and the runtime left beneath "unmount" paths, deepest first. */

#include <fcntl.h>
#include <sys/mount.h>

#include "agent/phases/phases.h"
#include "agent/base/log.h"
#include "agent/os/mount-util.h"
#include "agent/base/path.h"
#include "agent/engine/phase.h"
#include "agent/os/proc.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

typedef struct UnmountData {
        char *abs_path;  /* the mount point as this process sees it, to name its holders */
        char *node_path; /* the same beneath --root: the only way the act reaches it */
        MountSeen seen;  /* what the plan saw there */
        /* The mounts the plan saw at this same path, in plan order (non-owning): one may sit on
         * another, and which one is on top the listing does not always say. */
        struct UnmountData *group, *next;
        bool done; /* unmounted already, to reach another of its group */
} UnmountData;

static void unmount_data_free(void *p) {
        UnmountData *d = p;

        free(d->abs_path);
        free(d->node_path);
        free(d);
}

/* Node path of an absolute mount point, or NULL when it is not strictly beneath the root. */
static const char *node_path_of(const Context *ctx, const char *mount_point) {
        const char *rest;

        if (streq(ctx->root, "/"))
                return streq(mount_point, "/") ? NULL : mount_point;
        rest = startswith(mount_point, ctx->root);
        if (!rest || rest[0] != '/' || rest[1] == '\0')
                return NULL;
        return rest;
}

/* Name (up to 8 of) the processes that keep a mount busy, and how (an open file, a working or root
 * directory, a mapping), so the operator knows what to stop. */
static int unmount_busy(Context *ctx, UnmountData *d, char **ret_msg) {
        cleanup_free char *holders = proc_path_holders(d->abs_path, 8);
        int r;

        if (ctx->lazy_unmount) {
                r = mount_unmount_seen(ctx->root_fd, d->node_path, &d->seen, MNT_DETACH, ret_msg);
                if (r == -EBUSY)
                        return set_errmsg(ret_msg, r, "busy, and lazy detach failed: %s", strerror(-r));
                if (r <= 0)
                        return r;
                return set_errmsg(ret_msg, 1, "busy%s%s: detached lazily (--lazy-unmount)",
                                  holders ? ", held by PID " : "", strempty(holders));
        }
        return set_errmsg(ret_msg, -EBUSY, "busy%s%s: left mounted, nothing beneath it is removed",
                          holders ? ", held by PID " : "", strempty(holders));
}

/* Only the mount the plan saw, reached beneath --root without following a symlink (a pod can swap
 * any directory on the way between the plan and the act). */
/* The path leads to another mount than d's: when that is one the plan also saw at this path, unmount
 * it first (it is verified like any other), so that d's is reached. True when one went. */
static bool unmount_group_top(Context *ctx, UnmountData *d) {
        for (UnmountData *t = d->group; t; t = t->next) {
                cleanup_free char *msg = NULL;

                if (t == d || t->done)
                        continue;
                if (mount_unmount_seen(ctx->root_fd, t->node_path, &t->seen, 0, &msg) > 0) {
                        t->done = true;
                        return true;
                }
        }
        return false;
}

static int unmount_apply(Action *a, Context *ctx, char **ret_msg) {
        UnmountData *d = a->data;

        if (!d)
                return 0; /* the manifest line matched no mount when planned */
        if (d->done)
                return set_errmsg(ret_msg, 1, "unmounted first, to reach another mount the plan saw at this path");
        /* A busy mount often frees up a moment after the processes that held it exit. */
        for (unsigned attempt = 0;; attempt++) {
                int r = mount_unmount_seen(ctx->root_fd, d->node_path, &d->seen, 0, ret_msg);

                if (r == -ESTALE && unmount_group_top(ctx, d)) {
                        *ret_msg = mfree(*ret_msg);
                        continue;
                }
                if (r != -EBUSY)
                        return r;
                if (attempt >= 3)
                        return unmount_busy(ctx, d, ret_msg);
                (void) usleep(100 * 1000);
        }
}

static const ActionOps unmount_ops = {
        .kind = "unmount",
        .apply = unmount_apply,
        .free_data = unmount_data_free,
};

static int add_unmount(Context *ctx, Plan *plan, const MountEntry *m, const char *node, const ManifestEntry *e,
                       UnmountData **prev) {
        cleanup_free char *reason = NULL;
        const MountEntry *cover;
        UnmountData *d;
        Action *a;

        /* No path reaches a mount whose parent is covered: it cannot be verified nor unmounted by
         * name, and goes with the covered parent (the kernel drops a propagated copy with it). */
        cover = mount_table_covering(ctx->mounts, m);
        if (cover) {
                reason = manifest_entry_reason(e);
                if (!reason)
                        return -ENOMEM;
                a = plan_add(plan, &unmount_ops, "mounts", node, reason, NULL);
                if (!a)
                        return -ENOMEM;
                a->present = false;
                return action_set_skip(a,
                                       "mount id %d is hidden: a parent mount of it is covered by mount %d at %s, "
                                       "so no path reaches it",
                                       m->mount_id, cover->mount_id, cover->mount_point);
        }
        d = calloc(1, sizeof *d);
        if (!d)
                return -ENOMEM;
        d->abs_path = strdup(m->mount_point);
        d->node_path = strdup(node);
        if (!d->abs_path || !d->node_path || !(reason = manifest_entry_reason(e))) {
                unmount_data_free(d);
                return -ENOMEM;
        }
        mount_seen_observe(ctx->root_fd, node, m, &d->seen);
        if (*prev && streq((*prev)->node_path, node)) {
                d->group = (*prev)->group;
                (*prev)->next = d;
        } else
                d->group = d;
        *prev = d;
        a = plan_add(plan, &unmount_ops, "mounts", node, reason, d);
        if (!a)
                return -ENOMEM;
        if (e->system_path)
                log_warning("%s: the manifest opted in to unmounting beneath a system path", reason);
        return action_set_detail(a, "%s%s from %s (mount id %d)", e->system_path ? "SYSTEM PATH; " : "", m->fstype,
                                 m->source, m->mount_id);
}

/* A manifest line that matches nothing still gets a row, so a second run reports it unchanged. */
static int add_unmatched(Plan *plan, const ManifestEntry *e) {
        cleanup_free char *reason = NULL;
        Action *a;

        reason = manifest_entry_reason(e);
        if (!reason)
                return -ENOMEM;
        a = plan_add(plan, &unmount_ops, "mounts", e->args[0], reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "nothing mounted there");
}

int phase_mounts_plan(Context *ctx, Plan *plan, char **reterr) {
        cleanup_free const MountEntry **beneath = NULL;
        cleanup_free bool *used = NULL;
        size_t n, n_entries = ctx->manifest->n_entries;
        UnmountData *prev = NULL;
        int r;

        r = mount_table_beneath(ctx->mounts, ctx->root, &beneath, &n);
        if (r < 0)
                return set_errmsg(reterr, r, "cannot list mounts beneath %s: %s", ctx->root, strerror(-r));
        used = calloc(n_entries + 1, sizeof(bool));
        if (!used)
                return -ENOMEM;
        /* Deepest first across all lines: a mount is only ever unmounted after those on top of it. */
        for (size_t i = 0; i < n; i++) {
                const char *node = node_path_of(ctx, beneath[i]->mount_point);
                const ManifestEntry *e = node ? manifest_find_covering(ctx->manifest, DIRECTIVE_UNMOUNT, node) : NULL;

                if (!e)
                        continue;
                used[e - ctx->manifest->entries] = true;
                r = add_unmount(ctx, plan, beneath[i], node, e, &prev);
                if (r < 0)
                        return r;
        }
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_UNMOUNT)
                if (!used[e - ctx->manifest->entries]) {
                        r = add_unmatched(plan, e);
                        if (r < 0)
                                return r;
                }
        return 0;
}
