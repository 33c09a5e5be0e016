/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small lookups in a libyaml document, shared by the readers of kubeconfigs and static pod manifests. */

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
