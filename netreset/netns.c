/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Named network namespaces (ip netns): listing, deleting the name, finding processes still inside. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/netns.h"
#include "string-util.h"

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
        NetnsProc *procs;       /* sorted by (dev, ino, pid) */
        size_t n;
};

static int strv_push(char ***l, size_t *n, const char *s) {
        char *copy = strdup(s);
        char **v;

        if (!copy)
                return -ENOMEM;
        v = reallocarray(*l, *n + 2, sizeof(char *));
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        v[(*n)++] = copy;
        v[*n] = NULL;
        *l = v;
        return 0;
}

int netns_dirs(char ***ret) {
        cleanup_free char *run = NULL;
        cleanup_free char *var_run = NULL;
        cleanup_strv char **l = NULL;
        size_t n = 0;
        int r;

        r = strv_push(&l, &n, NETNS_RUN_DIR);
        if (r < 0)
                return r;
        /* Usually /var/run is a symlink to /run and both name the same directory. */
        run = realpath(NETNS_RUN_DIR, NULL);
        var_run = realpath(NETNS_VAR_RUN_DIR, NULL);
        if (var_run && !streq_ptr(run, var_run)) {
                r = strv_push(&l, &n, NETNS_VAR_RUN_DIR);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

int netns_list(const char *dir, const char *pattern, char ***ret) {
        char **l = NULL;
        struct dirent *de;
        size_t n = 0;
        DIR *d;
        int r = 0;

        d = opendir(dir);
        if (!d && errno != ENOENT)
                return negative_errno();
        l = calloc(1, sizeof(char *));
        if (!l)
                r = -ENOMEM;
        /* FNM_NOESCAPE: a backslash is an ordinary character, the manifest's one rule for every glob. */
        while (d && r >= 0 && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, "..") &&
                    fnmatch(pattern, de->d_name, FNM_NOESCAPE) == 0)
                        r = strv_push(&l, &n, de->d_name);
        if (d)
                closedir(d);
        if (r < 0) {
                strv_free(l);
                return r;
        }
        qsort(l, n, sizeof(char *), cmp_str);
        *ret = l;
        return 0;
}

int netns_delete(const char *path) {
        bool changed = false;

        for (unsigned i = 0; i < NETNS_UNMOUNT_MAX; i++) {
                if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0) {
                        if (errno == EINVAL || errno == ENOENT)
                                break;
                        return negative_errno();
                }
                changed = true;
        }
        if (unlink(path) < 0) {
                if (errno != ENOENT)
                        return negative_errno();
        } else
                changed = true;
        return changed;
}

int netns_is_bound(const char *path) {
        struct statfs sfs;

        if (statfs(path, &sfs) < 0)
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

static bool is_pid(const char *s) {
        return *s && strspn(s, "0123456789") == strlen(s);
}

static int scan_dir(DIR *d, NetnsProcs *p) {
        size_t allocated = 0;
        struct dirent *de;

        while ((de = readdir(d))) {
                char path[sizeof de->d_name + 8];
                struct stat st;

                if (!is_pid(de->d_name))
                        continue;
                snprintf(path, sizeof path, "%s/ns/net", de->d_name);
                /* Processes exit while we look, and kernel threads' links cannot be followed. */
                if (fstatat(dirfd(d), path, &st, 0) < 0)
                        continue;
                if (p->n == allocated) {
                        NetnsProc *n = reallocarray(p->procs, allocated ? allocated * 2 : 256, sizeof *n);

                        if (!n)
                                return -ENOMEM;
                        p->procs = n;
                        allocated = allocated ? allocated * 2 : 256;
                }
                p->procs[p->n++] = (NetnsProc) { st.st_dev, st.st_ino, (pid_t) atoi(de->d_name) };
        }
        return 0;
}

int netns_procs_scan(const char *proc_dir, NetnsProcs **ret) {
        NetnsProcs *p;
        DIR *d;
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
        closedir(d);
        if (r < 0) {
                netns_procs_free(p);
                return r;
        }
        if (p->n > 0)
                qsort(p->procs, p->n, sizeof *p->procs, cmp_proc);
        *ret = p;
        return 0;
}

int netns_procs_inside(const NetnsProcs *p, const char *path, pid_t *pids, size_t n_pids) {
        NetnsProc key = {};
        struct stat st;
        size_t lo = 0, hi = p->n;
        int count = 0;

        if (stat(path, &st) < 0)
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
