/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/base/toml.c: the CNI conf dir, state and root as containerd and CRI-O configs
 * spell them. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "agent/base/toml.h"
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

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_toml_containerd),
                cmocka_unit_test(test_toml_variants),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
