/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests of the policy-rule and BPF code that needs no kernel: rule messages parsed from golden
 * bytes, ownership matching by table, mark and priority, the manifest's rule-table arguments, names. */

#include <libmnl/libmnl.h>
#include <linux/bpf.h>
#include <linux/fib_rules.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "agent/config/manifest.h"
#include "agent/phases/network/network-rule.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "netreset/conntrack.h"
#include "netreset/fib-rule.h"
#include "string-util.h"

/* An RTM_NEWRULE as the kernel dumps "pref 9 fwmark 0x200/0xf00 lookup 2004" (IPv4), built by hand:
 * the 8-bit header table says RT_TABLE_COMPAT (252) and FRA_TABLE carries the real one. */
static struct nlmsghdr *build_rule(void *buf, int family, uint32_t table, uint32_t pref, bool mark, bool invert) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct fib_rule_hdr *frh;

        nlh->nlmsg_type = RTM_NEWRULE;
        frh = mnl_nlmsg_put_extra_header(nlh, sizeof *frh);
        frh->family = (uint8_t) family;
        frh->action = FR_ACT_TO_TBL;
        frh->table = table < 256 ? (uint8_t) table : RT_TABLE_COMPAT;
        frh->flags = invert ? FIB_RULE_INVERT : 0;
        mnl_attr_put_u32(nlh, FRA_TABLE, table);
        mnl_attr_put_u32(nlh, FRA_PRIORITY, pref);
        if (mark) {
                mnl_attr_put_u32(nlh, FRA_FWMARK, 0x200);
                mnl_attr_put_u32(nlh, FRA_FWMASK, 0xf00);
        }
        return nlh;
}

static void test_rule_parse(void **state) {
        uint8_t buf[256] = {};
        RuleInfo r;
        char *s;

        assert_int_equal(rule_info_parse(build_rule(buf, AF_INET, 2004, 9, true, false), &r), 0);
        assert_int_equal(r.family, AF_INET);
        assert_int_equal(r.table, 2004);
        assert_int_equal(r.priority, 9);
        assert_true(r.has_mark);
        assert_int_equal(r.fwmark, 0x200);
        assert_int_equal(r.fwmask, 0xf00);
        assert_false(r.invert);
        assert_non_null(r.msg);
        s = rule_to_string(&r);
        assert_string_equal(s, "ipv4 pref 9 fwmark 0x200/0xf00 lookup 2004");
        free(s);
        rule_info_done(&r);

        assert_int_equal(rule_info_parse(build_rule(buf, AF_INET6, 79, 30000, false, false), &r), 0);
        assert_false(r.has_mark);
        assert_int_equal(r.fwmask, 0);
        s = rule_to_string(&r);
        assert_string_equal(s, "ipv6 pref 30000 lookup 79");
        free(s);
        rule_info_done(&r);
}

static void test_rule_parse_invalid(void **state) {
        uint8_t buf[256] = {};
        struct nlmsghdr *nlh = build_rule(buf, AF_INET, 77, 100, false, false);
        RuleInfo r;

        nlh->nlmsg_type = RTM_NEWROUTE;
        assert_int_equal(rule_info_parse(nlh, &r), -EBADMSG);
        nlh = build_rule(buf, AF_BRIDGE, 77, 100, false, false);
        assert_int_equal(rule_info_parse(nlh, &r), -EBADMSG);
}

static RuleMatch match_of(const char *a, const char *b, const char *c) {
        char *args[4] = { (char *) a, (char *) b, (char *) c, NULL };
        size_t n = c ? 3 : b ? 2 : 1;
        RuleMatch m = {};

        assert_int_equal(rule_match_from_args(args, n, &m), 0);
        return m;
}

static void test_rule_match_args(void **state) {
        char *bad[][4] = {
                { (char *) "254" },
                { (char *) "255" },
                { (char *) "253" },
                { (char *) "0" },
                { (char *) "main" },
                { (char *) "-1" },
                { (char *) "4294967296" },
                { (char *) "2004", (char *) "0x200" },       /* no mask */
                { (char *) "2004", (char *) "0x200/0" },     /* empty mask */
                { (char *) "2004", (char *) "0x300/0x100" }, /* the mark outside its mask */
                { (char *) "2004", (char *) "0x200/0xf00", (char *) "0" },
        };
        RuleMatch m;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                size_t n = bad[i][2] ? 3 : bad[i][1] ? 2 : 1;

                assert_int_equal(rule_match_from_args(bad[i], n, &m), -EINVAL);
        }
        m = match_of("2004", "0x200/0xf00", NULL);
        assert_int_equal(m.table, 2004);
        assert_int_equal(m.fwmark, 0x200);
        assert_int_equal(m.fwmask, 0xf00);
        assert_int_equal(m.priority, 0);
        m = match_of("1", "0x100000/0x100000", "99");
        assert_int_equal(m.priority, 99);
        assert_false(m.invert);
        m = match_of("1", "!0x100000/0x100000", "99");
        assert_true(m.invert);
        assert_int_equal(m.fwmark, 0x100000);
        m = match_of("77", NULL, NULL);
        assert_int_equal(m.fwmask, 0);
}

/* Every selector must have the CNI's shape: the host's "not fwmark 0x200/0xf00 lookup 2004", or the
 * same mark with an iif, oif, from, to or other selector, is not cilium's. */
static void test_rule_matches_shape(void **state) {
        const RuleInfo cil = { .family = AF_INET,
                               .action = FR_ACT_TO_TBL,
                               .table = 2004,
                               .priority = 9,
                               .has_mark = true,
                               .fwmark = 0x200,
                               .fwmask = 0xf00 };
        RuleMatch cilium = match_of("2004", "0x200/0xf00", NULL), kr = match_of("77", NULL, NULL);
        RuleInfo r = cil;

        assert_true(rule_matches(&r, &cilium));
        r.invert = true;
        assert_false(rule_matches(&r, &cilium));
        r = cil;
        r.src_len = 24;
        assert_false(rule_matches(&r, &cilium));
        r = cil;
        r.dst_len = 16;
        assert_false(rule_matches(&r, &cilium));
        r = cil;
        strcpy(r.iif, "eth0");
        assert_false(rule_matches(&r, &cilium));
        r = cil;
        strcpy(r.oif, "eth0");
        assert_false(rule_matches(&r, &cilium));
        r = cil;
        r.has_other = true;
        assert_false(rule_matches(&r, &cilium));
        /* kube-router's shape: "from <pod CIDR> lookup 77", never "not", no iif. */
        r = (RuleInfo) { .family = AF_INET, .action = FR_ACT_TO_TBL, .table = 77, .priority = 100, .src_len = 24 };
        assert_true(rule_matches(&r, &kr));
        r.invert = true;
        assert_false(rule_matches(&r, &kr));
        r.invert = false;
        strcpy(r.iif, "eth0");
        assert_false(rule_matches(&r, &kr));
}

/* iif and oif come from their attributes; a uid range is another selector. */
static void test_rule_parse_selectors(void **state) {
        uint8_t buf[256] = {};
        struct nlmsghdr *nlh = build_rule(buf, AF_INET, 2004, 9, true, true);
        struct fib_rule_uid_range uid = { 1000, 2000 };
        cleanup_free char *s = NULL;
        RuleInfo r;

        mnl_attr_put_u32(nlh, FRA_SUPPRESS_PREFIXLEN, UINT32_MAX); /* the kernel dumps "unset" */
        mnl_attr_put_strz(nlh, FRA_IIFNAME, "eth0");
        mnl_attr_put_strz(nlh, FRA_OIFNAME, "eth1");
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_string_equal(r.iif, "eth0");
        assert_string_equal(r.oif, "eth1");
        assert_true(r.invert);
        assert_false(r.has_other);
        s = rule_to_string(&r);
        assert_string_equal(s, "ipv4 pref 9 not fwmark 0x200/0xf00 iif eth0 oif eth1 lookup 2004");
        rule_info_done(&r);
        mnl_attr_put(nlh, FRA_UID_RANGE, sizeof uid, &uid);
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_true(r.has_other);
        rule_info_done(&r);
}

/* "dscp 46 lookup 77" (pref 200) exactly as Linux 6.18 dumps it: FRA_DSCP (25) and FRA_DSCP_MASK (30),
 * which this code does not read, follow the attributes it does. */
static const uint8_t dscp_rule_golden[] = {
        0x4c, 0x00, 0x00, 0x00, 0x20, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0xfb, 0x31, 0x00, 0x00, /* nlmsghdr */
        0x02, 0x00, 0x00, 0x00, 0x4d, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, /* fib_rule_hdr: inet, table 77 */
        0x08, 0x00, 0x0f, 0x00, 0x4d, 0x00, 0x00, 0x00, /* FRA_TABLE 77 */
        0x08, 0x00, 0x0e, 0x00, 0xff, 0xff, 0xff, 0xff, /* FRA_SUPPRESS_PREFIXLEN -1 */
        0x05, 0x00, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00, /* FRA_PROTOCOL unspec */
        0x08, 0x00, 0x06, 0x00, 0xc8, 0x00, 0x00, 0x00, /* FRA_PRIORITY 200 */
        0x05, 0x00, 0x19, 0x00, 0x2e, 0x00, 0x00, 0x00, /* FRA_DSCP 46 */
        0x05, 0x00, 0x1e, 0x00, 0x3f, 0x00, 0x00, 0x00, /* FRA_DSCP_MASK 0x3f */
};

/* An attribute this code does not read makes the rule the host's: the kernel's own dump of "dscp 46
 * lookup 77" is not kube-router's "lookup 77", the same bytes without the two DSCP attributes are. */
static void test_rule_parse_unknown_attribute(void **state) {
        _Alignas(struct nlmsghdr) uint8_t buf[sizeof dscp_rule_golden];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        RuleMatch kr = match_of("77", NULL, NULL);
        cleanup_free char *s = NULL;
        RuleInfo r;

        memcpy(buf, dscp_rule_golden, sizeof buf);
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_int_equal(r.table, 77);
        assert_int_equal(r.priority, 200);
        assert_true(r.has_other);
        assert_false(rule_matches(&r, &kr));
        s = rule_to_string(&r);
        assert_string_equal(s, "ipv4 pref 200 (with a selector) lookup 77");
        rule_info_done(&r);

        nlh->nlmsg_len -= 16; /* without FRA_DSCP and FRA_DSCP_MASK */
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_false(r.has_other);
        assert_true(rule_matches(&r, &kr));
        rule_info_done(&r);

        /* Each newer selector alone: the flow label (26), its mask (27), the port masks (28, 29). */
        for (uint16_t type = 26; type <= 29; type++) {
                uint8_t b[256] = {};

                nlh = build_rule(b, AF_INET6, 77, 200, false, false);
                mnl_attr_put_u32(nlh, type, 0x12345);
                assert_int_equal(rule_info_parse(nlh, &r), 0);
                assert_true(r.has_other);
                assert_false(rule_matches(&r, &kr));
                rule_info_done(&r);
        }
}

/* What the header says must be read too: a flag other than "not", a prefix length without its
 * address, a length the family cannot have. The "from" address is kept and shown. */
static void test_rule_parse_header(void **state) {
        RuleMatch kr = match_of("77", NULL, NULL);
        struct fib_rule_hdr *frh;
        struct nlmsghdr *nlh;
        uint8_t buf[256] = {}, src[4] = { 10, 0, 0, 0 };
        cleanup_free char *s = NULL;
        RuleInfo r;

        nlh = build_rule(buf, AF_INET, 77, 100, false, false);
        frh = mnl_nlmsg_get_payload(nlh);
        frh->src_len = 24;
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_true(r.has_other); /* a prefix without FRA_SRC */
        rule_info_done(&r);
        mnl_attr_put(nlh, FRA_SRC, sizeof src, src);
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_false(r.has_other);
        assert_memory_equal(r.src, src, sizeof src);
        assert_true(rule_matches(&r, &kr)); /* the shape; the range is the network phase's to check */
        s = rule_to_string(&r);
        assert_string_equal(s, "ipv4 pref 100 from 10.0.0.0/24 lookup 77");
        rule_info_done(&r);
        frh->src_len = 33;
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_true(r.has_other);
        rule_info_done(&r);
        frh->src_len = 24;
        frh->flags = FIB_RULE_IIF_DETACHED;
        assert_int_equal(rule_info_parse(nlh, &r), 0);
        assert_true(r.has_other);
        rule_info_done(&r);
}

/* cilium's rule is matched by table and mark; the host's rule with the same mark and another table,
 * or the same table and another mark, is not. */
static void test_rule_matches(void **state) {
        RuleInfo r = { .family = AF_INET,
                       .action = FR_ACT_TO_TBL,
                       .table = 2004,
                       .priority = 9,
                       .has_mark = true,
                       .fwmark = 0x200,
                       .fwmask = 0xf00 };
        RuleMatch cilium = match_of("2004", "0x200/0xf00", NULL), any2004 = match_of("2004", NULL, NULL);
        RuleMatch calico = match_of("1", "!0x100000/0x100000", "99");

        assert_true(rule_matches(&r, &cilium));
        assert_true(rule_matches(&r, &any2004));
        r.table = 300;
        assert_false(rule_matches(&r, &cilium));
        r.table = 2004;
        r.fwmark = 0xa00;
        assert_false(rule_matches(&r, &cilium));
        r.has_mark = false;
        assert_false(rule_matches(&r, &cilium));
        assert_true(rule_matches(&r, &any2004));
        r.action = FR_ACT_BLACKHOLE;
        assert_false(rule_matches(&r, &any2004));

        r = (RuleInfo) { .action = FR_ACT_TO_TBL,
                         .table = 1,
                         .priority = 99,
                         .invert = true,
                         .has_mark = true,
                         .fwmark = 0x100000,
                         .fwmask = 0x100000 };
        assert_true(rule_matches(&r, &calico));
        r.priority = 98;
        assert_false(rule_matches(&r, &calico));
}

static void test_rule_same(void **state) {
        RuleInfo a = { .family = AF_INET, .action = FR_ACT_TO_TBL, .table = 77, .priority = 100, .src_len = 24 };
        RuleInfo b = a;

        assert_true(rule_same(&a, &b));
        b.family = AF_INET6;
        assert_false(rule_same(&a, &b));
        b = a;
        b.priority = 101;
        assert_false(rule_same(&a, &b));
}

static void test_bpf_names(void **state) {
        assert_string_equal(bpf_hook_to_string(BPF_HOOK_TC_INGRESS), "ingress");
        assert_string_equal(bpf_hook_to_string(BPF_HOOK_TC_EGRESS), "egress");
        assert_string_equal(bpf_hook_to_string(BPF_HOOK_XDP), "xdp");
        assert_string_equal(bpf_hook_to_string(BPF_HOOK_TCX_INGRESS), "tcx_ingress");
        assert_string_equal(bpf_hook_to_string(BPF_HOOK_TCX_EGRESS), "tcx_egress");
        assert_null(bpf_hook_to_string(_BPF_HOOK_MAX));
        assert_string_equal(bpf_cgroup_attach_type_to_string(BPF_CGROUP_INET4_CONNECT), "connect4");
        assert_string_equal(bpf_cgroup_attach_type_to_string(BPF_CGROUP_UDP6_SENDMSG), "sendmsg6");
        assert_null(bpf_cgroup_attach_type_to_string(BPF_XDP));
}

static int pin_parent(const char *path, bool *ret_other) {
        const char *base = NULL;
        int fd = -EBADF, k;

        k = bpf_pin_open_parent(path, &fd, &base, ret_other);
        if (fd >= 0)
                (void) close(fd);
        return k;
}

static void test_bpf_pin_remove_refuses(void **state) {
        /* Relative paths and paths not on a bpf file system are refused before anything is touched:
         * the agent removes a pin beneath the directory this opens, and only when it says 1. */
        bool other = false;

        assert_int_equal(pin_parent("relative/pin", &other), -EINVAL);
        assert_int_equal(pin_parent("/", &other), -EINVAL);
        assert_int_equal(pin_parent("/proc/self/status", &other), 0);
        assert_true(other);
        assert_int_equal(pin_parent("/nonexistent-dir-nr/pin", &other), 0);
        assert_false(other);
}

/* The shipped default manifest parses, and the new directives refuse what no CNI owns. */
static void test_manifest_directives(void **state) {
        static const char *const bad[] = {
                "rule-table 254\n",
                "rule-table 2004 0x200\n",
                "rule-table 1 0x1/0x1 99 extra\n",
                "bpf-prog\n",
                "bpf-prog cil-\n",
                "bpf-prog a_name_far_too_long\n",
                "bpf-cgroup relative\n",
                "bpf-pin /sys\n",
                "bpf-pin /\n",
        };
        Manifest *m = manifest_new();
        char *err = NULL;

        assert_int_equal(manifest_parse_string(m, "t",
                                               "bpf-prog cil_\nbpf-cgroup /run/cilium/cgroupv2\n"
                                               "bpf-pin /sys/fs/bpf/tc/globals/cilium_*\n"
                                               "rule-table 2004 0x200/0xf00\n"
                                               "rule-table 1 !0x100000/0x100000 99\n"
                                               "rule-table 77\n",
                                               NULL, &err),
                         0);
        assert_int_equal(m->n_entries, 6);
        assert_int_equal(m->entries[0].type, DIRECTIVE_BPF_PROG);
        assert_int_equal(m->entries[1].type, DIRECTIVE_BPF_CGROUP);
        assert_int_equal(m->entries[2].type, DIRECTIVE_BPF_PIN);
        assert_int_equal(m->entries[3].type, DIRECTIVE_RULE_TABLE);
        assert_int_equal(m->entries[4].n_args, 3);
        manifest_free(m);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                m = manifest_new();
                assert_int_equal(manifest_parse_string(m, "t", bad[i], NULL, &err), -EINVAL);
                assert_non_null(err);
                err = mfree(err);
                manifest_free(m);
        }
}

/* An RTM_NEWLINK for "vrf-blue type vrf table TABLE", its IFLA_INFO_DATA before IFLA_INFO_KIND. */
static struct nlmsghdr *build_vrf(void *buf, uint32_t table) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct ifinfomsg *ifi;
        struct nlattr *info, *data;

        nlh->nlmsg_type = RTM_NEWLINK;
        ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
        ifi->ifi_index = 7;
        mnl_attr_put_strz(nlh, IFLA_IFNAME, "vrf-blue");
        info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
        data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
        mnl_attr_put_u32(nlh, IFLA_VRF_TABLE, table);
        mnl_attr_nest_end(nlh, data);
        mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "vrf");
        mnl_attr_nest_end(nlh, info);
        return nlh;
}

/* A VRF on table 2004: its table is not cilium's, even with cilium's rule looking it up. Without
 * the VRF, the same table is cilium's and its routes are out of the guard's view. */
static void test_vrf_table_not_cnis(void **state) {
        uint8_t buf[256] = {}, rbuf[256] = {};
        LinkInfo vrf;
        LinkTable links = { .links = &vrf, .n = 1 }, none = {};
        RuleInfo rule;
        RuleTable rules = { .rules = &rule, .n = 1 };
        RouteInfo rt = { .family = AF_INET, .table = 2004, .type = RTN_UNICAST };
        RouteTable routes = { .routes = &rt, .n = 1 }, view = {};
        Manifest *m = manifest_new();
        char *err = NULL;

        assert_int_equal(link_info_parse(build_vrf(buf, 2004), &vrf), 1);
        assert_string_equal(vrf.kind, "vrf");
        assert_int_equal(vrf.vrf_table, 2004);
        assert_ptr_equal(link_table_vrf_of(&links, 2004), &vrf);
        assert_null(link_table_vrf_of(&links, 2005));
        assert_int_equal(rule_info_parse(build_rule(rbuf, AF_INET, 2004, 9, true, false), &rule), 0);
        assert_int_equal(manifest_parse_string(m, "t", "rule-table 2004 0x200/0xf00\n", NULL, &err), 0);

        assert_int_equal(
                network_rule_guard_view(&(NetworkObservation) { .rules = &rules, .routes = &routes, .links = &none }, m,
                                        &view),
                0);
        assert_int_equal(view.n, 0); /* cilium's table: not the guard's business */
        free(view.routes);
        assert_int_equal(
                network_rule_guard_view(&(NetworkObservation) { .rules = &rules, .routes = &routes, .links = &links },
                                        m, &view),
                0);
        assert_int_equal(view.n, 1); /* the VRF's table: guarded like the host's own */
        free(view.routes);
        rule_info_done(&rule);
        manifest_free(m);
}

static struct nlmsghdr *build_rule_from(void *buf, const uint8_t *src, uint8_t len) {
        struct nlmsghdr *nlh = build_rule(buf, AF_INET, 77, 100, false, false);

        ((struct fib_rule_hdr *) mnl_nlmsg_get_payload(nlh))->src_len = len;
        mnl_attr_put(nlh, FRA_SRC, 4, src);
        return nlh;
}

/* kube-router's "from <pod CIDR> lookup 77" is its own only while the prefix lies in a range the node's
 * configuration names: "from 10.0.0.0/24" (or "from 10.244.0.0/8", wider than the range) makes table 77
 * the host's, and so does any "from" when no range is known. The guard view shows it: a table the CNI
 * owns is left out of it. */
static void test_rule_source_in_ranges(void **state) {
        static const struct {
                uint8_t src[4], len;
                size_t n_ranges, view;
        } cases[] = {
                { { 10, 244, 1, 0 }, 24, 2, 0 }, /* inside the pod range: kube-router's table */
                { { 10, 96, 0, 10 }, 32, 2, 0 }, /* a service address */
                { { 10, 244, 1, 0 }, 24, 0, 1 }, /* no range known: no evidence */
                { { 10, 0, 0, 0 }, 24, 2, 1 },   /* the host's LAN */
                { { 10, 244, 0, 0 }, 8, 2, 1 },  /* an address inside, a prefix wider than the pod range */
        };
        RuleInfo rule;
        RuleTable rules = { .rules = &rule, .n = 1 };
        RouteInfo rt = { .family = AF_INET, .table = 77, .type = RTN_UNICAST };
        RouteTable routes = { .routes = &rt, .n = 1 };
        LinkTable none = {};
        CtPrefix ranges[2];
        Manifest *m = manifest_new();
        char *err = NULL;

        assert_int_equal(ct_prefix_parse("10.244.0.0/16", &ranges[0]), 0);
        assert_int_equal(ct_prefix_parse("10.96.0.0/12", &ranges[1]), 0);
        assert_int_equal(manifest_parse_string(m, "t", "rule-table 77\n", NULL, &err), 0);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                NetworkObservation o = { .rules = &rules,
                                         .routes = &routes,
                                         .links = &none,
                                         .ranges = ranges,
                                         .n_ranges = cases[i].n_ranges };
                RouteTable view = {};
                uint8_t buf[256] = {};

                assert_int_equal(rule_info_parse(build_rule_from(buf, cases[i].src, cases[i].len), &rule), 0);
                assert_int_equal(network_rule_guard_view(&o, m, &view), 0);
                assert_int_equal(view.n, cases[i].view);
                free(view.routes);
                rule_info_done(&rule);
        }
        manifest_free(m);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vrf_table_not_cnis),
                cmocka_unit_test(test_rule_parse),
                cmocka_unit_test(test_rule_parse_invalid),
                cmocka_unit_test(test_rule_match_args),
                cmocka_unit_test(test_rule_matches),
                cmocka_unit_test(test_rule_matches_shape),
                cmocka_unit_test(test_rule_parse_selectors),
                cmocka_unit_test(test_rule_parse_unknown_attribute),
                cmocka_unit_test(test_rule_parse_header),
                cmocka_unit_test(test_rule_source_in_ranges),
                cmocka_unit_test(test_rule_same),
                cmocka_unit_test(test_bpf_names),
                cmocka_unit_test(test_bpf_pin_remove_refuses),
                cmocka_unit_test(test_manifest_directives),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
