/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroups phase, right after the processes phase (rmdir(2) takes a cgroup only once its
 * processes are gone). kubelet's cgroupfs driver and runc make a tree per hierarchy
 * (kubepods/burstable/pod<UID>/<container>) that nothing removes once kubelet is gone: kubeadm reset
 * leaves it, and the rejoined kubelet then starts from the old pods' limits and counters. A "cgroup
 * NAME" line names such a tree at the top of every mounted cgroup hierarchy (as this process's cgroup
 * namespace shows it); its row removes the tree deepest first with rmdir(2), which the kernel refuses
 * for a cgroup that still holds a process: the row says which, and nothing is forced. Trees a
 * systemd driver made (kubepods.slice) belong to their slice units: "unit kubepods.slice stop" ends
 * them through systemd, and a "cgroup" line only takes what that left. Cgroups have no file-system
 * root: with --root the phase runs only when --phases names it (its row in the phase table). */

#include <fcntl.h>
#include <stdlib.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "agent/config/manifest.h"
#include "agent/engine/context.h"
#include "agent/os/mountinfo.h"
#include "agent/phases/phases.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define PHASE "cgroups"
/* kubepods/QOS/pod/container is four levels; runc's nested cgroups and systemd's slices add a few. */
#define CGROUP_DEPTH_MAX 16U
/* A process killed a moment ago leaves its cgroup a little after its pidfd says it is gone. */
#define CGROUP_BUSY_RETRIES 20U
#define CGROUP_BUSY_WAIT_USEC (50U * 1000U)

typedef struct CgroupData {
        char *hierarchy; /* the mount point of the hierarchy */
        char *name;      /* the top-level cgroup beneath it */
        dev_t dev;       /* the hierarchy's super block, as planned */
} CgroupData;

typedef struct CgroupCount {
        unsigned cgroups, procs;
        pid_t first_pid;
} CgroupCount;

static void cgroup_data_free(void *p) {
        CgroupData *d = p;

        if (!d)
                return;
        free(d->hierarchy);
        free(d->name);
        free(d);
}

static bool is_cgroup_fs(int fd) {
        struct statfs sfs;

        return fstatfs(fd, &sfs) >= 0 && (sfs.f_type == (typeof(sfs.f_type)) CGROUP_SUPER_MAGIC ||
                                          sfs.f_type == (typeof(sfs.f_type)) CGROUP2_SUPER_MAGIC);
}

/* The hierarchy's root directory, checked to be a cgroup file system of the planned super block. */
static int open_hierarchy(const CgroupData *d, char **ret_msg) {
        struct stat st;
        int fd;

        fd = open(d->hierarchy, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return set_errmsg(ret_msg, negative_errno(), "cannot open %s: %m", d->hierarchy);
        if (!is_cgroup_fs(fd) || fstat(fd, &st) < 0 || st.st_dev != d->dev) {
                close(fd);
                return set_errmsg(ret_msg, -ESTALE, "%s is no longer the cgroup hierarchy the plan saw", d->hierarchy);
        }
        return fd;
}

/* The processes a cgroup holds: cgroup.procs lists one PID a line (it reports a size of 0). */
static void count_procs(int dir_fd, CgroupCount *c) {
        char buf[4096];
        bool at_start = true;
        ssize_t n;
        int fd;

        fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                for (ssize_t i = 0; i < n; i++) {
                        if (at_start && c->procs == 0 && buf[i] >= '0' && buf[i] <= '9')
                                c->first_pid = c->first_pid * 10 + (buf[i] - '0');
                        if (buf[i] == '\n') {
                                c->procs++;
                                at_start = false;
                        }
                }
        close(fd);
}

/* Count (remove == false) or remove (remove == true) the tree at dir_fd/name, deepest first, on
 * the super block dev only. Removal goes on past a busy cgroup so that one held cgroup does not
 * keep its emptied siblings, but not up to its ancestors, which cannot go; the first error is
 * returned. Only a cgroup that lists no process is waited for (its last process is exiting). */
static int cgroup_walk(int dir_fd, const char *name, dev_t dev, unsigned depth, bool remove, CgroupCount *c) {
        cleanup_closedir DIR *d = NULL;
        struct stat st;
        int fd, r = 0;

        if (depth > CGROUP_DEPTH_MAX)
                return -ELOOP;
        fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (fstat(fd, &st) < 0 || st.st_dev != dev) {
                r = st.st_dev != dev ? -EXDEV : negative_errno();
                close(fd);
                return r;
        }
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return negative_errno();
        }
        FOREACH_DIRENT(de, d) {
                int k;

                if (de->d_type != DT_DIR)
                        continue;
                k = cgroup_walk(dirfd(d), de->d_name, dev, depth + 1, remove, c);
                if (r == 0 && k < 0)
                        r = k;
        }
        c->cgroups++;
        if (!remove || r < 0) {
                count_procs(dirfd(d), c);
                return r;
        }
        for (unsigned i = 0; unlinkat(dir_fd, name, AT_REMOVEDIR) < 0; i++) {
                unsigned before = c->procs;

                if (errno == ENOENT)
                        break;
                r = negative_errno();
                if (r != -EBUSY || i >= CGROUP_BUSY_RETRIES)
                        return r;
                count_procs(dirfd(d), c);
                if (c->procs > before)
                        return r;
                (void) usleep(CGROUP_BUSY_WAIT_USEC);
        }
        return 0;
}

static char *count_string(const CgroupCount *c) {
        if (c->procs == 0)
                return strprintf("%u cgroup%s, no process", c->cgroups, c->cgroups == 1 ? "" : "s");
        return strprintf("%u cgroup%s, %u process%s (PID %d first)", c->cgroups, c->cgroups == 1 ? "" : "s", c->procs,
                         c->procs == 1 ? "" : "es", (int) c->first_pid);
}

static int cgroup_apply(Action *a, Context *ctx, char **ret_msg) {
        const CgroupData *d = a->data;
        CgroupCount c = { 0 };
        struct stat st;
        int fd, r;

        (void) ctx;
        if (!d) /* the row that says no hierarchy held it */
                return 0;
        fd = open_hierarchy(d, ret_msg);
        if (fd < 0)
                return fd;
        if (fstatat(fd, d->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                r = errno == ENOENT ? 0 : set_errmsg(ret_msg, negative_errno(), "cannot stat %s: %m", a->target);
                close(fd);
                return r;
        }
        r = cgroup_walk(fd, d->name, d->dev, 0, true, &c);
        close(fd);
        if (r == -EBUSY && c.procs > 0)
                return set_errmsg(ret_msg, r, "still holds %u process%s (PID %d first): left", c.procs,
                                  c.procs == 1 ? "" : "es", (int) c.first_pid);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot remove it: %s", strerror(-r));
        return 1;
}

static int cgroup_check(Action *a, Context *ctx, char **ret_msg) {
        const CgroupData *d = a->data;
        CgroupCount c = { 0 };
        int fd, r;

        (void) ctx;
        if (!d)
                return 0;
        fd = open_hierarchy(d, ret_msg);
        if (fd < 0)
                return fd;
        r = cgroup_walk(fd, d->name, d->dev, 0, false, &c);
        close(fd);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read it: %s", strerror(-r));
        if (c.cgroups == 0)
                return 0;
        *ret_msg = count_string(&c);
        return 1;
}

static const ActionOps cgroup_ops = {
        .kind = "cgroup",
        .apply = cgroup_apply,
        .check = cgroup_check,
        .free_data = cgroup_data_free,
};

/* A row for NAME in the hierarchy mounted at e, when it holds one. */
static int plan_hierarchy(Plan *plan, const MountEntry *e, const char *name, const char *reason, bool *found) {
        CgroupData *d;
        CgroupCount c = { 0 };
        cleanup_free char *target = NULL, *count = NULL;
        struct stat st;
        Action *a;
        int fd, r;

        fd = open(e->mount_point, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return 0; /* hidden or gone: not a hierarchy this process can act on */
        if (!is_cgroup_fs(fd) || fstat(fd, &st) < 0 || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode)) {
                close(fd);
                return 0;
        }
        r = cgroup_walk(fd, name, st.st_dev, 0, false, &c);
        close(fd);
        *found = true;
        target = strprintf("%s/%s", e->mount_point, name);
        count = count_string(&c);
        d = calloc(1, sizeof *d);
        if (!target || !count || !d || !(d->hierarchy = strdup(e->mount_point)) || !(d->name = strdup(name))) {
                cgroup_data_free(d);
                return -ENOMEM;
        }
        d->dev = st.st_dev;
        a = plan_add(plan, &cgroup_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        a->present = true;
        if (r < 0)
                return action_set_detail(a, "cannot read all of it (%s): remove what it can", strerror(-r));
        return action_set_detail(a, "%s: remove deepest first%s", count,
                                 c.procs > 0 ? ", once the processes above are gone" : "");
}

static bool seen_dev(const MountEntry *const *seen, size_t n, const MountEntry *e) {
        for (size_t i = 0; i < n; i++)
                if (seen[i]->major == e->major && seen[i]->minor == e->minor)
                        return true;
        return false;
}

static int plan_line(Plan *plan, const MountTable *t, const ManifestEntry *m) {
        cleanup_free const MountEntry **seen = NULL;
        cleanup_free char *reason = NULL;
        bool found = false;
        size_t n = 0;
        Action *a;
        int r = 0;

        reason = manifest_entry_reason(m);
        seen = calloc(t->n_entries + 1, sizeof *seen);
        if (!reason || !seen)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < t->n_entries; i++) {
                const MountEntry *e = t->entries + i;

                /* One row per hierarchy: a bind mount of one shows the same cgroups again. */
                if ((!streq(e->fstype, "cgroup") && !streq(e->fstype, "cgroup2")) || seen_dev(seen, n, e) ||
                    mount_table_covering(t, e))
                        continue;
                seen[n++] = e;
                r = plan_hierarchy(plan, e, m->args[0], reason, &found);
        }
        if (r < 0 || found)
                return r;
        a = plan_add(plan, &cgroup_ops, PHASE, m->args[0], reason, NULL);
        if (!a)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "no mounted cgroup hierarchy holds it");
}

int phase_cgroups_plan(Context *ctx, Plan *plan, char **reterr) {
        MountTable *t = NULL;
        int r = 0;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_CGROUP) {
                if (!t && (r = mount_table_read(&t)) < 0)
                        break;
                r = plan_line(plan, t, e);
                if (r < 0)
                        break;
        }
        mount_table_free(t);
        return r < 0 ? set_errmsg(reterr, r, "cannot plan the cgroups: %s", strerror(-r)) : 0;
}
