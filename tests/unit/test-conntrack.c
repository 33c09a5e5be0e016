/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The conntrack flush's ranges: parsing (both families, host prefixes, refusals) and containment at
 * byte and bit boundaries. The kernel side is tests/integration/test-conntrack.sh. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "netreset/conntrack.h"

static bool in(const char *prefix, const char *addr) {
        uint8_t a[16];
        CtPrefix p;
        int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

        assert_int_equal(ct_prefix_parse(prefix, &p), 0);
        assert_int_equal(inet_pton(family, addr, a), 1);
        return ct_prefix_contains(&p, family, a);
}

static void test_parse(void **state) {
        CtPrefix p;

        assert_int_equal(ct_prefix_parse("10.96.0.0/12", &p), 0);
        assert_int_equal(p.family, AF_INET);
        assert_int_equal(p.len, 12);
        assert_int_equal(ct_prefix_parse("169.254.25.10", &p), 0);
        assert_int_equal(p.len, 32);
        assert_int_equal(ct_prefix_parse("fd00:10:96::/112", &p), 0);
        assert_int_equal(p.family, AF_INET6);
        assert_int_equal(p.len, 112);
        assert_int_equal(ct_prefix_parse("::1", &p), 0);
        assert_int_equal(p.len, 128);
        assert_int_equal(ct_prefix_parse("10.0.0.0/0", &p), 0);
        assert_int_equal(p.len, 0);
        assert_int_equal(ct_prefix_parse("10.0.0.0/33", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("fd00::/129", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("10.0.0.0/", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("10.0.0.0/1x", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("10.0.0.0/-1", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("cluster", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("", &p), -EINVAL);
        assert_int_equal(ct_prefix_parse("1111:2222:3333:4444:5555:6666:7777:8888/128 and more", &p), -EINVAL);
}

static void test_contains(void **state) {
        assert_true(in("10.96.0.0/12", "10.96.0.10"));
        assert_true(in("10.96.0.0/12", "10.111.255.255"));
        assert_false(in("10.96.0.0/12", "10.112.0.0"));
        assert_false(in("10.96.0.0/12", "10.95.255.255"));
        assert_true(in("10.244.1.0/24", "10.244.1.200"));
        assert_false(in("10.244.1.0/24", "10.244.2.1"));
        assert_true(in("169.254.25.10", "169.254.25.10"));
        assert_false(in("169.254.25.10", "169.254.25.11"));
        assert_true(in("0.0.0.0/0", "192.0.2.1"));
        assert_true(in("fd00:10:96::/112", "fd00:10:96::a"));
        assert_false(in("fd00:10:96::/112", "fd00:10:96::1:0"));
        /* A family never matches the other's bytes. */
        assert_false(in("0.0.0.0/0", "::1"));
        assert_false(in("::/0", "10.0.0.1"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_contains),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
