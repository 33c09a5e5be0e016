/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS: the requests' bytes, and that looking at an absent IPVS neither fails nor loads it. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <unistd.h>

#include "netreset/ipvs.h"

/* What ipvsadm -C sends once the family id is known: a bare generic netlink header,
 * IPVS_CMD_FLUSH (17), version 1, no attribute; flags NLM_F_REQUEST (NLM_F_ACK and the sequence
 * number are added when it is sent). Checked against libnl-genl's genlmsg_put() +
 * nl_complete_msg(), which node-reset used before: the same bytes but for the sequence number and
 * port id. IPVS is not in the test kernel, so no kernel has seen them. Host-endian netlink header:
 * a little-endian host's. */
static const uint8_t golden_flush[] = {
        0x14, 0x00, 0x00, 0x00, 0x34, 0x12, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x11, 0x01, 0x00, 0x00,
};

/* ipvsadm -L's first request: IPVS_CMD_GET_SERVICE (4), version 1, as a dump (NLM_F_REQUEST |
 * NLM_F_DUMP). libnl also set NLM_F_ACK, which the kernel ignores on a dump request. */
static const uint8_t golden_get_services[] = {
        0x14, 0x00, 0x00, 0x00, 0x34, 0x12, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x04, 0x01, 0x00, 0x00,
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_messages),
                cmocka_unit_test(test_absent_is_not_supported),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
