/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/base/toml.c: the CNI conf dir, state and root as containerd and CRI-O configs
 * spell them; and which tables a containerd config's version puts the conf dir in
 * (runtime_containerd_cni_tables(), agent/os/runtime-info.c). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "agent/base/toml.h"
#include "agent/os/runtime-info.h"
#include "macro.h"

static const char *const cni_tables[] = {
        "plugins.io.containerd.grpc.v1.cri.cni", "plugins.cri.cni", "plugins.io.containerd.cri.v1.runtime.cni", NULL,
};
static const char *const top[] = { "", NULL };

static char *find(const char *text, const char *const *tables, const char *key) {
        char *v = NULL;

        return toml_find_string(text, tables, key, &v) > 0 ? v : NULL;
}

static void test_toml_containerd(void **state) {
        static const char v2[] =
                "version = 2\n"
                "root = \"/var/lib/containerd\"\n"
                "state = '/run/containerd'\n"
                "# conf_dir = \"/commented\"\n"
                "[plugins]\n"
                "  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
                "    sandbox_image = \"registry.k8s.io/pause:3.9\"\n"
                "    [plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
                "      bin_dir = \"/opt/cni/bin\"\n"
                "      conf_dir = \"/etc/cni/net.d\"   # trailing comment\n"
                "      conf_template = \"\"\n"
                "  [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                "    conf_dir = \"/not/this/one\"\n";
        char *v;

        v = find(v2, cni_tables, "conf_dir");
        assert_string_equal(v, "/etc/cni/net.d");
        free(v);
        v = find(v2, top, "state");
        assert_string_equal(v, "/run/containerd");
        free(v);
        v = find(v2, top, "root");
        assert_string_equal(v, "/var/lib/containerd");
        free(v);
        assert_null(find(v2, top, "conf_dir"));
        assert_null(find(v2, cni_tables, "bin"));
}

static void test_toml_variants(void **state) {
        char *v;

        /* Config version 1, containerd 2 (version 3, single quotes), the last assignment wins. */
        v = find("[plugins.cri.cni]\nconf_dir = \"/v1\"\n", cni_tables, "conf_dir");
        assert_string_equal(v, "/v1");
        free(v);
        v = find("[plugins.'io.containerd.cri.v1.runtime'.cni]\n  conf_dir = '/v3'\n", cni_tables, "conf_dir");
        assert_string_equal(v, "/v3");
        free(v);
        v = find("[plugins.cri.cni]\nconf_dir = \"/a\"\nconf_dir = \"/b\"\n", cni_tables, "conf_dir");
        assert_string_equal(v, "/b");
        free(v);
        /* Not a string, unterminated, a longer key, no newline at the end, CRI-O's table. */
        assert_null(find("[plugins.cri.cni]\nconf_dir = 5\n", cni_tables, "conf_dir"));
        assert_null(find("[plugins.cri.cni]\nconf_dir = \"/open\n", cni_tables, "conf_dir"));
        assert_null(find("[plugins.cri.cni]\nconf_dir_x = \"/x\"\n", cni_tables, "conf_dir"));
        v = find("[crio.network]\nnetwork_dir = \"/etc/cni/crio\"", (const char *const[]) { "crio.network", NULL },
                 "network_dir");
        assert_string_equal(v, "/etc/cni/crio");
        free(v);
        assert_null(find("", top, "root"));
}

static void test_toml_uint(void **state) {
        unsigned u = 7;

        assert_int_equal(toml_find_uint("version = 3\n[plugins]\nversion = 9\n", top, "version", &u), 1);
        assert_int_equal(u, 3);
        assert_int_equal(toml_find_uint("version = 2 # comment\n", top, "version", &u), 1);
        assert_int_equal(u, 2);
        u = 7;
        /* A string, a float, a negative number, too large, absent: none of them found. */
        assert_int_equal(toml_find_uint("version = \"3\"\n", top, "version", &u), 0);
        assert_int_equal(toml_find_uint("version = 3.0\n", top, "version", &u), 0);
        assert_int_equal(toml_find_uint("version = -3\n", top, "version", &u), 0);
        assert_int_equal(toml_find_uint("version = 99999999999999999999\n", top, "version", &u), 0);
        assert_int_equal(toml_find_uint("[x]\nversion = 3\n", top, "version", &u), 0);
        assert_int_equal(u, 7);
}

/* containerd 2.1's "containerd config default" (version 3) and the same node's leftover version 2
 * table: only the table of the file's version counts, as containerd reads it. */
static void test_containerd_cni_tables(void **state) {
        static const char v3[] =
                "version = 3\n"
                "root = '/var/lib/containerd'\n"
                "[plugins]\n"
                "  [plugins.'io.containerd.cri.v1.images']\n"
                "    snapshotter = 'overlayfs'\n"
                "  [plugins.'io.containerd.cri.v1.runtime']\n"
                "    [plugins.'io.containerd.cri.v1.runtime'.cni]\n"
                "      bin_dirs = ['/usr/lib/cni', '/opt/cni/bin']\n"
                "      conf_dir = '/etc/cni/net.d-v3'\n"
                "  [plugins.'io.containerd.grpc.v1.cri']\n"
                "    disable_tcp_service = true\n"
                "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
                "    conf_dir = \"/ignored/by/containerd/2\"\n";
        static const char v2[] = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\nconf_dir = \"/v2\"\n"
                                 "[plugins.'io.containerd.cri.v1.runtime'.cni]\nconf_dir = '/not-in-v2'\n";
        char *v;

        v = find(v3, runtime_containerd_cni_tables(v3), "conf_dir");
        assert_string_equal(v, "/etc/cni/net.d-v3");
        free(v);
        v = find(v2, runtime_containerd_cni_tables(v2), "conf_dir");
        assert_string_equal(v, "/v2");
        free(v);
        /* No version line: version 1, plugins.cri. */
        v = find("[plugins.cri.cni]\nconf_dir = \"/v1\"\n", runtime_containerd_cni_tables("[plugins.cri.cni]\n"),
                 "conf_dir");
        assert_string_equal(v, "/v1");
        free(v);
        assert_null(find(v2, runtime_containerd_cni_tables("version = 1\n"), "conf_dir"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_toml_containerd),
                cmocka_unit_test(test_toml_variants),
                cmocka_unit_test(test_toml_uint),
                cmocka_unit_test(test_containerd_cni_tables),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
