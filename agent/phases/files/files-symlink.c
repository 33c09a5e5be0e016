/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's conditional unlink: remove a symlink only while it leads to a file the run removes. */

/* k3s links kubectl, crictl and ctr to its own binary when they are not on PATH; those links outlive
 * the binary and shadow whatever the host installs later. A link of the same name may just as well be
 * the host's (kubectl -> /opt/kubectl/bin/kubectl), and a real binary is never ours. So the link goes
 * only when its text names the manifest's target, and that target is gone: absent when the run
 * starts, or removed by one of its "remove" lines (at act time: absent by then). The link is looked
 * at without following anything, and unlinked only if it still is the inode that was read. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/base/path.h"
#include "agent/base/log.h"
#include "agent/os/fileio.h"
#include "agent/os/node-path.h"
#include "agent/os/remove.h"
#include "agent/phases/files/files-protect.h"
#include "agent/phases/files/files-symlink.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

typedef struct LinkData {
        char *path;         /* node path of the symlink */
        const char *target; /* the manifest entry's word (the manifest outlives the plan) */
        bool system_path;   /* allow-system-path let this line reach a system path */
} LinkData;

typedef enum LinkState {
        LINK_ABSENT, /* nothing at the path */
        LINK_OURS,   /* a symlink whose text leads to the target */
        LINK_OTHER,  /* anything else: kept */
} LinkState;

/* One read-only look at the path. */
typedef struct Look {
        int dir_fd;
        struct stat st; /* of the link itself */
        char *leads_to; /* the link's text as a node path, NULL when not a symlink */
} Look;

static void link_data_free(void *p) {
        LinkData *d = p;

        free(d->path);
        free(d);
}

static void look_done(Look *l) {
        if (l->dir_fd >= 0)
                (void) close_nointr(l->dir_fd);
        l->dir_fd = -EBADF;
        l->leads_to = mfree(l->leads_to);
}

static const char *base_name(const char *path) {
        return strrchr(path, '/') + 1;
}

static char *dir_name(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
}

/* The link's text as a node path: absolute, or relative to the link's directory without "." or ".."
 * (a lexical ".." is only right when no component is itself a link: such a link is simply not ours). */
static char *link_text_resolve(const char *dir, const char *text) {
        char *p;

        if (isempty(text))
                return NULL;
        p = text[0] == '/' ? strdup(text) : strprintf("%s/%s", streq(dir, "/") ? "" : dir, text);
        if (!p)
                return NULL;
        path_simplify(p);
        if (path_validate_absolute(p, NULL) < 0)
                return mfree(p);
        return p;
}

/* LINK_* with l filled, or -errno with the reason in *ret_msg (-ELOOP: a symlink above it). */
static int look_at(const Context *ctx, const LinkData *d, Look *l, char **ret_msg) {
        cleanup_free char *dir = dir_name(d->path);
        char text[PATH_MAX];
        ssize_t n;

        if (!dir)
                return -ENOMEM;
        l->dir_fd = open_nofollow_beneath(ctx->root_fd, dir, O_RDONLY);
        if (l->dir_fd == -ENOENT)
                return LINK_ABSENT;
        if (l->dir_fd == -ELOOP || l->dir_fd == -ENOTDIR)
                return set_errmsg(ret_msg, -ELOOP, "%s (or a directory above it) is a symlink: not followed, kept",
                                  dir);
        if (l->dir_fd < 0)
                return set_errmsg(ret_msg, l->dir_fd, "cannot open %s: %s", dir, strerror(-l->dir_fd));
        if (fstatat(l->dir_fd, base_name(d->path), &l->st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? LINK_ABSENT : set_errmsg(ret_msg, negative_errno(), "cannot stat it: %m");
        if (!S_ISLNK(l->st.st_mode))
                return set_errmsg(ret_msg, LINK_OTHER, "not a symlink: kept");
        n = readlinkat(l->dir_fd, base_name(d->path), text, sizeof text - 1);
        if (n < 0)
                return set_errmsg(ret_msg, negative_errno(), "cannot read the link: %m");
        text[n] = 0;
        l->leads_to = link_text_resolve(dir, text);
        if (!l->leads_to || !streq(l->leads_to, d->target))
                return set_errmsg(ret_msg, LINK_OTHER, "leads to %s, not %s: kept", text, d->target);
        return LINK_OURS;
}

/* 1 when nothing is at the node path, 0 when something is (or it cannot be told: kept), -ENOMEM. */
static int node_absent(int root_fd, const char *path) {
        cleanup_free char *dir = dir_name(path);
        cleanup_close int fd = -EBADF;
        struct stat st;

        if (!dir)
                return -ENOMEM;
        fd = open_nofollow_beneath(root_fd, dir, O_RDONLY);
        if (fd == -ENOENT)
                return 1;
        if (fd < 0)
                return 0;
        return fstatat(fd, base_name(path), &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Does the target go? Absent now, or (when planning) a remove line of this run takes it, and would
 * not keep it (planning: keep, the directories kept runtimes watch). */
static int target_goes(const Context *ctx, const char *target, const CniKeepSet *keep, bool planning, char **ret_why) {
        const ManifestEntry *e;
        int r;

        r = node_absent(ctx->root_fd, target);
        if (r != 0)
                return r < 0 ? r : set_errmsg(ret_why, 1, "%s is gone", target);
        if (!planning || files_protect_decide(ctx, &(ProtectRow) { .kind = PROTECT_REMOVE, .cni = keep }, target,
                                              NULL) != PROTECT_NONE)
                return set_errmsg(ret_why, 0, "%s stays: kept", target);
        e = manifest_find_covering(ctx->manifest, DIRECTIVE_REMOVE, target);
        if (!e)
                return set_errmsg(ret_why, 0, "%s stays (no remove line takes it): kept", target);
        return set_errmsg(ret_why, 1, "%s goes (%s:%u)", target, e->file, e->line);
}

static int unlink_apply(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(protect_why_done) ProtectWhy protect = {};
        const LinkData *d = a->data;
        Look l = { .dir_fd = -EBADF };
        cleanup_free char *why = NULL;
        int r;

        /* Asked again where the link is unlinked: the manifest's guard, and what only a run keeps. */
        if (files_protect_decide(ctx, &(ProtectRow) { .kind = PROTECT_UNLINK, .system_path = d->system_path }, d->path,
                                 &protect) == PROTECT_SELF)
                return files_protect_refuse(&protect, ret_msg);
        r = look_at(ctx, d, &l, ret_msg);
        if (r == LINK_OURS) {
                r = target_goes(ctx, d->target, NULL, false, &why);
                if (r > 0) {
                        r = fileio_unlink_if_same(l.dir_fd, base_name(d->path), &l.st);
                        if (r == -ESTALE)
                                (void) set_errmsg(ret_msg, r, "replaced while being removed: left in place");
                        else if (r >= 0)
                                (void) set_errmsg(ret_msg, 0, "removed the symlink to %s", d->target);
                } else if (r == 0)
                        *ret_msg = TAKE_PTR(why);
        } else if (r == LINK_ABSENT)
                (void) set_errmsg(ret_msg, 0, "not present");
        else if (r == LINK_OTHER || r == -ELOOP)
                r = 0;
        look_done(&l);
        return r;
}

/* Residue: the link still leads to the target, and the target is gone. */
static int unlink_check(Action *a, Context *ctx, char **ret_msg) {
        const LinkData *d = a->data;
        Look l = { .dir_fd = -EBADF };
        int r;

        r = look_at(ctx, d, &l, ret_msg);
        if (r == LINK_OURS)
                r = target_goes(ctx, d->target, NULL, false, ret_msg);
        else if (r == LINK_ABSENT || r == LINK_OTHER || r == -ELOOP)
                r = 0;
        look_done(&l);
        return r;
}

static const ActionOps unlink_ops = {
        .kind = "unlink",
        .apply = unlink_apply,
        .check = unlink_check,
        .free_data = link_data_free,
};

/* The plan's row: the link that goes, or why what is there stays. */
static int unlink_observe(Context *ctx, Action *a, const LinkData *d, const CniKeepSet *keep) {
        Look l = { .dir_fd = -EBADF };
        cleanup_free char *msg = NULL;
        int r;

        r = look_at(ctx, d, &l, &msg);
        look_done(&l);
        if (r == LINK_OURS) {
                msg = mfree(msg);
                r = target_goes(ctx, d->target, keep, true, &msg);
                if (r < 0)
                        return r;
                a->present = r > 0;
                return action_set_detail(a, "symlink to %s; %s", d->target, strna(msg));
        }
        a->present = r < 0 && r != -ELOOP;
        a->detail = r == LINK_ABSENT ? strdup("not present") : TAKE_PTR(msg);
        if (r == -ELOOP)
                return action_set_skip_code(a, "symlink", "%s", strna(a->detail));
        return a->detail ? 0 : -ENOMEM;
}

int files_symlink_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep) {
        CLEANUP(protect_why_done) ProtectWhy why = {};
        cleanup_free char *reason = manifest_entry_reason(e);
        LinkData *d;
        Action *a;
        int r;

        d = calloc(1, sizeof *d);
        if (!d || !reason || !(d->path = strdup(e->args[0]))) {
                free(d);
                return -ENOMEM;
        }
        d->target = e->args[1];
        d->system_path = e->system_path;
        a = plan_add(plan, &unlink_ops, "files", d->path, reason, d);
        if (!a)
                return -ENOMEM;
        if (files_protect_decide(ctx,
                                 &(ProtectRow) { .kind = PROTECT_UNLINK, .system_path = d->system_path, .cni = keep },
                                 d->path, &why) == PROTECT_SELF)
                return files_protect_skip(a, &why);
        r = unlink_observe(ctx, a, d, keep);
        if (r >= 0 && e->system_path) {
                log_warning("%s: the manifest opted in to removing a system path", reason);
                r = action_set_detail(a, "SYSTEM PATH; %s", strna(a->detail));
        }
        return r;
}
