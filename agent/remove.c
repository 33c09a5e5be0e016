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

#include "agent/path.h"
#include "agent/remove.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* Deeper than this the walk fails with -ELOOP rather than recursing on: every level costs a stack
 * frame and one open directory fd. */
#define REMOVE_MAX_DEPTH 4096U

#define PROTECT_FLAGS (FS_IMMUTABLE_FL | FS_APPEND_FL)

/* What the walk compares to tell a mount point from a plain directory. */
typedef struct NodeId {
        mode_t mode;
        dev_t dev;
        uint64_t mnt_id;
        bool has_mnt_id;
} NodeId;

/* A node path grown and cut back in place as the walk descends and returns. */
typedef struct PathBuf {
        char *p;
        size_t len, alloc;
} PathBuf;

typedef struct Walk {
        const RemoveOptions *o;
        RemoveStats *s;
        PathBuf path;
        unsigned depth;
        bool timed_out;
} Walk;

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

static bool dot_or_dot_dot(const char *n) {
        return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0));
}

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

        if (need > b->alloc) {
                size_t a = need > 2 * b->alloc ? need : 2 * b->alloc;
                char *p = realloc(b->p, a);

                if (!p)
                        return -ENOMEM;
                b->p = p;
                b->alloc = a;
        }
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

static int strv_append(char ***l, const char *s) {
        size_t n = 0;
        char **t, *c;

        while (*l && (*l)[n])
                n++;
        c = strdup(s);
        if (!c)
                return -ENOMEM;
        t = reallocarray(*l, n + 2, sizeof(char *));
        if (!t) {
                free(c);
                return -ENOMEM;
        }
        t[n] = c;
        t[n + 1] = NULL;
        *l = t;
        return 0;
}

static int strv_sort_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * UINT64_C(1000000) + (uint64_t) ts.tv_nsec / UINT64_C(1000);
}

static bool walk_past_deadline(Walk *w) {
        if (!w->timed_out && w->o->deadline_usec > 0 && now_usec() > w->o->deadline_usec)
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

/* A mount point left alone is residue: counted as a failure, -EBUSY. */
static int walk_keep_mount(Walk *w) {
        int r = strv_append(&w->s->kept_mounts, w->path.p);

        return walk_fail(w, r < 0 ? r : -EBUSY);
}

/* A protected path left alone is not a failure. */
static int walk_keep_protected(Walk *w) {
        int r = strv_append(&w->s->kept_protected, w->path.p);

        return r < 0 ? walk_fail(w, r) : 0;
}

static ProtectState walk_protect(Walk *w) {
        return w->o->protect ? w->o->protect(w->path.p, w->o->userdata) : PROTECT_NONE;
}

static int node_id_at(int dfd, const char *name, int flags, NodeId *ret) {
        struct statx sx;
        struct stat st;

        /* AT_NO_AUTOMOUNT: looking at an automount point must not mount it. */
        if (statx(dfd, name, flags | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MNT_ID, &sx) >= 0) {
                *ret = (NodeId) {
                        .mode = sx.stx_mode,
                        .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
                        .mnt_id = sx.stx_mnt_id,
                        .has_mnt_id = sx.stx_mask & STATX_MNT_ID,
                };
                return 0;
        }
        if (errno != ENOSYS && errno != EPERM)
                return negative_errno();
        /* No statx (a kernel before 4.11, or a seccomp filter saying ENOSYS or EPERM): st_dev alone. */
        if (fstatat(dfd, name, &st, flags | AT_NO_AUTOMOUNT) < 0)
                return negative_errno();
        *ret = (NodeId) { .mode = st.st_mode, .dev = st.st_dev };
        return 0;
}

/* Is child, an entry of the directory parent, on another mount? Only the mount id tells a bind
 * mount of the same file system. st_dev is compared for directories only: overlayfs reports the
 * underlying file system's st_dev for non-directories. */
static bool node_other_mount(const NodeId *parent, const NodeId *child) {
        if (parent->has_mnt_id && child->has_mnt_id && parent->mnt_id != child->mnt_id)
                return true;
        return S_ISDIR(child->mode) && parent->dev != child->dev;
}

/* 1 when an immutable or append-only flag was cleared, 0 when none was set (or the file system
 * has no such flags), -errno otherwise. */
static int fd_clear_protect_flags(int fd) {
        int attr = 0;

        if (ioctl(fd, FS_IOC_GETFLAGS, &attr) < 0)
                return errno == ENOTTY || errno == EOPNOTSUPP || errno == EINVAL ? 0 : negative_errno();
        if (!(attr & PROTECT_FLAGS))
                return 0;
        attr &= ~PROTECT_FLAGS;
        if (ioctl(fd, FS_IOC_SETFLAGS, &attr) < 0)
                return negative_errno();
        return 1;
}

/* Only regular files and directories carry these flags; opening anything else (a device node)
 * could have side effects, so it is never opened. */
static int entry_clear_protect_flags(int dfd, const char *name, mode_t mode) {
        cleanup_close int fd = -EBADF;
        struct stat st;

        if (!S_ISREG(mode) && !S_ISDIR(mode))
                return 0;
        fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                       (S_ISDIR(mode) ? O_DIRECTORY : 0));
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if ((st.st_mode & S_IFMT) != (mode & S_IFMT))
                return 0;
        return fd_clear_protect_flags(fd);
}

/* unlinkat(); when EPERM says an immutable or append-only flag stands in the way, clear it on the
 * entry and, when that directory belongs to the tree, on the directory holding it, and retry. */
static int unlink_entry(Walk *w, int dfd, bool dfd_in_tree, const char *name, mode_t mode) {
        int flags = S_ISDIR(mode) ? AT_REMOVEDIR : 0, n = 0, r;

        if (unlinkat(dfd, name, flags) >= 0)
                return 0;
        if (errno != EPERM)
                return negative_errno();
        if (dfd_in_tree) {
                r = fd_clear_protect_flags(dfd);
                if (r < 0)
                        return r;
                n += r;
        }
        r = entry_clear_protect_flags(dfd, name, mode);
        if (r < 0)
                return r;
        n += r;
        if (n == 0)
                return -EPERM;
        w->s->flags_cleared += (unsigned) n;
        return RET_NERRNO(unlinkat(dfd, name, flags));
}

/* Remove what the walk decided to remove; 1 when it is gone (or would be, in a dry run). */
static int remove_node(Walk *w, int dfd, bool dfd_in_tree, const char *name, mode_t mode) {
        int r;

        if (!w->o->dry_run) {
                r = unlink_entry(w, dfd, dfd_in_tree, name, mode);
                if (r == -ENOENT) /* gone meanwhile */
                        return 1;
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

static int remove_dir(Walk *w, int dfd, bool top, const char *name, const NodeId *parent, bool keep);

/* 1 when the entry is gone, 0 when it was kept on purpose (protected), -errno on residue. */
static int remove_entry_at(Walk *w, int dfd, const NodeId *parent, const char *name) {
        ProtectState p;
        NodeId id = {};
        int r;

        r = node_id_at(dfd, name, AT_SYMLINK_NOFOLLOW, &id);
        if (r == -ENOENT)
                return 1;
        if (r < 0)
                return walk_fail(w, r);
        p = walk_protect(w);
        /* Nothing protected can be beneath a non-directory reached without following a link. */
        if (p == PROTECT_SELF || (p == PROTECT_CONTAINS && !S_ISDIR(id.mode)))
                return walk_keep_protected(w);
        /* Checked before opening it, so that an automount point is not triggered. */
        if (node_other_mount(parent, &id))
                return walk_keep_mount(w);
        /* PROTECT_CONTAINS only says a protected path could be beneath: the directory stays
         * exactly when the walk really kept something in it (remove_contents returns 0). */
        if (S_ISDIR(id.mode))
                return remove_dir(w, dfd, false, name, parent, false);
        return remove_node(w, dfd, true, name, id.mode);
}

static int remove_entry(Walk *w, int dfd, const NodeId *parent, const char *name) {
        size_t saved;
        int r;

        r = path_push(&w->path, name, &saved);
        if (r < 0)
                return walk_fail(w, r);
        r = remove_entry_at(w, dfd, parent, name);
        path_pop(&w->path, saved);
        return r;
}

/* Empty the directory fd (taken over). 1 when everything went, 0 when only protected entries
 * stayed, the first -errno otherwise. */
static int remove_contents(Walk *w, int fd, const NodeId *id) {
        CLEANUP(closedirp) DIR *d = NULL;
        int ret = 1;

        d = fdopendir(fd);
        if (!d) {
                int r = negative_errno();

                (void) close_nointr(fd);
                return walk_fail(w, r);
        }
        for (;;) {
                struct dirent *de;
                int r;

                errno = 0;
                de = readdir(d);
                if (!de)
                        return errno != 0 ? walk_fail(w, negative_errno()) : ret;
                if (dot_or_dot_dot(de->d_name))
                        continue;
                if (walk_past_deadline(w))
                        return walk_fail(w, -ETIME);
                r = remove_entry(w, dirfd(d), id, de->d_name);
                if (r < 0 && ret >= 0)
                        ret = r;
                else if (r == 0 && ret > 0)
                        ret = 0;
                if (w->timed_out)
                        return ret;
        }
}

/* A directory: check it is on the same mount as its parent, empty it, then remove it unless it is
 * kept. The target ("top") may be a mount point itself: then it is emptied and kept. */
static int remove_dir(Walk *w, int dfd, bool top, const char *name, const NodeId *parent, bool keep) {
        cleanup_close int fd = -EBADF;
        NodeId id = {};
        int r;

        if (w->depth >= REMOVE_MAX_DEPTH)
                return walk_fail(w, -ELOOP);
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 1 : walk_fail(w, negative_errno());
        /* The authoritative check is on the fd that will be walked: nothing can swap it now. */
        r = node_id_at(fd, "", AT_EMPTY_PATH, &id);
        if (r < 0)
                return walk_fail(w, r);
        if (node_other_mount(parent, &id)) {
                if (!top)
                        return walk_keep_mount(w);
                w->s->top_is_mount = true;
                keep = true;
        }
        w->depth++;
        r = remove_contents(w, TAKE_FD(fd), &id);
        w->depth--;
        if (r <= 0)
                return r;
        if (keep)
                return 0;
        return remove_node(w, dfd, !top, name, S_IFDIR);
}

/* The target is not a directory: a symlink or file is unlinked, never followed. */
static int remove_top_node(Walk *w, int pfd, const char *name, const NodeId *parent, const NodeId *id,
                           ProtectState p) {
        if (p == PROTECT_CONTAINS)
                return walk_keep_protected(w);
        if (w->o->keep_top) /* "empty" needs a directory; a symlink to one is not followed */
                return walk_fail(w, -ENOTDIR);
        /* A bind-mounted file: nothing to empty, and unlinking the mount point is refused anyway. */
        if (node_other_mount(parent, id))
                return walk_keep_mount(w);
        return remove_node(w, pfd, false, name, id->mode);
}

/* Open the directory holding the last component of a normalised node path, one component at a
 * time with O_NOFOLLOW (mounts may be crossed, symlinks may not). ret_symlink, when given, gets
 * the node path of a symlink component. Returns the fd; *ret_last points into path. */
static int open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last);

static int remove_target(Walk *w, int root_fd) {
        cleanup_free char *symlink = NULL, *name = NULL;
        cleanup_close int pfd = -EBADF;
        const char *last = NULL;
        NodeId parent = {}, id = {};
        ProtectState p;
        int r;

        p = walk_protect(w);
        if (p == PROTECT_SELF)
                return walk_keep_protected(w);
        if (walk_past_deadline(w))
                return walk_fail(w, -ETIME);
        pfd = open_parent(root_fd, w->path.p, &symlink, &last);
        /* A copy: "last" points into the path buffer, which the walk may move. */
        if (pfd >= 0 && !(name = strdup(last)))
                return walk_fail(w, -ENOMEM);
        r = pfd < 0 ? pfd : node_id_at(pfd, "", AT_EMPTY_PATH, &parent);
        if (r >= 0)
                r = node_id_at(pfd, name, AT_SYMLINK_NOFOLLOW, &id);
        if (r == -ENOENT) {
                w->s->top_missing = true;
                return 0;
        }
        if (r == -ELOOP && symlink) {
                w->s->symlink_component = TAKE_PTR(symlink);
                return walk_fail_at(w, w->s->symlink_component, r);
        }
        if (r < 0)
                return walk_fail(w, r);
        if (!S_ISDIR(id.mode))
                return remove_top_node(w, pfd, name, &parent, &id, p);
        return remove_dir(w, pfd, true, name, &parent, w->o->keep_top);
}

void remove_stats_done(RemoveStats *s) {
        if (!s)
                return;
        strv_free(s->kept_mounts);
        strv_free(s->kept_protected);
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
        (void) remove_target(&w, root_fd);
        free(w.path.p);
        if (w.timed_out)
                r = -ETIME;
        else if (s->first_error < 0)
                r = s->first_error;
        else
                r = s->files + s->dirs > 0;
        remove_stats_done(&local);
        return r;
}

/* O_NOFOLLOW gives ELOOP for a symlink and O_DIRECTORY ENOTDIR for anything else; with both set
 * the kernel may say either, so look. */
static int open_dir_nofollow(int dfd, const char *name, int flags) {
        struct stat st;
        int fd;

        fd = openat(dfd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0)
                return fd;
        if (errno != ELOOP && errno != ENOTDIR)
                return negative_errno();
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
}

static int open_parent(int root_fd, const char *path, char **ret_symlink, const char **ret_last) {
        cleanup_close int fd = -EBADF;
        const char *p = path + 1, *slash;

        fd = openat(root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        while ((slash = strchr(p, '/'))) {
                cleanup_free char *comp = strndup(p, (size_t) (slash - p));
                int nfd;

                if (!comp)
                        return -ENOMEM;
                nfd = open_dir_nofollow(fd, comp, O_RDONLY);
                if (nfd == -ELOOP && ret_symlink)
                        *ret_symlink = strndup(path, (size_t) (slash - path));
                if (nfd < 0)
                        return nfd;
                (void) close_nointr(fd);
                fd = nfd;
                p = slash + 1;
        }
        *ret_last = p;
        return TAKE_FD(fd);
}

int open_beneath(int root_fd, const char *node_path, int flags) {
        cleanup_free char *path = NULL;
        cleanup_close int pfd = -EBADF;
        const char *name = NULL;
        int r;

        r = node_path_normalize(node_path, &path);
        if (r < 0)
                return r;
        if (streq(path, "/"))
                return RET_NERRNO(openat(root_fd, ".", flags | O_DIRECTORY | O_CLOEXEC));
        pfd = open_parent(root_fd, path, NULL, &name);
        if (pfd < 0)
                return pfd;
        return open_dir_nofollow(pfd, name, flags);
}

/* The characters path_name_match() treats specially: a component without them is a literal name. */
static bool component_is_glob(const char *c) {
        return strpbrk(c, "*?[") != NULL;
}

typedef struct Expand {
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
        if (!comps[1]) {
                r = RET_NERRNO(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW));
                if (r >= 0)
                        r = strv_append(&e->matches, e->path.p);
                else if (r == -ENOENT)
                        r = 0;
        } else {
                /* A symlink (or a file) as an intermediate component simply does not match. */
                fd = open_dir_nofollow(dfd, name, O_RDONLY);
                if (fd >= 0) {
                        r = expand_at(e, fd, comps + 1);
                        (void) close_nointr(fd);
                } else
                        r = fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP ? 0 : fd;
        }
        path_pop(&e->path, saved);
        return r;
}

static int expand_at(Expand *e, int dfd, char *const *comps) {
        CLEANUP(closedirp) DIR *d = NULL;
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
        cleanup_close int pfd = -EBADF;
        const char *name = NULL;
        struct stat st;

        if (streq(e->path.p, "/"))
                return strv_append(&e->matches, "/");
        pfd = open_parent(root_fd, e->path.p, NULL, &name);
        if (pfd == -ELOOP)
                return strv_append(&e->matches, e->path.p);
        if (pfd == -ENOENT || pfd == -ENOTDIR)
                return 0;
        if (pfd < 0)
                return pfd;
        if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : negative_errno();
        return strv_append(&e->matches, e->path.p);
}

static int split_components(const char *path, char ***ret) {
        cleanup_strv char **l = NULL;

        for (const char *p = path + 1; *p;) {
                size_t n = strcspn(p, "/");
                cleanup_free char *c = strndup(p, n);

                if (!c || strv_append(&l, c) < 0)
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
        Expand e = {};
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
        qsort(e.matches, n, sizeof(char *), strv_sort_cmp);
        *ret = e.matches;
        return 0;
}
