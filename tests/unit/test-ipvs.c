/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS: the requests' bytes, parsing a listed service, which services are kube-proxy's, and that looking at an absent
 * IPVS neither fails nor loads it. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <netinet/in.h>
#include <string.h>

#include "agent/phases/firewall/firewall-ipvs-select.h"
#include "macro.h"
#include "netreset/ipvs.h"

/* What ipvsadm -C sends once the family id is known: a bare generic netlink header,
 * IPVS_CMD_FLUSH (17), version 1, no attribute; flags NLM_F_REQUEST (NLM_F_ACK and the sequence
 * number are added when it is sent). Checked against libnl-genl's genlmsg_put() +
 * nl_complete_msg(), which node-reset used before: the same bytes but for the sequence number and
 * port id. IPVS is not in the test kernel, so no kernel has seen them. Host-endian netlink header:
 * a little-endian host's. */
static const uint8_t golden_flush[] = {
        0x14, 0x00, 0x00, 0x00, 0x34, 0x12, 0x01, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x01, 0x00, 0x00,
};

/* ipvsadm -L's first request: IPVS_CMD_GET_SERVICE (4), version 1, as a dump (NLM_F_REQUEST |
 * NLM_F_DUMP). libnl also set NLM_F_ACK, which the kernel ignores on a dump request. */
static const uint8_t golden_get_services[] = {
        0x14, 0x00, 0x00, 0x00, 0x34, 0x12, 0x01, 0x03, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00,
};

static void test_messages(void **state) {
        uint8_t buf[IPVS_MESSAGE_SIZE];
        struct nlmsghdr *nlh;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        skip();
#endif
        nlh = ipvs_message_flush(buf, 0x1234);
        assert_int_equal(nlh->nlmsg_len, sizeof golden_flush);
        assert_memory_equal(nlh, golden_flush, sizeof golden_flush);
        nlh = ipvs_message_get_services(buf, 0x1234);
        assert_int_equal(nlh->nlmsg_len, sizeof golden_get_services);
        assert_memory_equal(nlh, golden_get_services, sizeof golden_get_services);
}

/* Where IPVS is not in the kernel, asking is "not supported", and asking loaded nothing. */
static void test_absent_is_not_supported(void **state) {
        char *msg = NULL;
        unsigned n = 0;
        int r;

        if (ipvs_present()) {
                skip();
                return;
        }
        r = ipvs_count_services(&n, &msg);
        assert_int_equal(r, -EPROTONOSUPPORT);
        assert_non_null(msg);
        assert_string_equal(msg, "IPVS not present in this kernel");
        free(msg);
        msg = NULL;
        assert_int_equal(ipvs_flush(&msg), -EPROTONOSUPPORT);
        free(msg);
        assert_false(ipvs_present());
        assert_int_equal(access("/proc/net/ip_vs", F_OK), -1);
}

static IpvsService svc(int family, uint16_t proto, const char *addr, uint16_t port) {
        IpvsService s = { .family = family, .protocol = proto, .port = port };

        assert_int_equal(inet_pton(family, addr, s.addr), 1);
        return s;
}

static IpvsAddr ip(const char *addr) {
        IpvsAddr a = { .family = strchr(addr, ':') ? AF_INET6 : AF_INET };

        assert_int_equal(inet_pton(a.family, addr, a.bytes), 1);
        return a;
}

/* No IPVS in the test kernel: the decision is tested on crafted service lists. kube-proxy's are
 * those on kube-ipvs0 and the NodePorts on node addresses; keepalived's VIP, an LVS director's
 * service on a node address outside the range, a firewall-mark service stay. */
static void test_owner(void **state) {
        const IpvsAddr ipvs0[] = { ip("10.96.0.1"), ip("10.96.0.10"), ip("fd00:96::a") };
        const IpvsAddr node[] = { ip("192.0.2.10"), ip("2001:db8::10"), ip("127.0.0.1") };
        const IpvsOwnerView v = {
                ipvs0, ELEMENTSOF(ipvs0), node, ELEMENTSOF(node), KUBE_PROXY_NODEPORT_MIN, KUBE_PROXY_NODEPORT_MAX
        };
        IpvsService s;

        s = svc(AF_INET, IPPROTO_TCP, "10.96.0.1", 443);
        assert_string_equal(ipvs_service_owner(&s, &v), "kube-proxy's: its address is on kube-ipvs0");
        s = svc(AF_INET, IPPROTO_UDP, "10.96.0.10", 53);
        assert_non_null(ipvs_service_owner(&s, &v));
        s = svc(AF_INET6, IPPROTO_TCP, "fd00:96::a", 80);
        assert_non_null(ipvs_service_owner(&s, &v));
        s = svc(AF_INET, IPPROTO_TCP, "192.0.2.10", 30080);
        assert_string_equal(ipvs_service_owner(&s, &v), "kube-proxy's: a NodePort on a node address");
        s = svc(AF_INET6, IPPROTO_TCP, "2001:db8::10", 32767);
        assert_non_null(ipvs_service_owner(&s, &v));
        /* keepalived's VIP (on no kube-ipvs0 address), an LVS service on a node address outside the
         * range, the same port on an address of nobody's, a firewall-mark service. */
        s = svc(AF_INET, IPPROTO_TCP, "192.0.2.200", 443);
        assert_null(ipvs_service_owner(&s, &v));
        s = svc(AF_INET, IPPROTO_TCP, "192.0.2.10", 80);
        assert_null(ipvs_service_owner(&s, &v));
        s = svc(AF_INET, IPPROTO_TCP, "192.0.2.10", 29999);
        assert_null(ipvs_service_owner(&s, &v));
        s = svc(AF_INET, IPPROTO_TCP, "198.51.100.1", 30080);
        assert_null(ipvs_service_owner(&s, &v));
        s = (IpvsService) { .family = AF_INET, .fwmark = 7 };
        assert_null(ipvs_service_owner(&s, &v));
        /* The v4 bytes of a v6 service are no v4 address. */
        s = svc(AF_INET6, IPPROTO_TCP, "::", 443);
        memcpy(s.addr, ipvs0[0].bytes, 4);
        assert_null(ipvs_service_owner(&s, &v));
}

/* A service listed by the kernel (built by hand: no IPVS here) parses back; the delete request
 * names it by protocol, address and port (network order), or by its fwmark alone. */
static void test_service_parse_and_delete(void **state) {
        uint8_t buf[IPVS_MESSAGE_SIZE * 2] = {};
        IpvsService in = svc(AF_INET6, IPPROTO_UDP, "fd00:96::a", 53), out;
        struct nlmsghdr *nlh = ipvs_message_del_service(buf, 0x1234, &in);
        cleanup_free char *s = NULL;

        nlh->nlmsg_type = 0x1234;
        assert_int_equal(((struct genlmsghdr *) mnl_nlmsg_get_payload(nlh))->cmd, IPVS_CMD_DEL_SERVICE);
        assert_int_equal(ipvs_service_parse(nlh, &out), 0);
        assert_memory_equal(&in, &out, sizeof in);
        s = ipvs_service_to_string(&out);
        assert_string_equal(s, "UDP [fd00:96::a]:53");
        in = (IpvsService) { .family = AF_INET, .fwmark = 7 };
        nlh = ipvs_message_del_service(buf, 0x1234, &in);
        assert_int_equal(ipvs_service_parse(nlh, &out), 0);
        assert_int_equal(out.fwmark, 7);
        assert_int_equal(out.protocol, 0);
        assert_int_equal(out.port, 0);
}

/* --service-node-port-range as the API server takes it: "A-B" or "A+N". */
static void test_port_range(void **state) {
        uint16_t lo = 0, hi = 0;

        assert_int_equal(ipvs_port_range_parse("30000-32767", &lo, &hi), 0);
        assert_int_equal(lo, 30000);
        assert_int_equal(hi, 32767);
        assert_int_equal(ipvs_port_range_parse("20000+999", &lo, &hi), 0);
        assert_int_equal(lo, 20000);
        assert_int_equal(hi, 20999);
        assert_int_equal(ipvs_port_range_parse("30000", &lo, &hi), -EINVAL);
        assert_int_equal(ipvs_port_range_parse("32767-30000", &lo, &hi), -EINVAL);
        assert_int_equal(ipvs_port_range_parse("30000-70000", &lo, &hi), -EINVAL);
        assert_int_equal(ipvs_port_range_parse("-1-5", &lo, &hi), -EINVAL);
        assert_int_equal(ipvs_port_range_parse("1-5x", &lo, &hi), -EINVAL);
        assert_int_equal(lo, 20000);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_messages),
                cmocka_unit_test(test_absent_is_not_supported),
                cmocka_unit_test(test_owner),
                cmocka_unit_test(test_port_range),
                cmocka_unit_test(test_service_parse_and_delete),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
