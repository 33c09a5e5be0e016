/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What netreset/bpf*.c share, not for agent/: a program's info by id, the walk over BPF links. */
#pragma once

#include <bpf/bpf.h>
#include <stdint.h>

/* Debian 12's headers (Linux 6.1) predate tcx (Linux 6.6): its uapi values, which the running
 * kernel knows or refuses with EINVAL. */
#define NR_BPF_TCX_INGRESS 46
#define NR_BPF_TCX_EGRESS 47
#define NR_BPF_LINK_TYPE_TCX 11

typedef struct BpfLinkDev {
        uint32_t type, id, prog_id;
        uint32_t ifindex, attach_type; /* XDP: ifindex; tcx: both; 0 once detached */
        uint64_t cgroup_id;            /* a cgroup link's cgroup; 0 once detached */
        uint32_t cgroup_attach_type;
} BpfLinkDev;

/* The program's fd (*ret_fd, the caller closes it) and its info, by ID: -ENOENT when it is gone. */
int bpf_prog_info_by_id(uint32_t prog_id, int *ret_fd, struct bpf_prog_info *ret_info);

/* Each BPF link in turn (every namespace's: a tcx or XDP link names an ifindex, which the callers
 * match together with the program id). A kernel before 5.8 cannot list links (EINVAL): none are
 * known, and attachments are detached as if no link held them. */
int bpf_link_foreach(void (*f)(const BpfLinkDev *l, void *userdata), void *userdata);

/* Detach through link_id once it is checked to still hold prog_id where it was planned (same
 * ifindex, or same cgroup): 1 detached, 0 already gone or detached, -ESTALE another program. */
int bpf_link_detach_checked(uint32_t link_id, uint32_t prog_id, uint32_t ifindex, uint64_t cgroup_id);
