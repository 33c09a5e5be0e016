/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The removal walk: fd-relative, never following a symlink, never entering another mount. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "agent/base/path.h"
#include "agent/os/remote-fs.h"
#include "agent/os/remove.h"
#include "alloc-util.h"
#include "chase.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "mountid-util.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

/* Directories the walk holds open at once. Below that many levels the shallowest is closed; on the
 * way back up it is opened again through ".." of its child and must still be the directory that
 * was entered (st_dev, st_ino, mount id). A tree of any depth then costs a small record per level
 * and its path, never an fd or a stack frame per level. */
#define REMOVE_OPEN_DIRS 32U

#define PROTECT_FLAGS (FS_IMMUTABLE_FL | FS_APPEND_FL)

/* remove_entry(): the entry is a directory now on the walk's stack, to be finished there. */
#define WALK_ENTERED 2

/* A node path grown and cut back in place as the walk descends and returns. */
typedef struct PathBuf {
        char *p;
        size_t len, alloc;
} PathBuf;

/* A directory on the walk's stack, from the target down to where the walk is. */
typedef struct Level {
        MountIdentity id;
        DIR *d;                 /* NULL while closed to bound the fds held */
        size_t saved;           /* the path's length before this directory's name */
        long pos;               /* dry run: where the stream was when closed, to seek back to */
        char **kept;            /* real run: names of the entries left here (protected, mounts, */
        size_t n_kept, n_alloc; /* failures), skipped when the directory is read from the start again */
        int ret;                /* 1 all gone so far, 0 something kept on purpose, -errno residue */
        bool keep;              /* emptied, not removed: "empty", or the target is a mount point */
        bool rescan;            /* opened again in a real run: read from the start, skip kept */
} Level;

typedef struct Walk {
        const RemoveOptions *o;
        RemoveStats *s;
        PathBuf path;
        Level *levels;
        size_t n_levels, n_alloc;
        size_t first_open; /* levels[first_open .. n_levels) have their stream open */
        int top_pfd;       /* the directory holding the target: not part of the tree */
        const char *top_name;
        int top_result;
        bool timed_out;
        bool aborted; /* the walk cannot go on: the levels left only unwind, as failures */
} Walk;

/* An absolute node path with no empty, "." or ".." components ("/a//b/" becomes "/a/b"). */
static int node_path_normalize(const char *path, char **ret) {
        cleanup_free char *buf = NULL;
        char *d;

        if (!path || path[0] != '/')
                return -EINVAL;
        buf = malloc(strlen(path) + 1);
        if (!buf)
                return -ENOMEM;
        d = buf;
        for (const char *p = path;;) {
                size_t l;

                p += strspn(p, "/");
                if (!*p)
                        break;
                l = strcspn(p, "/");
                if (l <= 2 && strncmp(p, "..", l) == 0) /* "." or ".." */
                        return -EINVAL;
                *d++ = '/';
                memcpy(d, p, l);
                d += l;
                p += l;
        }
        if (d == buf)
                *d++ = '/';
        *d = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int path_push(PathBuf *b, const char *name, size_t *ret_saved) {
        size_t l = strlen(name), need = b->len + 1 + l + 1;

        if (GREEDY_REALLOC(b->p, b->alloc, need) < 0)
                return -ENOMEM;
        *ret_saved = b->len;
        /* The root is "/" and its children "/x", not "//x". */
        if (b->len != 1)
                b->p[b->len++] = '/';
        memcpy(b->p + b->len, name, l + 1);
        b->len += l;
        return 0;
}

static void path_pop(PathBuf *b, size_t saved) {
        b->len = saved;
        b->p[saved] = 0;
}

static bool walk_past_deadline(Walk *w) {
        if (!w->timed_out && w->o->deadline_usec > 0 && now(CLOCK_MONOTONIC) > w->o->deadline_usec)
                w->timed_out = true;
        return w->timed_out;
}

static int walk_fail_at(Walk *w, const char *path, int r) {
        w->s->failed++;
        if (w->s->first_error == 0) {
                w->s->first_error = r;
                w->s->first_error_path = strdup(path);
        }
        return r;
}

static int walk_fail(Walk *w, int r) {
        return walk_fail_at(w, w->path.p, r);
}

/* A failure that strerror() would not explain. */
static int walk_fail_why(Walk *w, int r, const char *why) {
        if (w->s->first_error == 0)
                w->s->first_error_reason = why;
        return walk_fail(w, r);
}

/* A mount point left alone is residue: counted as a failure, -EBUSY. */
static int walk_keep_mount(Walk *w) {
        int r = strv_extend(&w->s->kept_mounts, w->path.p);

        return walk_fail(w, r < 0 ? r : -EBUSY);
}

/* A mount point met. A plan's walk counts one that the mounts phase unmounts first as an entry that
 * goes (what lies beneath it is not seen); any other is left alone. */
static int walk_meet_mount(Walk *w, mode_t mode) {
        if (!w->o->dry_run || !w->o->unmounted_first || !w->o->unmounted_first(w->path.p, w->o->userdata))
                return walk_keep_mount(w);
        w->s->unmounted_first++;
        if (S_ISDIR(mode))
                w->s->dirs++;
        else
                w->s->files++;
        return 1;
}

/* An immutable or append-only file whose inode has other names is left, flag and all: residue. */
static int walk_keep_linked(Walk *w) {
        int r = strv_extend(&w->s->kept_linked, w->path.p);

        return walk_fail(w, r < 0 ? r : -EMLINK);
}

/* A protected path left alone is not a failure. */
static int walk_keep_protected(Walk *w) {
        int r = strv_extend(&w->s->kept_protected, w->path.p);

        return r < 0 ? walk_fail(w, r) : 0;
}

static ProtectState walk_protect(Walk *w) {
        return w->o->protect ? w->o->protect(w->path.p, w->o->userdata) : PROTECT_NONE;
}

/* The immutable/append-only flags of fd; 0 when the file system has no such flags. */
static int fd_get_protect_flags(int fd, int *ret_attr) {
        *ret_attr = 0;
        if (ioctl(fd, FS_IOC_GETFLAGS, ret_attr) < 0) {
                *ret_attr = 0;
                return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : negative_errno();
        }
        return 0;
}

/* 1 when an immutable or append-only flag was cleared, 0 when none was set, -errno otherwise. */
static int fd_clear_protect_flags(int fd) {
        int attr, r;

        r = fd_get_protect_flags(fd, &attr);
        if (r < 0 || !(attr & PROTECT_FLAGS))
                return r;
        attr &= ~PROTECT_FLAGS;
        return ioctl(fd, FS_IOC_SETFLAGS, &attr) < 0 ? negative_errno() : 1;
}

/* Only regular files and directories carry these flags; opening anything else (a device node)
 * could have side effects, so it is never opened. The flags belong to the inode: when it has
 * another name, perhaps a protected file outside the tree, clearing them would strip that file of
 * its flag too, so it is left alone (*ret_linked) and the entry stays. */
static int entry_clear_protect_flags(int dfd, const char *name, mode_t mode, bool *ret_linked) {
        cleanup_close int fd = -EBADF;
        struct stat st;
        int attr, r;

        if (!S_ISREG(mode) && !S_ISDIR(mode))
                return 0;
        fd = openat(dfd, name,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (S_ISDIR(mode) ? O_DIRECTORY : 0));
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((st.st_mode & S_IFMT) != (mode & S_IFMT))
                return 0;
        r = fd_get_protect_flags(fd, &attr);
        if (r < 0 || !(attr & PROTECT_FLAGS))
                return r;
        if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
                *ret_linked = true;
                return -EMLINK;
        }
        attr &= ~PROTECT_FLAGS;
        return ioctl(fd, FS_IOC_SETFLAGS, &attr) < 0 ? negative_errno() : 1;
}

/* unlinkat(); when EPERM says an immutable or append-only flag stands in the way, clear it on the
 * entry and, when that directory belongs to the tree, on the directory holding it, and retry. The
 * entry is looked at first: one that must keep its flag keeps the directory's too. */
static int unlink_entry(Walk *w, int dfd, bool dfd_in_tree, const char *name, mode_t mode, bool *ret_linked) {
        int flags = S_ISDIR(mode) ? AT_REMOVEDIR : 0, n = 0, r;

        if (unlinkat(dfd, name, flags) >= 0)
                return 0;
        if (errno != EPERM)
                return negative_errno();
        r = entry_clear_protect_flags(dfd, name, mode, ret_linked);
        if (r < 0)
                return r;
        n += r;
        if (dfd_in_tree) {
                r = fd_clear_protect_flags(dfd);
                if (r < 0)
                        return r;
                n += r;
        }
        if (n == 0)
                return -EPERM;
        w->s->flags_cleared += (unsigned) n;
        return RET_NERRNO(unlinkat(dfd, name, flags));
}

/* Remove what the walk decided to remove; 1 when it is gone (or would be, in a dry run). */
static int remove_node(Walk *w, int dfd, bool dfd_in_tree, const char *name, mode_t mode) {
        bool linked = false;
        int r;

        if (!w->o->dry_run) {
                r = unlink_entry(w, dfd, dfd_in_tree, name, mode, &linked);
                if (r == -ENOENT) /* gone meanwhile */
                        return 1;
                if (linked)
                        return walk_keep_linked(w);
                if (r == -EBUSY) /* a mount point that the mount id could not reveal */
                        return walk_keep_mount(w);
                if (r < 0)
                        return walk_fail(w, r);
        }
        if (S_ISDIR(mode))
                w->s->dirs++;
        else
                w->s->files++;
        return 1;
}

static void level_fold(Level *l, int r) {
        if (r < 0 && l->ret >= 0)
                l->ret = r;
        else if (r == 0 && l->ret > 0)
                l->ret = 0;
}

static void level_close(Walk *w, Level *l) {
        if (!l->d)
                return;
        if (w->o->dry_run)
                l->pos = telldir(l->d);
        (void) closedir(l->d);
        l->d = NULL;
}

static void level_done(Walk *w, Level *l) {
        level_close(w, l);
        for (size_t i = 0; i < l->n_kept; i++)
                free(l->kept[i]);
        free(l->kept);
}

/* The name of the deepest level's directory, as its parent lists it. */
static const char *level_name(Walk *w, const Level *l) {
        if (l == w->levels)
                return w->top_name;
        return w->path.p + l->saved + (l->saved == 1 ? 0 : 1);
}

/* Note an entry left in l, so that reading l from the start again passes it by. Only a real run
 * reads a directory again from the start; a dry run seeks back to where it was. */
static int level_keep_name(Walk *w, Level *l, const char *name) {
        if (w->o->dry_run)
                return 0;
        if (GREEDY_REALLOC(l->kept, l->n_alloc, l->n_kept + 1) < 0)
                return -ENOMEM;
        l->kept[l->n_kept] = strdup(name);
        if (!l->kept[l->n_kept])
                return -ENOMEM;
        l->n_kept++;
        return 0;
}

static bool level_is_kept(const Level *l, const char *name) {
        for (size_t i = 0; i < l->n_kept; i++)
                if (streq(l->kept[i], name))
                        return true;
        return false;
}

/* Record the result of an entry of l. Without room to note a kept entry the walk cannot go on
 * safely (it would meet that entry again), so it stops. */
static void level_entry_done(Walk *w, Level *l, const char *name, int r) {
        level_fold(l, r);
        if (r <= 0 && level_keep_name(w, l, name) < 0) {
                level_fold(l, walk_fail(w, -ENOMEM));
                w->aborted = true;
        }
}

/* 1 with the next entry of l, 0 at its end, -errno. */
static int level_read(Level *l, const char **ret_name) {
        for (;;) {
                struct dirent *de;

                errno = 0;
                de = readdir(l->d);
                if (!de)
                        return errno != 0 ? negative_errno() : 0;
                if (dot_or_dot_dot(de->d_name) || (l->rescan && level_is_kept(l, de->d_name)))
                        continue;
                *ret_name = de->d_name;
                return 1;
        }
}

static int walk_grow(Walk *w) {
        return GREEDY_REALLOC(w->levels, w->n_alloc, w->n_levels + 1);
}

/* Enter the directory name, an entry of dfd: check it is on the same mount as its parent and put it
 * on the stack, closing the shallowest open level when too many are. The target ("top") may be a
 * mount point itself: then it is emptied and kept. WALK_ENTERED, or the entry's result. */
static int walk_enter(Walk *w, int dfd, const char *name, const MountIdentity *parent, bool top, size_t saved) {
        cleanup_close int fd = -EBADF;
        bool keep = top && w->o->keep_top;
        MountIdentity id = {};
        DIR *d;
        int r;

        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 1 : walk_fail(w, negative_errno());
        /* The authoritative check is on the fd that will be walked: nothing can swap it now. */
        r = mount_identity_at(fd, "", 0, &id);
        if (r < 0)
                return walk_fail(w, r);
        if (mount_identity_other_mount(parent, &id)) {
                if (!top)
                        return walk_meet_mount(w, S_IFDIR);
                w->s->top_is_mount = true;
                keep = true;
        }
        /* parent may point into the stack, which this may move: not used past here. */
        r = walk_grow(w);
        if (r < 0)
                return walk_fail(w, r);
        d = fdopendir(fd);
        if (!d)
                return walk_fail(w, negative_errno());
        TAKE_FD(fd);
        if (w->n_levels - w->first_open >= REMOVE_OPEN_DIRS)
                level_close(w, &w->levels[w->first_open++]);
        w->levels[w->n_levels++] = (Level) { .id = id, .d = d, .saved = saved, .ret = 1, .keep = keep };
        return WALK_ENTERED;
}

/* Open p, the parent of the deepest level, again through ".." of that level's fd. It must be the
 * directory that was entered: one moved elsewhere meanwhile is not followed, and the walk stops. */
static int level_reopen(Walk *w, Level *p, int child_fd) {
        cleanup_close int fd = -EBADF;
        MountIdentity id = {};
        int r;

        fd = openat(child_fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return walk_fail(w, negative_errno());
        r = mount_identity_at(fd, "", 0, &id);
        if (r < 0)
                return walk_fail(w, r);
        if (!mount_identity_same(&p->id, &id))
                return walk_fail_why(w, -ESTALE, "moved out of its directory during the walk, which stopped there");
        p->d = fdopendir(fd);
        if (!p->d)
                return walk_fail(w, negative_errno());
        TAKE_FD(fd);
        /* Nothing was removed in a dry run, so its position is still good; a real run removed entries,
         * and a position in a directory that changed is not reliable on every file system. */
        if (w->o->dry_run)
                seekdir(p->d, p->pos);
        else
                p->rescan = true;
        return 0;
}

/* The deepest level is done: remove the directory from its parent, opened again first if it was
 * closed, and give the parent its result. The target's result goes to w->top_result. */
static void walk_leave(Walk *w) {
        size_t i = w->n_levels - 1;
        Level *l = &w->levels[i], *p = i > 0 ? l - 1 : NULL;
        const char *name = level_name(w, l);
        int r = l->ret;

        if (p && !p->d && !w->aborted) {
                int k = level_reopen(w, p, dirfd(l->d));

                if (k < 0) {
                        level_fold(l, k);
                        r = l->ret;
                        w->aborted = true;
                } else
                        w->first_open = i - 1;
        }
        level_done(w, l);
        if (r > 0 && l->keep)
                r = 0;
        else if (r > 0 && !w->aborted)
                r = remove_node(w, p ? dirfd(p->d) : w->top_pfd, p != NULL, name, S_IFDIR);
        w->n_levels--;
        if (!p) {
                w->top_result = r;
                return;
        }
        level_entry_done(w, p, name, r);
        path_pop(&w->path, l->saved);
}

/* An entry of the deepest level l. 1 when it is gone, 0 when it was kept on purpose (protected),
 * WALK_ENTERED for a directory to walk, -errno on residue. */
static int remove_entry_at(Walk *w, Level *l, const char *name, size_t saved) {
        ProtectState p;
        MountIdentity id = {};
        int r;

        r = mount_identity_at(dirfd(l->d), name, 0, &id);
        if (r == -ENOENT)
                return 1;
        if (r < 0)
                return walk_fail(w, r);
        p = walk_protect(w);
        /* Nothing protected can be beneath a non-directory reached without following a link. */
        if (p == PROTECT_SELF || (p == PROTECT_CONTAINS && !S_ISDIR(id.mode)))
                return walk_keep_protected(w);
        /* Checked before opening it, so that an automount point is not triggered. */
        if (mount_identity_other_mount(&l->id, &id))
                return walk_meet_mount(w, id.mode);
        /* PROTECT_CONTAINS only says a protected path could be beneath: the directory stays
         * exactly when the walk really kept something in it (its level ends with 0). */
        if (S_ISDIR(id.mode))
                return walk_enter(w, dirfd(l->d), name, &l->id, false, saved);
        return remove_node(w, dirfd(l->d), true, name, id.mode);
}

static void remove_entry(Walk *w, const char *name) {
        Level *l = &w->levels[w->n_levels - 1];
        size_t saved;
        int r;

        r = path_push(&w->path, name, &saved);
        if (r < 0) {
                level_fold(l, walk_fail(w, r));
                w->aborted = true;
                return;
        }
        r = remove_entry_at(w, l, name, saved);
        if (r == WALK_ENTERED) /* the path keeps the name until that level is left */
                return;
        path_pop(&w->path, saved);
        /* Still the deepest level, but walk_enter() may have moved the stack. */
        l = &w->levels[w->n_levels - 1];
        level_entry_done(w, l, name, r);
}

/* One step of the walk: the next entry of the deepest directory, or leave it when it has none. */
static void walk_step(Walk *w) {
        Level *l = &w->levels[w->n_levels - 1];
        const char *name = NULL;
        int r = 0;

        if (!w->aborted) {
                r = level_read(l, &name);
                if (r < 0)
                        level_fold(l, walk_fail(w, r));
        }
        if (r > 0 && walk_past_deadline(w)) {
                level_fold(l, walk_fail(w, -ETIME));
                w->aborted = true;
                r = 0;
        }
        if (r <= 0)
                walk_leave(w);
        else
                remove_entry(w, name);
}

/* The target is a directory: walk it without recursion, to any depth. */
static int remove_dir_tree(Walk *w, int pfd, const char *name, const MountIdentity *parent) {
        int r;

        w->top_pfd = pfd;
        w->top_name = name;
        r = walk_enter(w, pfd, name, parent, true, w->path.len);
        if (r != WALK_ENTERED)
                return r;
        while (w->n_levels > 0)
                walk_step(w);
        return w->top_result;
}

/* The target is not a directory: a symlink or file is unlinked, never followed. */
static int remove_top_node(Walk *w, int pfd, const char *name, const MountIdentity *parent, const MountIdentity *id,
                           ProtectState p) {
        if (p == PROTECT_CONTAINS)
                return walk_keep_protected(w);
        if (w->o->keep_top) /* "empty" needs a directory; a symlink to one is not followed */
                return walk_fail(w, -ENOTDIR);
        /* A bind-mounted file: nothing to empty, and unlinking the mount point is refused anyway. */
        if (mount_identity_other_mount(parent, id))
                return walk_meet_mount(w, id->mode);
        return remove_node(w, pfd, false, name, id->mode);
}

static int open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last);

/* The target is what the plan saw, or nothing is touched: a directory bind-mounted over it (or a
 * mount put where nothing was) between the plan and the run is another tree, not the planned one.
 * The one change allowed is the planned mount point gone (the mounts phase unmounted it), leaving
 * the directory beneath it, on its parent's mount. */
static int walk_verify_top(Walk *w, const MountIdentity *parent, const MountIdentity *id) {
        const RemoveTop *e = w->o->expect_top;
        bool mount_point = mount_identity_other_mount(parent, id);

        w->s->top = (RemoveTop) { .present = true, .mount_point = mount_point, .id = *id };
        if (!e)
                return 0;
        if (!e->present && mount_point)
                return walk_fail_why(w, -ESTALE, "not there when planned, a mount point now: nothing removed");
        if (!e->present || mount_identity_same(&e->id, id) || (e->mount_point && !mount_point))
                return 0;
        return walk_fail_why(w, -ESTALE,
                             mount_point ? "another mount than the plan saw is there now (mounted over it since): "
                                           "nothing removed"
                                         : "another file or directory than the plan saw is there now: nothing removed");
}

static int remove_target(Walk *w, int root_fd) {
        cleanup_free char *symlink = NULL, *name = NULL;
        cleanup_close int pfd = -EBADF;
        const char *last = NULL;
        MountIdentity parent = {}, id = {};
        ProtectState p;
        int r;

        p = walk_protect(w);
        if (p == PROTECT_SELF)
                return walk_keep_protected(w);
        if (walk_past_deadline(w))
                return walk_fail(w, -ETIME);
        pfd = open_parent(root_fd, w->path.p, &symlink, &last);
        /* The observation, not the errno, says a component above the target is a symlink. */
        if (symlink) {
                w->s->symlink_component = TAKE_PTR(symlink);
                return walk_fail_at(w, w->s->symlink_component, pfd < 0 ? pfd : -ELOOP);
        }
        /* A copy: "last" points into the path buffer, which the walk may move. */
        if (pfd >= 0 && !(name = strdup(last)))
                return walk_fail(w, -ENOMEM);
        r = pfd < 0 ? pfd : mount_identity_at(pfd, "", 0, &parent);
        if (r >= 0)
                r = mount_identity_at(pfd, name, 0, &id);
        if (r == -ENOENT) {
                w->s->top_missing = true;
                return 0;
        }
        if (r < 0)
                return walk_fail(w, r);
        r = walk_verify_top(w, &parent, &id);
        if (r < 0)
                return r;
        if (!S_ISDIR(id.mode))
                return remove_top_node(w, pfd, name, &parent, &id, p);
        return remove_dir_tree(w, pfd, name, &parent);
}

void remove_stats_done(RemoveStats *s) {
        if (!s)
                return;
        strv_free(s->kept_mounts);
        strv_free(s->kept_protected);
        strv_free(s->kept_linked);
        free(s->first_error_path);
        free(s->symlink_component);
        *s = (RemoveStats) {};
}

int remove_tree(int root_fd, const char *node_path, const RemoveOptions *o, RemoveStats *ret_stats) {
        static const RemoveOptions no_options = {};
        RemoveStats local = {}, *s = ret_stats ?: &local;
        Walk w = { .o = o ?: &no_options, .s = s };
        int r;

        *s = (RemoveStats) {};
        r = node_path_normalize(node_path, &w.path.p);
        if (r < 0)
                return r;
        w.path.len = strlen(w.path.p);
        w.path.alloc = w.path.len + 1;
        if (w.path.len == 1) { /* never "/" itself */
                free(w.path.p);
                return -EINVAL;
        }
        /* Beneath a network or FUSE mount that does not answer, the first open would never return. */
        r = remote_fs_check(root_fd, w.path.p, NULL);
        if (r < 0) {
                (void) walk_fail_why(&w, r, "a network or FUSE file system on the way does not answer");
                free(w.path.p);
                return r;
        }
        (void) remove_target(&w, root_fd);
        free(w.path.p);
        free(w.levels);
        if (w.timed_out)
                r = -ETIME;
        else if (s->first_error < 0)
                r = s->first_error;
        else
                r = s->files + s->dirs > 0;
        remove_stats_done(&local);
        return r;
}

/* The directory holding path, by chaseat() without symlinks; *ret_symlink (optional) names the
 * component that was one. */
static int open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last) {
        size_t stop = 0;
        int fd;

        fd = chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, ret_last, ret_symlink ? &stop : NULL);
        if (fd == -ELOOP && ret_symlink) {
                *ret_symlink = strndup(path, stop);
                if (!*ret_symlink)
                        return -ENOMEM;
        }
        return fd;
}

int open_nofollow_beneath(int root_fd, const char *node_path, int flags) {
        cleanup_free char *path = NULL;
        int r;

        r = node_path_normalize(node_path, &path);
        if (r < 0)
                return r;
        return chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, flags, NULL, NULL);
}

/* The characters path_name_match() treats specially: a component without them is a literal name. */
static bool component_is_glob(const char *c) {
        return strpbrk(c, "*?[") != NULL;
}

typedef struct Expand {
        int root_fd;
        PathBuf path;
        char **matches;
} Expand;

static int expand_at(Expand *e, int dfd, char *const *comps);

/* name, an entry of dfd, matched the first of comps: on to the next one, or record a match. */
static int expand_entry(Expand *e, int dfd, const char *name, char *const *comps) {
        struct stat st;
        size_t saved;
        int r, fd;

        r = path_push(&e->path, name, &saved);
        if (r < 0)
                return r;
        r = remote_fs_check(e->root_fd, e->path.p, NULL);
        if (r < 0) {
                /* A mount that does not answer is not looked into: named as a match when it is one, for
                 * its row to say so; beneath it nothing is matched. */
                r = r == -ENOMEM ? r : comps[1] ? 0 : strv_extend(&e->matches, e->path.p);
                path_pop(&e->path, saved);
                return r;
        }
        if (!comps[1]) {
                r = RET_NERRNO(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW));
                if (r >= 0 || r == -ENOTCONN)
                        r = strv_extend(&e->matches, e->path.p);
                else if (r == -ENOENT)
                        r = 0;
        } else {
                /* A symlink (or a file) as an intermediate component simply does not match; nor does
                 * anything beneath a FUSE mount whose daemon is gone (ENOTCONN). */
                fd = chaseat(dfd, name, CHASE_NO_SYMLINKS | CHASE_MUST_BE_DIRECTORY, O_RDONLY, NULL, NULL);
                if (fd >= 0) {
                        r = expand_at(e, fd, comps + 1);
                        (void) close_nointr(fd);
                } else
                        r = fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP || fd == -ENOTCONN ? 0 : fd;
        }
        path_pop(&e->path, saved);
        return r;
}

static int expand_at(Expand *e, int dfd, char *const *comps) {
        cleanup_closedir DIR *d = NULL;
        int fd;

        if (!component_is_glob(comps[0]))
                return expand_entry(e, dfd, comps[0], comps);
        fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();

                (void) close_nointr(fd);
                return r;
        }
        for (;;) {
                struct dirent *de;
                int r;

                errno = 0;
                de = readdir(d);
                if (!de)
                        return errno != 0 ? negative_errno() : 0;
                if (dot_or_dot_dot(de->d_name) || !path_name_match(comps[0], de->d_name))
                        continue;
                r = expand_entry(e, dirfd(d), de->d_name, comps);
                if (r < 0)
                        return r;
        }
}

/* A pattern without globs is returned when it exists, and also when a component above it is a
 * symlink, so that remove_tree() reports that symlink instead of the line silently matching
 * nothing. */
static int expand_literal(Expand *e, int root_fd) {
        cleanup_free char *symlink = NULL;
        cleanup_close int pfd = -EBADF;
        const char *name = NULL;
        struct stat st;
        int r;

        r = remote_fs_check(root_fd, e->path.p, NULL);
        if (r == -ENOMEM)
                return r;
        if (streq(e->path.p, "/") || r < 0)
                return strv_extend(&e->matches, e->path.p);
        pfd = open_parent(root_fd, e->path.p, &symlink, &name);
        if (symlink)
                return strv_extend(&e->matches, e->path.p);
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return pfd;
        /* A FUSE mount whose daemon is gone (ENOTCONN) is there: its row says what it cannot do. */
        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno != ENOTCONN)
                return errno == ENOENT ? 0 : negative_errno();
        return strv_extend(&e->matches, e->path.p);
}

static int split_components(const char *path, char ***ret) {
        cleanup_strv char **l = NULL;

        for (const char *p = path + 1; *p;) {
                size_t n = strcspn(p, "/");
                cleanup_free char *c = strndup(p, n);

                if (!c || strv_extend(&l, c) < 0)
                        return -ENOMEM;
                p += n;
                p += strspn(p, "/");
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int expand_glob(Expand *e, int root_fd) {
        cleanup_strv char **comps = NULL;
        cleanup_close int fd = -EBADF;
        int r;

        r = split_components(e->path.p, &comps);
        if (r < 0)
                return r;
        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        path_pop(&e->path, 1); /* start from "/" */
        return expand_at(e, fd, comps);
}

int path_expand(int root_fd, const char *pattern, char ***ret) {
        Expand e = { .root_fd = root_fd };
        size_t n = 0;
        int r;

        if (!ret)
                return -EINVAL;
        r = node_path_normalize(pattern, &e.path.p);
        if (r < 0)
                return r;
        e.path.len = strlen(e.path.p);
        e.path.alloc = e.path.len + 1;
        r = component_is_glob(e.path.p) ? expand_glob(&e, root_fd) : expand_literal(&e, root_fd);
        free(e.path.p);
        if (r >= 0 && !e.matches) {
                e.matches = calloc(1, sizeof(char *));
                if (!e.matches)
                        r = -ENOMEM;
        }
        if (r < 0) {
                strv_free(e.matches);
                return r;
        }
        while (e.matches[n])
                n++;
        qsort(e.matches, n, sizeof(char *), strcmp_ptr);
        *ret = e.matches;
        return 0;
}
