/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Connection tracking entries over nfnetlink_conntrack: a dump, a match on the addresses of both
 * tuples, and IPCTNL_MSG_CT_DELETE of each match by its original tuple. A dump and delete rather than
 * the kernel's filtered flush: CTA_FILTER on addresses is newer than the kernels nodes run. */

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/conntrack.h"

int ct_prefix_parse(const char *s, CtPrefix *ret) {
        char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
        unsigned long len;
        CtPrefix p = {};

        if (strlen(s) >= sizeof buf)
                return -EINVAL;
        strcpy(buf, s);
        slash = strchr(buf, '/');
        if (slash)
                *slash = '\0';
        if (inet_pton(AF_INET, buf, p.addr) == 1)
                p.family = AF_INET;
        else if (inet_pton(AF_INET6, buf, p.addr) == 1)
                p.family = AF_INET6;
        else
                return -EINVAL;
        len = p.family == AF_INET ? 32 : 128;
        if (slash) {
                unsigned long max = len;

                errno = 0;
                len = strtoul(slash + 1, &end, 10);
                if (slash[1] == '\0' || *end || errno || len > max)
                        return -EINVAL;
        }
        p.len = (uint8_t) len;
        *ret = p;
        return 0;
}

bool ct_prefix_contains(const CtPrefix *p, int family, const uint8_t *addr) {
        unsigned full = p->len / 8, rest = p->len % 8;

        if (p->family != family || memcmp(p->addr, addr, full) != 0)
                return false;
        return rest == 0 || ((p->addr[full] ^ addr[full]) & (uint8_t) (0xff << (8 - rest))) == 0;
}

typedef struct CtEntry {
        uint8_t family;
        uint64_t hits;       /* bit i: the entry touches prefix i (i < CT_COUNT_MAX) */
        struct nlattr *orig; /* copies of the attributes a delete names the entry by */
        struct nlattr *id, *zone;
} CtEntry;

typedef struct CtDump {
        const CtPrefix *prefixes;
        size_t n_prefixes;
        CtEntry *entries;
        size_t n;
} CtDump;

static void ct_dump_clear(void *userdata) {
        CtDump *d = userdata;

        for (size_t i = 0; i < d->n; i++) {
                free(d->entries[i].orig);
                free(d->entries[i].id);
                free(d->entries[i].zone);
        }
        d->entries = mfree(d->entries);
        d->n = 0;
}

/* Which prefixes an address of this tuple (CTA_TUPLE_ORIG or _REPLY) falls in: bit i for prefix i
 * (those past CT_COUNT_MAX all on the last bit); 0 for none. */
static uint64_t tuple_hits(const CtDump *d, const struct nlattr *tuple) {
        const struct nlattr *ip, *a;
        uint64_t hits = 0;

        mnl_attr_for_each_nested(ip, tuple) {
                if (mnl_attr_get_type(ip) != CTA_TUPLE_IP)
                        continue;
                mnl_attr_for_each_nested(a, ip) {
                        uint16_t t = mnl_attr_get_type(a);
                        int family = t == CTA_IP_V4_SRC || t == CTA_IP_V4_DST   ? AF_INET
                                     : t == CTA_IP_V6_SRC || t == CTA_IP_V6_DST ? AF_INET6
                                                                                : 0;

                        if (family == 0 || mnl_attr_get_payload_len(a) != (family == AF_INET ? 4U : 16U))
                                continue;
                        for (size_t i = 0; i < d->n_prefixes; i++)
                                if (ct_prefix_contains(d->prefixes + i, family, mnl_attr_get_payload(a)))
                                        hits |= UINT64_C(1) << (i < CT_COUNT_MAX ? i : CT_COUNT_MAX - 1);
                }
        }
        return hits;
}

static struct nlattr *attr_dup(const struct nlattr *a) {
        struct nlattr *c;

        if (!a || !(c = malloc(MNL_ALIGN(a->nla_len))))
                return NULL;
        return memcpy(c, a, MNL_ALIGN(a->nla_len));
}

static int ct_entry_cb(const struct nlmsghdr *nlh, void *userdata) {
        const struct nfgenmsg *g = mnl_nlmsg_get_payload(nlh);
        const struct nlattr *a, *orig = NULL, *id = NULL, *zone = NULL;
        CtDump *d = userdata;
        uint64_t hits = 0;
        CtEntry *e;

        mnl_attr_for_each(a, nlh, sizeof *g) {
                uint16_t t = mnl_attr_get_type(a);

                if (t == CTA_TUPLE_ORIG)
                        orig = a;
                else if (t == CTA_ID)
                        id = a;
                else if (t == CTA_ZONE)
                        zone = a;
                if (t == CTA_TUPLE_ORIG || t == CTA_TUPLE_REPLY)
                        hits |= tuple_hits(d, a);
        }
        if (!hits || !orig)
                return 0;
        e = reallocarray(d->entries, d->n + 1, sizeof *e);
        if (!e)
                return -ENOMEM;
        d->entries = e;
        e += d->n++;
        *e = (CtEntry) { .family = g->nfgen_family,
                         .hits = hits,
                         .orig = attr_dup(orig),
                         .id = attr_dup(id),
                         .zone = attr_dup(zone) };
        if (!e->orig || (id && !e->id) || (zone && !e->zone))
                return -ENOMEM;
        return 0;
}

static struct nlmsghdr *ct_message(void *buf, size_t size, uint8_t type, uint16_t flags, uint8_t family) {
        struct nfgenmsg *g = nl_message_start(buf, size, (NFNL_SUBSYS_CTNETLINK << 8) | type, flags, sizeof *g);

        g->nfgen_family = family;
        g->version = NFNETLINK_V0;
        return buf;
}

static void put_raw(struct nlmsghdr *nlh, const struct nlattr *a) {
        if (!a)
                return;
        memcpy((uint8_t *) nlh + nlh->nlmsg_len, a, MNL_ALIGN(a->nla_len));
        nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
}

/* 1 deleted, 0 gone meanwhile (ENOENT), -errno. */
static int ct_delete(NlSocket *nf, const CtEntry *e, char **reterr_msg) {
        size_t size = MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)) + MNL_ALIGN(e->orig->nla_len) +
                      (e->id ? MNL_ALIGN(e->id->nla_len) : 0) + (e->zone ? MNL_ALIGN(e->zone->nla_len) : 0);
        cleanup_free uint8_t *buf = malloc(size);
        struct nlmsghdr *nlh;
        int r;

        if (!buf)
                return -ENOMEM;
        nlh = ct_message(buf, size, IPCTNL_MSG_CT_DELETE, NLM_F_REQUEST, e->family);
        put_raw(nlh, e->orig);
        put_raw(nlh, e->zone);
        put_raw(nlh, e->id);
        r = nl_call(nf, nlh, NULL, NULL, reterr_msg);
        if (r == -ENOENT)
                return 0;
        return r < 0 ? r : 1;
}

int conntrack_flush(NlSocket *nf, const CtPrefix *p, size_t n_p, bool delete, unsigned *ret_n, unsigned *ret_counts,
                    char **reterr_msg) {
        uint8_t buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg))];
        CtDump d = { .prefixes = p, .n_prefixes = n_p };
        unsigned n = 0;
        int r, first = 0;

        *ret_n = 0;
        if (ret_counts)
                memset(ret_counts, 0, n_p * sizeof(unsigned));
        if (n_p == 0)
                return 0;
        if (ret_counts && n_p > CT_COUNT_MAX)
                return -E2BIG;
        r = nl_dump(nf, ct_message(buf, sizeof buf, IPCTNL_MSG_CT_GET, NLM_F_REQUEST | NLM_F_DUMP, AF_UNSPEC),
                    ct_entry_cb, &d, ct_dump_clear, reterr_msg);
        for (size_t i = 0; r >= 0 && i < d.n; i++) {
                int k = delete ? ct_delete(nf, d.entries + i, first < 0 ? NULL : reterr_msg) : 1;

                if (k > 0)
                        n++;
                else if (k < 0 && first == 0)
                        first = k;
                for (size_t j = 0; k > 0 && ret_counts && j < n_p; j++)
                        ret_counts[j] += (d.entries[i].hits >> j) & 1;
        }
        ct_dump_clear(&d);
        *ret_n = n;
        return r < 0 ? r : first;
}
