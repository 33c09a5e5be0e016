/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/cni-conf.c: which file names libcni loads, strict JSON (what Go's
 * encoding/json accepts and refuses), and libcni's rules for a list and for one plugin. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/cni-conf.h"
#include "macro.h"

/* The types of text as file name, or NULL when refused (then the reason must be said). */
static char *types_of(const char *name, const char *text) {
        const char *why = (const char *) 1;
        char *types = (char *) 1;
        int r = cni_conf_types(name, text, strlen(text), &types, &why);

        if (r < 0) {
                assert_int_equal(r, -EINVAL);
                assert_null(types);
                assert_non_null(why);
                return NULL;
        }
        assert_int_equal(r, 0);
        assert_null(why);
        return types;
}

static void expect(const char *name, const char *text, const char *types) {
        char *t = types_of(name, text);

        if (!types)
                assert_null(t);
        else {
                assert_non_null(t);
                assert_string_equal(t, types);
        }
        free(t);
}

static void test_names(void **state) {
        assert_true(cni_conf_name_loaded("10-calico.conflist"));
        assert_true(cni_conf_name_loaded("87-podman.conf"));
        assert_true(cni_conf_name_loaded("x.json"));
        assert_true(cni_conf_name_loaded(".hidden.conf"));
        assert_false(cni_conf_name_loaded("05-cilium.conflist.cilium_bak"));
        assert_false(cni_conf_name_loaded("10-calico.conflist.bak"));
        assert_false(cni_conf_name_loaded("10-calico.conflist~"));
        assert_false(cni_conf_name_loaded("calico-kubeconfig"));
        assert_false(cni_conf_name_loaded("x.CONF"));
        assert_false(cni_conf_name_loaded("conf"));
}

static void test_lists(void **state) {
        expect("10-calico.conflist",
               "{\"name\":\"k8s-pod-network\",\"cniVersion\":\"0.3.1\",\"plugins\":[{\"type\":\"calico\",\"ipam\":"
               "{\"type\":\"calico-ipam\"}},{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true}},"
               "{\"type\":\"bandwidth\"}]}",
               "calico,calico-ipam,portmap,bandwidth");
        /* Whitespace of every kind JSON allows, and escapes in a type. */
        expect("a.conflist", " \t\r\n{ \"name\" : \"n\" , \"plugins\" : [ { \"type\" : \"fl\\u0061nnel\" } ] }\n",
               "flannel");
        /* A list needs a name (a string) and plugins, each with a type. */
        expect("a.conflist", "{\"plugins\":[{\"type\":\"calico\"}]}", NULL);
        expect("a.conflist", "{\"name\":null,\"plugins\":[{\"type\":\"calico\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"cniVersion\":1,\"plugins\":[{\"type\":\"calico\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\"}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":{\"type\":\"calico\"}}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":\"calico\"},{\"name\":\"x\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":\"\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":5}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":\"x\",\"ipam\":\"host-local\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[\"calico\"]}", NULL);
        /* A conflist's keys are exact (a map); a plugin's fold case, the last one wins (a struct). */
        expect("a.conflist", "{\"Name\":\"n\",\"plugins\":[{\"type\":\"calico\"}]}", NULL);
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"TYPE\":\"cilium-cni\",\"type\":\"calico\"}]}", "calico");
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":\"calico\",\"Type\":\"cilium-cni\"}]}",
               "cilium-cni");
        /* A type with a NUL byte is no plugin name. */
        expect("a.conflist", "{\"name\":\"n\",\"plugins\":[{\"type\":\"cal\\u0000ico\"}]}", NULL);
}

static void test_single(void **state) {
        expect("10-bridge.conf",
               "{\"cniVersion\":\"0.4.0\",\"name\":\"b\",\"type\":\"bridge\",\"ipam\":{\"type\":\"host-local\"}}",
               "bridge,host-local");
        expect("10-bridge.json", "{\"type\":\"bridge\",\"ipam\":null}", "bridge");
        /* A list in a .conf file has no top-level type: libcni refuses it. */
        expect("10-calico.conf", "{\"name\":\"n\",\"plugins\":[{\"type\":\"calico\"}]}", NULL);
        expect("x.conf", "[{\"type\":\"calico\"}]", NULL);
        expect("x.conf", "\"calico\"", NULL);
}

static void test_json_strict(void **state) {
        static const char *const bad[] = {
                "",
                "{",
                "{\"type\":\"calico\"",
                "{\"type\":\"calico\",}",
                "{\"type\":\"calico\"} x",
                "{\"type\":\"calico\"}{}",
                "{'type':'calico'}",
                "{type:\"calico\"}",
                "{\"type\":\"calico\" /* c */}",
                "# comment\n{\"type\":\"calico\"}",
                "{\"type\":\"cal\tico\"}",
                "{\"type\":\"calico\\x\"}",
                "{\"type\":\"calico\\u12\"}",
                "{\"type\":\"calico\",\"mtu\":01}",
                "{\"type\":\"calico\",\"mtu\":1.}",
                "{\"type\":\"calico\",\"mtu\":.5}",
                "{\"type\":\"calico\",\"mtu\":+1}",
                "{\"type\":\"calico\",\"mtu\":1e}",
                "{\"type\":\"calico\",\"x\":tru}",
                "{\"type\":\"calico\",\"x\":True}",
                "{\"type\":\"calico\",\"x\":[1,]}",
                "{\"type\":\"calico\",\"x\":NaN}",
                "\xef\xbb\xbf{\"type\":\"calico\"}",
                "{\"type\":\"calico\"\v}",
        };
        char deep[2048];
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                expect("x.conf", bad[i], NULL);
        expect("x.conf",
               "{\"type\":\"calico\",\"mtu\":-0.5e+10,\"x\":[true,false,null,{},[]],\"y\":\"\\ud83d\\ude00\\ud800\"}",
               "calico");
        /* Nesting is bounded: far deeper than any configuration is refused, not a stack overflow. */
        n += (size_t) snprintf(deep, sizeof deep, "{\"type\":\"calico\",\"x\":");
        for (int i = 0; i < 900; i++)
                deep[n++] = '[';
        for (int i = 0; i < 900; i++)
                deep[n++] = ']';
        deep[n++] = '}';
        deep[n] = 0;
        expect("x.conf", deep, NULL);
        /* A modest depth is fine. */
        expect("x.conf", "{\"type\":\"calico\",\"x\":[[[[[[[[{\"a\":[[]]}]]]]]]]]}", "calico");
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_lists),
                cmocka_unit_test(test_single),
                cmocka_unit_test(test_json_strict),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
