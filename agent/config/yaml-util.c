/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small lookups in a libyaml document, shared by the readers of kubeconfigs and static pod manifests. */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent/config/yaml-util.h"
#include "string-util.h"

const char *yaml_scalar_of(const yaml_node_t *n) {
        const char *s;

        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        s = (const char *) n->data.scalar.value;
        return strlen(s) == n->data.scalar.length ? s : NULL;
}

yaml_node_t *yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key) {
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *i = map->data.mapping.pairs.start; i < map->data.mapping.pairs.top; i++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(doc, i->key));

                if (k && streq(k, key))
                        return yaml_document_get_node(doc, i->value);
        }
        return NULL;
}

int yaml_each_document(const char *text, size_t size, const char *path,
                       int (*fn)(yaml_document_t *doc, const char *path, void *userdata), void *userdata) {
        yaml_parser_t parser;
        int r = 0;

        if (!yaml_parser_initialize(&parser))
                return -EOPNOTSUPP;
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, size);
        for (unsigned n = 0; r == 0 && n < YAML_EACH_DOCUMENT_MAX; n++) {
                yaml_document_t doc;
                bool end;

                if (!yaml_parser_load(&parser, &doc)) {
                        r = -EBADMSG;
                        break;
                }
                end = !yaml_document_get_root_node(&doc);
                if (!end)
                        r = fn(&doc, path, userdata);
                yaml_document_delete(&doc);
                if (end)
                        break;
        }
        yaml_parser_delete(&parser);
        return r;
}
