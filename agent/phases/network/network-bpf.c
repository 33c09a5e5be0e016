/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's BPF part: a CNI's tc and XDP programs, its cgroup programs and its pins. */

/* A name is where ownership starts, never where it ends. A "bpf-prog PREFIX" line names the programs
 * that may be a CNI's: those whose name starts with PREFIX, the one thing every CNI sets and the
 * kernel keeps. Such a program is the CNI's by where it is: on a link the phase deletes (the CNI's
 * own devices) it goes with the link; on a cgroup root a "bpf-cgroup" line names (the CNI's own
 * cgroup) it is detached; on a link that stays (a host NIC) it is the CNI's only when its BPF link,
 * itself or one of the maps it uses is pinned under a "bpf-pin" path (cilium's programs all use its
 * cilium_calls_* and cilium_* maps in /sys/fs/bpf/tc/globals, calico's its cali_* maps there).
 * Without that evidence it is a host's program that happens to share the prefix: its row says so,
 * skipped ("not-owned"), and it is never detached. The shipped prefixes, from the CNIs' sources:
 * - cilium "cil_": bpf/bpf_host.c, bpf_lxc.c, bpf_overlay.c, bpf_xdp.c and bpf_sock.c name their
 *   entry points cil_from_netdev, cil_to_netdev, cil_from_host, cil_to_host, cil_from_container,
 *   cil_xdp_entry, cil_sock4_connect, cil_sock6_sendmsg, ...; its pins are /sys/fs/bpf/tc/globals/
 *   cilium_* and /sys/fs/bpf/cilium, the maps "cilium cleanup" (cilium/cmd/cleanup.go) removes;
 * - calico "calico_" and "cali_": felix/bpf-gpl's connect-time load balancer is calico_connect_v4,
 *   calico_sendmsg_v4, ... (connect_balancer*.c), its tc programs calico_tc_*, and what it attaches
 *   to each interface is the preamble cali_tc_preamble (tc_preamble.c). Its pins live in
 *   /sys/fs/bpf/calico and /sys/fs/bpf/calico_connect4 (felix/bpf/ut, nat/connecttime.go).
 * A host's own program (any other name) is never touched, on whichever hook it sits.
 *
 * Where: tc (clsact ingress and egress), tcx (what cilium >= 1.16 uses, through BPF links) and XDP
 * on every link the node keeps, with the evidence above; an attachment a BPF link holds is detached
 * through its link; links the phase deletes take their programs with them and get no row.
 * Detaching from a guarded link (the NIC of the default route) is allowed on purpose: it gives the
 * NIC back its plain kernel path. The clsact qdisc goes too once the CNI's filters were the last on
 * it. Cgroup programs only on the cgroup
 * roots "bpf-cgroup" lines name (cilium's /run/cilium/cgroupv2, calico's /run/calico/cgroup), each
 * a cgroup2 mount point in mountinfo, and nowhere else. Pins only at the paths "bpf-pin" lines
 * name, and only on a bpf file system.
 *
 * Plan, then act: every program is a row naming the program, the link, the hook and the evidence;
 * at apply time the program id is checked again (XDP atomically, with XDP_FLAGS_REPLACE), and
 * another program in its place is left alone. */

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/engine/libraries.h"
#include "agent/engine/context.h"
#include "agent/base/log.h"
#include "agent/os/mount-util.h"
#include "agent/os/mountinfo.h"
#include "agent/os/proc.h"
#include "agent/os/remove.h"
#include "agent/phases/network/network-links.h"
#include "agent/phases/network/network-bpf.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"
#include "strv.h"

#define PHASE "network"

bool network_bpf_wanted(const Manifest *m) {
        for (size_t i = 0; i < m->n_entries; i++)
                if (m->entries[i].type == DIRECTIVE_BPF_PROG || m->entries[i].type == DIRECTIVE_BPF_CGROUP ||
                    m->entries[i].type == DIRECTIVE_BPF_PIN || m->entries[i].type == DIRECTIVE_BPF_MOUNT)
                        return true;
        return false;
}

static const ManifestEntry *prog_owner(const Manifest *m, const char *name) {
        if (isempty(name))
                return NULL;
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PROG)
                if (startswith(name, e->args[0]))
                        return e;
        return NULL;
}

static void record_errno(Action *a, int r, const char *what, char *extack) {
        char *msg = NULL;

        if (asprintf(&msg, "%s%s%s%s%s", strempty(what), what ? ": " : "", strerror(-r), extack ? ": " : "",
                     strempty(extack)) < 0)
                msg = NULL;
        free(extack);
        action_record(a, r, msg);
}

/* ---- tc and XDP ---- */

static void netdev_apply_batch(Action **actions, size_t n, Context *ctx) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        for (size_t i = 0; i < n; i++) {
                const BpfNetdevProg *p = actions[i]->data;
                char *extack = NULL;
                int k;

                if (r < 0) {
                        record_errno(actions[i], r, "cannot open a rtnetlink socket", NULL);
                        continue;
                }
                k = bpf_netdev_detach(rtnl, p, &extack);
                if (k == -ESTALE)
                        action_recordf(actions[i], 0, "another program is attached there now: left alone");
                else if (k == -EBUSY && p->link_id == 0 && p->hook != BPF_HOOK_TC_INGRESS &&
                         p->hook != BPF_HOOK_TC_EGRESS)
                        /* A BPF link this process cannot see (another namespace's) holds it. */
                        record_errno(actions[i], k, "attached through a BPF link that was not found", TAKE_PTR(extack));
                else if (k < 0)
                        record_errno(actions[i], k, NULL, TAKE_PTR(extack));
                else if (k > 0 && p->link_id > 0)
                        action_recordf(actions[i], k, "detached through BPF link %u", p->link_id);
                else
                        action_recordf(actions[i], k, k > 0 ? "detached" : "already detached");
                free(extack);
                if (k > 0 && (p->hook == BPF_HOOK_TC_INGRESS || p->hook == BPF_HOOK_TC_EGRESS)) {
                        int q = bpf_clsact_delete_if_empty(rtnl, p->ifindex, NULL);

                        if (q > 0)
                                action_recordf(actions[i], 1, "detached; the clsact qdisc of %s, now empty, deleted",
                                               p->ifname);
                        else if (q < 0)
                                log_warning_errno(q, "Cannot delete the empty clsact qdisc of %s, ignoring: %m",
                                                  p->ifname);
                }
        }
}

static int netdev_check(Action *a, Context *ctx, char **ret_msg) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = bpf_netdev_attached(rtnl, a->data);
        if (r > 0)
                *ret_msg = strdup("still attached");
        return r;
}

static const ActionOps netdev_ops = {
        .kind = "bpf-netdev",
        .apply_batch = netdev_apply_batch,
        .check = netdev_check,
        .free_data = free,
};

/* The programs of links the phase deletes go with them; a guarded link stays, and so its programs
 * are detached. */
static bool link_stays(const Manifest *m, const NetworkObservation *o, int ifindex) {
        const LinkInfo *l = link_table_by_index(o->links, ifindex);

        return !l || !network_link_selected_by(m, o->links, l) || guard_link_reason(o->guard, ifindex);
}

/* "tc filter pref 1 handle 0x1, program id 7", "XDP program id 7, generic mode", ... */
static char *netdev_describe(const BpfNetdevProg *p) {
        if (p->hook == BPF_HOOK_XDP && p->link_id > 0)
                return strprintf("XDP program id %u, %s mode, held by BPF link %u", p->prog_id,
                                 p->xdp_mode == XDP_FLAGS_SKB_MODE ? "generic" : "driver", p->link_id);
        if (p->hook == BPF_HOOK_XDP)
                return strprintf("XDP program id %u, %s mode", p->prog_id,
                                 p->xdp_mode == XDP_FLAGS_SKB_MODE   ? "generic"
                                 : p->xdp_mode == XDP_FLAGS_DRV_MODE ? "driver"
                                                                     : "offload");
        if (p->hook == BPF_HOOK_TCX_INGRESS || p->hook == BPF_HOOK_TCX_EGRESS)
                return p->link_id > 0 ? strprintf("tcx program id %u, held by BPF link %u", p->prog_id, p->link_id)
                                      : strprintf("tcx program id %u, attached without a link", p->prog_id);
        return strprintf("tc filter pref %u handle 0x%x, program id %u", p->info >> 16, p->handle, p->prog_id);
}

/* What ties a program named like the CNI's to the CNI, on a link that stays: its BPF link, itself
 * or one of its maps pinned under the CNI's "bpf-pin" paths. 1 with the evidence in ret_why, 0 none
 * (a host's program that happens to share the prefix, or one gone since), -errno. */
static int netdev_evidence(const BpfPinnedIds *pinned, const BpfNetdevProg *p, char **ret_why) {
        cleanup_free uint32_t *maps = NULL;
        size_t n = 0;
        int k;

        if (bpf_pinned_ids_contain(pinned, BPF_OBJ_LINK, p->link_id))
                *ret_why = strprintf("its BPF link %u is pinned under the CNI's pin paths", p->link_id);
        else if (bpf_pinned_ids_contain(pinned, BPF_OBJ_PROG, p->prog_id))
                *ret_why = strdup("it is pinned under the CNI's pin paths");
        else {
                k = bpf_prog_map_ids(p->prog_id, &maps, &n);
                if (k < 0)
                        return k == -ENOENT ? 0 : k;
                for (size_t i = 0; i < n && !*ret_why; i++)
                        if (bpf_pinned_ids_contain(pinned, BPF_OBJ_MAP, maps[i]))
                                *ret_why = strprintf("it uses map id %u, pinned under the CNI's pin paths", maps[i]);
                if (!*ret_why)
                        return 0;
        }
        return *ret_why ? 1 : -ENOMEM;
}

/* owned: the evidence that the program is the CNI's; without it (NULL) the row is there, skipped:
 * the program is left alone. */
static int plan_netdev_prog(Plan *plan, const BpfNetdevProg *p, const ManifestEntry *e, const char *owned) {
        cleanup_free char *reason = manifest_entry_reason(e), *target = NULL, *what = netdev_describe(p);
        BpfNetdevProg *d = malloc(sizeof *d);
        Action *a;

        if (d)
                *d = *p;
        if (!reason || !d || !what ||
            !(target = strprintf("%s from %s %s", p->prog_name, p->ifname, bpf_hook_to_string(p->hook)))) {
                free(d);
                return -ENOMEM;
        }
        a = plan_add(plan, &netdev_ops, PHASE, target, reason, d);
        if (!a)
                return -ENOMEM;
        if (owned)
                return action_set_detail(a, "%s; the CNI's: %s", what, owned);
        (void) action_set_detail(a, "%s", what);
        return action_set_skip_code(a, "not-owned",
                                    "named like the CNI's (%s) but neither it, its BPF link nor any of its maps is "
                                    "pinned under the CNI's pin paths: left alone",
                                    e->args[0]);
}

/* The ids of every object pinned at or beneath the "bpf-pin" paths, read once per plan. A path
 * that cannot be read is no evidence: its programs are then left alone. */
static int pinned_ids_read(const Manifest *m, BpfPinnedIds *ret) {
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PIN) {
                glob_t g = {};
                int k = 0;

                if (glob(e->args[0], GLOB_NOSORT, NULL, &g) == 0)
                        for (size_t i = 0; i < g.gl_pathc && k != -ENOMEM; i++) {
                                k = bpf_pinned_ids_collect(ret, g.gl_pathv[i]);
                                if (k < 0 && k != -ENOMEM)
                                        log_warning_errno(k, "Cannot read the pins at %s, ignoring: %m", g.gl_pathv[i]);
                        }
                globfree(&g);
                if (k == -ENOMEM)
                        return k;
        }
        return 0;
}

static int plan_netdev(Plan *plan, const NetworkObservation *o, const Manifest *m, char **reterr) {
        CLEANUP(bpf_netdev_table_freep) BpfNetdevTable *t = NULL;
        CLEANUP(bpf_pinned_ids_done) BpfPinnedIds pinned = {};
        cleanup_free char *extack = NULL;
        int k;

        k = bpf_netdev_read(o->rtnl, o->links, &t, &extack);
        if (k < 0)
                return set_errmsg(reterr, k, "network: cannot list tc filters and XDP programs: %s%s%s", strerror(-k),
                                  extack ? ": " : "", strempty(extack));
        k = pinned_ids_read(m, &pinned);
        for (size_t i = 0; k >= 0 && i < t->n; i++) {
                const ManifestEntry *e = prog_owner(m, t->progs[i].prog_name);
                cleanup_free char *why = NULL;

                if (!e || !link_stays(m, o, t->progs[i].ifindex))
                        continue;
                k = netdev_evidence(&pinned, &t->progs[i], &why);
                if (k < 0)
                        return set_errmsg(reterr, k, "network: cannot read the maps of BPF program %u: %s",
                                          t->progs[i].prog_id, strerror(-k));
                k = plan_netdev_prog(plan, &t->progs[i], e, why);
        }
        return k;
}

/* ---- cgroup programs ---- */

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

static const MountEntry *cgroup2_mount(const MountTable *t, const char *path) {
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
static int plan_cgroup_root(Context *ctx, Plan *plan, const Manifest *m, const ManifestEntry *e, bool *ret_foreign,
                            char **reterr) {
        cleanup_free BpfCgroupProg *progs = NULL;
        cleanup_close int fd = -EBADF;
        size_t n = 0, planned = 0;
        struct stat st;
        int k;

        if (!cgroup2_mount(ctx->mounts, e->args[0]))
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
                const ManifestEntry *owner = prog_owner(m, progs[i].prog_name);

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

/* ---- pins ---- */

/* What is at pfd/name, as remove_tree() must find it again: -EXDEV for a directory of another file
 * system than bpf (nothing of it is a pin), 0 when it is gone. */
static int pin_top(int pfd, const char *name, RemoveTop *ret) {
        cleanup_close int fd = -EBADF;
        MountIdentity parent;
        int k;

        fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        k = mount_identity_at(pfd, "", 0, &parent);
        if (k >= 0)
                k = mount_identity_at(fd, "", 0, &ret->id);
        if (k < 0)
                return k;
        if (S_ISDIR(ret->id.mode)) {
                k = bpf_fd_is_bpffs(fd);
                if (k <= 0)
                        return k < 0 ? k : -EXDEV;
        }
        ret->present = true;
        ret->mount_point = mount_identity_other_mount(&parent, &ret->id);
        return 1;
}

/* A pin, or a directory of pins with everything beneath it, removed by the agent's one remover
 * (bounded in fds, never into another mount, the target taken again by identity): 1 removed, 0
 * already gone, -EXDEV when it is not on a bpf file system or one of another is mounted beneath. */
static int pin_remove(const char *path) {
        cleanup_close int pfd = -EBADF;
        cleanup_free char *node = NULL;
        RemoveStats stats = {};
        RemoveTop top = {};
        const char *base;
        bool other;
        int k;

        k = bpf_pin_open_parent(path, &pfd, &base, &other);
        if (k <= 0)
                return other ? -EXDEV : k;
        k = pin_top(pfd, base, &top);
        if (k <= 0)
                return k;
        if (asprintf(&node, "/%s", base) < 0)
                return -ENOMEM;
        k = remove_tree(pfd, node, &(RemoveOptions) { .expect_top = &top }, &stats);
        /* A mount met beneath is left whole: as before, that is "not on a bpf file system". */
        if (k == -EBUSY && stats.kept_mounts)
                k = -EXDEV;
        remove_stats_done(&stats);
        return k;
}

static int pin_apply(Action *a, Context *ctx, char **ret_msg) {
        int k;

        if (!a->data) {
                *ret_msg = strdup("no pin matches");
                return 0;
        }
        k = pin_remove(a->data);
        if (k == -EXDEV)
                *ret_msg = strdup("not on a bpf file system");
        else if (k >= 0)
                *ret_msg = strdup(k > 0 ? "removed" : "already gone");
        return k;
}

static int pin_check(Action *a, Context *ctx, char **ret_msg) {
        struct stat st;

        if (!a->data)
                return 0;
        if (lstat(a->data, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        *ret_msg = strdup("still present");
        return 1;
}

static const ActionOps pin_ops = {
        .kind = "bpf-pin",
        .apply = pin_apply,
        .check = pin_check,
        .free_data = free,
};

/* 1 on a bpf file system, 0 elsewhere. */
static int pin_on_bpffs(const char *path) {
        cleanup_free char *parent = strdup(path);
        cleanup_close int fd = -EBADF;
        char *slash;

        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = 0;
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return bpf_fd_is_bpffs(fd);
}

static int plan_pin(Plan *plan, const char *path, const char *reason) {
        struct stat st;
        Action *a;
        int k;

        if (lstat(path, &st) < 0)
                return 0;
        a = plan_add(plan, &pin_ops, PHASE, path, reason, strdup(path));
        if (!a || !a->data)
                return -ENOMEM;
        k = pin_on_bpffs(path);
        if (k <= 0)
                return action_set_skip(a, "refused: not on a bpf file system");
        return action_set_detail(a, S_ISDIR(st.st_mode) ? "a directory of pins, removed with everything beneath"
                                                        : "a pinned BPF object");
}

static int plan_pins(Plan *plan, const Manifest *m) {
        cleanup_strv char **seen = NULL;
        int k = 0;

        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PIN) {
                cleanup_free char *reason = manifest_entry_reason(e);
                glob_t g = {};
                size_t matched = 0;

                if (!reason)
                        return -ENOMEM;
                if (glob(e->args[0], GLOB_NOSORT, NULL, &g) == 0)
                        for (size_t i = 0; i < g.gl_pathc && k >= 0; i++) {
                                if (strv_contains(seen, g.gl_pathv[i]))
                                        continue;
                                k = strv_extend(&seen, g.gl_pathv[i]);
                                if (k >= 0)
                                        k = plan_pin(plan, g.gl_pathv[i], reason);
                                matched++;
                        }
                globfree(&g);
                if (k >= 0 && matched == 0) {
                        Action *a = plan_add(plan, &pin_ops, PHASE, e->args[0], reason, NULL);

                        if (!a)
                                return -ENOMEM;
                        a->present = false;
                        k = action_set_detail(a, "no pin matches");
                }
                if (k < 0)
                        return k;
        }
        return 0;
}

/* ---- the CNI's own cgroup2 and bpffs mounts ---- */

/* cilium mounts cgroup2 at /run/cilium/cgroupv2 for its socket load balancer ("cilium cleanup"
 * unmounts it) and, where the host has none, its own bpffs (/run/cilium/bpffs). Once the CNI's
 * programs and pins are gone such a mount is unmounted, but only when nothing else uses it: no
 * other program attached to its cgroup, no pin left in it, no process holding it. The host's own
 * /sys/fs/cgroup and /sys/fs/bpf are never unmounted. */

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

static int plan_mounts(Context *ctx, Plan *plan, const Manifest *m, const bool *foreign) {
        cleanup_strv char **seen = NULL;
        size_t i = 0;
        int k = 0;

        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_CGROUP) {
                const MountEntry *me = cgroup2_mount(ctx->mounts, e->args[0]);

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

int network_bpf_plan(Context *ctx, Plan *plan, const NetworkObservation *o, char **reterr) {
        const Manifest *m = ctx->manifest;
        cleanup_free bool *foreign = NULL;
        size_t n_roots = 0;
        int k;

        /* Pins are removed with plain unlinkat(); programs need libbpf to be read and detached. */
        k = libraries_plan_missing(plan, "network", DLIB_LIBBPF, "BPF program lines");
        if (k < 0)
                return k;
        if (k > 0) {
                k = plan_pins(plan, m);
                return k;
        }
        foreign = calloc(m->n_entries + 1, sizeof(bool));
        if (!foreign)
                return -ENOMEM;
        k = plan_netdev(plan, o, m, reterr);
        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_CGROUP) {
                if (k < 0)
                        break;
                k = plan_cgroup_root(ctx, plan, m, e, &foreign[n_roots++], reterr);
        }
        if (k >= 0)
                k = plan_pins(plan, m);
        /* Last: a mount is unmounted only after the programs and pins in it are gone. */
        if (k >= 0)
                k = plan_mounts(ctx, plan, m, foreign);
        return k;
}
