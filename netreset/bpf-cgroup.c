/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BPF programs on a cgroup: list them per attach type, then detach exactly one. */

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf-internal.h"
#include "netreset/bpf.h"

/* ---- cgroups ---- */

static const struct {
        int type;
        const char *name;
} cgroup_types[] = {
        { BPF_CGROUP_INET_INGRESS, "ingress" },
        { BPF_CGROUP_INET_EGRESS, "egress" },
        { BPF_CGROUP_INET_SOCK_CREATE, "sock_create" },
        { BPF_CGROUP_INET_SOCK_RELEASE, "sock_release" },
        { BPF_CGROUP_SOCK_OPS, "sock_ops" },
        { BPF_CGROUP_DEVICE, "device" },
        { BPF_CGROUP_INET4_BIND, "bind4" },
        { BPF_CGROUP_INET6_BIND, "bind6" },
        { BPF_CGROUP_INET4_CONNECT, "connect4" },
        { BPF_CGROUP_INET6_CONNECT, "connect6" },
        { BPF_CGROUP_INET4_POST_BIND, "post_bind4" },
        { BPF_CGROUP_INET6_POST_BIND, "post_bind6" },
        { BPF_CGROUP_UDP4_SENDMSG, "sendmsg4" },
        { BPF_CGROUP_UDP6_SENDMSG, "sendmsg6" },
        { BPF_CGROUP_UDP4_RECVMSG, "recvmsg4" },
        { BPF_CGROUP_UDP6_RECVMSG, "recvmsg6" },
        { BPF_CGROUP_INET4_GETPEERNAME, "getpeername4" },
        { BPF_CGROUP_INET6_GETPEERNAME, "getpeername6" },
        { BPF_CGROUP_INET4_GETSOCKNAME, "getsockname4" },
        { BPF_CGROUP_INET6_GETSOCKNAME, "getsockname6" },
        { BPF_CGROUP_SYSCTL, "sysctl" },
        { BPF_CGROUP_GETSOCKOPT, "getsockopt" },
        { BPF_CGROUP_SETSOCKOPT, "setsockopt" },
};

const char *bpf_cgroup_attach_type_to_string(int attach_type) {
        for (size_t i = 0; i < ELEMENTSOF(cgroup_types); i++)
                if (cgroup_types[i].type == attach_type)
                        return cgroup_types[i].name;
        return NULL;
}

/* At most this many programs per attach type are reported; a CNI attaches one. */
#define CGROUP_PROGS_MAX 64U

static int query_one(int cgroup_fd, int type, BpfCgroupProg **progs, size_t *n) {
        uint32_t ids[CGROUP_PROGS_MAX], cnt = CGROUP_PROGS_MAX, flags = 0;

        /* An attach type this kernel does not know is EINVAL: nothing can be attached there. */
        if (bpf_prog_query(cgroup_fd, type, 0, &flags, ids, &cnt) < 0)
                return errno == EINVAL || errno == EOPNOTSUPP ? 0 : -errno;
        for (uint32_t i = 0; i < cnt; i++) {
                BpfCgroupProg *v = reallocarray(*progs, *n + 1, sizeof *v);

                if (!v)
                        return -ENOMEM;
                *progs = v;
                v[*n] = (BpfCgroupProg) { .prog_id = ids[i], .attach_type = type, .attach_flags = flags };
                (void) bpf_prog_name(ids[i], v[*n].prog_name);
                (*n)++;
        }
        return 0;
}

typedef struct CgroupLinks {
        BpfCgroupProg *progs;
        size_t n;
        uint64_t cgroup_id;
} CgroupLinks;

static void mark_cgroup_link(const BpfLinkDev *l, void *userdata) {
        CgroupLinks *c = userdata;

        for (size_t i = 0; i < c->n; i++)
                if (l->type == BPF_LINK_TYPE_CGROUP && l->cgroup_id == c->cgroup_id &&
                    l->prog_id == c->progs[i].prog_id && l->cgroup_attach_type == (uint32_t) c->progs[i].attach_type)
                        c->progs[i].link_id = l->id;
}

/* A cgroup2 directory's inode number is the cgroup id the kernel reports. */
static int cgroup_id(int cgroup_fd, uint64_t *ret) {
        struct stat st;

        if (fstat(cgroup_fd, &st) < 0)
                return -errno;
        *ret = st.st_ino;
        return 0;
}

int bpf_cgroup_query(int cgroup_fd, BpfCgroupProg **ret, size_t *ret_n) {
        cleanup_free BpfCgroupProg *progs = NULL;
        CgroupLinks c = {};
        size_t n = 0;
        int k;

        for (size_t i = 0; i < ELEMENTSOF(cgroup_types); i++) {
                k = query_one(cgroup_fd, cgroup_types[i].type, &progs, &n);
                if (k < 0)
                        return k;
        }
        c = (CgroupLinks) { .progs = progs, .n = n };
        if (n > 0 && cgroup_id(cgroup_fd, &c.cgroup_id) >= 0) {
                k = bpf_link_foreach(mark_cgroup_link, &c);
                if (k < 0)
                        return k;
        }
        *ret = TAKE_PTR(progs);
        *ret_n = n;
        return 0;
}

/* With the program's fd the kernel detaches that program and no other, whatever the attach flags. */
int bpf_cgroup_detach(int cgroup_fd, const BpfCgroupProg *p) {
        cleanup_close int fd = -EBADF;
        uint64_t id;
        int k;

        if (p->link_id > 0) {
                k = cgroup_id(cgroup_fd, &id);
                return k < 0 ? k : bpf_link_detach_checked(p->link_id, p->prog_id, 0, id);
        }

        fd = bpf_prog_get_fd_by_id(p->prog_id);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (bpf_prog_detach2(fd, cgroup_fd, p->attach_type) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
}
