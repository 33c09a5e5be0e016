/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IPVS: the flush request's bytes, and that looking at an absent IPVS neither fails nor loads it. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/ip_vs.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <stdlib.h>
#include <unistd.h>

#include "netreset/ipvs.h"

static void test_flush_message(void **state) {
        struct nl_msg *msg = ipvs_flush_msg_new(0x1234);
        struct nlmsghdr *nlh;
        struct genlmsghdr *g;

        assert_non_null(msg);
        nlh = nlmsg_hdr(msg);
        /* ipvsadm -C: IPVS_CMD_FLUSH, version 1, no attributes, addressed to the resolved family. */
        assert_int_equal(nlh->nlmsg_type, 0x1234);
        assert_int_equal(nlh->nlmsg_len, NLMSG_HDRLEN + GENL_HDRLEN);
        assert_false(nlh->nlmsg_flags & NLM_F_DUMP);
        g = nlmsg_data(nlh);
        assert_int_equal(g->cmd, IPVS_CMD_FLUSH);
        assert_int_equal(g->version, IPVS_GENL_VERSION);
        nlmsg_free(msg);
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
                cmocka_unit_test(test_flush_message),
                cmocka_unit_test(test_absent_is_not_supported),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
