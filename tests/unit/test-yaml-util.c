/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/yaml-util.c: the one loader (documents one by one, its errors said once,
 * with the file and the line), mapping lookups and scalars, and what is no scalar. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/yaml-util.h"
#include "macro.h"

static void load(const char *text, yaml_document_t *doc) {
        assert_int_equal(yaml_load_first(text, strlen(text), "t.yaml", doc, NULL), 0);
}

static void test_loader_documents(void **state) {
        const char *text = "a: 1\n---\n- x\n---\nb\n";
        yaml_document_t doc;
        YamlLoader l;
        char *err = NULL;

        assert_int_equal(yaml_loader_open(&l, text, strlen(text), "t.yaml", &err), 0);
        assert_int_equal(yaml_loader_next(&l, &doc, &err), 1);
        assert_int_equal(yaml_document_get_root_node(&doc)->type, YAML_MAPPING_NODE);
        yaml_document_delete(&doc);
        assert_int_equal(yaml_loader_next(&l, &doc, &err), 1);
        assert_int_equal(yaml_document_get_root_node(&doc)->type, YAML_SEQUENCE_NODE);
        yaml_document_delete(&doc);
        assert_int_equal(yaml_loader_next(&l, &doc, &err), 1);
        assert_string_equal(yaml_scalar_of(yaml_document_get_root_node(&doc)), "b");
        yaml_document_delete(&doc);
        assert_int_equal(yaml_loader_next(&l, &doc, &err), 0);
        assert_int_equal(yaml_loader_next(&l, &doc, &err), 0);
        yaml_loader_close(&l);
        yaml_loader_close(&l); /* twice is harmless */
        assert_null(err);

        /* An empty text is one document without a root, for the first-document reader. */
        assert_int_equal(yaml_load_first("", 0, "empty.yaml", &doc, &err), 0);
        assert_null(yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
        assert_null(err);
}

/* "Not YAML" is one errno and one sentence, naming the file, the line and the column. */
static void test_loader_not_yaml(void **state) {
        static const struct {
                const char *text, *message;
        } bad[] = {
                { "a: b\n  c: d\n",
                  "k.conf: malformed YAML at line 2 column 4: mapping values are not allowed in this context" },
                { "a: [1, 2\nb: c\n", "k.conf: malformed YAML at line 2 column 2: did not find expected ',' or ']' "
                                      "while parsing a flow sequence" },
                { "ok: 1\n---\n\"open\n", "k.conf: malformed YAML at line 4 column 1: found unexpected end of stream "
                                          "while scanning a quoted scalar" },
        };
        yaml_document_t doc;
        char *err;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                YamlLoader l;
                int r;

                err = NULL;
                assert_int_equal(yaml_loader_open(&l, bad[i].text, strlen(bad[i].text), "k.conf", &err), 0);
                while ((r = yaml_loader_next(&l, &doc, &err)) > 0)
                        yaml_document_delete(&doc);
                yaml_loader_close(&l);
                assert_int_equal(r, -EBADMSG);
                assert_string_equal(err, bad[i].message);
                free(err);
        }

        /* The same words from every entry point; a message already set is never replaced. */
        err = NULL;
        assert_int_equal(yaml_load_first("a: b\n  c: d\n", 12, NULL, &doc, &err), -EBADMSG);
        assert_string_equal(
                err,
                "the YAML text: malformed YAML at line 2 column 4: mapping values are not allowed in this context");
        free(err);
        err = strdup("first");
        assert_int_equal(yaml_load_first("[", 1, "x", &doc, &err), -EBADMSG);
        assert_string_equal(err, "first");
        free(err);
}

static int count_doc(yaml_document_t *doc, const char *path, void *userdata) {
        assert_string_equal(path, "m.yaml");
        return ++*(int *) userdata == 2 ? 7 : 0;
}

static void test_each_document(void **state) {
        const char *three = "a\n---\nb\n---\nc\n", *broken = "a\n---\n[\n";
        char *err = NULL;
        int n = 0;

        /* fn's non-zero result ends the walk and is the answer. */
        assert_int_equal(yaml_each_document(three, strlen(three), "m.yaml", count_doc, &n, &err), 7);
        assert_int_equal(n, 2);
        n = -10;
        assert_int_equal(yaml_each_document(three, strlen(three), "m.yaml", count_doc, &n, &err), 0);
        assert_int_equal(n, -7);
        assert_null(err);
        /* The documents before a malformed one were read. */
        n = -10;
        assert_int_equal(yaml_each_document(broken, strlen(broken), "m.yaml", count_doc, &n, &err), -EBADMSG);
        assert_int_equal(n, -9);
        assert_non_null(strstr(err, "m.yaml: malformed YAML at line 4 column 1: did not find expected node content"));
        free(err);
}

static void test_map_get(void **state) {
        yaml_document_t doc;
        yaml_node_t *root, *spec;

        load("spec:\n  address: 192.0.2.10\n  list: [a, b]\n  nul: \"a\\0b\"\nname: x\n", &doc);
        root = yaml_document_get_root_node(&doc);
        spec = yaml_map_get(&doc, root, "spec");
        assert_non_null(spec);
        assert_int_equal(spec->type, YAML_MAPPING_NODE);
        assert_string_equal(yaml_scalar_of(yaml_map_get(&doc, spec, "address")), "192.0.2.10");
        assert_string_equal(yaml_scalar_of(yaml_map_get(&doc, root, "name")), "x");
        /* Absent keys, lookups in what is no mapping, and a sequence asked for its text. */
        assert_null(yaml_map_get(&doc, spec, "vip_interface"));
        assert_null(yaml_map_get(&doc, yaml_map_get(&doc, spec, "address"), "address"));
        assert_null(yaml_map_get(&doc, NULL, "spec"));
        assert_null(yaml_scalar_of(yaml_map_get(&doc, spec, "list")));
        assert_null(yaml_scalar_of(NULL));
        /* A "\0" escape would cut the value short: it is no scalar the agent uses. */
        assert_non_null(yaml_map_get(&doc, spec, "nul"));
        assert_null(yaml_scalar_of(yaml_map_get(&doc, spec, "nul")));
        yaml_document_delete(&doc);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_loader_documents),
                cmocka_unit_test(test_loader_not_yaml),
                cmocka_unit_test(test_each_document),
                cmocka_unit_test(test_map_get),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
