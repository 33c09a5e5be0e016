/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BPF programs and links: a program's name and maps, the walk over BPF links and a checked detach;
 * the objects are in bpf-netdev.c (links' tc, tcx and XDP), bpf-cgroup.c and bpf-pin.c. */

/* libbpf is used for a handful of calls only, all in netreset/bpf*.c so that the library can later be
 * opened at run time: bpf_prog_get_fd_by_id, bpf_obj_get_info_by_fd, bpf_prog_query and
 * bpf_prog_detach2, bpf_prog_get_next_id, bpf_link_get_next_id, bpf_link_get_fd_by_id and
 * bpf_link_detach (thin wrappers of bpf(2), all in libbpf 0.2 and later), and
 * btf__load_from_kernel_by_id, btf__type_by_id, btf__name_by_offset, btf__free for a program's full
 * name, bpf_obj_get to read what a pin holds; nothing loads or attaches. tc filters and XDP go over
 * rtnetlink, as iproute2 does, because that is where they are attached; tcx (Linux 6.6) is queried
 * with bpf_prog_query on the ifindex, which libbpf 1.1's bpf_prog_query_opts would do alike (its
 * options predate tcx's link ids, which the link walk below supplies). */

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf-internal.h"
#include "netreset/bpf.h"
#include "string-util.h"

/* The kernel keeps 15 bytes of a name ("cil_sock4_conne"); the program's BTF, when it has some, keeps
 * the whole function name, as bpftool shows it. */
static void prog_btf_name(int fd, const struct bpf_prog_info *info, char *name, size_t size) {
        struct bpf_func_info finfo = {};
        struct bpf_prog_info i = {
                .nr_func_info = 1,
                .func_info_rec_size = sizeof finfo,
                .func_info = (uint64_t) (uintptr_t) &finfo,
        };
        uint32_t len = sizeof i;
        const struct btf_type *t;
        struct btf *btf;
        const char *n;

        if (info->btf_id == 0 || info->nr_func_info == 0 || bpf_obj_get_info_by_fd(fd, &i, &len) < 0)
                return;
        btf = btf__load_from_kernel_by_id(info->btf_id);
        if (!btf)
                return;
        t = btf__type_by_id(btf, finfo.type_id);
        n = t ? btf__name_by_offset(btf, t->name_off) : NULL;
        if (!isempty(n) && startswith(n, name))
                snprintf(name, size, "%s", n);
        btf__free(btf);
}

/* The program's fd (*ret_fd, the caller closes it) and its info, by ID: -ENOENT when it is gone. */
int bpf_prog_info_by_id(uint32_t prog_id, int *ret_fd, struct bpf_prog_info *ret_info) {
        uint32_t len = sizeof *ret_info;
        cleanup_close int fd = -EBADF;

        *ret_info = (struct bpf_prog_info) {};
        fd = bpf_prog_get_fd_by_id(prog_id);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : -errno;
        if (bpf_obj_get_info_by_fd(fd, ret_info, &len) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int bpf_prog_name(uint32_t prog_id, char name[static BPF_PROG_NAME_MAX]) {
        struct bpf_prog_info info;
        cleanup_close int fd = -EBADF;
        int r;

        r = bpf_prog_info_by_id(prog_id, &fd, &info);
        if (r < 0)
                return r;
        memcpy(name, info.name, sizeof info.name);
        name[sizeof info.name - 1] = 0;
        if (strlen(name) == sizeof info.name - 1)
                prog_btf_name(fd, &info, name, BPF_PROG_NAME_MAX);
        return 0;
}

int bpf_prog_map_ids(uint32_t prog_id, uint32_t **ret, size_t *ret_n) {
        struct bpf_prog_info info;
        uint32_t len, n;
        cleanup_free uint32_t *ids = NULL;
        cleanup_close int fd = -EBADF;
        int r;

        r = bpf_prog_info_by_id(prog_id, &fd, &info);
        if (r < 0)
                return r;
        n = info.nr_map_ids;
        if (n > 0) {
                ids = calloc(n, sizeof *ids);
                if (!ids)
                        return -ENOMEM;
                info = (struct bpf_prog_info) { .nr_map_ids = n, .map_ids = (uint64_t) (uintptr_t) ids };
                len = sizeof info;
                if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                        return -errno;
                /* The program cannot gain maps once loaded; the smaller count is the safe one anyway. */
                n = info.nr_map_ids < n ? info.nr_map_ids : n;
        }
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

/* ---- BPF links ---- */

static int link_dev_info(int fd, BpfLinkDev *ret) {
        struct bpf_link_info info = {};
        uint32_t len = sizeof info, dev[2];

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return -errno;
        /* The union's first two words: XDP's ifindex, tcx's ifindex and attach type (Linux >= 6.6,
         * a member Debian 12's headers do not have yet). */
        memcpy(dev, (const uint8_t *) &info + offsetof(struct bpf_link_info, xdp), sizeof dev);
        *ret = (BpfLinkDev) { .type = info.type, .id = info.id, .prog_id = info.prog_id };
        if (info.type == BPF_LINK_TYPE_XDP)
                ret->ifindex = dev[0];
        else if (info.type == NR_BPF_LINK_TYPE_TCX) {
                ret->ifindex = dev[0];
                ret->attach_type = dev[1];
        } else if (info.type == BPF_LINK_TYPE_CGROUP) {
                ret->cgroup_id = info.cgroup.cgroup_id;
                ret->cgroup_attach_type = info.cgroup.attach_type;
        }
        return 0;
}

/* Each BPF link in turn (every namespace's: a tcx or XDP link names an ifindex, which the callers
 * match together with the program id). A kernel before 5.8 cannot list links (EINVAL): none are
 * known, and attachments are detached as if no link held them. */
int bpf_link_foreach(void (*f)(const BpfLinkDev *l, void *userdata), void *userdata) {
        uint32_t id = 0;

        while (bpf_link_get_next_id(id, &id) == 0) {
                cleanup_close int fd = bpf_link_get_fd_by_id(id);
                BpfLinkDev l;

                if (fd >= 0 && link_dev_info(fd, &l) >= 0)
                        f(&l, userdata);
        }
        return errno == ENOENT || errno == EINVAL || errno == EOPNOTSUPP ? 0 : -errno;
}

/* Detach through link_id once it is checked to still hold prog_id where it was planned (same
 * ifindex, or same cgroup): 1 detached, 0 already gone or detached, -ESTALE another program. */
int bpf_link_detach_checked(uint32_t link_id, uint32_t prog_id, uint32_t ifindex, uint64_t cgroup_id) {
        cleanup_close int fd = -EBADF;
        BpfLinkDev l;
        int k;

        fd = bpf_link_get_fd_by_id(link_id);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        k = link_dev_info(fd, &l);
        if (k < 0)
                return k;
        if (l.ifindex != ifindex || l.cgroup_id != cgroup_id)
                return 0;
        if (l.prog_id != prog_id)
                return -ESTALE;
        if (bpf_link_detach(fd) < 0)
                return errno == ENOLINK || errno == ENOENT ? 0 : -errno;
        return 1;
}
