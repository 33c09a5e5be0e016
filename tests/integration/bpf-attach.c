/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Test helper for test-bpf.sh: attaches pinned programs the ways cilium >= 1.16 does and Debian 12's
 * bpftool (7.1) cannot (tcx, with or without a BPF link; XDP and cgroup programs through a link),
 * and lists a device's tcx programs. Plain bpf(2), so that it needs neither libbpf nor headers
 * newer than Linux 6.1. Exit 77 when the kernel has no tcx.
 *
 *   bpf-attach tcx PROG_PIN IFNAME ingress|egress
 *   bpf-attach tcx-link PROG_PIN IFNAME ingress|egress LINK_PIN
 *   bpf-attach xdp-link PROG_PIN IFNAME LINK_PIN            (generic mode)
 *   bpf-attach cgroup-link PROG_PIN CGROUP_DIR LINK_PIN     (connect4)
 *   bpf-attach tcx-query IFNAME ingress|egress              (program names, one a line)
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TCX_INGRESS 46 /* BPF_TCX_INGRESS, Linux 6.6 */
#define TCX_EGRESS 47

static int sys_bpf(int cmd, union bpf_attr *attr) {
        return (int) syscall(__NR_bpf, cmd, attr, sizeof *attr);
}

static int obj_get(const char *path) {
        union bpf_attr a;

        memset(&a, 0, sizeof a);
        a.pathname = (uint64_t) (uintptr_t) path;
        return sys_bpf(BPF_OBJ_GET, &a);
}

static int obj_pin(int fd, const char *path) {
        union bpf_attr a;

        memset(&a, 0, sizeof a);
        a.pathname = (uint64_t) (uintptr_t) path;
        a.bpf_fd = (uint32_t) fd;
        return sys_bpf(BPF_OBJ_PIN, &a);
}

static int link_create(int prog_fd, int target, uint32_t type, uint32_t flags) {
        union bpf_attr a;

        memset(&a, 0, sizeof a);
        a.link_create.prog_fd = (uint32_t) prog_fd;
        a.link_create.target_fd = (uint32_t) target;
        a.link_create.attach_type = type;
        a.link_create.flags = flags;
        return sys_bpf(BPF_LINK_CREATE, &a);
}

static uint32_t tcx_type(const char *dir) {
        return strcmp(dir, "ingress") == 0 ? TCX_INGRESS : TCX_EGRESS;
}

static int die(const char *what) {
        int e = errno;

        fprintf(stderr, "bpf-attach: %s: %s\n", what, strerror(e));
        return e == EINVAL ? 77 : 1;
}

static int query(const char *ifname, const char *dir) {
        uint32_t ids[64];
        union bpf_attr a;

        memset(&a, 0, sizeof a);
        a.query.target_fd = if_nametoindex(ifname);
        a.query.attach_type = tcx_type(dir);
        a.query.prog_ids = (uint64_t) (uintptr_t) ids;
        a.query.prog_cnt = 64;
        if (sys_bpf(BPF_PROG_QUERY, &a) < 0)
                return die("BPF_PROG_QUERY");
        for (uint32_t i = 0; i < a.query.prog_cnt; i++) {
                struct bpf_prog_info info;
                union bpf_attr g;
                int fd;

                memset(&g, 0, sizeof g);
                g.prog_id = ids[i];
                fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &g);
                if (fd < 0)
                        continue;
                memset(&info, 0, sizeof info);
                memset(&g, 0, sizeof g);
                g.info.bpf_fd = (uint32_t) fd;
                g.info.info_len = sizeof info;
                g.info.info = (uint64_t) (uintptr_t) &info;
                if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &g) == 0)
                        printf("%.*s\n", (int) sizeof info.name, info.name);
                close(fd);
        }
        return 0;
}

int main(int argc, char **argv) {
        union bpf_attr a;
        int prog, link, target;

        if (argc == 4 && strcmp(argv[1], "tcx-query") == 0)
                return query(argv[2], argv[3]);
        if (argc < 5)
                return fprintf(stderr, "bpf-attach: bad usage\n"), 2;
        prog = obj_get(argv[2]);
        if (prog < 0)
                return die(argv[2]);
        if (strcmp(argv[1], "tcx") == 0) {
                memset(&a, 0, sizeof a);
                a.target_fd = if_nametoindex(argv[3]);
                a.attach_bpf_fd = (uint32_t) prog;
                a.attach_type = tcx_type(argv[4]);
                return sys_bpf(BPF_PROG_ATTACH, &a) < 0 ? die("BPF_PROG_ATTACH tcx") : 0;
        }
        if (strcmp(argv[1], "tcx-link") == 0 && argc == 6)
                link = link_create(prog, (int) if_nametoindex(argv[3]), tcx_type(argv[4]), 0);
        else if (strcmp(argv[1], "xdp-link") == 0)
                link = link_create(prog, (int) if_nametoindex(argv[3]), BPF_XDP, XDP_FLAGS_SKB_MODE);
        else if (strcmp(argv[1], "cgroup-link") == 0) {
                target = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (target < 0)
                        return die(argv[3]);
                link = link_create(prog, target, BPF_CGROUP_INET4_CONNECT, 0);
        } else
                return fprintf(stderr, "bpf-attach: bad usage\n"), 2;
        if (link < 0)
                return die("BPF_LINK_CREATE");
        return obj_pin(link, argv[argc - 1]) < 0 ? die(argv[argc - 1]) : 0;
}
