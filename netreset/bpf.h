/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BPF programs attached to the node: tc (clsact) filters and XDP on links, programs on a cgroup, pins. */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/link.h"
#include "netreset/nl.h"

/* The kernel keeps 15 bytes of a program's name (BPF_OBJ_NAME_LEN); the full name comes from its BTF,
 * cut here at 63. */
#define BPF_PROG_NAME_MAX 64

typedef enum BpfHook {
        BPF_HOOK_TC_INGRESS,
        BPF_HOOK_TC_EGRESS,
        BPF_HOOK_XDP,
        BPF_HOOK_TCX_INGRESS, /* tcx (Linux >= 6.6): what cilium >= 1.16 attaches, not a tc filter */
        BPF_HOOK_TCX_EGRESS,
        _BPF_HOOK_MAX,
} BpfHook;

/* "ingress", "egress", "xdp", "tcx_ingress", "tcx_egress". */
const char *bpf_hook_to_string(BpfHook h);

typedef struct BpfNetdevProg {
        int ifindex;
        char ifname[IF_NAMESIZE];
        BpfHook hook;
        uint32_t prog_id;
        char prog_name[BPF_PROG_NAME_MAX]; /* "" when the program could not be looked up */
        /* tc: what names the filter */
        uint32_t parent;
        uint32_t handle;
        uint32_t info; /* TC_H_MAKE(prio << 16, protocol) */
        uint32_t chain;
        /* XDP: XDP_FLAGS_SKB_MODE, _DRV_MODE or _HW_MODE */
        uint32_t xdp_mode;
        /* XDP and tcx: the BPF link that holds the attachment, 0 when the program is attached
         * directly (netlink XDP, BPF_PROG_ATTACH on tcx); such an attachment only goes with its link */
        uint32_t link_id;
} BpfNetdevProg;

typedef struct BpfNetdevTable {
        BpfNetdevProg *progs;
        size_t n, allocated;
} BpfNetdevTable;

/* Every BPF tc filter on the clsact ingress and egress hooks of every link, every XDP program (each
 * mode) and every tcx program (ingress, egress; none where the kernel has no tcx) of the namespace
 * rtnl lives in (which must be this process's for tcx and links), with the programs' names and the
 * BPF links that hold them. links: the namespace's links as the caller's dump found them (their
 * names and XDP programs are taken from it); NULL: dumped here. */
int bpf_netdev_read(NlSocket *rtnl, const LinkTable *links, BpfNetdevTable **ret, char **reterr_msg);
BpfNetdevTable *bpf_netdev_table_free(BpfNetdevTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(BpfNetdevTable *, bpf_netdev_table_free);

/* Detach exactly this tc filter, XDP or tcx program, re-verified first: 1 detached, 0 already gone
 * (the link, the filter or the program), -ESTALE when another program now sits in its place
 * (nothing is touched), -errno with the kernel's extack text otherwise. XDP is detached with
 * XDP_FLAGS_REPLACE and the program's fd as the expected one, so the check and the detach are one
 * atomic step; one held by a BPF link is detached through the link (BPF_LINK_DETACH), once the link
 * is checked to still hold that program on that device; a tcx program without a link is detached
 * by its fd. */
int bpf_netdev_detach(NlSocket *rtnl, const BpfNetdevProg *p, char **reterr_msg);

/* Is this program still attached there (same link, hook and program id)? 1 yes, 0 no. */
int bpf_netdev_attached(NlSocket *rtnl, const BpfNetdevProg *p);

/* The clsact qdisc of ifindex once it holds no filter on either hook: 1 deleted, 0 kept (it still
 * holds filters, or there is none). */
int bpf_clsact_delete_if_empty(NlSocket *rtnl, int ifindex, char **reterr_msg);

typedef struct BpfCgroupProg {
        uint32_t prog_id;
        char prog_name[BPF_PROG_NAME_MAX];
        int attach_type;       /* enum bpf_attach_type */
        uint32_t attach_flags; /* BPF_F_ALLOW_OVERRIDE, BPF_F_ALLOW_MULTI */
        uint32_t link_id;      /* the BPF link that holds it (cilium's socket LB), 0 when none */
} BpfCgroupProg;

/* "connect4", "sendmsg6", "sock_ops", ...: bpftool's names of the cgroup attach types. */
const char *bpf_cgroup_attach_type_to_string(int attach_type);

/* The programs attached directly to the cgroup cgroup_fd (not those it inherits), every cgroup
 * attach type the running kernel knows. */
int bpf_cgroup_query(int cgroup_fd, BpfCgroupProg **ret, size_t *ret_n);

/* Detach exactly this program from cgroup_fd (through its link when a link holds it): 1 detached, 0
 * no longer attached there (or gone), -ESTALE when its link now holds another program. */
int bpf_cgroup_detach(int cgroup_fd, const BpfCgroupProg *p);

/* The name of a loaded program, in full when its BTF names it (bpftool's way), else the kernel's 15
 * bytes: 0, -ENOENT when no program has that id any more. */
int bpf_prog_name(uint32_t prog_id, char name[static BPF_PROG_NAME_MAX]);

/* The maps a loaded program uses (bpftool's map_ids): 0, -ENOENT when no program has that id any more. */
int bpf_prog_map_ids(uint32_t prog_id, uint32_t **ret, size_t *ret_n);

typedef enum BpfObjKind {
        BPF_OBJ_MAP,
        BPF_OBJ_PROG,
        BPF_OBJ_LINK,
        _BPF_OBJ_KIND_MAX,
} BpfObjKind;

/* The ids of pinned objects, by kind. */
typedef struct BpfPinnedIds {
        uint32_t *ids[_BPF_OBJ_KIND_MAX];
        size_t n[_BPF_OBJ_KIND_MAX];
} BpfPinnedIds;

/* Add the id of the object pinned at path, or of every object pinned beneath the directory path, on
 * the bpf file system path is on; nothing when path is not on one. Symlinks are not followed, nor
 * mounts of another file system crossed. Objects are only opened (BPF_OBJ_GET) and read. */
int bpf_pinned_ids_collect(BpfPinnedIds *ids, const char *path);
bool bpf_pinned_ids_contain(const BpfPinnedIds *ids, BpfObjKind kind, uint32_t id);
void bpf_pinned_ids_done(BpfPinnedIds *ids);

/* Is fd on a bpf file system (BPF_FS_MAGIC)? 1 yes, 0 no, -errno. */
int bpf_fd_is_bpffs(int fd);

/* The directory holding the last component of the absolute path, opened, and that component:
 * 1 with *ret_fd on a bpf file system, 0 when the directory is gone or on another file system
 * (*ret_other says which), -errno (-EINVAL for a relative path or "/"). Removing a pin is the
 * agent's: its one remover (agent/os/remove.c) walks beneath this fd. */
int bpf_pin_open_parent(const char *path, int *ret_fd, const char **ret_base, bool *ret_other);
