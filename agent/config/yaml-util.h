/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one YAML loader (every YAML document the agent reads is parsed here, its failures said one way),
 * small lookups in a libyaml document, and the writer of the documents node-reset changes (kubeadm's
 * ClusterStatus, a user's kubeconfig). */
#pragma once

#include <stdbool.h>
#include <yaml.h>

/* A YAML text read document by document. Its two failures are said here and nowhere else, in
 * *reterr (set once, the file named: path, or "the YAML text" when NULL):
 *   -ELIBACC  libyaml does not load: "PATH: not read: libyaml is not available (WHY)";
 *   -EBADMSG  the text is no YAML: "PATH: malformed YAML at line L column C: PROBLEM CONTEXT";
 * and -ENOMEM only when memory ran out. */
typedef struct YamlLoader {
        yaml_parser_t parser;
        const char *path;
        bool open;
} YamlLoader;

int yaml_loader_open(YamlLoader *l, const char *text, size_t size, const char *path, char **reterr);
/* The next document: 1 and *ret (yaml_document_delete() it), 0 after the last (*ret untouched),
 * -EBADMSG, -ENOMEM. A loader that failed once fails again. */
int yaml_loader_next(YamlLoader *l, yaml_document_t *ret, char **reterr);
void yaml_loader_close(YamlLoader *l);

/* The first document of a text: 0 and *ret (yaml_document_delete() it; its root is NULL when the
 * text holds no document), or the loader's -ELIBACC, -EBADMSG, -ENOMEM. What follows the first
 * document is not read. */
int yaml_load_first(const char *text, size_t size, const char *path, yaml_document_t *ret, char **reterr);

/* A scalar node's text, or NULL for any other node, NULL, or a scalar with a "\0" escape (which
 * would cut the string short: such a value is no name, path or address). */
const char *yaml_scalar_of(const yaml_node_t *n);

/* The value of key in a mapping node, or NULL when map is no mapping or has no such key. */
yaml_node_t *yaml_map_get(yaml_document_t *doc, yaml_node_t *map, const char *key);

/* Load each document of a (multi-document) YAML text in turn, up to the 64th, and pass it (with path,
 * for the reader's messages) to fn until fn returns non-zero: that result; 0 after the last document;
 * -EBADMSG when a document is no YAML (the documents before it were read); -ELIBACC without
 * libyaml (the loader's failures, said in *reterr when not NULL). */
#define YAML_EACH_DOCUMENT_MAX 64U
int yaml_each_document(const char *text, size_t size, const char *path,
                       int (*fn)(yaml_document_t *doc, const char *path, void *userdata), void *userdata,
                       char **reterr);

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
