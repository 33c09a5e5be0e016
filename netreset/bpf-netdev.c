/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* BPF programs on links: tc filters (clsact) over rtnetlink, tcx and XDP; observe, then detach exactly one. */

#include <bpf/bpf.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf-internal.h"
#include "netreset/bpf.h"
#include "string-util.h"

#define CLSACT_INGRESS TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS)
#define CLSACT_EGRESS TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS)

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

static bool link_holds(const BpfLinkDev *l, const BpfNetdevProg *p) {
        if (l->prog_id != p->prog_id || l->ifindex != (uint32_t) p->ifindex)
                return false;
        if (p->hook == BPF_HOOK_XDP)
                return l->type == BPF_LINK_TYPE_XDP;
        return hook_is_tcx(p->hook) && l->type == NR_BPF_LINK_TYPE_TCX && l->attach_type == tcx_attach_type(p->hook);
}

static void mark_netdev_link(const BpfLinkDev *l, void *userdata) {
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
                int r = bpf_prog_info_by_id(id, &fd, &info);

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
                k = bpf_link_foreach(mark_netdev_link, t);
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
                return bpf_link_detach_checked(p->link_id, p->prog_id, (uint32_t) p->ifindex, 0);
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
                return bpf_link_detach_checked(p->link_id, p->prog_id, (uint32_t) p->ifindex, 0);
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
