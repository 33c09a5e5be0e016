/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/node-addresses.c: the node's own addresses from kubelet's env files, the API server's
 * static pod and kubeadm's configuration, beneath a root. */

#include <arpa/inet.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config/node-addresses.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "tests/support/files.h"

/* Beneath a root: kubelet's dual-stack --node-ip, the API server's and kubeadm's advertise address. */
static void test_read_root(void **state) {
        char tmpl[] = "/tmp/nr-node-addr-XXXXXX";
        NodeAddresses l = {};
        uint8_t a[16];
        int root;

        assert_non_null(mkdtemp(tmpl));
        root = open(tmpl, O_DIRECTORY | O_CLOEXEC);
        assert_true(root >= 0);
        assert_int_equal(mkdirat(root, "var", 0755), 0);
        assert_int_equal(mkdirat(root, "var/lib", 0755), 0);
        assert_int_equal(mkdirat(root, "var/lib/kubelet", 0755), 0);
        assert_int_equal(mkdirat(root, "etc", 0755), 0);
        assert_int_equal(mkdirat(root, "etc/kubernetes", 0755), 0);
        assert_int_equal(mkdirat(root, "etc/kubernetes/manifests", 0755), 0);
        test_write_at(root, "var/lib/kubelet/kubeadm-flags.env",
                      "KUBELET_KUBEADM_ARGS=\"--node-ip=10.0.0.5,fd00::5\"\n");
        test_write_at(root, "etc/kubernetes/manifests/kube-apiserver.yaml",
                      "spec:\n  containers:\n  - command: [kube-apiserver, --advertise-address=10.0.0.6]\n"
                      "    args: [--service-node-port-range, 20000-22767]\n");
        test_write_at(root, "etc/kubernetes/kubeadm-config.yaml",
                      "kind: ClusterConfiguration\n---\nkind: InitConfiguration\nlocalAPIEndpoint:\n"
                      "  advertiseAddress: 10.0.0.7\n# advertiseAddress: 10.0.0.8\n");
        assert_int_equal(node_addresses_read(root, &l), 0);
        assert_int_equal(l.n, 4);
        assert_int_equal(inet_pton(AF_INET, "10.0.0.5", a), 1);
        assert_string_equal(node_addresses_find(&l, AF_INET, a),
                            "kubelet's --node-ip (/var/lib/kubelet/kubeadm-flags.env)");
        assert_int_equal(inet_pton(AF_INET6, "fd00::5", a), 1);
        assert_non_null(node_addresses_find(&l, AF_INET6, a));
        assert_int_equal(inet_pton(AF_INET, "10.0.0.6", a), 1);
        assert_non_null(strstr(node_addresses_find(&l, AF_INET, a), "--advertise-address"));
        assert_int_equal(inet_pton(AF_INET, "10.0.0.7", a), 1);
        assert_non_null(strstr(node_addresses_find(&l, AF_INET, a), "advertiseAddress"));
        assert_int_equal(inet_pton(AF_INET, "10.0.0.8", a), 1);
        assert_null(node_addresses_find(&l, AF_INET, a));
        node_addresses_done(&l);
        {
                cleanup_free char *range = NULL, *none = NULL;

                assert_int_equal(node_apiserver_flag(root, "service-node-port-range", &range), 0);
                assert_string_equal(range, "20000-22767");
                assert_int_equal(node_apiserver_flag(root, "no-such-flag", &none), 0);
                assert_null(none);
        }
        (void) unlinkat(root, "var/lib/kubelet/kubeadm-flags.env", 0);
        (void) unlinkat(root, "etc/kubernetes/manifests/kube-apiserver.yaml", 0);
        (void) unlinkat(root, "etc/kubernetes/kubeadm-config.yaml", 0);
        static const char *const dirs[] = { "var/lib/kubelet",          "var/lib",        "var",
                                            "etc/kubernetes/manifests", "etc/kubernetes", "etc" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                (void) unlinkat(root, dirs[i], AT_REMOVEDIR);
        close(root);
        (void) rmdir(tmpl);
}

/* kubelet's env files as systemd reads them: a comment is no assignment, the last assignment wins, a
 * quoted value splits at blanks into flags, KUBELET_EXTRA_ARGS comes after KUBELET_KUBEADM_ARGS, and a
 * file that is no environment file names nothing. */
static void test_kubelet_env(void **state) {
        char tmpl[] = "/tmp/nr-node-addr-XXXXXX";
        NodeAddresses l = {};
        uint8_t a[16];
        int root;

        assert_non_null(mkdtemp(tmpl));
        root = open(tmpl, O_DIRECTORY | O_CLOEXEC);
        assert_true(root >= 0);
        assert_int_equal(mkdirat(root, "var", 0755), 0);
        assert_int_equal(mkdirat(root, "var/lib", 0755), 0);
        assert_int_equal(mkdirat(root, "var/lib/kubelet", 0755), 0);
        assert_int_equal(mkdirat(root, "etc", 0755), 0);
        assert_int_equal(mkdirat(root, "etc/default", 0755), 0);
        test_write_at(root, "var/lib/kubelet/kubeadm-flags.env",
                      "# KUBELET_KUBEADM_ARGS=\"--node-ip=10.9.9.9\"\n"
                      "KUBELET_KUBEADM_ARGS=--node-ip=10.8.8.8\n"
                      "KUBELET_KUBEADM_ARGS=\"--a=b --node-ip=10.0.0.5\"\n"
                      "OTHER=--node-ip=10.1.1.1\n"
                      "  KUBELET_EXTRA_ARGS = '--x --node-ip 10.0.0.9'  \n");
        test_write_at(root, "etc/default/kubelet", "KUBELET_EXTRA_ARGS='--node-ip=10.7.7.7\n");
        assert_int_equal(node_addresses_read(root, &l), 0);
        assert_int_equal(l.n, 1);
        assert_int_equal(inet_pton(AF_INET, "10.0.0.9", a), 1);
        assert_string_equal(node_addresses_find(&l, AF_INET, a),
                            "kubelet's --node-ip (/var/lib/kubelet/kubeadm-flags.env)");
        node_addresses_done(&l);
        (void) unlinkat(root, "var/lib/kubelet/kubeadm-flags.env", 0);
        (void) unlinkat(root, "etc/default/kubelet", 0);
        static const char *const dirs[] = { "var/lib/kubelet", "var/lib", "var", "etc/default", "etc" };
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++)
                (void) unlinkat(root, dirs[i], AT_REMOVEDIR);
        close(root);
        (void) rmdir(tmpl);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_kubelet_env),
                cmocka_unit_test(test_read_root),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
