/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/kubeconfig.c: contexts, file paths and -data fields, relative paths, errors. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agent/config/kubeconfig.h"
#include "macro.h"
#include "string-util.h"

#define KPATH "/etc/kubernetes/kubelet.conf"

/* kubeadm's kubelet.conf, with one relative path. */
static const char kubeadm[] = "apiVersion: v1\n"
                              "clusters:\n"
                              "- cluster:\n"
                              "    certificate-authority: pki/ca.crt\n"
                              "    server: https://10.0.0.1:6443\n"
                              "  name: kubernetes\n"
                              "contexts:\n"
                              "- context:\n"
                              "    cluster: kubernetes\n"
                              "    user: system:node:worker-1\n"
                              "  name: system:node:worker-1@kubernetes\n"
                              "current-context: system:node:worker-1@kubernetes\n"
                              "kind: Config\n"
                              "preferences: {}\n"
                              "users:\n"
                              "- name: system:node:worker-1\n"
                              "  user:\n"
                              "    client-certificate: /var/lib/kubelet/pki/kubelet-client-current.pem\n"
                              "    client-key: /var/lib/kubelet/pki/kubelet-client-current.pem\n";

static Kubeconfig *parse_ok(const char *text) {
        cleanup_free char *err = NULL;
        Kubeconfig *k = NULL;
        int r;

        r = kubeconfig_parse(KPATH, text, strlen(text), &k, &err);
        if (r < 0)
                fail_msg("unexpected error %d: %s", r, strempty(err));
        assert_non_null(k);
        return k;
}

/* Parsing fails with r and a message that contains each of the fragments. */
static void parse_fails(const char *text, int r, const char *fragment) {
        cleanup_free char *err = NULL;
        Kubeconfig *k = NULL;

        assert_int_equal(kubeconfig_parse(KPATH, text, strlen(text), &k, &err), r);
        assert_null(k);
        assert_non_null(err);
        if (!strstr(err, fragment))
                fail_msg("'%s' does not contain '%s'", err, fragment);
        /* Every message names the file, so that a unit's journal says which one. */
        assert_non_null(strstr(err, KPATH));
}

static void test_file_paths(void **state) {
        Kubeconfig *k = parse_ok(kubeadm);

        assert_string_equal(k->server, "https://10.0.0.1:6443");
        assert_string_equal(k->context, "system:node:worker-1@kubernetes");
        assert_string_equal(k->cluster, "kubernetes");
        assert_string_equal(k->user, "system:node:worker-1");
        /* Relative to the kubeconfig's directory. */
        assert_string_equal(k->ca.file, "/etc/kubernetes/pki/ca.crt");
        assert_string_equal(k->cert.file, "/var/lib/kubelet/pki/kubelet-client-current.pem");
        assert_string_equal(k->key.file, "/var/lib/kubelet/pki/kubelet-client-current.pem");
        assert_null(k->ca.data);
        assert_null(k->cert.data);
        assert_false(k->insecure);
        assert_null(k->token);
        assert_null(k->proxy_url);
        kubeconfig_free(k);
}

static void test_data_fields(void **state) {
        /* "CA" "CERT" "KEY" in base64, the first wrapped over lines as some tools write it. */
        Kubeconfig *k = parse_ok("current-context: b\n"
                                 "contexts:\n"
                                 "- {name: a, context: {cluster: x, user: x}}\n"
                                 "- {name: b, context: {cluster: c, user: u}}\n"
                                 "clusters:\n"
                                 "- name: c\n"
                                 "  cluster:\n"
                                 "    server: https://api.example:6443\n"
                                 "    certificate-authority: /ignored/when/data/is/given\n"
                                 "    certificate-authority-data: |\n"
                                 "      Q0\n"
                                 "      E=\n"
                                 "    insecure-skip-tls-verify: true\n"
                                 "    proxy-url: http://proxy:3128\n"
                                 "users:\n"
                                 "- name: u\n"
                                 "  user:\n"
                                 "    client-certificate-data: Q0VSVA==\n"
                                 "    client-key-data: \"S0VZ\"\n"
                                 "    token: abc\n");

        assert_string_equal(k->context, "b");
        assert_string_equal(k->server, "https://api.example:6443");
        assert_null(k->ca.file);
        assert_int_equal(k->ca.size, 2);
        assert_memory_equal(k->ca.data, "CA", 2);
        assert_string_equal(k->cert.data, "CERT");
        assert_string_equal(k->key.data, "KEY");
        assert_true(k->insecure);
        assert_string_equal(k->token, "abc");
        assert_string_equal(k->proxy_url, "http://proxy:3128");
        kubeconfig_free(k);
}

static void test_contexts(void **state) {
        Kubeconfig *k;

        /* No current-context, but a single context: that one. A context without a user is anonymous. */
        k = parse_ok("contexts: [{name: only, context: {cluster: c}}]\n"
                     "clusters: [{name: c, cluster: {server: 'https://h'}}]\n");
        assert_string_equal(k->context, "only");
        assert_null(k->user);
        assert_null(k->cert.file);
        kubeconfig_free(k);

        /* A relative kubeconfig path anchors relative names at its own directory. */
        {
                cleanup_free char *err = NULL;
                const char *t = "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                                "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority: ca.pem}}]\n"
                                "users: [{name: u, user: {client-certificate: ../x/c.pem}}]\n";

                assert_int_equal(kubeconfig_parse("conf/kubelet.conf", t, strlen(t), &k, &err), 0);
                assert_string_equal(k->ca.file, "conf/ca.pem");
                assert_string_equal(k->cert.file, "conf/../x/c.pem");
                kubeconfig_free(k);
                assert_int_equal(kubeconfig_parse("kubelet.conf", t, strlen(t), &k, &err), 0);
                assert_string_equal(k->ca.file, "ca.pem");
                kubeconfig_free(k);
        }

        parse_fails("contexts: [{name: a, context: {cluster: c}}, {name: b, context: {cluster: c}}]\n"
                    "clusters: [{name: c, cluster: {server: 'https://h'}}]\n",
                    -EINVAL, "no current-context, and not exactly one context");
        parse_fails("current-context: nowhere\ncontexts: [{name: a, context: {cluster: c}}]\n", -EINVAL,
                    "context \"nowhere\" not found in 'contexts'");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n", -EINVAL,
                    "cluster \"c\" not found in 'clusters'");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
                    "clusters: [{name: c, cluster: {server: 'https://h'}}]\n",
                    -EINVAL, "user \"u\" not found in 'users'");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {user: u}}]\n", -EINVAL,
                    "context \"a\" names no cluster");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                    "clusters: [{name: c, cluster: {insecure-skip-tls-verify: true}}]\n",
                    -EINVAL, "cluster \"c\" has no server");
        parse_fails("current-context: a\ncontexts: {a: b}\n", -EINVAL, "'contexts' is not a list");
        parse_fails("current-context: a\ncontexts: [{name: a, context: [1, 2]}]\n", -EINVAL,
                    "context \"a\" has no 'context' mapping");
        parse_fails("current-context: [a]\n", -EINVAL, "current-context is not a string");
}

static void test_errors(void **state) {
        const char *exec_user = "current-context: a\ncontexts: [{name: a, context: {cluster: c, user: u}}]\n"
                                "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                                "users: [{name: u, user: {exec: {command: aws}}}]\n";

        parse_fails("apiVersion: v1\nclusters:\n- cluster:\n    server: [https://x\n  name: a\n", -EBADMSG,
                    "malformed YAML at line ");
        parse_fails("a: b\n  c: d\n", -EBADMSG, "malformed YAML at line 2 column");
        parse_fails("\"unterminated\n", -EBADMSG, "malformed YAML");
        parse_fails("", -EINVAL, "not a kubeconfig");
        parse_fails("- a\n- b\n", -EINVAL, "not a kubeconfig");
        parse_fails("just a string\n", -EINVAL, "not a kubeconfig");
        parse_fails(exec_user, -EOPNOTSUPP, "uses 'exec', which is not supported");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                    "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: 'not*base64'}}]\n",
                    -EINVAL, "certificate-authority-data is not valid base64");
        parse_fails("current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\n"
                    "clusters: [{name: c, cluster: {server: {x: 1}}}]\n",
                    -EINVAL, "cluster server is not a string");
        /* An embedded NUL is no name. */
        parse_fails("current-context: \"a\\0b\"\n", -EINVAL, "current-context is not a string");
}

/* A kubeconfig of one cluster and one user, with these fields. */
static char *one(const char *cluster, const char *user) {
        char *t = NULL;

        assert_true(asprintf(&t,
                             "current-context: a\n"
                             "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                             "clusters: [{name: c, cluster: {server: 'https://h:6443'%s%s}}]\n"
                             "users: [{name: u, user: {token: t%s%s}}]\n",
                             *cluster ? ", " : "", cluster, *user ? ", " : "", user) > 0);
        return t;
}

/* read_files refuses with r (0: accepts) and a message with fragment. */
static void tls_check(const char *cluster, const char *user, int r, const char *fragment) {
        cleanup_free char *text = one(cluster, user), *err = NULL;
        Kubeconfig *k = parse_ok(text);

        assert_int_equal(kubeconfig_read_files(k, -EBADF, &err), r);
        if (fragment) {
                assert_non_null(err);
                if (!strstr(err, fragment))
                        fail_msg("'%s' does not say '%s'", err, fragment);
        }
        kubeconfig_free(k);
}

/* client-go's rules (clientcmd/validation.go, transport/transport.go TLSConfigFor). */
static void test_tls_rules(void **state) {
        cleanup_free char *quoted = one("insecure-skip-tls-verify: 'true'", "");
        Kubeconfig *k;

        tls_check("insecure-skip-tls-verify: true", "", 0, NULL);
        tls_check("insecure-skip-tls-verify: true, certificate-authority-data: Q0E=", "", -EINVAL,
                  "with the insecure flag is not allowed");
        tls_check("insecure-skip-tls-verify: yes, certificate-authority: /etc/ca.crt", "", -EINVAL,
                  "insecure-skip-tls-verify");
        tls_check("insecure-skip-tls-verify: false, certificate-authority-data: Q0E=", "", 0, NULL);
        tls_check("certificate-authority-data: Q0E=, certificate-authority: /etc/ca.crt", "", -EINVAL,
                  "certificate-authority-data and certificate-authority are both given");
        tls_check("", "client-certificate-data: Q0VSVA==", -EINVAL, "without client-key");
        tls_check("", "client-certificate-data: Q0VSVA==, client-certificate: /c, client-key-data: S0VZ", -EINVAL,
                  "client-certificate-data and client-certificate are both given");
        tls_check("", "client-certificate-data: Q0VSVA==, client-key-data: S0VZ, client-key: /k", -EINVAL,
                  "client-key-data and client-key are both given");
        tls_check("", "client-certificate-data: Q0VSVA==, client-key-data: S0VZ", 0, NULL);
        tls_check("proxy-url: 'ftp://p'", "", -EINVAL, "proxy-url");
        tls_check("proxy-url: 'socks5://p:1080'", "", 0, NULL);
        /* A quoted "true" is a string, which client-go cannot read as a boolean. */
        parse_fails(quoted, -EINVAL, "insecure-skip-tls-verify is not a boolean");
        k = parse_ok("contexts: [{name: a, context: {cluster: c}}]\n"
                     "clusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: on}}]\n");
        assert_true(k->insecure);
        kubeconfig_free(k);
}

/* A kubeconfig whose only CA is certificate-authority-data: b64 (a YAML double-quoted scalar). */
static int parse_ca_data(const char *b64, Kubeconfig **ret) {
        cleanup_free char *text = NULL, *err = NULL;

        assert_true(asprintf(&text,
                             "current-context: a\n"
                             "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
                             "clusters: [{name: c, cluster: {server: \"https://h:6443\", "
                             "certificate-authority-data: \"%s\"}}]\n"
                             "users: [{name: u, user: {token: t}}]\n",
                             b64) > 0);
        return kubeconfig_parse(KPATH, text, strlen(text), ret, &err);
}

static void check_base64(const char *in, const char *out) {
        Kubeconfig *k = NULL;

        assert_int_equal(parse_ca_data(in, &k), 0);
        assert_int_equal(k->ca.size, strlen(out));
        assert_string_equal(k->ca.data, out);
        kubeconfig_free(k);
}

static void check_base64_invalid(const char *in) {
        Kubeconfig *k = NULL;

        assert_int_equal(parse_ca_data(in, &k), -EINVAL);
        assert_null(k);
}

static void test_base64(void **state) {
        check_base64("aGVsbG8=", "hello");
        check_base64("aGVs\\nbG8=\\n", "hello");
        check_base64("aGVs bG8=", "hello");
        check_base64("aGVsbG8", "hello");
        check_base64("aGVsbG8h", "hello!");
        check_base64("aA==", "h");
        check_base64("aA", "h");
        check_base64_invalid("a");
        check_base64_invalid("aGVsb");
        check_base64_invalid("aGV=bG8=");
        check_base64_invalid("aGVsbG8===");
        check_base64_invalid("aGVs!G8=");
        check_base64_invalid("aA=");
        check_base64_invalid("=");
}

static void write_file(const char *dir, const char *name, const char *content) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(content, f);
        fclose(f);
}

/* Files are read beneath the root, and an absolute symlink (kubeadm's kubelet-client-current.pem)
 * resolves inside it, not on the host. */
static void test_load_beneath_root(void **state) {
        char dir[] = "/tmp/test-kubeconfig.XXXXXX", p[512], cmd[600];
        cleanup_free char *err = NULL;
        Kubeconfig *k = NULL;
        int root_fd;

        assert_non_null(mkdtemp(dir));
        snprintf(p, sizeof p, "%s/etc/kubernetes/pki", dir);
        snprintf(cmd, sizeof cmd, "mkdir -p %s %s/var/lib/kubelet/pki", p, dir);
        assert_int_equal(system(cmd), 0);
        write_file(dir, "etc/kubernetes/kubelet.conf", kubeadm);
        write_file(dir, "etc/kubernetes/pki/ca.crt", "the CA\n");
        write_file(dir, "var/lib/kubelet/pki/kubelet-client-2026.pem", "cert and key\n");
        snprintf(p, sizeof p, "%s/var/lib/kubelet/pki/kubelet-client-current.pem", dir);
        assert_int_equal(symlink("/var/lib/kubelet/pki/kubelet-client-2026.pem", p), 0);
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);

        assert_int_equal(kubeconfig_load(root_fd, "/etc/kubernetes/missing.conf", &k, &err), -ENOENT);
        err = mfree(err);
        assert_int_equal(kubeconfig_load(root_fd, KPATH, &k, &err), 0);
        assert_int_equal(kubeconfig_read_files(k, root_fd, &err), 0);
        assert_string_equal(k->ca.data, "the CA\n");
        assert_string_equal(k->cert.data, "cert and key\n");
        assert_string_equal(k->key.data, "cert and key\n");
        kubeconfig_free(k);

        /* A dangling certificate: the error names the file and the kubeconfig. */
        snprintf(p, sizeof p, "%s/var/lib/kubelet/pki/kubelet-client-2026.pem", dir);
        assert_int_equal(unlink(p), 0);
        assert_int_equal(kubeconfig_load(root_fd, KPATH, &k, &err), 0);
        assert_int_equal(kubeconfig_read_files(k, root_fd, &err), -ENOENT);
        assert_non_null(strstr(err, "client-certificate /var/lib/kubelet/pki/kubelet-client-current.pem"));
        assert_non_null(strstr(err, "named in " KPATH));
        kubeconfig_free(k);

        close(root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_file_paths),        cmocka_unit_test(test_data_fields),
                cmocka_unit_test(test_contexts),          cmocka_unit_test(test_errors),
                cmocka_unit_test(test_tls_rules),         cmocka_unit_test(test_base64),
                cmocka_unit_test(test_load_beneath_root),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
