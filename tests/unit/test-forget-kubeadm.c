/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/forget/forget-kubeadm.c: a node's key taken out of kubeadm's ClusterStatus. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/forget/forget-kubeadm.h"
#include "macro.h"
#include "string-util.h"

/* As kubeadm 1.20's uploadconfig phase writes it. */
static const char status[] =
        "apiEndpoints:\n"
        "  cp1:\n"
        "    advertiseAddress: 10.0.0.1\n"
        "    bindPort: 6443\n"
        "  cp3:\n"
        "    advertiseAddress: 10.0.0.3\n"
        "    bindPort: 6443\n"
        "  cp2:\n"
        "    advertiseAddress: 10.0.0.2\n"
        "    bindPort: 6443\n"
        "apiVersion: kubeadm.k8s.io/v1beta2\n"
        "kind: ClusterStatus\n";

static void test_without(void **state) {
        KubeadmEndpoint e = {};
        KubeadmEndpoint again = {};

        assert_int_equal(kubeadm_cluster_status_without(status, "cp3", &e), 1);
        assert_string_equal(e.address, "10.0.0.3");
        assert_non_null(e.status_without);
        /* The others and the document's own keys stay; cp3's entry is gone. */
        assert_non_null(strstr(e.status_without, "cp1:"));
        assert_non_null(strstr(e.status_without, "cp2:"));
        assert_non_null(strstr(e.status_without, "10.0.0.2"));
        assert_non_null(strstr(e.status_without, "kind: ClusterStatus"));
        assert_null(strstr(e.status_without, "cp3"));
        assert_null(strstr(e.status_without, "10.0.0.3"));
        /* What was written reads back, without the key. */
        assert_int_equal(kubeadm_cluster_status_without(e.status_without, "cp3", &again), 0);
        assert_int_equal(kubeadm_cluster_status_without(e.status_without, "cp1", &again), 1);
        assert_string_equal(again.address, "10.0.0.1");
        kubeadm_endpoint_done(&again);
        kubeadm_endpoint_done(&e);
}

static void test_absent(void **state) {
        KubeadmEndpoint e = {};

        /* A name that is a prefix of a key is not that key. */
        assert_int_equal(kubeadm_cluster_status_without(status, "cp", &e), 0);
        assert_null(e.status_without);
        assert_int_equal(kubeadm_cluster_status_without("kind: ClusterStatus\n", "cp1", &e), 0);
        assert_int_equal(kubeadm_cluster_status_without("apiEndpoints: [cp1]\n", "cp1", &e), 0);
        assert_int_equal(kubeadm_cluster_status_without("apiEndpoints: {cp1\n", "cp1", &e), -EBADMSG);
        assert_null(e.status_without);
}

/* The emitter recurses and indents once per level: a document nested past what kubeadm writes is
 * refused before it is written back, also where the dropped key held the anchors that nest it. */
static void test_deep(void **state) {
        const size_t depth = 1000; /* libyaml scans flow nesting in quadratic time: no more */
        char *deep = malloc(depth * 2 + 64), *p = deep, chain[512];
        KubeadmEndpoint e = {};

        assert_non_null(deep);
        p += sprintf(p, "apiEndpoints:\n  cp1: {advertiseAddress: 10.0.0.1}\n  x: ");
        memset(p, '[', depth);
        memset(p + depth, ']', depth);
        strcpy(p + 2 * depth, "\n");
        assert_int_equal(kubeadm_cluster_status_without(deep, "cp1", &e), -EBADMSG);
        assert_null(e.status_without);
        assert_null(e.address);
        free(deep);

        /* 20 levels each: 23 deep as written, 42 once *b stands first for what cp1 held. */
        (void) snprintf(chain, sizeof chain,
                        "apiEndpoints:\n"
                        "  cp1: [&a %1$s1%2$s, &b %1$s*a%2$s]\n"
                        "  cp2: {advertiseAddress: 10.0.0.2}\n"
                        "  x: *b\n",
                        "[[[[[[[[[[[[[[[[[[[[", "]]]]]]]]]]]]]]]]]]]]");
        assert_int_equal(kubeadm_cluster_status_without(chain, "cp2", &e), 1);
        assert_string_equal(e.address, "10.0.0.2");
        kubeadm_endpoint_done(&e);
        assert_int_equal(kubeadm_cluster_status_without(chain, "cp1", &e), -EBADMSG);
        assert_null(e.status_without);
        assert_null(e.address);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_without),
                cmocka_unit_test(test_absent),
                cmocka_unit_test(test_deep),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
