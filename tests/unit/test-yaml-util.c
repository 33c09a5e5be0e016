/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/yaml-util.c: mapping lookups and scalars, and what is no scalar. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/yaml-util.h"

static void load(const char *text, yaml_document_t *doc) {
        yaml_parser_t parser;

        assert_true(yaml_parser_initialize(&parser));
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, strlen(text));
        assert_true(yaml_parser_load(&parser, doc));
        yaml_parser_delete(&parser);
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
                cmocka_unit_test(test_map_get),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
