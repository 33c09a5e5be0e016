/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one YAML loader, small lookups in a libyaml document, and the writer of the documents node-reset
 * changes (kubeadm's ClusterStatus, a user's kubeconfig). */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/yaml-util.h"
#include "dlib/dlopen.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static const char *loader_path(const char *path) {
        return path ?: "the YAML text";
}

int yaml_loader_open(YamlLoader *l, const char *text, size_t size, const char *path, char **reterr) {
        *l = (YamlLoader) { .path = path };
        /* libyaml's only failure here is an allocation: tell a missing library apart first. */
        if (dlib_load(DLIB_LIBYAML) < 0)
                return set_errmsg(reterr, -ELIBACC, "%s: not read: libyaml is not available (%s)", loader_path(path),
                                  strna(dlib_why(DLIB_LIBYAML)));
        if (!yaml_parser_initialize(&l->parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&l->parser, (const unsigned char *) text, size);
        l->open = true;
        return 0;
}

/* Why the parser stopped, in its own words and where (libyaml's marks count from 0). */
static int loader_error(const YamlLoader *l, char **reterr) {
        const yaml_parser_t *p = &l->parser;

        if (p->error == YAML_MEMORY_ERROR)
                return -ENOMEM;
        return set_errmsg(reterr, -EBADMSG, "%s: malformed YAML at line %zu column %zu: %s%s%s", loader_path(l->path),
                          p->problem_mark.line + 1, p->problem_mark.column + 1, strempty(p->problem),
                          p->context ? " " : "", strempty(p->context));
}

int yaml_loader_next(YamlLoader *l, yaml_document_t *ret, char **reterr) {
        yaml_document_t doc;

        if (!l->open)
                return -EBADF;
        if (!yaml_parser_load(&l->parser, &doc))
                return loader_error(l, reterr);
        if (!yaml_document_get_root_node(&doc)) {
                yaml_document_delete(&doc);
                return 0;
        }
        *ret = doc;
        return 1;
}

void yaml_loader_close(YamlLoader *l) {
        if (l->open)
                yaml_parser_delete(&l->parser);
        l->open = false;
}

int yaml_load_first(const char *text, size_t size, const char *path, yaml_document_t *ret, char **reterr) {
        YamlLoader l;
        int r;

        r = yaml_loader_open(&l, text, size, path, reterr);
        if (r < 0)
                return r;
        /* libyaml's own load, not yaml_loader_next(): an empty text is a document with no root. */
        r = yaml_parser_load(&l.parser, ret) ? 0 : loader_error(&l, reterr);
        yaml_loader_close(&l);
        return r;
}

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
                       int (*fn)(yaml_document_t *doc, const char *path, void *userdata), void *userdata,
                       char **reterr) {
        YamlLoader l;
        int r;

        r = yaml_loader_open(&l, text, size, path, reterr);
        for (unsigned n = 0; r >= 0 && n < YAML_EACH_DOCUMENT_MAX; n++) {
                yaml_document_t doc;

                r = yaml_loader_next(&l, &doc, reterr);
                if (r <= 0)
                        break;
                r = fn(&doc, path, userdata);
                yaml_document_delete(&doc);
                if (r != 0)
                        break;
        }
        yaml_loader_close(&l);
        return r;
}

static int write_handler(void *data, unsigned char *buffer, size_t size) {
        return fwrite(buffer, 1, size, data) == size;
}

int yaml_document_emit(yaml_document_t *doc, char **ret) {
        yaml_emitter_t em;
        size_t size = 0;
        FILE *f;
        int ok;

        f = open_memstream(ret, &size);
        if (!f) {
                yaml_document_delete(doc);
                return -ENOMEM;
        }
        if (!yaml_emitter_initialize(&em)) {
                yaml_document_delete(doc);
                fclose(f);
                return -ENOMEM;
        }
        yaml_emitter_set_output(&em, write_handler, f);
        yaml_emitter_set_unicode(&em, 1);
        /* A token or a certificate's base64 stays one line, as the tools that wrote it left it. */
        yaml_emitter_set_width(&em, -1);
        ok = yaml_emitter_open(&em) && yaml_emitter_dump(&em, doc) && yaml_emitter_close(&em);
        yaml_emitter_delete(&em);
        if (fclose(f) != 0 || !ok) {
                *ret = mfree(*ret);
                return -ENOMEM;
        }
        return 0;
}

static bool depth_within(yaml_document_t *doc, int index, bool *seen, unsigned max) {
        yaml_node_t *n = yaml_document_get_node(doc, index);

        if (!n || seen[index - 1])
                return true;
        seen[index - 1] = true;
        if (n->type == YAML_SCALAR_NODE)
                return true;
        if (max == 0)
                return false;
        if (n->type == YAML_SEQUENCE_NODE)
                for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++)
                        if (!depth_within(doc, *i, seen, max - 1))
                                return false;
        if (n->type == YAML_MAPPING_NODE)
                for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
                        if (!depth_within(doc, p->key, seen, max - 1) || !depth_within(doc, p->value, seen, max - 1))
                                return false;
        return true;
}

int yaml_document_check_depth(yaml_document_t *doc, unsigned max) {
        cleanup_free bool *seen = calloc((size_t) (doc->nodes.top - doc->nodes.start) ?: 1, sizeof *seen);

        if (!seen)
                return -ENOMEM;
        return depth_within(doc, 1, seen, max) ? 0 : -EBADMSG;
}

static bool scalar_equal(const yaml_node_t *a, const yaml_node_t *b) {
        bool plain_a = a->data.scalar.style == YAML_PLAIN_SCALAR_STYLE,
             plain_b = b->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

        return plain_a == plain_b && a->data.scalar.length == b->data.scalar.length &&
               memcmp(a->data.scalar.value, b->data.scalar.value, a->data.scalar.length) == 0 &&
               streq_ptr((const char *) a->tag, (const char *) b->tag);
}

bool yaml_node_equal(yaml_document_t *da, yaml_node_t *a, yaml_document_t *db, yaml_node_t *b) {
        if (!a || !b || a->type != b->type)
                return a == b;
        if (a->type == YAML_SCALAR_NODE)
                return scalar_equal(a, b);
        if (a->type == YAML_SEQUENCE_NODE) {
                yaml_node_item_t *i = a->data.sequence.items.start, *j = b->data.sequence.items.start;

                if (a->data.sequence.items.top - i != b->data.sequence.items.top - j)
                        return false;
                for (; i < a->data.sequence.items.top; i++, j++)
                        if (!yaml_node_equal(da, yaml_document_get_node(da, *i), db, yaml_document_get_node(db, *j)))
                                return false;
                return true;
        }
        yaml_node_pair_t *p = a->data.mapping.pairs.start, *q = b->data.mapping.pairs.start;

        if (a->data.mapping.pairs.top - p != b->data.mapping.pairs.top - q)
                return false;
        for (; p < a->data.mapping.pairs.top; p++, q++)
                if (!yaml_node_equal(da, yaml_document_get_node(da, p->key), db, yaml_document_get_node(db, q->key)) ||
                    !yaml_node_equal(da, yaml_document_get_node(da, p->value), db,
                                     yaml_document_get_node(db, q->value)))
                        return false;
        return true;
}
