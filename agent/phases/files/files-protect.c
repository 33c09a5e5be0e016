/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the files phase never removes, empties, edits or unlinks: every source of protection, weighed
 * in one place for every row kind, so that a row kind asks here and cannot leave one out. */

/* The rule (node-reset(8), MANIFEST, says the same to the operator):
 *   - A remove or empty row, and the walk beneath it, keeps a protected path with everything beneath
 *     it, and keeps, but goes into, a directory that holds a protected path.
 *   - An edit (remove-block) or an unlink (remove-symlink-to) row acts on one inode, and honours every
 *     protection of that path, the built-in ones as much as the manifest's protect lines: an edit
 *     replaces the file by a new inode, which removes the one that was there, and an unlinked symlink
 *     is gone as a removed one is. So neither touches a path that a remove row would keep. Nothing
 *     lies beneath a file or a symlink: what is protected beneath its path does not hold it.
 *   - While planning: the protect lines, an etcd that is out of scope, the backups, and the CNI
 *     directory a kept runtime watches (a remove row of it empties it instead; an edit or unlink
 *     row leaves it). When the row runs, also: a system path that no allow-system-path line names
 *     (the manifest's parser refused it already; checked once more where the row acts, on what it
 *     acts on), the rows with no other copy when the backup could not be written, and the etcd data
 *     directory while its rule keeps it.
 *   - A walk asks about the node's data only: the system path and the watched directory were
 *     weighed for its target. */

#include <errno.h>
#include <stdlib.h>

#include "agent/base/path.h"
#include "agent/config/etcd-owner.h"
#include "agent/node/backup-kept.h"
#include "agent/node/etcd.h"
#include "agent/phases/files/files-protect.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

typedef ProtectState (*reach_func_t)(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why);

void protect_why_done(ProtectWhy *why) {
        if (!why)
                return;
        free(why->message);
        *why = (ProtectWhy) {};
}

/* A kept path: path is it or beneath it (SELF), or an ancestor of it (CONTAINS). */
static ProtectState reach(const char *path, const char *kept) {
        if (path_startswith_dir(path, kept))
                return PROTECT_SELF;
        if (path_startswith_dir(kept, path))
                return PROTECT_CONTAINS;
        return PROTECT_NONE;
}

static ProtectState reach_any(const char *path, const char *const *kept, size_t n) {
        ProtectState s = PROTECT_NONE;

        for (size_t i = 0; i < n; i++)
                switch (reach(path, kept[i])) {
                case PROTECT_SELF:
                        return PROTECT_SELF;
                case PROTECT_CONTAINS:
                        s = PROTECT_CONTAINS;
                        break;
                case PROTECT_NONE:
                        break;
                }
        return s;
}

static ProtectState system_path_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        if (row->kind == PROTECT_WALK || ctx->pass != ENGINE_PASS_EXECUTE || row->system_path)
                return PROTECT_NONE;
        return path_is_guarded(path) ? PROTECT_SELF : PROTECT_NONE;
}

static ProtectState manifest_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        if (!ctx->manifest)
                return PROTECT_NONE;
        why->entry = manifest_find_covering(ctx->manifest, DIRECTIVE_PROTECT, path);
        if (why->entry)
                return PROTECT_SELF;
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_PROTECT)
                if (path_pattern_below(e->args[0], path))
                        return PROTECT_CONTAINS;
        return PROTECT_NONE;
}

/* Its data, unit and env files, certificates, and the kubeadm-config.yaml that named it external. */
static ProtectState etcd_scope_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        const EtcdScope *s = node_etcd_scope_decided(ctx);

        if (!s || s->owner != ETCD_OWNER_FOREIGN)
                return PROTECT_NONE;
        return reach_any(path, (const char *const *) s->keep, strv_length(s->keep));
}

static ProtectState backups_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        return reach(path, BACKUP_DIR);
}

static ProtectState unsaved_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        const char *const *rows;
        size_t n;

        if (ctx->pass != ENGINE_PASS_EXECUTE)
                return PROTECT_NONE;
        rows = backup_unsaved_rows(ctx, &n);
        return reach_any(path, rows, n);
}

const char *files_protect_etcd_kept(const Context *ctx, char **ret_reason) {
        cleanup_free char *reason = NULL;

        if (!node_etcd_data_dir(ctx) || node_etcd_data_dir_fate(node_etcd_facts(ctx), &reason) != 0)
                return NULL;
        if (ret_reason)
                *ret_reason = TAKE_PTR(reason);
        return node_etcd_data_dir(ctx);
}

/* Only a run knows the fate: the backup and etcd phases decide it by what they learn. */
static ProtectState etcd_data_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        const char *keep = ctx->pass == ENGINE_PASS_EXECUTE ? files_protect_etcd_kept(ctx, NULL) : NULL;

        return keep ? reach(path, keep) : PROTECT_NONE;
}

/* The directory itself, never what is in it: the runtime loads whatever a rejoin writes there. */
static ProtectState cni_reach(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        if (!row->cni || row->kind == PROTECT_WALK || !(why->watched = cni_keep_watched(row->cni, path)))
                return PROTECT_NONE;
        switch (row->kind) {
        case PROTECT_REMOVE:
                return PROTECT_CONTAINS; /* emptied, kept */
        case PROTECT_EMPTY:
                return PROTECT_NONE;
        default:
                return PROTECT_SELF;
        }
}

/* In the order the first that keeps a path is named. */
static const struct {
        ProtectSource source;
        reach_func_t reach;
} sources[] = {
        { PROTECT_BY_SYSTEM_PATH, system_path_reach },
        { PROTECT_BY_MANIFEST, manifest_reach },
        { PROTECT_BY_ETCD_SCOPE, etcd_scope_reach },
        { PROTECT_BY_BACKUPS, backups_reach },
        { PROTECT_BY_UNSAVED, unsaved_reach },
        { PROTECT_BY_ETCD_DATA, etcd_data_reach },
        { PROTECT_BY_CNI, cni_reach },
};

/* Nothing lies beneath what the row acts on. */
static bool one_inode(ProtectKind kind) {
        return kind == PROTECT_EDIT || kind == PROTECT_UNLINK;
}

static const char *outcome(ProtectKind kind) {
        return kind == PROTECT_EDIT ? "not edited" : kind == PROTECT_UNLINK ? "not unlinked" : "nothing removed";
}

/* The report's words for a kept path, the row's code with them. */
static char *why_describe(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        cleanup_free char *reason = NULL;
        const char *keep;

        switch (why->source) {
        case PROTECT_BY_SYSTEM_PATH:
                /* A remove row names the match: a pattern's may not be its target. */
                return one_inode(row->kind)
                               ? strprintf("a system path that no allow-system-path names: %s", outcome(row->kind))
                               : strprintf("%s is a system path that no allow-system-path names: nothing removed",
                                           path);
        case PROTECT_BY_MANIFEST:
                why->code = "protected";
                return strprintf("protected by %s:%u", why->entry->file, why->entry->line);
        case PROTECT_BY_ETCD_SCOPE:
                why->code = "out-of-scope";
                return strdup(strna(node_etcd_scope_decided(ctx)->why));
        case PROTECT_BY_BACKUPS:
                return strprintf("node-reset's backups (" BACKUP_DIR ") are never %s",
                                 row->kind == PROTECT_EDIT ? "edited" : "removed");
        case PROTECT_BY_UNSAVED:
                return strprintf("%s, so kept (no other copy): %s", backup_unsaved_why(ctx), outcome(row->kind));
        case PROTECT_BY_ETCD_DATA:
                keep = files_protect_etcd_kept(ctx, &reason);
                return strprintf("the etcd data directory %s: %s: %s", strna(keep), strna(reason), outcome(row->kind));
        case PROTECT_BY_CNI:
                why->code = "kept";
                return strprintf("the kept %s (%s) watches it by inode", why->watched->runtime, why->watched->unit);
        case PROTECT_BY_NOTHING:
                break;
        }
        return NULL;
}

ProtectState files_protect_decide(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *ret_why) {
        ProtectState state = PROTECT_NONE;
        ProtectWhy why = {};

        /* Every source is asked, so that why.watched says what the row becomes whatever decided. */
        for (size_t i = 0; i < ELEMENTSOF(sources); i++) {
                ProtectState s = sources[i].reach(ctx, row, path, &why);

                if (s == PROTECT_SELF && state != PROTECT_SELF) {
                        state = PROTECT_SELF;
                        why.source = sources[i].source;
                } else if (s == PROTECT_CONTAINS && state == PROTECT_NONE && !one_inode(row->kind)) {
                        state = PROTECT_CONTAINS;
                        why.source = sources[i].source;
                }
        }
        if (state == PROTECT_NONE)
                why.source = PROTECT_BY_NOTHING;
        if (!ret_why)
                return state;
        why.error = why.source == PROTECT_BY_SYSTEM_PATH ? -EPERM : -EBUSY;
        if (state == PROTECT_SELF)
                why.message = why_describe(ctx, row, path, &why);
        *ret_why = why;
        return state;
}

int files_protect_skip(Action *a, const ProtectWhy *why) {
        if (!why->message)
                return -ENOMEM;
        return action_set_skip_code(a, why->code, "%s", why->message);
}

int files_protect_refuse(const ProtectWhy *why, char **ret_msg) {
        if (!why->message)
                return -ENOMEM;
        return set_errmsg(ret_msg, why->error, "%s", why->message);
}
