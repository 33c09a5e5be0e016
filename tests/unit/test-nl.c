/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The netlink module: a request's opening bytes, sequence numbers, and a real exchange with the
 * generic netlink controller (read only, present in every network namespace). */

#include <libmnl/libmnl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <string.h>

#include "macro.h"
#include "netreset/nl.h"

/* RTM_GETLINK dump, an all-zero ifinfomsg: what is left in the buffer does not leak into it. */
static const uint8_t golden_getlink[] = {
        0x20, 0x00, 0x00, 0x00, 0x12, 0x00, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void test_message_start(void **state) {
        uint8_t buf[64];
        struct ifinfomsg *ifi;

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        skip();
#endif
        memset(buf, 0xff, sizeof buf);
        ifi = nl_message_start(buf, sizeof buf, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, sizeof *ifi);
        assert_ptr_equal(ifi, buf + NLMSG_HDRLEN);
        assert_memory_equal(buf, golden_getlink, sizeof golden_getlink);
        assert_int_equal(buf[sizeof golden_getlink], 0);
}

static void test_seq_take(void **state) {
        CLEANUP(nl_freep) NlSocket *s = NULL;

        assert_int_equal(nl_open(NETLINK_GENERIC, &s), 0);
        assert_int_equal(nl_seq_take(s, 1), 1);
        assert_int_equal(nl_seq_take(s, 3), 2);
        assert_int_equal(nl_seq_take(s, 1), 5);
}

static void test_genl_family_id(void **state) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        uint16_t id = 0;

        assert_int_equal(nl_open(NETLINK_GENERIC, &s), 0);
        assert_int_equal(nl_genl_family_id(s, "nlctrl", &id, NULL), 0);
        assert_int_equal(id, GENL_ID_CTRL);
        /* The same socket serves the next request. */
        id = 0;
        assert_int_equal(nl_genl_family_id(s, "nlctrl", &id, NULL), 0);
        assert_int_equal(id, GENL_ID_CTRL);
}

static struct nlmsghdr *getfamily(uint8_t *buf, size_t size, uint16_t flags) {
        struct genlmsghdr *g = nl_message_start(buf, size, GENL_ID_CTRL, NLM_F_REQUEST | flags, sizeof *g);

        g->cmd = CTRL_CMD_GETFAMILY;
        g->version = 1;
        return (struct nlmsghdr *) buf;
}

/* The kernel's error comes back as -errno: asking for a family id nobody has (by id, which never
 * loads a module). */
static void test_call_error(void **state) {
        CLEANUP(nl_freep) NlSocket *s = NULL;
        uint8_t buf[64];
        struct nlmsghdr *nlh = getfamily(buf, sizeof buf, 0);

        mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, 0xfff0);
        assert_int_equal(nl_open(NETLINK_GENERIC, &s), 0);
        assert_int_equal(nl_call(s, nlh, NULL, NULL, NULL), -ENOENT);
        assert_true(nlh->nlmsg_flags & NLM_F_ACK);
}

static int count_cb(const struct nlmsghdr *nlh, void *userdata) {
        unsigned *n = userdata;

        (*n)++;
        return *n == 1 ? 0 : 1;
}

static int fail_cb(const struct nlmsghdr *nlh, void *userdata) {
        return -ENOTRECOVERABLE;
}

/* A dump of the families: a callback stops it with success (> 0) or with its error (< 0). */
static void test_call_stop(void **state) {
        CLEANUP(nl_freep) NlSocket *s = NULL, *t = NULL;
        uint8_t buf[64];
        unsigned n = 0;

        assert_int_equal(nl_open(NETLINK_GENERIC, &s), 0);
        assert_int_equal(nl_call(s, getfamily(buf, sizeof buf, NLM_F_DUMP), count_cb, &n, NULL), 0);
        assert_int_equal(n, 2);
        assert_int_equal(nl_open(NETLINK_GENERIC, &t), 0);
        assert_int_equal(nl_call(t, getfamily(buf, sizeof buf, NLM_F_DUMP), fail_cb, NULL, NULL), -ENOTRECOVERABLE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_message_start),
                cmocka_unit_test(test_seq_take),
                cmocka_unit_test(test_genl_family_id),
                cmocka_unit_test(test_call_error),
                cmocka_unit_test(test_call_stop),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
