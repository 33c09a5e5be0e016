/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small lookups in a libyaml document, shared by the readers of kubeconfigs and static pod manifests,
 * and the writer of the documents node-reset changes (kubeadm's ClusterStatus, a user's kubeconfig). */
#pragma once

#include <stdbool.h>
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

/* The document back to YAML text with libyaml's emitter, each value on one line however long (the
 * emitter deletes the document, also on failure). 0 or -ENOMEM. */
int yaml_document_emit(yaml_document_t *doc, char **ret);

/* Is the document at most max levels deep as the emitter walks it (depth first from the root, a node
 * seen before written as an alias)? libyaml's emitter recurses once per level and indents each line
 * by its level: a megabyte nested 100000 deep would cost gigabytes, or the stack. 0, -EBADMSG
 * deeper, -ENOMEM. The recursion here goes no deeper than max. */
int yaml_document_check_depth(yaml_document_t *doc, unsigned max);

/* Do the two nodes mean the same: scalars by their text and by whether they are plain (a plain true
 * is a boolean, a quoted one a string), sequences item by item, mappings pair by pair in order.
 * Recursion as deep as the nodes: check_depth() them first. */
bool yaml_node_equal(yaml_document_t *da, yaml_node_t *a, yaml_document_t *db, yaml_node_t *b);
