/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BPF programs on links (tc over rtnetlink), on a cgroup and as pins: observe, then detach exactly one. */

/* libbpf is used for a handful of calls only, all in this file so that the library can later be
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <limits.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "alloc-util.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"

#define CLSACT_INGRESS TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
#define CLSACT_EGRESS TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)

/* Debian 12's headers (Linux 6.1) predate tcx (Linux 6.6): its uapi values, which the running
 * kernel knows or refuses with EINVAL. */
#define NR_BPF_TCX_INGRESS 46
#define NR_BPF_TCX_EGRESS 47
#define NR_BPF_LINK_TYPE_TCX 11

/* At most this many programs per hook are reported; a CNI attaches one. */
#define HOOK_PROGS_MAX 64U

static const char *const hook_names[_BPF_HOOK_MAX] = {
        [BPF_HOOK_TC_INGRESS] = "ingress",      [BPF_HOOK_TC_EGRESS] = "egress",      [BPF_HOOK_XDP] = "xdp",
        [BPF_HOOK_TCX_INGRESS] = "tcx_ingress", [BPF_HOOK_TCX_EGRESS] = "tcx_egress",
};

static bool hook_is_tcx(BpfHook h) {
        return h == BPF_HOOK_TCX_INGRESS || h == BPF_HOOK_TCX_EGRESS;
}

static enum bpf_attach_type tcx_attach_type(BpfHook h) {
        return (enum bpf_attach_type)(h == BPF_HOOK_TCX_INGRESS ? NR_BPF_TCX_INGRESS : NR_BPF_TCX_EGRESS);
}

const char *bpf_hook_to_string(BpfHook h) {
        return h >= 0 && h < _BPF_HOOK_MAX ? hook_names[h] : NULL;
}

BpfNetdevTable *bpf_netdev_table_free(BpfNetdevTable *t) {
        if (!t)
                return NULL;
        free(t->progs);
        return mfree(t);
}

static int table_append(BpfNetdevTable *t, const BpfNetdevProg *p) {
        if (GREEDY_REALLOC(t->progs, t->allocated, t->n + 1) < 0)
                return -ENOMEM;
        t->progs[t->n++] = *p;
        return 0;
}

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
static int prog_info_by_id(uint32_t prog_id, int *ret_fd, struct bpf_prog_info *ret_info) {
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

        r = prog_info_by_id(prog_id, &fd, &info);
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

        r = prog_info_by_id(prog_id, &fd, &info);
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

typedef struct LinkDev {
        uint32_t type, id, prog_id;
        uint32_t ifindex, attach_type; /* XDP: ifindex; tcx: both; 0 once detached */
        uint64_t cgroup_id;            /* a cgroup link's cgroup; 0 once detached */
        uint32_t cgroup_attach_type;
} LinkDev;

static int link_dev_info(int fd, LinkDev *ret) {
        struct bpf_link_info info = {};
        uint32_t len = sizeof info, dev[2];

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return -errno;
        /* The union's first two words: XDP's ifindex, tcx's ifindex and attach type (Linux >= 6.6,
         * a member Debian 12's headers do not have yet). */
        memcpy(dev, (const uint8_t *) &info + offsetof(struct bpf_link_info, xdp), sizeof dev);
        *ret = (LinkDev) { .type = info.type, .id = info.id, .prog_id = info.prog_id };
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
static int link_foreach(void (*f)(const LinkDev *l, void *userdata), void *userdata) {
        uint32_t id = 0;

        while (bpf_link_get_next_id(id, &id) == 0) {
                cleanup_close int fd = bpf_link_get_fd_by_id(id);
                LinkDev l;

                if (fd >= 0 && link_dev_info(fd, &l) >= 0)
                        f(&l, userdata);
        }
        return errno == ENOENT || errno == EINVAL || errno == EOPNOTSUPP ? 0 : -errno;
}

/* Detach through link_id once it is checked to still hold prog_id where it was planned (same
 * ifindex, or same cgroup): 1 detached, 0 already gone or detached, -ESTALE another program. */
static int link_detach_checked(uint32_t link_id, uint32_t prog_id, uint32_t ifindex, uint64_t cgroup_id) {
        cleanup_close int fd = -EBADF;
        LinkDev l;
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

/* ---- links and XDP ---- */

typedef struct Collect {
        BpfNetdevTable *t;
        BpfNetdevProg base; /* the link and hook a tc dump is about */
        int *ifindexes;     /* the link dump: every link */
        char (*names)[IF_NAMESIZE];
        size_t n_links;
        int *tc_ifindexes; /* the qdisc dump: links with a clsact or ingress qdisc, filters' only place */
        size_t n_tc, allocated_tc;
        bool tc_unknown; /* the qdisc dump failed: every link's filters are dumped */
} Collect;

/* One XDP row per mode: a link may run a driver program and a generic one at once. */
static int add_xdp_rows(Collect *c, const BpfNetdevProg *link, const uint32_t ids[3]) {
        static const uint32_t modes[3] = { XDP_FLAGS_SKB_MODE, XDP_FLAGS_DRV_MODE, XDP_FLAGS_HW_MODE };

        for (size_t i = 0; i < 3; i++) {
                BpfNetdevProg p = *link;
                int k;

                if (ids[i] == 0)
                        continue;
                p.hook = BPF_HOOK_XDP;
                p.prog_id = ids[i];
                p.xdp_mode = modes[i];
                (void) bpf_prog_name(p.prog_id, p.prog_name);
                k = table_append(c->t, &p);
                if (k < 0)
                        return k;
        }
        return 0;
}

/* One link of the dump (or of the caller's table): its name, and a row per XDP program it runs. */
static int collect_one(Collect *c, const LinkInfo *l) {
        BpfNetdevProg link = { .ifindex = l->ifindex };
        char(*nv)[IF_NAMESIZE];
        int *v;

        snprintf(link.ifname, sizeof link.ifname, "%s", l->name);
        v = reallocarray(c->ifindexes, c->n_links + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        c->ifindexes = v;
        nv = reallocarray(c->names, c->n_links + 1, sizeof *nv);
        if (!nv)
                return -ENOMEM;
        c->names = nv;
        c->ifindexes[c->n_links] = link.ifindex;
        memcpy(c->names[c->n_links++], link.ifname, IF_NAMESIZE);
        return add_xdp_rows(c, &link, l->xdp_prog);
}

static int collect_link(const struct nlmsghdr *nlh, void *userdata) {
        LinkInfo l;
        int r;

        r = link_info_parse(nlh, &l);
        return r <= 0 ? 0 : collect_one(userdata, &l);
}

static void clear_links(void *userdata) {
        Collect *c = userdata;

        c->n_links = 0;
        c->t->n = 0;
}

/* ---- tc filters ---- */

static void parse_bpf_options(const struct nlattr *nest, BpfNetdevProg *p) {
        const struct nlattr *a;

        mnl_attr_for_each_nested(a, nest) {
                if (mnl_attr_get_type(a) == TCA_BPF_ID && mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                        p->prog_id = mnl_attr_get_u32(a);
        }
}

/* A filter of kind "bpf" with a program; the dump also shows each priority's classifier itself,
 * without a handle or options, which is not a filter to detach. */
static int parse_filter(const struct nlmsghdr *nlh, const BpfNetdevProg *base, BpfNetdevProg *ret) {
        const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a, *options = NULL;
        BpfNetdevProg p = *base;
        bool is_bpf = false;

        if (nlh->nlmsg_type != RTM_NEWTFILTER || mnl_nlmsg_get_payload_len(nlh) < sizeof *tcm)
                return 0;
        p.parent = tcm->tcm_parent;
        p.handle = tcm->tcm_handle;
        p.info = tcm->tcm_info;
        mnl_attr_for_each(a, nlh, sizeof *tcm) {
                switch (mnl_attr_get_type(a)) {
                case TCA_KIND:
                        is_bpf = mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0 && streq(mnl_attr_get_str(a), "bpf");
                        break;
                case TCA_CHAIN:
                        if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
                                p.chain = mnl_attr_get_u32(a);
                        break;
                case TCA_OPTIONS:
                        options = a;
                        break;
                }
        }
        if (!is_bpf || !options || p.handle == 0)
                return 0;
        parse_bpf_options(options, &p);
        if (p.prog_id == 0)
                return 0;
        *ret = p;
        return 1;
}

static int collect_filter(const struct nlmsghdr *nlh, void *userdata) {
        Collect *c = userdata;
        BpfNetdevProg p;
        int k;

        k = parse_filter(nlh, &c->base, &p);
        if (k <= 0)
                return k;
        (void) bpf_prog_name(p.prog_id, p.prog_name);
        return table_append(c->t, &p);
}

/* buf holds at least 64 bytes: the headers, and room for the attributes a caller adds. */
static struct nlmsghdr *filter_request(void *buf, uint16_t type, uint16_t flags, int ifindex, uint32_t parent) {
        struct tcmsg *tcm = nl_message_start(buf, 64, type, NLM_F_REQUEST | flags, sizeof(struct tcmsg));

        tcm->tcm_family = AF_UNSPEC;
        tcm->tcm_ifindex = ifindex;
        tcm->tcm_parent = parent;
        return buf;
}

/* No clsact qdisc (or no link any more) is an empty dump, not an error. An interrupted dump is read
 * again, as nl_dump() does. */
static int dump_filters(NlSocket *rtnl, Collect *c, int ifindex, const char *ifname, BpfHook hook, char **reterr_msg) {
        size_t before = c->t->n;
        int k = -EAGAIN;

        c->base = (BpfNetdevProg) { .ifindex = ifindex, .hook = hook };
        snprintf(c->base.ifname, sizeof c->base.ifname, "%s", ifname);
        for (unsigned i = 0; i < NL_DUMP_ATTEMPTS && k == -EAGAIN; i++) {
                uint8_t buf[64] = {};

                c->t->n = before;
                k = nl_call(rtnl,
                            filter_request(buf, RTM_GETTFILTER, NLM_F_DUMP, ifindex,
                                           hook == BPF_HOOK_TC_INGRESS ? CLSACT_INGRESS : CLSACT_EGRESS),
                            collect_filter, c, reterr_msg);
        }
        if (k == -ENODEV || k == -EINVAL || k == -ENOENT || k == -EOPNOTSUPP)
                return 0;
        return k;
}

/* ---- tcx ---- */

/* A kernel without tcx does not know the attach type (EINVAL); a link gone since the dump: ENODEV. */
static int add_tcx_rows(BpfNetdevTable *t, int ifindex, const char *ifname, BpfHook hook) {
        uint32_t ids[HOOK_PROGS_MAX], cnt = HOOK_PROGS_MAX, flags = 0;
        int k;

        if (bpf_prog_query(ifindex, tcx_attach_type(hook), 0, &flags, ids, &cnt) < 0)
                return errno == EINVAL || errno == EOPNOTSUPP || errno == ENODEV || errno == ENOENT ? 0 : -errno;
        for (uint32_t i = 0; i < cnt; i++) {
                BpfNetdevProg p = { .ifindex = ifindex, .hook = hook, .prog_id = ids[i] };

                snprintf(p.ifname, sizeof p.ifname, "%s", ifname);
                (void) bpf_prog_name(p.prog_id, p.prog_name);
                k = table_append(t, &p);
                if (k < 0)
                        return k;
        }
        return 0;
}

static bool link_holds(const LinkDev *l, const BpfNetdevProg *p) {
        if (l->prog_id != p->prog_id || l->ifindex != (uint32_t) p->ifindex)
                return false;
        if (p->hook == BPF_HOOK_XDP)
                return l->type == BPF_LINK_TYPE_XDP;
        return hook_is_tcx(p->hook) && l->type == NR_BPF_LINK_TYPE_TCX && l->attach_type == tcx_attach_type(p->hook);
}

static void mark_netdev_link(const LinkDev *l, void *userdata) {
        BpfNetdevTable *t = userdata;

        for (size_t i = 0; i < t->n; i++)
                if (link_holds(l, &t->progs[i]))
                        t->progs[i].link_id = l->id;
}

/* Whether a loaded program, in any namespace, is one tcx can hold (SCHED_CLS): without one no link
 * holds a tcx program, and a node's thousand veths need not be asked twice each. true also when
 * the programs cannot be listed (no CAP_SYS_ADMIN over the kernel's IDs): then every link is. */
static bool tcx_possible(void) {
        uint32_t id = 0;

        while (bpf_prog_get_next_id(id, &id) == 0) {
                struct bpf_prog_info info;
                cleanup_close int fd = -EBADF;
                int r = prog_info_by_id(id, &fd, &info);

                if (r == -ENOENT) /* unloaded since it was listed */
                        continue;
                if (r < 0 || info.type == BPF_PROG_TYPE_SCHED_CLS)
                        return true;
        }
        return errno != ENOENT;
}

static int read_tcx(BpfNetdevTable *t, const Collect *c) {
        size_t n = c->n_links > 0 && tcx_possible() ? c->n_links : 0;
        int k = 0;

        for (size_t i = 0; k >= 0 && i < n; i++) {
                k = add_tcx_rows(t, c->ifindexes[i], c->names[i], BPF_HOOK_TCX_INGRESS);
                if (k >= 0)
                        k = add_tcx_rows(t, c->ifindexes[i], c->names[i], BPF_HOOK_TCX_EGRESS);
        }
        /* Which of the XDP and tcx programs a BPF link holds: those go only with their link. */
        if (k >= 0)
                k = link_foreach(mark_netdev_link, t);
        return k;
}

static int collect_tc_qdisc(const struct nlmsghdr *nlh, void *userdata) {
        const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
        Collect *c = userdata;

        /* clsact and ingress both sit at TC_H_INGRESS (== TC_H_CLSACT). */
        if (nlh->nlmsg_type != RTM_NEWQDISC || mnl_nlmsg_get_payload_len(nlh) < sizeof *tcm ||
            tcm->tcm_parent != TC_H_INGRESS)
                return 0;
        if (GREEDY_REALLOC(c->tc_ifindexes, c->allocated_tc, c->n_tc + 1) < 0)
                return -ENOMEM;
        c->tc_ifindexes[c->n_tc++] = tcm->tcm_ifindex;
        return 0;
}

static void clear_tc(void *userdata) {
        ((Collect *) userdata)->n_tc = 0;
}

/* A tc filter of the clsact hooks hangs off a clsact (or, ingress only, an ingress) qdisc: one dump
 * of every link's qdiscs says which links can have one, so that a node's thousand veths cost one
 * dump, not two each. When that dump fails, every link is asked. */
static void read_tc_qdiscs(NlSocket *rtnl, Collect *c) {
        uint8_t buf[64] = {};
        struct tcmsg *tcm =
                nl_message_start(buf, sizeof buf, RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, sizeof(struct tcmsg));

        tcm->tcm_family = AF_UNSPEC;
        c->tc_unknown = nl_dump(rtnl, (struct nlmsghdr *) buf, collect_tc_qdisc, c, clear_tc, NULL) < 0;
}

static bool may_have_filters(const Collect *c, int ifindex) {
        if (c->tc_unknown)
                return true;
        for (size_t i = 0; i < c->n_tc; i++)
                if (c->tc_ifindexes[i] == ifindex)
                        return true;
        return false;
}

int bpf_netdev_read(NlSocket *rtnl, const LinkTable *links, BpfNetdevTable **ret, char **reterr_msg) {
        CLEANUP(bpf_netdev_table_freep) BpfNetdevTable *t = calloc(1, sizeof(BpfNetdevTable));
        Collect c = { .t = t };
        uint8_t buf[64] = {};
        int k = 0;

        if (!t)
                return -ENOMEM;
        if (links)
                for (size_t i = 0; i < links->n && k >= 0; i++)
                        k = collect_one(&c, &links->links[i]);
        else {
                nl_message_start(buf, sizeof buf, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, sizeof(struct ifinfomsg));
                k = nl_dump(rtnl, (struct nlmsghdr *) buf, collect_link, &c, clear_links, reterr_msg);
        }
        if (k >= 0)
                read_tc_qdiscs(rtnl, &c);
        for (size_t i = 0; k >= 0 && i < c.n_links; i++) {
                if (!may_have_filters(&c, c.ifindexes[i]))
                        continue;
                k = dump_filters(rtnl, &c, c.ifindexes[i], c.names[i], BPF_HOOK_TC_INGRESS, reterr_msg);
                if (k >= 0)
                        k = dump_filters(rtnl, &c, c.ifindexes[i], c.names[i], BPF_HOOK_TC_EGRESS, reterr_msg);
        }
        if (k >= 0)
                k = read_tcx(t, &c);
        free(c.ifindexes);
        free(c.names);
        free(c.tc_ifindexes);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(t);
        return 0;
}

static bool same_attachment(const BpfNetdevProg *a, const BpfNetdevProg *b) {
        if (a->ifindex != b->ifindex || a->hook != b->hook || a->prog_id != b->prog_id)
                return false;
        if (a->hook == BPF_HOOK_XDP)
                return a->xdp_mode == b->xdp_mode;
        if (hook_is_tcx(a->hook))
                return true;
        return a->parent == b->parent && a->handle == b->handle && a->info == b->info && a->chain == b->chain;
}

/* 1 this exact attachment, 0 nothing there, -ESTALE another program where it was. */
static int attachment_state(NlSocket *rtnl, const BpfNetdevProg *p) {
        CLEANUP(bpf_netdev_table_freep) BpfNetdevTable *now = NULL;
        bool other = false;
        int k;

        k = bpf_netdev_read(rtnl, NULL, &now, NULL);
        if (k < 0)
                return k;
        for (size_t i = 0; i < now->n; i++) {
                const BpfNetdevProg *q = &now->progs[i];

                if (same_attachment(q, p))
                        return 1;
                /* tcx holds several programs at once: another one there is no replacement. */
                if (q->ifindex == p->ifindex && q->hook == p->hook && !hook_is_tcx(p->hook) &&
                    (p->hook == BPF_HOOK_XDP ? q->xdp_mode == p->xdp_mode
                                             : q->info == p->info && q->handle == p->handle && q->chain == p->chain))
                        other = true;
        }
        return other ? -ESTALE : 0;
}

int bpf_netdev_attached(NlSocket *rtnl, const BpfNetdevProg *p) {
        int k = attachment_state(rtnl, p);

        return k == -ESTALE ? 0 : k;
}

static int tc_detach(NlSocket *rtnl, const BpfNetdevProg *p, char **reterr_msg) {
        uint8_t buf[128] = {};
        struct nlmsghdr *nlh;
        int k;

        k = attachment_state(rtnl, p);
        if (k <= 0)
                return k;
        nlh = filter_request(buf, RTM_DELTFILTER, 0, p->ifindex, p->parent);
        ((struct tcmsg *) mnl_nlmsg_get_payload(nlh))->tcm_handle = p->handle;
        ((struct tcmsg *) mnl_nlmsg_get_payload(nlh))->tcm_info = p->info;
        mnl_attr_put_strz(nlh, TCA_KIND, "bpf");
        mnl_attr_put_u32(nlh, TCA_CHAIN, p->chain);
        k = nl_call(rtnl, nlh, NULL, NULL, reterr_msg);
        if (k == -ENOENT || k == -ENODEV)
                return 0;
        return k < 0 ? k : 1;
}

static int xdp_detach(NlSocket *rtnl, const BpfNetdevProg *p, char **reterr_msg) {
        uint8_t buf[128];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        cleanup_close int fd = -EBADF;
        struct ifinfomsg *ifi;
        struct nlattr *nest;
        int k;

        if (p->link_id > 0)
                return link_detach_checked(p->link_id, p->prog_id, (uint32_t) p->ifindex, 0);
        fd = bpf_prog_get_fd_by_id(p->prog_id);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        ifi = nl_message_start(buf, sizeof buf, RTM_SETLINK, NLM_F_REQUEST, sizeof *ifi);
        ifi->ifi_family = AF_UNSPEC;
        ifi->ifi_index = p->ifindex;
        nest = mnl_attr_nest_start(nlh, IFLA_XDP);
        mnl_attr_put_u32(nlh, IFLA_XDP_FD, (uint32_t) -1);
        mnl_attr_put_u32(nlh, IFLA_XDP_FLAGS, p->xdp_mode | XDP_FLAGS_REPLACE);
        mnl_attr_put_u32(nlh, IFLA_XDP_EXPECTED_FD, (uint32_t) fd);
        mnl_attr_nest_end(nlh, nest);
        k = nl_call(rtnl, nlh, NULL, NULL, reterr_msg);
        if (k == -ENODEV)
                return 0;
        /* EEXIST: the expected program is not the one attached (another, or none). */
        if (k == -EEXIST) {
                k = attachment_state(rtnl, p);
                return k == 0 ? 0 : -ESTALE;
        }
        return k < 0 ? k : 1;
}

/* Without a link, by the program's fd on the ifindex, as BPF_PROG_ATTACH put it there. */
static int tcx_detach(NlSocket *rtnl, const BpfNetdevProg *p) {
        cleanup_close int fd = -EBADF;
        int k;

        if (p->link_id > 0)
                return link_detach_checked(p->link_id, p->prog_id, (uint32_t) p->ifindex, 0);
        k = attachment_state(rtnl, p);
        if (k <= 0)
                return k;
        fd = bpf_prog_get_fd_by_id(p->prog_id);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (bpf_prog_detach2(fd, p->ifindex, tcx_attach_type(p->hook)) < 0)
                return errno == ENOENT || errno == ENODEV ? 0 : -errno;
        return 1;
}

int bpf_netdev_detach(NlSocket *rtnl, const BpfNetdevProg *p, char **reterr_msg) {
        if (hook_is_tcx(p->hook))
                return tcx_detach(rtnl, p);
        return p->hook == BPF_HOOK_XDP ? xdp_detach(rtnl, p, reterr_msg) : tc_detach(rtnl, p, reterr_msg);
}

static int count_filter(const struct nlmsghdr *nlh, void *userdata) {
        const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);

        if (nlh->nlmsg_type == RTM_NEWTFILTER && mnl_nlmsg_get_payload_len(nlh) >= sizeof *tcm)
                (*(size_t *) userdata)++;
        return 0;
}

static int qdisc_is_clsact(const struct nlmsghdr *nlh, void *userdata) {
        const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a;

        if (nlh->nlmsg_type != RTM_NEWQDISC || mnl_nlmsg_get_payload_len(nlh) < sizeof *tcm ||
            tcm->tcm_parent != TC_H_CLSACT)
                return 0;
        mnl_attr_for_each(a, nlh, sizeof *tcm) {
                if (mnl_attr_get_type(a) == TCA_KIND && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0 &&
                    streq(mnl_attr_get_str(a), "clsact"))
                        *(bool *) userdata = true;
        }
        return 0;
}

int bpf_clsact_delete_if_empty(NlSocket *rtnl, int ifindex, char **reterr_msg) {
        static const uint32_t parents[] = { CLSACT_INGRESS, CLSACT_EGRESS };
        uint8_t buf[128] = {};
        bool clsact = false;
        size_t n = 0;
        int k;

        k = nl_call(rtnl, filter_request(buf, RTM_GETQDISC, NLM_F_DUMP, ifindex, 0), qdisc_is_clsact, &clsact, NULL);
        if (k < 0 || !clsact)
                return k == -ENODEV ? 0 : k;
        for (size_t i = 0; i < ELEMENTSOF(parents); i++) {
                k = nl_call(rtnl, filter_request(buf, RTM_GETTFILTER, NLM_F_DUMP, ifindex, parents[i]), count_filter,
                            &n, NULL);
                if (k < 0)
                        return k;
        }
        if (n > 0)
                return 0;
        k = nl_call(rtnl, filter_request(buf, RTM_DELQDISC, 0, ifindex, TC_H_CLSACT), NULL, NULL, reterr_msg);
        if (k == -ENOENT || k == -EINVAL || k == -ENODEV)
                return 0;
        return k < 0 ? k : 1;
}

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

static void mark_cgroup_link(const LinkDev *l, void *userdata) {
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
                k = link_foreach(mark_cgroup_link, &c);
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
                return k < 0 ? k : link_detach_checked(p->link_id, p->prog_id, 0, id);
        }

        fd = bpf_prog_get_fd_by_id(p->prog_id);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (bpf_prog_detach2(fd, cgroup_fd, p->attach_type) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 1;
}

/* ---- pinned objects ---- */

static const char *const obj_kind_names[_BPF_OBJ_KIND_MAX] = {
        [BPF_OBJ_MAP] = "map",
        [BPF_OBJ_PROG] = "prog",
        [BPF_OBJ_LINK] = "link",
};

/* A bpf fd's kind and id, from its fdinfo: the first "*_type:" line names the kind ("map_type",
 * "prog_type", "link_type"), "KIND_id:" then gives the id (a link's fdinfo names its program's id
 * too, after its own). */
static int obj_fdinfo(int fd, BpfObjKind *ret_kind, uint32_t *ret_id) {
        cleanup_fclose FILE *f = NULL;
        char path[64], line[256], key[32];
        int kind = -1;

        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f)) {
                unsigned v;
                char want[40];

                /* A link's type is a word ("link_type:\txdp"), a map's or program's a number. */
                if (sscanf(line, "%31[^:]:", key) != 1)
                        continue;
                for (int i = 0; kind < 0 && i < _BPF_OBJ_KIND_MAX; i++) {
                        snprintf(want, sizeof want, "%s_type", obj_kind_names[i]);
                        if (streq(key, want))
                                kind = i;
                }
                if (kind < 0)
                        continue;
                snprintf(want, sizeof want, "%s_id", obj_kind_names[kind]);
                if (streq(key, want) && sscanf(line, "%*[^:]:\t%u", &v) == 1) {
                        *ret_kind = (BpfObjKind) kind;
                        *ret_id = v;
                        return 0;
                }
        }
        return -ENOENT;
}

static int pinned_ids_add(BpfPinnedIds *ids, BpfObjKind kind, uint32_t id) {
        uint32_t *v;

        if (bpf_pinned_ids_contain(ids, kind, id))
                return 0;
        v = reallocarray(ids->ids[kind], ids->n[kind] + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        ids->ids[kind] = v;
        v[ids->n[kind]++] = id;
        return 0;
}

/* The pin name in dfd, a regular file on a bpf file system. BPF_OBJ_GET takes a path only: the
 * directory is named through its fd, so the walk stays where it was. libbpf 0.x has no
 * bpf_obj_get_opts and the kernel hands a BPF link out read-write only: the fd is used for its
 * fdinfo and nothing else. */
static int pinned_read(BpfPinnedIds *ids, int dfd, const char *name) {
        cleanup_close int fd = -EBADF;
        char path[64 + NAME_MAX];
        BpfObjKind kind = BPF_OBJ_MAP;
        uint32_t id = 0;

        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dfd, name);
        fd = bpf_obj_get(path);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (obj_fdinfo(fd, &kind, &id) < 0)
                return 0;
        return pinned_ids_add(ids, kind, id);
}

static int pinned_walk(BpfPinnedIds *ids, int dfd, const char *name, unsigned depth) {
        cleanup_closedir DIR *d = NULL;
        cleanup_close int fd = -EBADF;
        struct stat st;
        int r = 0, k;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISREG(st.st_mode))
                return pinned_read(ids, dfd, name);
        if (!S_ISDIR(st.st_mode) || depth >= 32)
                return 0;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Another file system mounted beneath holds no pins. */
        k = bpf_fd_is_bpffs(fd);
        if (k <= 0)
                return k;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        FOREACH_DIRENT(de, d) {
                k = pinned_walk(ids, dirfd(d), de->d_name, depth + 1);
                if (k < 0 && r >= 0)
                        r = k;
        }
        return r;
}

int bpf_pin_open_parent(const char *path, int *ret_fd, const char **ret_base, bool *ret_other) {
        cleanup_free char *parent = NULL;
        cleanup_close int pfd = -EBADF;
        const char *base;
        int k;

        *ret_other = false;
        base = strrchr(path, '/');
        if (!base || base[1] == 0 || path[0] != '/')
                return -EINVAL;
        parent = strndup(path, (size_t) (base - path) ?: 1);
        if (!parent)
                return -ENOMEM;
        pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOENT ? 0 : -errno;
        k = bpf_fd_is_bpffs(pfd);
        if (k <= 0) {
                *ret_other = k == 0;
                return k;
        }
        *ret_fd = TAKE_FD(pfd);
        *ret_base = base + 1;
        return 1;
}

int bpf_pinned_ids_collect(BpfPinnedIds *ids, const char *path) {
        cleanup_close int pfd = -EBADF;
        const char *base;
        bool other;
        int k;

        k = bpf_pin_open_parent(path, &pfd, &base, &other);
        if (k <= 0)
                return k;
        return pinned_walk(ids, pfd, base, 0);
}

bool bpf_pinned_ids_contain(const BpfPinnedIds *ids, BpfObjKind kind, uint32_t id) {
        for (size_t i = 0; id > 0 && i < ids->n[kind]; i++)
                if (ids->ids[kind][i] == id)
                        return true;
        return false;
}

void bpf_pinned_ids_done(BpfPinnedIds *ids) {
        for (size_t i = 0; i < _BPF_OBJ_KIND_MAX; i++) {
                ids->ids[i] = mfree(ids->ids[i]);
                ids->n[i] = 0;
        }
}

/* ---- pins ---- */

int bpf_fd_is_bpffs(int fd) {
        struct statfs s;

        if (fstatfs(fd, &s) < 0)
                return -errno;
        return s.f_type == (typeof(s.f_type)) BPF_FS_MAGIC;
}
