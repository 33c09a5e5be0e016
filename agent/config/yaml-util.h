/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small lookups in a libyaml document, shared by the readers of kubeconfigs and static pod manifests. */
#pragma once

#include <yaml.h>

/* A scalar node's text, or NULL for any other node, NULL, or a scalar with a "\0" escape (which
 * would cut the string short: such a value is no name, path or address). */
const char *yaml_scalar_of(const yaml_node_t *n);

/* The value of key in a mapping node, or NULL when map is no mapping or has no such key. */
yaml_node_t *yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key);

/* Load each document of a (multi-document) YAML text in turn, up to the 64th, and pass it (with path,
 * for the reader's messages) to fn until fn returns non-zero: that result; 0 after the last document;
 * -EBADMSG when a document is no YAML (the documents before it were read); -EOPNOTSUPP without
 * libyaml. */
#define YAML_EACH_DOCUMENT_MAX 64U
int yaml_each_document(const char *text, size_t size, const char *path,
                       int (*fn)(yaml_document_t *doc, const char *path, void *userdata), void *userdata);
