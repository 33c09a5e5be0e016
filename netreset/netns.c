/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Named network namespaces (ip netns): listing, deleting the name, finding processes still inside. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "alloc-util.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/netns.h"
#include "string-util.h"
#include "strv.h"
#include "chase.h"
#include "mountid-util.h"

#define NETNS_RUN_DIR "/run/netns"
#define NETNS_VAR_RUN_DIR "/var/run/netns"
/* A name mounted over itself a few times still goes; past this something keeps re-mounting it. */
#define NETNS_UNMOUNT_MAX 16

typedef struct NetnsProc {
        dev_t dev;
        ino_t ino;
        pid_t pid;
} NetnsProc;

struct NetnsProcs {
        NetnsProc *procs; /* sorted by (dev, ino, pid) */
        size_t n, allocated;
};

int netns_dirs(char ***ret) {
        cleanup_free char *run = NULL;
        cleanup_free char *var_run = NULL;
        cleanup_strv char **l = NULL;
        int r;

        r = strv_extend(&l, NETNS_RUN_DIR);
        if (r < 0)
                return r;
        /* Usually /var/run is a symlink to /run and both name the same directory. */
        run = realpath(NETNS_RUN_DIR, NULL);
        var_run = realpath(NETNS_VAR_RUN_DIR, NULL);
        if (var_run && !streq_ptr(run, var_run)) {
                r = strv_extend(&l, NETNS_VAR_RUN_DIR);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int netns_list(const char *dir, const char *pattern, char ***ret) {
        cleanup_closedir DIR *d = NULL;
        cleanup_strv char **l = NULL;

        d = opendir(dir);
        if (!d && errno != ENOENT)
                return negative_errno();
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        /* FNM_NOESCAPE: a backslash is an ordinary character, the manifest's one rule for every glob. */
        if (d) {
                FOREACH_DIRENT(de, d)
                if (fnmatch(pattern, de->d_name, FNM_NOESCAPE) == 0 && strv_extend(&l, de->d_name) < 0)
                        return -ENOMEM;
        }
        *ret = strv_sort(TAKE_PTR(l));
        return 0;
}

/* The directory holding path (a host path), reached by chaseat() without any symlink: a name is
 * deleted only through this fd, so a directory swapped for a symlink on the way is refused. */
static int open_parent(const char *path, const char **ret_name) {
        cleanup_close int root_fd = -EBADF;

        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return negative_errno();
        return chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_RDONLY, ret_name, NULL);
}

/* Detach the topmost mount on name, through a handle on exactly what was checked: an nsfs mount,
 * not a symlink, not some other file system. 1 when detached, 0 when name is no mount point. */
static int detach_one(int dfd, const MountIdentity *dir, const char *path, const char *name, char **reterr_msg) {
        cleanup_close int fd = -EBADF;
        char proc[sizeof("/proc/self/fd/") + 12];
        struct statfs sfs;
        MountIdentity id;
        int r;

        fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        r = mount_identity_at(fd, "", 0, &id);
        if (r < 0)
                return r;
        if (S_ISLNK(id.mode))
                return set_errmsg(reterr_msg, -ELOOP, "%s is now a symlink, not a namespace: left alone", path);
        /* The device too: nsfs has its own, whether or not the kernel says the mount id. */
        if (!mount_identity_other_mount(dir, &id) && id.dev == dir->dev)
                return 0;
        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        if (sfs.f_type != NSFS_MAGIC)
                return set_errmsg(reterr_msg, -EMEDIUMTYPE,
                                  "%s has a mount of another file system on it, not a namespace: left alone", path);
        /* Not UMOUNT_NOFOLLOW: that would name the magic link in /proc, not the mount. */
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        if (umount2(proc, MNT_DETACH) < 0)
                return negative_errno();
        return 1;
}

int netns_delete(const char *path, char **reterr_msg) {
        cleanup_close int dfd = -EBADF;
        const char *name = NULL;
        bool changed = false;
        MountIdentity dir;
        struct stat st;
        int r;

        dfd = open_parent(path, &name);
        if (dfd == -ENOENT)
                return 0;
        if (dfd == -ELOOP || dfd == -ENOTDIR)
                return set_errmsg(reterr_msg, dfd, "the directory of %s is now %s: left alone", path,
                                  dfd == -ELOOP ? "a symlink" : "no directory");
        if (dfd < 0)
                return dfd;
        r = mount_identity_at(dfd, "", 0, &dir);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < NETNS_UNMOUNT_MAX; i++) {
                r = detach_one(dfd, &dir, path, name, reterr_msg);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                changed = true;
        }
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? changed : negative_errno();
        if (S_ISLNK(st.st_mode))
                return set_errmsg(reterr_msg, -ELOOP, "%s is now a symlink, not a namespace: left alone", path);
        if (unlinkat(dfd, name, 0) < 0)
                return errno == ENOENT ? changed : negative_errno();
        return 1;
}

/* Open path itself, a symlink included, never what it points to. */
static int open_nofollow(const char *path) {
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

int netns_is_bound(const char *path) {
        cleanup_close int fd = open_nofollow(path);
        struct statfs sfs;

        if (fd < 0)
                return fd;
        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        return sfs.f_type == NSFS_MAGIC;
}

NetnsProcs *netns_procs_free(NetnsProcs *p) {
        if (!p)
                return NULL;
        free(p->procs);
        return mfree(p);
}

static int cmp_proc(const void *a, const void *b) {
        const NetnsProc *x = a, *y = b;

        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        if (x->ino != y->ino)
                return x->ino < y->ino ? -1 : 1;
        return (x->pid > y->pid) - (x->pid < y->pid);
}

NetnsProcs *netns_procs_new(void) {
        return calloc(1, sizeof(NetnsProcs));
}

int netns_procs_add(NetnsProcs *p, dev_t dev, ino_t ino, pid_t pid) {
        if (GREEDY_REALLOC(p->procs, p->allocated, p->n + 1) < 0)
                return -ENOMEM;
        p->procs[p->n++] = (NetnsProc) { dev, ino, pid };
        return 0;
}

void netns_procs_seal(NetnsProcs *p) {
        if (p->n > 0)
                qsort(p->procs, p->n, sizeof *p->procs, cmp_proc);
}

static int scan_dir(DIR *d, NetnsProcs *p) {
        FOREACH_DIRENT(de, d) {
                char path[sizeof de->d_name + 8];
                struct stat st;

                if (!isdigit_str(de->d_name))
                        continue;
                snprintf(path, sizeof path, "%s/ns/net", de->d_name);
                /* Processes exit while we look, and kernel threads' links cannot be followed. */
                if (fstatat(dirfd(d), path, &st, 0) < 0)
                        continue;
                if (netns_procs_add(p, st.st_dev, st.st_ino, (pid_t) atoi(de->d_name)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* netreset cannot use the agent's /proc module (agent/os/proc.c: libraries never include agent/): a
 * minimal reader of its own, for tools and tests (proc_dir lets them hand it a fake /proc). The
 * agent's plan builds the set from the /proc it has read once (netns_procs_new()). */
int netns_procs_scan(const char *proc_dir, NetnsProcs **ret) {
        cleanup_closedir DIR *d = NULL;
        NetnsProcs *p;
        int r;

        p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        d = opendir(proc_dir ?: "/proc");
        if (!d) {
                r = negative_errno();
                netns_procs_free(p);
                return r;
        }
        r = scan_dir(d, p);
        if (r < 0) {
                netns_procs_free(p);
                return r;
        }
        netns_procs_seal(p);
        *ret = p;
        return 0;
}

int netns_procs_inside(const NetnsProcs *p, const char *path, pid_t *pids, size_t n_pids) {
        cleanup_close int fd = open_nofollow(path);
        NetnsProc key = {};
        struct stat st;
        size_t lo = 0, hi = p->n;
        int count = 0;

        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        key = (NetnsProc) { st.st_dev, st.st_ino, 0 };
        /* The first entry not below (dev, ino, 0): the start of this namespace's processes. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (cmp_proc(&p->procs[mid], &key) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i < p->n && p->procs[i].dev == st.st_dev && p->procs[i].ino == st.st_ino; i++) {
                if ((size_t) count < n_pids)
                        pids[count] = p->procs[i].pid;
                count++;
        }
        return count;
}
