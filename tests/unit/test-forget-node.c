/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/forget/forget-node.c (a Node and its Lease as forget reads them, RFC 3339 times)
 * and agent/os/host-place.c (where a URL's host is). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/os/host-place.h"
#include "agent/forget/forget-node.h"
#include "macro.h"
#include "strv.h"

static void test_time(void **state) {
        usec_t t;

        assert_int_equal(kube_time_parse("1970-01-01T00:00:00Z", &t), 0);
        assert_true(t == 0);
        assert_int_equal(kube_time_parse("2026-01-02T03:04:05Z", &t), 0);
        assert_true(t == 1767323045ULL * USEC_PER_SEC);
        /* MicroTime, as a Lease's renewTime */
        assert_int_equal(kube_time_parse("2026-01-02T03:04:05.250000Z", &t), 0);
        assert_true(t == 1767323045ULL * USEC_PER_SEC + 250000);
        assert_int_equal(kube_time_parse("2026-01-02T04:04:05.5+01:00", &t), 0);
        assert_true(t == 1767323045ULL * USEC_PER_SEC + 500000);
        assert_int_equal(kube_time_parse("2026-01-02T02:34:05-00:30", &t), 0);
        assert_true(t == 1767323045ULL * USEC_PER_SEC);
        for (const char *const *bad =
                     (const char *const[]) { "", "2026-01-02", "2026-01-02 03:04:05Z", "2026-13-02T03:04:05Z",
                                             "2026-01-02T03:04:05", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05+0100",
                                             "2026-01-02T03:04:05Zjunk", "1969-12-31T23:59:59Z", "2026-01-02T03:04:5xZ",
                                             NULL };
             *bad; bad++)
                assert_int_equal(kube_time_parse(*bad, &t), -EINVAL);
        assert_int_equal(kube_time_parse(NULL, &t), -EINVAL);
}

static JsonValue *load(const char *text) {
        JsonValue *v = NULL;

        assert_int_equal(json_parse(text, strlen(text), &v), 0);
        return v;
}

/* A control plane as kubeadm labels it, NotReady since its kubelet stopped. */
static void test_node(void **state) {
        JsonValue *v;
        ForgetNode n = {};
        usec_t renew;

        v = load("{\"kind\":\"Node\",\"metadata\":{\"name\":\"cp3\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
             "\"labels\":{\"node-role.kubernetes.io/control-plane\":\"\"},\"finalizers\":[\"a\",\"b\"]},"
             "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.3\"},"
             "{\"type\":\"Hostname\",\"address\":\"cp3\"}],"
             "\"conditions\":[{\"type\":\"MemoryPressure\",\"status\":\"False\","
             "\"lastHeartbeatTime\":\"2026-01-02T00:00:00Z\"},"
             "{\"type\":\"Ready\",\"status\":\"Unknown\",\"lastHeartbeatTime\":\"2026-01-01T01:00:00Z\"}]}}");
        assert_int_equal(forget_node_read(v, &n), 0);
        json_free(v);
        assert_string_equal(n.server, "label node-role.kubernetes.io/control-plane");
        assert_null(n.etcd_member);
        assert_string_equal(n.ready, "Unknown");
        assert_string_equal(n.finalizers, "a, b");
        assert_false(n.deleting);
        assert_true(strv_contains(n.addresses, "10.0.0.3") && strv_contains(n.addresses, "cp3"));
        assert_true(n.heartbeat == 1767229200ULL * USEC_PER_SEC); /* Ready's, not MemoryPressure's */
        assert_true(n.created == 1767225600ULL * USEC_PER_SEC);
        /* The later of the heartbeat and the Lease. */
        assert_true(forget_node_last_seen(&n, 0) == n.heartbeat);
        v = load("{\"spec\":{\"holderIdentity\":\"cp3\",\"renewTime\":\"2026-01-01T02:00:00.000000Z\"}}");
        assert_int_equal(forget_lease_read(v, &renew), 0);
        json_free(v);
        assert_true(forget_node_last_seen(&n, renew) == renew);
        forget_node_done(&n);

        /* k3s's server: its member named by annotation; no conditions: created is all there is. Members
         * are Go's field names exactly: "Metadata" is none. */
        v = load("{\"metadata\":{\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
                 "\"deletionTimestamp\":\"2026-01-01T00:00:01Z\","
                 "\"annotations\":{\"etcd.k3s.cattle.io/node-name\":\"srv1-1a2b3c4d\"}},"
                 "\"Metadata\":{\"labels\":{\"node-role.kubernetes.io/master\":\"\"}},"
                 "\"status\":{\"addresses\":\"nope\"}}");
        assert_int_equal(forget_node_read(v, &n), 0);
        json_free(v);
        assert_string_equal(n.etcd_member, "srv1-1a2b3c4d");
        assert_string_equal(n.server, "annotation etcd.k3s.cattle.io/node-name");
        assert_true(n.deleting);
        assert_null(n.addresses);
        assert_true(forget_node_last_seen(&n, 0) == n.created);
        forget_node_done(&n);
        v = load("{\"spec\":{\"holderIdentity\":\"cp3\",\"renewTime\":7}}");
        assert_int_equal(forget_lease_read(v, &renew), -ENOENT);
        json_free(v);
}

static void test_host_place(void **state) {
        char buf[64];

        assert_string_equal(url_host("https://10.0.0.3:2380", buf, sizeof buf), "10.0.0.3");
        assert_string_equal(url_host("https://[fd00::3]:2380/x", buf, sizeof buf), "fd00::3");
        assert_string_equal(url_host("http://user:pw@etcd.example/", buf, sizeof buf), "etcd.example");
        assert_string_equal(url_host("10.0.0.3", buf, sizeof buf), "10.0.0.3");
        assert_null(url_host("https://", buf, sizeof buf));
        assert_null(url_host("https://[fd00::3", buf, sizeof buf));
        assert_null(url_host("https://a-very-long-name.example:1", buf, 8));
        for (const char *const *here =
                     (const char *const[]) { "https://127.0.0.1:2379", "https://127.0.0.11:2379",
                                             "https://0.0.0.0:2379", "https://[::]:2379", "https://[::1]:2379",
                                             "https://[::ffff:127.0.0.1]:1", "https://localhost:2379",
                                             "http://etcd.localhost.", NULL };
             *here; here++)
                assert_int_equal(url_host_place(*here), HOST_HERE);
        assert_int_equal(url_host_place("https://etcd.example:2379"), HOST_UNKNOWN);
        assert_int_equal(url_host_place("https://"), HOST_UNKNOWN);
        /* TEST-NET-2 stands for another machine, unless this one has it. */
        if (host_place("198.51.100.9") == HOST_ELSEWHERE)
                assert_int_equal(url_host_place("https://[::ffff:198.51.100.9]:2379"), HOST_ELSEWHERE);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_time),
                cmocka_unit_test(test_node),
                cmocka_unit_test(test_host_place),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
