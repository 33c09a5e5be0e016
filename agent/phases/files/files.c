/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase: apply the manifest's remove/empty lines, never crossing a mount, never following
 * a symlink, never touching a protected path. */

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "agent/base/log.h"
#include "agent/base/path.h"
#include "agent/config/etcd-owner.h"
#include "agent/config/unit-file.h"
#include "agent/engine/phase.h"
#include "agent/node/backup-kept.h"
#include "agent/node/cni-keep.h"
#include "agent/node/etcd.h"
#include "agent/node/phase-options.h"
#include "agent/os/remote-fs.h"
#include "agent/os/remove.h"
#include "agent/os/services.h"
#include "agent/phases/files/files-edit.h"
#include "agent/phases/files/files-kubeconfig.h"
#include "agent/phases/files/files-protect.h"
#include "agent/phases/files/files-symlink.h"
#include "agent/os/remote-fs.h"
#include "agent/os/path-expand.h"
#include "agent/os/remove.h"
#include "agent/phases/phases.h"
#include "chase.h"
#include "cri/cri.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

typedef struct FileData {
        DirectiveType type; /* DIRECTIVE_REMOVE or DIRECTIVE_EMPTY */
        char *path;         /* a node path, or the pattern when nothing matched at plan time */
        bool pattern;
        bool system_path;         /* allow-system-path let this line reach a system path */
        RemoveTop top;            /* what the plan saw at path (nothing, for a pattern) */
        char *restarted_conf_dir; /* beneath path: the directory a kept runtime watches, and makes
                                   * again when the run restarts it */
} FileData;

static void file_data_free(void *p) {
        FileData *d = p;

        free(d->path);
        free(d->restarted_conf_dir);
        free(d);
}

/* Is the tree at path (a node path) no more than the empty directories down to conf_dir, beneath
 * it: what a runtime restarted for its watched directory makes again (containerd creates its CNI
 * configuration directory at start)? 1 yes, 0 no, -errno. */
static int only_conf_dir_chain(int root_fd, const char *path, const char *conf_dir) {
        const char *rest = conf_dir + strlen(path);
        cleanup_free char *cur = strdup(path);

        if (!cur)
                return -ENOMEM;
        for (;;) {
                cleanup_closedir DIR *d = NULL;
                char *next;
                size_t n = 0, len;
                bool next_ok = false;
                int fd;

                fd = chaseat(root_fd, cur, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, O_RDONLY | O_DIRECTORY, NULL,
                             NULL);
                if (fd < 0)
                        return fd == -ENOENT ? 1 : fd;
                d = fdopendir(fd);
                if (!d) {
                        close(fd);
                        return -ENOMEM;
                }
                rest += strspn(rest, "/");
                len = strcspn(rest, "/");
                FOREACH_DIRENT(de, d) {
                        n++;
                        next_ok = len > 0 && strlen(de->d_name) == len && strncmp(de->d_name, rest, len) == 0 &&
                                  de->d_type == DT_DIR;
                }
                if (len == 0)
                        return n == 0; /* conf_dir itself: empty */
                if (n != 1 || !next_ok)
                        return 0;
                next = strprintf("%s/%.*s", streq(cur, "/") ? "" : cur, (int) len, rest);
                if (!next)
                        return -ENOMEM;
                free(cur);
                cur = next;
                rest += len;
        }
}

/* Does the line's target (a path, or a pattern) hold the etcd data directory, or lie beneath it? */
static bool reaches_etcd_data(const Context *ctx, const char *target) {
        const char *dir = node_etcd_data_dir(ctx);

        return dir && (path_startswith_dir(target, dir) || path_startswith_dir(dir, target) || streq(target, "/") ||
                       path_pattern_covers(target, dir) || path_pattern_below(target, dir));
}

/* What the walk of a remove or empty row keeps, its target included (userdata: the Context). */
static ProtectState protect_check(const char *node_path, void *userdata) {
        return files_protect_decide(userdata, &(ProtectRow) { .kind = PROTECT_WALK }, node_path, NULL);
}

static ProtectKind file_kind(const FileData *d) {
        return d->type == DIRECTIVE_EMPTY ? PROTECT_EMPTY : PROTECT_REMOVE;
}

static bool unmounted_first(const char *node_path, void *userdata);

/* What a walk is for: its counts and its words differ. */
typedef enum Walk {
        WALK_APPLY, /* remove */
        WALK_PLAN,  /* count what the run will remove; the mounts phase has not run yet */
        WALK_CHECK, /* verify: count what is left; the mounts phase has run (or failed) */
} Walk;

static RemoveOptions remove_options(const Context *ctx, const FileData *d, Walk walk) {
        bool dry_run = walk != WALK_APPLY, plan = walk == WALK_PLAN;

        return (RemoveOptions) {
                .dry_run = dry_run,
                .keep_top = d->type == DIRECTIVE_EMPTY,
                .protect = protect_check,
                .unmounted_first = plan ? unmounted_first : NULL,
                .userdata = (void *) ctx,
                .deadline_usec = ctx->deadline_usec,
                /* The run takes the target again: what the plan saw (for a pattern: nothing, so no mount
                 * point), or nothing is touched. */
                .expect_top = walk == WALK_APPLY ? &d->top : NULL,
        };
}

/* The files phase runs after the mounts phase: a mount an unmount line covers is gone by then. */
static bool unmounted_first(const char *node_path, void *userdata) {
        const Context *ctx = userdata;

        return manifest_find_covering(ctx->manifest, DIRECTIVE_UNMOUNT, node_path) != NULL;
}

static int append(char **buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int append(char **buf, const char *fmt, ...) {
        cleanup_free char *add = NULL;
        va_list ap;
        char *t;

        va_start(ap, fmt);
        add = vstrprintf(fmt, ap);
        va_end(ap);
        if (!add || !(t = strprintf("%s%s", strempty(*buf), add)))
                return -ENOMEM;
        free(*buf);
        *buf = t;
        return 0;
}

/* Mounts met by the walk. Only a plan counts some as unmounted first: once the mounts phase has
 * run, one still there was left alone, whatever the manifest asked. */
static int describe_mounts(char **buf, char **mounts, unsigned covered) {
        bool first = true;
        int r = 0;

        STRV_FOREACH(p, mounts) {
                r = append(buf, "%s%s", first ? "; mount points left alone: " : ", ", *p);
                first = false;
                if (r < 0)
                        return r;
        }
        if (covered > 0)
                r = append(buf, "; %u mount point%s beneath, unmounted first (what %s not counted)", covered,
                           covered == 1 ? "" : "s", covered == 1 ? "it hides is" : "they hide are");
        return r;
}

/* The flag belongs to the inode, which the other names share: clearing it would change them too. */
#define KEPT_LINKED "; immutable/append-only with other hard links, flag not cleared, not removed: "

/* One line that says what the walk did, or would do: the report's message and the plan's detail. */
static char *describe_stats(const Manifest *m, const RemoveStats *s, Walk walk) {
        bool dry_run = walk != WALK_APPLY;
        char *buf = NULL;
        int r;

        if (s->top_missing)
                return strdup("not present");
        r = append(&buf, "%s%u file%s, %u director%s%s", dry_run ? "" : "removed ", s->files, s->files == 1 ? "" : "s",
                   s->dirs, s->dirs == 1 ? "y" : "ies",
                   s->top_is_mount ? "; a mount point itself, so emptied and kept" : "");
        if (r >= 0 && s->flags_cleared > 0)
                r = append(&buf, "; %s the immutable/append-only flag of %u", dry_run ? "will clear" : "cleared",
                           s->flags_cleared);
        if (r >= 0)
                r = describe_mounts(&buf, s->kept_mounts, s->unmounted_first);
        STRV_FOREACH(p, s->kept_linked)
                if (r >= 0)
                        r = append(&buf, "%s%s", p == s->kept_linked ? KEPT_LINKED : ", ", *p);
        STRV_FOREACH(p, s->kept_protected)
                if (r >= 0)
                        r = append(&buf, "%s%s", p == s->kept_protected ? "; protected, kept: " : ", ", *p);
        /* Kept mounts and hard-linked files are named above. */
        if (r >= 0 && s->first_error < 0 && s->first_error != -EBUSY && s->first_error != -EMLINK &&
            s->first_error_path)
                r = append(&buf, "; first failure at %s: %s", s->first_error_path,
                           s->first_error_reason ?: strerror(-s->first_error));
        if (r < 0)
                return mfree(buf);
        return buf;
}

/* *ret_symlink, when given, says a component above the target was seen to be a symlink. */
static int remove_one(Context *ctx, FileData *d, const char *path, Walk walk, char **ret_msg, bool *ret_symlink) {
        RemoveOptions o = remove_options(ctx, d, walk);
        RemoveStats s = {};
        int r;

        /* Asked again where the tree is removed (a pattern's match included): the manifest's guard
         * refuses; what else keeps the path, the walk keeps. */
        if (walk == WALK_APPLY) {
                CLEANUP(protect_why_done) ProtectWhy why = {};

                if (files_protect_decide(ctx, &(ProtectRow) { .kind = file_kind(d), .system_path = d->system_path },
                                         path, &why) == PROTECT_SELF &&
                    why.source == PROTECT_BY_SYSTEM_PATH)
                        return files_protect_refuse(&why, ret_msg);
        }
        r = remove_tree(ctx->root_fd, path, &o, &s);
        if (walk == WALK_PLAN && !d->pattern)
                d->top = s.top;
        if (ret_symlink)
                *ret_symlink = s.symlink_component != NULL;
        if (ret_msg) {
                if (s.symlink_component)
                        (void) set_errmsg(ret_msg, r, "%s is a symlink: not followed, nothing removed",
                                          s.symlink_component);
                else if (r == -ETIME)
                        *ret_msg = strdup("the run's --timeout was reached during the walk");
                else
                        *ret_msg = describe_stats(ctx->manifest, &s, walk);
        }
        remove_stats_done(&s);
        return r;
}

/* A line that matched nothing when planned is expanded again: whatever matches now goes too. */
static int remove_pattern(Context *ctx, FileData *d, Walk walk, char **ret_msg) {
        cleanup_strv char **matches = NULL;
        int r, result = 0;
        unsigned n = 0;

        r = path_expand(ctx->root_fd, d->path, &matches);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot expand %s: %s", d->path, strerror(-r));
        for (char **m = matches; *m; m++) {
                if (protect_check(*m, ctx) == PROTECT_SELF)
                        continue;
                cleanup_free char *msg = NULL;

                r = remove_one(ctx, d, *m, walk, &msg, NULL);
                if (r > 0)
                        n++;
                if (r < 0 && result >= 0)
                        result = set_errmsg(ret_msg, r, "%s: %s", *m, msg ?: strerror(-r));
                else if (r > 0 && result == 0)
                        result = 1;
        }
        if (result >= 0 && n == 0)
                (void) set_errmsg(ret_msg, 0, "nothing matches");
        else if (result >= 0)
                (void) set_errmsg(ret_msg, 0, "%u matching paths", n);
        return result;
}

/* A kept etcd data directory that the line reaches is residue, with the rule's reason: never
 * "unchanged", never clean. */
static int etcd_residue(const Context *ctx, const char *target, int r, char **msg) {
        cleanup_free char *reason = NULL;
        cleanup_close int fd = -EBADF;
        const char *keep;

        if (r < 0 || !reaches_etcd_data(ctx, target) || !(keep = files_protect_etcd_kept(ctx, &reason)))
                return r;
        /* Looked up as every path is, beneath the root and through no symlink: only "absent" means
         * nothing is kept; anything else there (a symlink the resolver refuses too) is reported. */
        fd = remote_fs_check(ctx->root_fd, keep, NULL);
        if (fd >= 0)
                fd = chaseat(ctx->root_fd, keep, CHASE_NO_SYMLINKS, O_PATH, NULL, NULL);
        if (fd == -ENOENT)
                return r;
        r = append(msg, "%sthe etcd data directory %s: %s", *msg ? "; " : "", keep, reason);
        return r < 0 ? r : -EBUSY;
}

/* Rows with no other copy that the line reaches, kept because the backup could not be written: the
 * line is refused for them (residue, named), whatever else it removed. */
static int unsaved_residue(const Context *ctx, const char *target, int r, char **msg) {
        cleanup_strv char **kept = NULL;

        if (r < 0 || backup_unsaved_kept_beneath(ctx, target, &kept) < 0 || !kept)
                return r;
        STRV_FOREACH(k, kept)
                if (append(msg, "%s%s%s%s", k == kept ? "; " : ", ", k == kept ? backup_unsaved_why(ctx) : "",
                           k == kept ? ", so kept (no other copy): " : "", *k) < 0)
                        return -ENOMEM;
        return -EBUSY;
}

static int file_apply(Action *a, Context *ctx, char **ret_msg) {
        FileData *d = a->data;
        int r;

        if (d->pattern)
                r = remove_pattern(ctx, d, WALK_APPLY, ret_msg);
        else
                r = remove_one(ctx, d, d->path, WALK_APPLY, ret_msg, NULL);
        return unsaved_residue(ctx, d->path, etcd_residue(ctx, d->path, r, ret_msg), ret_msg);
}

/* Residue: a dry run that still finds something to remove, or a mount it must leave alone. */
static int file_check(Action *a, Context *ctx, char **ret_msg) {
        FileData *d = a->data;
        int r;

        if (d->pattern)
                r = remove_pattern(ctx, d, WALK_CHECK, ret_msg);
        else
                r = remove_one(ctx, d, d->path, WALK_CHECK, ret_msg, NULL);
        if (r == -EBUSY)
                return 1;
        if (r > 0 && d->restarted_conf_dir && only_conf_dir_chain(ctx->root_fd, d->path, d->restarted_conf_dir) > 0) {
                free(*ret_msg);
                *ret_msg =
                        strprintf("only the empty %s, which the restarted runtime made again", d->restarted_conf_dir);
                return 0;
        }
        r = etcd_residue(ctx, d->path, r, ret_msg);
        return unsaved_residue(ctx, d->path, r, ret_msg) == -EBUSY ? 1 : r;
}

static const ActionOps remove_ops = {
        .kind = "remove",
        .apply = file_apply,
        .check = file_check,
        .free_data = file_data_free,
};

static const ActionOps empty_ops = {
        .kind = "empty",
        .apply = file_apply,
        .check = file_check,
        .free_data = file_data_free,
};

static int add_file_action(Context *ctx, Plan *plan, const ManifestEntry *e, const char *path, bool pattern,
                           const CniKeepSet *keep) {
        CLEANUP(protect_why_done) ProtectWhy why = {};
        cleanup_free char *reason = NULL, *msg = NULL;
        const CniKeep *watched;
        ProtectState protect;
        bool symlink = false;
        FileData *d;
        Action *a;
        int r;

        d = calloc(1, sizeof *d);
        if (!d || !(d->path = strdup(path)) || !(reason = manifest_entry_reason(e))) {
                if (d)
                        file_data_free(d);
                return -ENOMEM;
        }
        d->type = e->type;
        d->pattern = pattern;
        d->system_path = e->system_path;
        protect = files_protect_decide(
                ctx,
                &(ProtectRow) { .kind = file_kind(d), .system_path = d->system_path, .cni = pattern ? NULL : keep },
                path, &why);
        /* A directory the kept runtime watches by inode is emptied, never replaced. */
        watched = why.watched;
        if (watched)
                d->type = DIRECTIVE_EMPTY;
        a = plan_add(plan, d->type == DIRECTIVE_EMPTY ? &empty_ops : &remove_ops, "files", path, reason, d);
        if (!a)
                return -ENOMEM;
        if (protect == PROTECT_SELF) {
                a->present = false;
                return files_protect_skip(a, &why);
        }
        r = remote_fs_check(ctx->root_fd, path, &msg);
        if (r == -EHOSTDOWN) {
                /* Nothing beneath it can be looked at: not known to be clean. */
                a->unobserved = true;
                return action_set_skip_code(a, "unanswered", "%s", msg);
        }
        if (r < 0)
                return r;
        msg = mfree(msg);
        r = pattern ? remove_pattern(ctx, d, WALK_PLAN, &msg) : remove_one(ctx, d, path, WALK_PLAN, &msg, &symlink);
        a->present = r != 0;
        a->detail = TAKE_PTR(msg);
        if (reaches_etcd_data(ctx, path))
                (void) action_set_detail(a,
                                         "%s; holds the etcd data directory %s: its fate is decided when run "
                                         "(the etcd data-directory rule)",
                                         strna(a->detail), node_etcd_data_dir(ctx));
        if (watched)
                (void) action_set_detail(a, "%s; the kept %s (%s) watches it by inode: emptied, kept", strna(a->detail),
                                         watched->runtime, watched->unit);
        if (e->system_path) {
                log_warning("%s: the manifest opted in to removing a system path", reason);
                (void) action_set_detail(a, "SYSTEM PATH; %s", strna(a->detail));
        }
        /* Only a symlink seen above the target makes the line one not to act on. Any other failure
         * of the dry run (a walk that could not finish) is a failure to come, and residue. */
        if (symlink)
                return action_set_skip_code(a, "symlink", "%s", a->detail);
        return 0;
}

/* ---- a kept runtime whose watched directory a manifest line removes with its parent ---- */

/* containerd's CRI plugin answers "server is not initialized yet" for a moment after systemd says the
 * unit started: wait for its Status, so that what follows (verify, a join) finds it serving. */
#define RESTART_CRI_WAIT_USEC (20ULL * 1000000ULL)
#define RESTART_CRI_POLL_USEC (20ULL * 1000ULL)
#define RESTART_CRI_CALL_USEC (2ULL * 1000000ULL)

static int restart_apply(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *err = NULL;
        ServiceManager *m;
        uint64_t t0, deadline;
        const char *why;
        int r;

        r = phase_systemd_running(ctx, &m, &why);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot restart %s: %s", a->target, why);
        r = services_restart(m, a->target, phase_option_unit_timeout(), ctx->deadline_usec, ret_msg);
        if (r <= 0 || !a->data)
                return r;
        t0 = now(CLOCK_MONOTONIC);
        deadline = t0 + RESTART_CRI_WAIT_USEC;
        if (ctx->deadline_usec > 0 && ctx->deadline_usec < deadline)
                deadline = ctx->deadline_usec;
        free(*ret_msg);
        *ret_msg = cri_wait_status(a->data, RESTART_CRI_CALL_USEC, deadline, RESTART_CRI_POLL_USEC, false, &err) >= 0
                           ? strprintf("restarted; its CRI answers again after %" PRIu64 " ms",
                                       (now(CLOCK_MONOTONIC) - t0) / 1000)
                           : strprintf("restarted, but its CRI at %s does not answer yet: %s", (const char *) a->data,
                                       strna(err));
        return 1;
}

/* A restart leaves residue only when it left the runtime down: the rejoin needs it running. */
static int restart_check(Action *a, Context *ctx, char **ret_msg) {
        ServiceManager *m;
        UnitStatus st;
        int r;

        r = phase_systemd_running(ctx, &m, NULL);
        if (r < 0)
                return r;
        r = services_unit_status(m, a->target, &st);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r >= 0 && streq(st.active_state, "active"))
                return 0;
        *ret_msg =
                strprintf("%s is %s: the kept runtime does not run", a->target, r < 0 ? "not loaded" : st.active_state);
        return 1;
}

static const ActionOps restart_ops = {
        .kind = "runtime-restart",
        .apply = restart_apply,
        .check = restart_check,
        .free_data = free,
};

/* kubekey restarts the runtime after removing /etc/cni; without it the runtime never loads the
 * configuration a rejoin writes into the directory it watched. */
static int plan_restarts(Plan *plan, const CniKeepSet *keep, size_t first) {
        cleanup_strv char **done = NULL;

        for (size_t i = first; i < plan->n_actions; i++) {
                const Action *f = plan->actions[i];
                const CniKeep *k;
                Action *a;

                if (f->ops != &remove_ops || !f->present || f->skip_reason || ((const FileData *) f->data)->pattern ||
                    !(k = cni_keep_beneath(keep, ((const FileData *) f->data)->path)))
                        continue;
                if (!(((FileData *) f->data)->restarted_conf_dir = strdup(k->conf_dir)))
                        return -ENOMEM;
                if (strv_contains(done, k->unit))
                        continue;
                if (strv_extend(&done, k->unit) < 0)
                        return -ENOMEM;
                a = plan_add(plan, &restart_ops, "files", k->unit, f->reason, k->socket ? strdup(k->socket) : NULL);
                if (!a || (k->socket && !a->data) ||
                    action_set_detail(a, "restart: %s removes %s, which the kept %s watches by inode", f->target,
                                      k->conf_dir, k->runtime) < 0)
                        return -ENOMEM;
                a->present = true;
        }
        return 0;
}

static int files_plan_entries(Context *ctx, Plan *plan, const CniKeepSet *keep, char **reterr) {
        const EtcdScope *scope;
        const char *etcd_dir;
        int k;

        /* Decided before the first line is planned: files_protect_decide() follows it. */
        k = node_etcd_scope(ctx, &scope);
        if (k >= 0)
                k = node_etcd_data_dir_find(ctx, &etcd_dir);
        if (k < 0)
                return set_errmsg(reterr, k, "cannot tell where this node's etcd member keeps its data: %s",
                                  strerror(-k));
        for (size_t i = 0; i < ctx->manifest->n_entries; i++) {
                const ManifestEntry *e = &ctx->manifest->entries[i];
                cleanup_strv char **matches = NULL;
                int r;

                if (e->type == DIRECTIVE_REMOVE_BLOCK || e->type == DIRECTIVE_REMOVE_SYMLINK_TO ||
                    e->type == DIRECTIVE_PRUNE_KUBECONFIG) {
                        r = e->type == DIRECTIVE_REMOVE_BLOCK       ? files_edit_plan(ctx, plan, e, keep)
                            : e->type == DIRECTIVE_PRUNE_KUBECONFIG ? files_kubeconfig_plan(ctx, plan, e, keep)
                                                                    : files_symlink_plan(ctx, plan, e, keep);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (e->type != DIRECTIVE_REMOVE && e->type != DIRECTIVE_EMPTY)
                        continue;
                r = path_expand(ctx->root_fd, e->args[0], &matches);
                if (r < 0)
                        return set_errmsg(reterr, r, "%s:%u: cannot expand %s: %s", e->file, e->line, e->args[0],
                                          strerror(-r));
                if (!matches[0])
                        r = add_file_action(ctx, plan, e, e->args[0], true, keep);
                for (char **m = matches; r >= 0 && *m; m++)
                        r = add_file_action(ctx, plan, e, *m, false, keep);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- what could not be read ---- */

static int unanswered_apply(Action *a, Context *ctx, char **ret_msg) {
        return 0; /* always skipped: its skip reason is its result */
}

static const ActionOps unanswered_ops = {
        .kind = "unanswered",
        .apply = unanswered_apply,
};

/* A mount (or a home) that did not answer when it was read, by detection or by a row: one unobserved
 * row each, so that the verdict is never "clean" over what nobody could look at. */
static int plan_unanswered(Plan *plan) {
        const RemoteFsUnanswered *u;
        size_t n;

        u = remote_fs_unanswered(&n);
        for (size_t i = 0; i < n; i++) {
                Action *a = plan_add(plan, &unanswered_ops, "files", u[i].path, NULL, NULL);

                if (!a)
                        return -ENOMEM;
                a->unobserved = true;
                if (action_set_skip_code(a, "unanswered", "%s", u[i].why) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int phase_files_plan(Context *ctx, Plan *plan, char **reterr) {
        CLEANUP(cni_keep_set_done) CniKeepSet keep = {};
        size_t first = plan->n_actions;
        int r;

        r = cni_keep_find(ctx, &keep);
        if (r < 0)
                return r;
        r = files_plan_entries(ctx, plan, &keep, reterr);
        if (r >= 0)
                r = plan_restarts(plan, &keep, first);
        if (r >= 0)
                r = plan_unanswered(plan);
        /* A file removed beneath a unit directory: the reload phase reloads systemd after it. */
        for (size_t i = first; i < plan->n_actions; i++)
                plan->actions[i]->changes_unit_files = unit_file_in_search_path(plan->actions[i]->target);
        return r;
}
