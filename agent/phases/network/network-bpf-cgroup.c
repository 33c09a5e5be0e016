/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's cgroup program rows: a CNI's programs on the cgroup roots "bpf-cgroup" lines name,
 * and nowhere else (network-bpf.c). */

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/phases/network/network-bpf-cgroup.h"
#include "agent/phases/network/network-bpf-owner.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"

#define PHASE "network"

typedef struct CgroupData {
        char *path; /* the cgroup2 mount point the plan found the program through */
        dev_t dev;  /* the cgroup itself, wherever it is reachable from at apply time */
        ino_t ino;
        BpfCgroupProg prog;
} CgroupData;

static void cgroup_data_free(void *p) {
        CgroupData *d = p;

        if (d)
                free(d->path);
        free(d);
}

static int open_if_same(const char *path, const CgroupData *d) {
        cleanup_close int fd = -EBADF;
        struct stat st;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != d->dev || st.st_ino != d->ino)
                return -ENOENT;
        return TAKE_FD(fd);
}

/* The mounts phase may have unmounted the CNI's cgroup2 mount since the plan: the same cgroup is
 * then reached through another cgroup2 mount of it (the host's /sys/fs/cgroup for cilium's root). */
static int cgroup_open(const CgroupData *d) {
        MountTable *t = NULL;
        int fd;

        fd = open_if_same(d->path, d);
        if (fd >= 0 || mount_table_read(&t) < 0)
                return fd;
        for (size_t i = 0; i < t->n_entries && fd < 0; i++)
                if (streq(t->entries[i].fstype, "cgroup2"))
                        fd = open_if_same(t->entries[i].mount_point, d);
        mount_table_free(t);
        return fd;
}

/* 1 when the program is still attached there with this attach type. */
static int cgroup_attached(int fd, const BpfCgroupProg *p) {
        cleanup_free BpfCgroupProg *now = NULL;
        size_t n = 0;
        int k;

        k = bpf_cgroup_query(fd, &now, &n);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n; i++)
                if (now[i].prog_id == p->prog_id && now[i].attach_type == p->attach_type)
                        return 1;
        return 0;
}

static int cgroup_apply(Action *a, Context *ctx, char **ret_msg) {
        const CgroupData *d = a->data;
        cleanup_close int fd = -EBADF;
        int k;

        if (!d->path) {
                *ret_msg = strdup("nothing to detach");
                return 0;
        }
        fd = cgroup_open(d);
        if (fd < 0) {
                *ret_msg = strdup("the cgroup is no longer reachable through any cgroup2 mount");
                return fd;
        }
        k = cgroup_attached(fd, &d->prog);
        if (k == 0)
                *ret_msg = strdup("already detached");
        if (k <= 0)
                return k;
        k = bpf_cgroup_detach(fd, &d->prog);
        if (k == -ESTALE) {
                *ret_msg = strdup("its BPF link holds another program now: left alone");
                return 0;
        }
        if (k >= 0 && d->prog.link_id > 0)
                *ret_msg = strprintf(k > 0 ? "detached through BPF link %u" : "already detached", d->prog.link_id);
        else if (k >= 0)
                *ret_msg = strdup(k > 0 ? "detached" : "already detached");
        return k;
}

static int cgroup_check(Action *a, Context *ctx, char **ret_msg) {
        const CgroupData *d = a->data;
        cleanup_close int fd = -EBADF;
        int k;

        if (!d->path)
                return 0;
        fd = cgroup_open(d);
        if (fd < 0)
                return 0;
        k = cgroup_attached(fd, &d->prog);
        if (k > 0)
                *ret_msg = strdup("still attached");
        return k;
}

static const ActionOps cgroup_ops = {
        .kind = "bpf-cgroup",
        .apply = cgroup_apply,
        .check = cgroup_check,
        .free_data = cgroup_data_free,
};

const MountEntry *network_bpf_cgroup2_mount(const MountTable *t, const char *path) {
        const MountEntry *top = NULL;

        for (size_t i = 0; t && i < t->n_entries; i++)
                if (streq(t->entries[i].mount_point, path) && (!top || t->entries[i].order > top->order))
                        top = &t->entries[i];
        return top && streq(top->fstype, "cgroup2") ? top : NULL;
}

static int plan_cgroup_prog(Plan *plan, const ManifestEntry *root, const ManifestEntry *owner, const struct stat *st,
                            const BpfCgroupProg *p) {
        cleanup_free char *reason = manifest_entry_reason(owner), *target = NULL;
        CgroupData *d = calloc(1, sizeof *d);
        const char *type = bpf_cgroup_attach_type_to_string(p->attach_type);
        Action *a;

        if (!d || !reason || !(d->path = strdup(root->args[0])) ||
            !(target = strprintf("%s from %s %s", p->prog_name, root->args[0], strna(type)))) {
                cgroup_data_free(d);
                return -ENOMEM;
        }
        d->dev = st->st_dev;
        d->ino = st->st_ino;
        d->prog = *p;
        a = plan_add(plan, &cgroup_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        if (p->link_id > 0)
                return action_set_detail(a,
                                         "cgroup program id %u, held by BPF link %u on the root of the CNI's "
                                         "cgroup2 mount",
                                         p->prog_id, p->link_id);
        return action_set_detail(a, "cgroup program id %u, attached to the root of the CNI's cgroup2 mount%s",
                                 p->prog_id, p->attach_flags & BPF_F_ALLOW_MULTI ? " (multi)" : "");
}

static int plan_cgroup_placeholder(Plan *plan, const ManifestEntry *e, const char *detail) {
        cleanup_free char *reason = manifest_entry_reason(e);
        Action *a;

        if (!reason)
                return -ENOMEM;
        a = plan_add(plan, &cgroup_ops, PHASE, e->args[0], reason, calloc(1, sizeof(CgroupData)));
        if (!a || !a->data)
                return -ENOMEM;
        a->present = false;
        return action_set_detail(a, "%s", detail);
}

/* *ret_foreign: a program that is not the CNI's is attached there too. */
int network_bpf_plan_cgroup_root(Context *ctx, Plan *plan, const Manifest *m, const ManifestEntry *e, bool *ret_foreign,
                                 char **reterr) {
        cleanup_free BpfCgroupProg *progs = NULL;
        cleanup_close int fd = -EBADF;
        size_t n = 0, planned = 0;
        struct stat st;
        int k;

        if (!network_bpf_cgroup2_mount(ctx->mounts, e->args[0]))
                return plan_cgroup_placeholder(plan, e, "not a cgroup2 mount point: the CNI attached nothing here");
        fd = open(e->args[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return set_errmsg(reterr, -errno, "%s:%u: cannot open the cgroup %s: %s", e->file, e->line, e->args[0],
                                  strerror(errno));
        k = bpf_cgroup_query(fd, &progs, &n);
        if (k < 0)
                return set_errmsg(reterr, k, "%s:%u: cannot list the programs attached to %s: %s", e->file, e->line,
                                  e->args[0], strerror(-k));
        for (size_t i = 0; i < n; i++) {
                const ManifestEntry *owner = network_bpf_prog_owner(m, progs[i].prog_name);

                if (!owner) {
                        *ret_foreign = true;
                        continue;
                }
                k = plan_cgroup_prog(plan, e, owner, &st, &progs[i]);
                if (k < 0)
                        return k;
                planned++;
        }
        return planned > 0 ? 0 : plan_cgroup_placeholder(plan, e, "no CNI program attached to this cgroup");
}
