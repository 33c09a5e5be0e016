/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's rows for the CNI's own cgroup2 and bpffs mounts, unmounted once nothing uses them. */

/* cilium mounts cgroup2 at /run/cilium/cgroupv2 for its socket load balancer ("cilium cleanup"
 * unmounts it) and, where the host has none, its own bpffs (/run/cilium/bpffs). Once the CNI's
 * programs and pins are gone such a mount is unmounted, but only when nothing else uses it: no
 * other program attached to its cgroup, no pin left in it, no process holding it. The host's own
 * /sys/fs/cgroup and /sys/fs/bpf are never unmounted. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/mount-util.h"
#include "agent/os/node-path.h"
#include "agent/phases/network/network-bpf-cgroup.h"
#include "agent/phases/network/network-bpf-mounts.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"
#include "strv.h"

#define PHASE "network"

typedef struct MountData {
        char *path;
        bool cgroup; /* cgroup2; else bpffs */
        MountSeen seen;
} MountData;

static void mount_data_free(void *p) {
        MountData *d = p;

        if (d)
                free(d->path);
        free(d);
}

static bool host_mount(const char *path) {
        return path_startswith_dir(path, "/sys/fs/cgroup") || streq(path, "/sys/fs/bpf");
}

/* "program NAME (id N, TYPE)" of the first program on the cgroup, NULL when there is none. */
static int cgroup_first_prog(int fd, char **ret) {
        cleanup_free BpfCgroupProg *progs = NULL;
        size_t n = 0;
        int k;

        *ret = NULL;
        k = bpf_cgroup_query(fd, &progs, &n);
        if (k < 0 || n == 0)
                return k;
        *ret = strprintf("program %s (id %u, %s) is still attached there", strna(progs[0].prog_name), progs[0].prog_id,
                         strna(bpf_cgroup_attach_type_to_string(progs[0].attach_type)));
        return *ret ? 1 : -ENOMEM;
}

/* The first pinned object beneath dfd (directories alone do not count): 1 found, 0 none. Takes dfd.
 * The kernel's own preloaded iterators (CONFIG_BPF_PRELOAD), which every new bpffs shows at its
 * root, are not pins anyone made. */
static int bpffs_has_pin(int dfd, bool top, char **ret) {
        cleanup_closedir DIR *d = fdopendir(dfd);
        int k;

        if (!d) {
                k = -errno;
                close(dfd);
                return k;
        }
        FOREACH_DIRENT(de, d) {
                struct stat st;
                int sub;

                if (top && (streq(de->d_name, "maps.debug") || streq(de->d_name, "progs.debug")))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISDIR(st.st_mode)) {
                        *ret = strprintf("the pin %s is still there", de->d_name);
                        return *ret ? 1 : -ENOMEM;
                }
                sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                k = bpffs_has_pin(sub, false, ret);
                if (k != 0)
                        return k;
        }
        return 0;
}

/* Who holds path (an open file, its working or root directory, a mapping), or NULL. */
static char *mount_holder(const char *path) {
        cleanup_free char *l = proc_path_holders(path, 1);

        return l ? strprintf("held by PID %s", l) : NULL;
}

/* Why the mount must stay, or NULL (and 0) when nothing uses it any more. */
static int mount_in_use(const MountData *d, char **ret_why) {
        cleanup_close int root_fd = -EBADF, fd = -EBADF;
        int k;

        *ret_why = NULL;
        /* Not through a symlink: what is asked about is the mount the plan saw at that path. */
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        fd = open_nofollow_beneath(root_fd, d->path, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        k = d->cgroup ? cgroup_first_prog(fd, ret_why) : bpffs_has_pin(TAKE_FD(fd), true, ret_why);
        if (k != 0)
                return k;
        *ret_why = mount_holder(d->path);
        return !!*ret_why;
}

static int mount_apply(Action *a, Context *ctx, char **ret_msg) {
        const MountData *d = a->data;
        cleanup_close int root_fd = -EBADF;
        cleanup_free char *why = NULL;
        int k;

        if (!d)
                return 0;
        k = mount_in_use(d, &why);
        if (k == -ENOENT)
                return set_errmsg(ret_msg, 0, "already gone");
        if (k < 0)
                return set_errmsg(ret_msg, k, "cannot tell whether anything still uses it: %s", strerror(-k));
        if (k > 0)
                return set_errmsg(ret_msg, 0, "kept: %s", why);
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root_fd < 0)
                return -errno;
        k = mount_unmount_seen(root_fd, d->path, &d->seen, 0, ret_msg);
        if (k == -EBUSY)
                return set_errmsg(ret_msg, 0, "kept: busy");
        if (k >= 0)
                *ret_msg = strdup(k > 0 ? "unmounted" : "already unmounted");
        return k;
}

/* Residue only when nothing uses the mount and it is still there: a mount kept for a reason is not. */
static int mount_check(Action *a, Context *ctx, char **ret_msg) {
        const MountData *d = a->data;
        cleanup_free char *why = NULL;
        MountTable *t = NULL;
        bool mounted = false;
        int k;

        if (!d || mount_in_use(d, &why) != 0 || mount_table_read(&t) < 0)
                return 0;
        for (size_t i = 0; i < t->n_entries && !mounted; i++)
                mounted = t->entries[i].mount_id == d->seen.mount_id;
        mount_table_free(t);
        k = mounted;
        if (k > 0)
                *ret_msg = strdup("still mounted, and nothing uses it");
        return k;
}

static const ActionOps mount_ops = {
        .kind = "bpf-mount",
        .apply = mount_apply,
        .check = mount_check,
        .free_data = mount_data_free,
};

static int plan_mount(Context *ctx, Plan *plan, const MountEntry *m, const ManifestEntry *e, bool cgroup,
                      bool foreign) {
        cleanup_free char *reason = manifest_entry_reason(e), *why = NULL;
        cleanup_close int root_fd = -EBADF;
        MountData *d = calloc(1, sizeof *d);
        Action *a;

        if (!reason || !d || !(d->path = strdup(m->mount_point))) {
                mount_data_free(d);
                return -ENOMEM;
        }
        d->cgroup = cgroup;
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        mount_seen_observe(root_fd, d->path, m, &d->seen);
        a = plan_add(plan, &mount_ops, PHASE, m->mount_point, reason, d);
        if (!a)
                return -ENOMEM;
        if (host_mount(m->mount_point))
                return action_set_skip(a, "kept: the host's own %s mount", m->fstype);
        if (foreign)
                return action_set_skip(a, "kept: a program that is not the CNI's is attached to its cgroup");
        why = mount_holder(m->mount_point);
        if (why)
                return action_set_skip(a, "kept: %s", why);
        return action_set_detail(a, "%s mount id %d, unmounted once %s", m->fstype, m->mount_id,
                                 cgroup ? "no program is attached to its cgroup and no process holds it"
                                        : "no pin is left in it and no process holds it");
}

/* The bpffs mounted exactly at path (the topmost one there), or NULL: a bpffs is the CNI's only at
 * the CNI's own path ("bpf-mount"), never because a pin pattern lies in it (a host's nested bpffs). */
static const MountEntry *bpffs_mount_at(const MountTable *t, const char *path) {
        const MountEntry *best = NULL;

        for (size_t i = 0; t && i < t->n_entries; i++) {
                const MountEntry *m = &t->entries[i];

                if (streq(m->fstype, "bpf") && streq(m->mount_point, path) && (!best || m->order > best->order))
                        best = m;
        }
        return best;
}

int network_bpf_plan_mounts(Context *ctx, Plan *plan, const Manifest *m, const bool *foreign) {
        cleanup_strv char **seen = NULL;
        size_t i = 0;
        int k = 0;

        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_CGROUP) {
                const MountEntry *me = network_bpf_cgroup2_mount(ctx->mounts, e->args[0]);

                if (me && k >= 0)
                        k = plan_mount(ctx, plan, me, e, true, foreign[i]);
                i++;
        }
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_MOUNT) {
                const MountEntry *me = bpffs_mount_at(ctx->mounts, e->args[0]);

                if (k < 0 || !me || strv_contains(seen, me->mount_point) || streq(me->mount_point, "/sys/fs/bpf"))
                        continue;
                k = strv_extend(&seen, me->mount_point);
                if (k >= 0)
                        k = plan_mount(ctx, plan, me, e, false, false);
        }
        return k;
}
