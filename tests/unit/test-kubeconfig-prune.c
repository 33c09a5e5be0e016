/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/kubeconfig-prune.c: which entries are this cluster's, what stays, the
 * file written without them (read back), and the files that are refused. */

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

#include "agent/config/kubeconfig-prune.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/yaml-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define HOME_KC "/home/alice/.kube/config"
#define THIS_CA "-----BEGIN CERTIFICATE-----\nTHIS\n-----END CERTIFICATE-----\n"
/* base64 of THIS_CA and of another CA */
#define THIS_CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClRISVMKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="
#define PROD_CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tClBST0QKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo="

static char dir[] = "/tmp/test-kubeconfig-prune.XXXXXX";
static int root_fd = -EBADF;
static KubeClusterId this_cluster;

static int setup(void **state) {
        assert_non_null(mkdtemp(dir));
        root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        this_cluster = (KubeClusterId) { .server = strdup("https://10.0.0.1:6443"), .ca = strdup(THIS_CA) };
        this_cluster.ca_size = strlen(THIS_CA);
        return 0;
}

static int teardown(void **state) {
        kube_cluster_id_done(&this_cluster);
        (void) unlinkat(root_fd, "home/alice/.kube/ca.crt", 0);
        (void) unlinkat(root_fd, "home/alice/.kube", AT_REMOVEDIR);
        (void) unlinkat(root_fd, "home/alice", AT_REMOVEDIR);
        (void) unlinkat(root_fd, "home", AT_REMOVEDIR);
        (void) close(root_fd);
        (void) rmdir(dir);
        return 0;
}

/* kubeadm's admin.conf for this cluster merged with a production cluster's, as "KUBECONFIG=a:b kubectl
 * config view --flatten" writes them; the other cluster's token and a preference must survive. */
static const char merged[] = "apiVersion: v1\n"
                             "clusters:\n"
                             "- cluster:\n"
                             "    certificate-authority-data: " THIS_CA_B64 "\n"
                             "    server: https://10.0.0.1:6443\n"
                             "  name: kubernetes\n"
                             "- cluster:\n"
                             "    certificate-authority-data: " PROD_CA_B64 "\n"
                             "    server: https://prod.example.com:443\n"
                             "    insecure-skip-tls-verify: false\n"
                             "  name: prod\n"
                             "contexts:\n"
                             "- context:\n"
                             "    cluster: kubernetes\n"
                             "    user: kubernetes-admin\n"
                             "  name: kubernetes-admin@kubernetes\n"
                             "- context:\n"
                             "    cluster: prod\n"
                             "    user: prod-admin\n"
                             "    namespace: \"true\"\n"
                             "  name: prod\n"
                             "current-context: kubernetes-admin@kubernetes\n"
                             "kind: Config\n"
                             "preferences:\n"
                             "  colors: true\n"
                             "users:\n"
                             "- name: kubernetes-admin\n"
                             "  user:\n"
                             "    token: this-cluster-token\n"
                             "- name: prod-admin\n"
                             "  user:\n"
                             "    token: prod-token-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
                             "- name: unused\n"
                             "  user:\n"
                             "    token: nobody-uses-it\n";

static int prune(const char *text, bool emit, KubeconfigPrune *p, char **err) {
        return kubeconfig_prune(HOME_KC, text, strlen(text), root_fd, &this_cluster, 1, emit, p, err);
}

static void test_merged(void **state) {
        cleanup_free char *err = NULL, *gone = NULL, *kept = NULL;
        Kubeconfig *other = NULL;
        KubeconfigPrune p;

        assert_int_equal(prune(merged, true, &p, &err), 1);
        assert_false(p.whole);
        assert_string_equal(p.current, "kubernetes-admin@kubernetes");
        gone = kubeconfig_prune_describe(&p, false);
        kept = kubeconfig_prune_describe(&p, true);
        assert_string_equal(gone, "context \"kubernetes-admin@kubernetes\", cluster \"kubernetes\", user "
                                  "\"kubernetes-admin\"");
        assert_string_equal(kept, "context \"prod\", cluster \"prod\", user \"prod-admin\", user \"unused\"");
        /* Written back: nothing of this cluster, the other's entries and the preferences as they were. */
        assert_non_null(p.text);
        assert_null(strstr(p.text, "10.0.0.1"));
        assert_null(strstr(p.text, "this-cluster-token"));
        assert_null(strstr(p.text, "current-context"));
        assert_non_null(
                strstr(p.text, "prod-token-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"));
        assert_non_null(strstr(p.text, "nobody-uses-it"));
        assert_non_null(strstr(p.text, "colors: true"));
        assert_non_null(strstr(p.text, "namespace: \"true\""));
        assert_non_null(strstr(p.text, "insecure-skip-tls-verify: false"));
        /* kubectl reads it: the one context left is the one it takes without a current-context. */
        assert_int_equal(kubeconfig_parse(HOME_KC, p.text, p.size, &other, &err), 0);
        assert_string_equal(other->server, "https://prod.example.com:443");
        assert_string_equal(other->token,
                            "prod-token-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
        kubeconfig_free(other);
        kubeconfig_prune_done(&p);
        /* Without emit: the same lists, no text. */
        assert_int_equal(prune(merged, false, &p, &err), 1);
        assert_null(p.text);
        assert_int_equal(strv_length(p.contexts), 1);
        kubeconfig_prune_done(&p);
}

static void test_only_this_cluster(void **state) {
        static const char only[] = "apiVersion: v1\nkind: Config\npreferences: {}\n"
                                   "clusters:\n- cluster:\n    server: https://10.0.0.1:6443\n"
                                   "    certificate-authority-data: " THIS_CA_B64 "\n  name: k\n"
                                   "contexts:\n- context: {cluster: k, user: u}\n  name: c\ncurrent-context: c\n"
                                   "users:\n- name: u\n  user: {token: t}\n";
        cleanup_free char *err = NULL;
        KubeconfigPrune p;

        assert_int_equal(prune(only, true, &p, &err), 1);
        assert_true(p.whole);
        assert_null(p.text);
        kubeconfig_prune_done(&p);
}

/* A context of another cluster shares this cluster's user: the user stays; another key the root
 * holds keeps the file. */
static void test_shared_user_and_more(void **state) {
        static const char shared[] =
                "clusters:\n"
                "- {name: k, cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: " THIS_CA_B64 "}}\n"
                "- {name: o, cluster: {server: 'https://192.0.2.7:6443'}}\n"
                "contexts:\n"
                "- {name: c, context: {cluster: k, user: admin}}\n"
                "- {name: d, context: {cluster: o, user: admin}}\n"
                "current-context: d\n"
                "users:\n- {name: admin, user: {token: t}}\n";
        static const char extra_key[] =
                "clusters:\n"
                "- {name: k, cluster: {server: 'https://10.0.0.1:6443', certificate-authority-data: " THIS_CA_B64 "}}\n"
                "contexts:\n- {name: c, context: {cluster: k, user: u}}\n"
                "users:\n- {name: u, user: {token: t}}\n"
                "x-site-note: keep me\n";
        cleanup_free char *err = NULL;
        KubeconfigPrune p;

        assert_int_equal(prune(shared, true, &p, &err), 1);
        assert_false(p.whole);
        assert_null(p.users);
        assert_null(p.current);
        assert_string_equal(p.kept_users[0], "admin");
        assert_non_null(strstr(p.text, "current-context: d"));
        kubeconfig_prune_done(&p);
        assert_int_equal(prune(extra_key, true, &p, &err), 1);
        assert_false(p.whole);
        assert_non_null(strstr(p.text, "x-site-note: keep me"));
        kubeconfig_prune_done(&p);
}

/* The same server with another CA (a second k3s on 127.0.0.1:6443) is another cluster; so is one
 * whose CA cannot be read. A CA file is read relative to the kubeconfig, beneath the root. */
static void test_ca(void **state) {
        static const char by_file[] = "clusters:\n- {name: k, cluster: {server: 'https://10.0.0.1:6443', "
                                      "certificate-authority: ca.crt}}\n"
                                      "contexts:\n- {name: c, context: {cluster: k, user: u}}\n"
                                      "users:\n- {name: u, user: {token: t}}\n";
        static const char other_ca[] = "clusters:\n- {name: k, cluster: {server: 'https://10.0.0.1:6443', "
                                       "certificate-authority-data: " PROD_CA_B64 "}}\n";
        cleanup_free char *err = NULL;
        KubeconfigPrune p;
        int fd;

        assert_int_equal(prune(other_ca, false, &p, &err), 0);
        kubeconfig_prune_done(&p);
        assert_int_equal(prune(by_file, false, &p, &err), 0); /* no ca.crt yet */
        kubeconfig_prune_done(&p);
        assert_int_equal(mkdirat(root_fd, "home", 0755), 0);
        assert_int_equal(mkdirat(root_fd, "home/alice", 0755), 0);
        assert_int_equal(mkdirat(root_fd, "home/alice/.kube", 0755), 0);
        fd = openat(root_fd, "home/alice/.kube/ca.crt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, THIS_CA, strlen(THIS_CA)), (ssize_t) strlen(THIS_CA));
        close(fd);
        assert_int_equal(prune(by_file, false, &p, &err), 1);
        assert_true(p.whole);
        kubeconfig_prune_done(&p);
}

static void test_refused(void **state) {
        static const char *const bad[] = {
                "clusters: [ this is not",
                "- a list\n",
                "clusters: {}\n",
                "clusters:\n- {cluster: {server: 'https://10.0.0.1:6443'}}\n",
                "clusters:\n- {name: k, cluster: {server: 'https://10.0.0.1:6443'}}\n"
                "- {name: k, cluster: {server: 'https://192.0.2.1:6443'}}\n",
                "clusters: []\n---\nclusters: []\n",
        };
        static const char *const why[] = {
                "malformed YAML", "not a mapping", "is not a list", "has no name", "named \"k\"", "more than one",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cleanup_free char *err = NULL;
                KubeconfigPrune p;

                assert_int_equal(prune(bad[i], true, &p, &err), -EBADMSG);
                assert_non_null(strstr(err, why[i]));
                assert_non_null(strstr(err, HOME_KC));
        }
}

/* Nothing of this cluster: 0, nothing to write. A cluster whose own kubeconfig names no CA is told by
 * its server alone. */
static void test_other_cluster(void **state) {
        static const char other[] = "clusters:\n- {name: o, cluster: {server: 'https://10.0.0.9:6443'}}\n"
                                    "contexts: null\nusers: ~\n";
        cleanup_free char *err = NULL;
        KubeClusterId no_ca = { .server = (char *) "https://10.0.0.9:6443" };
        KubeconfigPrune p;

        assert_int_equal(prune(other, true, &p, &err), 0);
        assert_null(p.text);
        kubeconfig_prune_done(&p);
        assert_int_equal(kubeconfig_prune(HOME_KC, other, strlen(other), root_fd, &no_ca, 1, false, &p, &err), 1);
        assert_true(p.whole);
        kubeconfig_prune_done(&p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_merged),
                cmocka_unit_test(test_only_this_cluster),
                cmocka_unit_test(test_shared_user_and_more),
                cmocka_unit_test(test_ca),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_other_cluster),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
