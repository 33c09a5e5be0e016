/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file the files phase rewrites or removes whole, never following a symlink, never writing into the
 * inode, never crossing a mount.
 *
 * The file is never written in place: the new content goes into a fresh file in the same directory,
 * which then takes the old one's name with RENAME_EXCHANGE. After the exchange the old inode is under
 * the temporary name, where it is checked to be the very file that was read: had the name been
 * swapped in between, the exchange is undone and the action fails. So a hard link, a bind mount, a
 * symlink or a file replaced between the plan and the run is reported, never edited. */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/os/fileio.h"
#include "agent/os/remove.h"
#include "agent/phases/files/files-rewrite.h"
#include "errno-util.h"
#include "macro.h"
#include "mountid-util.h"
#include "string-util.h"

void rewrite_file_done(RewriteFile *f) {
        if (f->dir_fd >= 0)
                (void) close(f->dir_fd);
        if (f->fd >= 0)
                (void) close(f->fd);
        free(f->text);
        *f = (RewriteFile) REWRITE_FILE_INIT;
}

static const char *base_name(const char *path) {
        return strrchr(path, '/') + 1;
}

/* The file and its directory are on the same mount: not a bind-mounted file (a container's
 * resolv.conf), whose name a rename could not replace and whose content belongs to another tree. */
static int check_same_mount(int dir_fd, int fd, char **ret_msg) {
        MountIdentity dir, file;
        int r;

        r = mount_identity_at(dir_fd, "", 0, &dir);
        if (r >= 0)
                r = mount_identity_at(fd, "", 0, &file);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot stat it or its directory: %s", strerror(-r));
        /* Without a mount id (no statx, no /proc) only the device can tell: a file on another one is refused. */
        if (mount_identity_other_mount(&dir, &file) ||
            (!(dir.has_mount_id && file.has_mount_id) && dir.dev != file.dev))
                return set_errmsg(ret_msg, -EXDEV, "it is a mount point (a file mounted over it): not edited");
        return 0;
}

static int open_dir(int root_fd, const char *path, RewriteFile *f, char **ret_msg) {
        cleanup_free char *dir = strndup(path, (size_t) (base_name(path) - 1 - path));

        if (!dir)
                return -ENOMEM;
        f->dir_fd = open_nofollow_beneath(root_fd, isempty(dir) ? "/" : dir, O_RDONLY);
        if (f->dir_fd == -ENOENT)
                return 0;
        if (f->dir_fd == -ELOOP || f->dir_fd == -ENOTDIR)
                return set_errmsg(ret_msg, -ELOOP, "%s (or a directory above it) is a symlink: not followed, kept",
                                  dir);
        if (f->dir_fd < 0)
                return set_errmsg(ret_msg, f->dir_fd, "cannot open %s: %s", dir, strerror(-f->dir_fd));
        return 1;
}

int rewrite_file_open(int root_fd, const char *path, size_t max, bool dir_owner, RewriteFile *f, char **ret_msg) {
        cleanup_free char *why = NULL;
        struct stat st, dst;
        int r;

        r = open_dir(root_fd, path, f, ret_msg);
        if (r <= 0)
                return r;
        if (fstatat(f->dir_fd, base_name(path), &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : set_errmsg(ret_msg, negative_errno(), "cannot stat it: %m");
        if (S_ISLNK(st.st_mode))
                return set_errmsg(ret_msg, -ELOOP, "it is a symlink: not followed, kept");
        if (dir_owner && fstat(f->dir_fd, &dst) < 0)
                return set_errmsg(ret_msg, negative_errno(), "cannot stat its directory: %m");
        f->fd = fileio_open_regular_by(f->dir_fd, base_name(path), O_RDONLY, dir_owner ? dst.st_uid : 0, &f->st, &why);
        if (f->fd == -ENOENT)
                return 0;
        if (f->fd < 0)
                return set_errmsg(ret_msg, f->fd, "%s: not edited", why ?: strerror(-f->fd));
        r = check_same_mount(f->dir_fd, f->fd, ret_msg);
        if (r < 0)
                return r;
        r = fileio_read_regular(f->fd, max, &f->text, &f->size, NULL);
        if (r == -EFBIG)
                return set_errmsg(ret_msg, r, "it is larger than %zu KiB: not edited", max / 1024);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read it: %s", strerror(-r));
        return 1;
}

static bool same_inode(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The file as read is the file under its name, unchanged since it was read. */
static int check_unchanged(const RewriteFile *f, const char *name, char **ret_msg) {
        struct stat now, named;

        if (fstat(f->fd, &now) < 0 || fstatat(f->dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) < 0)
                return set_errmsg(ret_msg, negative_errno(), "cannot stat it again: %m");
        if (!same_inode(&named, &f->st))
                return set_errmsg(ret_msg, -ESTALE, "it was replaced while being edited: not edited");
        if (now.st_size != f->st.st_size || now.st_mtim.tv_sec != f->st.st_mtim.tv_sec ||
            now.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec || now.st_nlink != 1)
                return set_errmsg(ret_msg, -ESTALE, "it changed while being edited: not edited");
        return 0;
}

static int exchange(int dir_fd, const char *a, const char *b) {
        return RET_NERRNO((int) syscall(SYS_renameat2, dir_fd, a, dir_fd, b, RENAME_EXCHANGE));
}

/* Swap the new file in. After RENAME_EXCHANGE the old inode is under tmp: it must be the one read,
 * else whatever was swapped in under the name between the check and the exchange goes back. */
static int swap_in(const RewriteFile *f, const char *name, const char *tmp, char **ret_msg) {
        struct stat old;
        int r;

        r = check_unchanged(f, name, ret_msg);
        if (r < 0)
                return r;
        r = exchange(f->dir_fd, tmp, name);
        if (r == -EINVAL || r == -ENOSYS) {
                /* A file system without RENAME_EXCHANGE: a plain rename, checked just before. */
                r = RET_NERRNO(renameat(f->dir_fd, tmp, f->dir_fd, name));
                if (r < 0)
                        return set_errmsg(ret_msg, r, "cannot rename the new file into place: %s", strerror(-r));
                return RET_NERRNO(fsync(f->dir_fd));
        }
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot exchange the new file with it: %s", strerror(-r));
        if (fstatat(f->dir_fd, tmp, &old, AT_SYMLINK_NOFOLLOW) < 0 || !same_inode(&old, &f->st)) {
                if (exchange(f->dir_fd, tmp, name) < 0)
                        return set_errmsg(ret_msg, -ESTALE,
                                          "it was replaced during the exchange, and the new "
                                          "file stays under its name; the other is at %s",
                                          tmp);
                return set_errmsg(ret_msg, -ESTALE, "it was replaced during the exchange: put back, not edited");
        }
        /* The old inode goes; fileio_unlink_if_same() leaves anything else in place. */
        (void) fileio_unlink_if_same(f->dir_fd, tmp, &f->st);
        return RET_NERRNO(fsync(f->dir_fd));
}

int rewrite_file_replace(const RewriteFile *f, const char *path, const void *data, size_t size, char **ret_msg) {
        const char *name = base_name(path);
        char tmp[NAME_MAX + 1];
        struct stat tmp_st;
        int r;

        r = fileio_write_tmp(f->dir_fd, name, data, size, 0600, f->fd, tmp, sizeof tmp, &tmp_st);
        if (r < 0)
                return set_errmsg(ret_msg, r,
                                  "cannot write the new content beside it with all of its metadata (owner, mode, "
                                  "xattrs, ACLs, inode flags): %s: not edited",
                                  strerror(-r));
        r = swap_in(f, name, tmp, ret_msg);
        if (r < 0)
                (void) fileio_unlink_if_same(f->dir_fd, tmp, &tmp_st);
        return r;
}

int rewrite_file_unlink(const RewriteFile *f, const char *path, char **ret_msg) {
        int r;

        r = check_unchanged(f, base_name(path), ret_msg);
        if (r < 0)
                return r;
        r = fileio_unlink_if_same(f->dir_fd, base_name(path), &f->st);
        if (r == -ESTALE)
                return set_errmsg(ret_msg, r, "it was replaced while being removed: kept");
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot remove it: %s", strerror(-r));
        return RET_NERRNO(fsync(f->dir_fd));
}

Action *rewrite_action_of(const Plan *plan, const ActionOps *ops, const char *path) {
        for (size_t i = 0; i < plan->n_actions; i++)
                if (plan->actions[i]->ops == ops && streq(plan->actions[i]->target, path))
                        return plan->actions[i];
        return NULL;
}

int rewrite_action_join(Action *a, const ManifestEntry *e, bool *system_path) {
        char *reason = strprintf("%s; %s:%u", a->reason, e->file, e->line);

        if (!reason)
                return -ENOMEM;
        free(a->reason);
        a->reason = reason;
        /* Every line needs the opt-in: the action reaches the system path only if each does. */
        *system_path = *system_path && e->system_path;
        return 0;
}
