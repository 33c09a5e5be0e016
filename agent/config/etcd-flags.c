/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* etcd's flags from the files that start it: a commented-out line, a key in another mapping or a
 * flag in another container is no flag. */

#include <errno.h>
#include <string.h>
#include <yaml.h>

#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/yaml-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* A sequence of scalars appended to *argv; anything else in it is no command line. */
static int append_seq(yaml_document_t *doc, yaml_node_t *seq, char ***argv) {
        if (!seq)
                return 0;
        if (seq->type != YAML_SEQUENCE_NODE)
                return -EBADMSG;
        for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
                const char *s = yaml_scalar_of(yaml_document_get_node(doc, *i));

                if (!s)
                        return -EBADMSG;
                if (strv_extend(argv, s) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static bool container_is(yaml_document_t *doc, yaml_node_t *c, const char *container) {
        const char *name = yaml_scalar_of(yaml_map_get(doc, c, "name"));
        yaml_node_t *cmd = yaml_map_get(doc, c, "command");
        const char *prog = NULL, *slash;

        if (streq_ptr(name, container))
                return true;
        if (cmd && cmd->type == YAML_SEQUENCE_NODE && cmd->data.sequence.items.start < cmd->data.sequence.items.top)
                prog = yaml_scalar_of(yaml_document_get_node(doc, *cmd->data.sequence.items.start));
        if (!prog)
                return false;
        slash = strrchr(prog, '/');
        return streq(slash ? slash + 1 : prog, container);
}

static int doc_container_argv(yaml_document_t *doc, const char *container, char ***ret) {
        yaml_node_t *root = yaml_document_get_root_node(doc);
        yaml_node_t *spec = yaml_map_get(doc, root, "spec");
        yaml_node_t *list = yaml_map_get(doc, spec, "containers");
        int r;

        if (!list || list->type != YAML_SEQUENCE_NODE)
                return -EBADMSG;
        for (yaml_node_item_t *i = list->data.sequence.items.start; i < list->data.sequence.items.top; i++) {
                yaml_node_t *c = yaml_document_get_node(doc, *i);
                cleanup_strv char **argv = NULL;

                if (!c || c->type != YAML_MAPPING_NODE || !container_is(doc, c, container))
                        continue;
                r = append_seq(doc, yaml_map_get(doc, c, "command"), &argv);
                if (r >= 0)
                        r = append_seq(doc, yaml_map_get(doc, c, "args"), &argv);
                if (r < 0)
                        return r;
                if (!argv && strv_extend(&argv, container) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(argv);
                return 1;
        }
        return 0;
}

typedef struct PodQuery {
        const char *container;
        char ***ret;
} PodQuery;

/* A static pod manifest is one document: its answer is the file's. */
static int pod_document(yaml_document_t *doc, const char *path, void *userdata) {
        PodQuery *q = userdata;
        int r = doc_container_argv(doc, q->container, q->ret);

        return r == 0 ? -ENOENT : r;
}

int pod_container_argv(const char *text, size_t size, const char *container, char ***ret) {
        int r = yaml_each_document(text, size, NULL, pod_document, &(PodQuery) { container, ret }, NULL);

        /* No document at all is no pod spec. */
        return r == 0 ? -EBADMSG : r == -ENOENT ? 0 : r;
}

int etcd_env_pairs_argv(char **pairs, char ***argv) {
        STRV_FOREACH(p, pairs) {
                const char *k = startswith(*p, "ETCD_");
                const char *eq = k ? strchr(k, '=') : NULL;
                char *flag;
                int r;

                if (!eq || eq == k)
                        continue;
                flag = strprintf("--%.*s=%s", (int) (eq - k), k, eq + 1);
                if (!flag)
                        return -ENOMEM;
                for (char *c = flag + 2; *c != '='; c++)
                        *c = *c == '_' ? '-' : (char) (*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
                r = strv_consume(argv, flag);
                if (r < 0)
                        return r;
        }
        return 0;
}

int etcd_env_argv(const char *text, size_t size, char ***ret, unsigned *ret_line) {
        cleanup_strv char **pairs = NULL, **argv = NULL;
        int r;

        r = env_file_parse(text, size, &pairs, ret_line);
        if (r < 0)
                return r;
        if (strv_extend(&argv, "etcd") < 0)
                return -ENOMEM;
        r = etcd_env_pairs_argv(pairs, &argv);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(argv);
        return 0;
}

/* One "key: value" of etcd's configuration file as the flag etcd maps it to: a scalar as is, a
 * sequence of scalars joined by commas (as the flag takes a list). */
static int config_flag(yaml_document_t *doc, const char *prefix, const char *key, yaml_node_t *v, char ***argv) {
        const char *value = yaml_scalar_of(v);
        cleanup_free char *joined = NULL;

        if (!value && v && v->type == YAML_SEQUENCE_NODE) {
                for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
                        const char *item = yaml_scalar_of(yaml_document_get_node(doc, *i));
                        char *n;

                        if (!item)
                                return -EBADMSG;
                        n = strprintf("%s%s%s", joined ?: "", joined ? "," : "", item);
                        if (!n)
                                return -ENOMEM;
                        free(joined);
                        joined = n;
                }
                value = joined ?: "";
        }
        if (!value)
                return -EBADMSG;
        return strv_consume(argv, strprintf("--%s%s=%s", prefix, key, value));
}

/* etcd's embed.configYAML: the top-level keys are its flags; client-transport-security and
 * peer-transport-security hold the TLS flags, the latter's prefixed "peer-". */
static int config_map_argv(yaml_document_t *doc, yaml_node_t *map, const char *prefix, char ***argv) {
        if (!map || map->type != YAML_MAPPING_NODE)
                return -EBADMSG;
        for (yaml_node_pair_t *i = map->data.mapping.pairs.start; i < map->data.mapping.pairs.top; i++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(doc, i->key));
                yaml_node_t *v = yaml_document_get_node(doc, i->value);
                int r;

                if (!k)
                        return -EBADMSG;
                if (!*prefix && streq(k, "client-transport-security"))
                        r = config_map_argv(doc, v, "", argv);
                else if (!*prefix && streq(k, "peer-transport-security"))
                        r = config_map_argv(doc, v, "peer-", argv);
                else if (v && v->type == YAML_MAPPING_NODE)
                        r = 0; /* another nested setting (auto-tls details, ...): no flag this reader needs */
                else
                        r = config_flag(doc, prefix, k, v, argv);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The configuration is the first document. */
static int config_document(yaml_document_t *doc, const char *path, void *userdata) {
        int r = config_map_argv(doc, yaml_document_get_root_node(doc), "", userdata);

        return r < 0 ? r : 1;
}

int etcd_config_argv(const char *text, size_t size, char ***ret) {
        cleanup_strv char **argv = NULL;
        int r;

        if (strv_extend(&argv, "etcd") < 0)
                return -ENOMEM;
        r = yaml_each_document(text, size, NULL, config_document, &argv, NULL);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG; /* no document: no configuration */
        *ret = TAKE_PTR(argv);
        return 0;
}
