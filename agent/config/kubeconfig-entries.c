/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A kubeconfig's contexts, clusters and users sorted into one cluster's and the others', read and never
 * edited: which entries "kubectl config delete-context", "delete-cluster" and "delete-user" would
 * take out (the files phase's editor, files-kubeconfig-prune.c, writes the file without them).
 * client-go keeps the last of two entries of one name (its v1 conversion fills a map): which one the
 * user meant cannot be told, so such a file is refused. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/kubeconfig-entries.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define CA_MAX (1024U * 1024U)

void kube_cluster_id_done(KubeClusterId *c) {
        free(c->server);
        free(c->ca);
        *c = (KubeClusterId) {};
}

bool kube_cluster_id_same(const KubeClusterId *cluster, const KubeClusterId *c) {
        if (!cluster->server || !c->server || !streq(cluster->server, c->server))
                return false;
        if (!cluster->ca)
                return true;
        return c->ca && c->ca_size == cluster->ca_size && memcmp(c->ca, cluster->ca, c->ca_size) == 0;
}

void kubeconfig_prune_done(KubeconfigPrune *p) {
        strv_free(p->contexts);
        strv_free(p->clusters);
        strv_free(p->users);
        strv_free(p->kept_contexts);
        strv_free(p->kept_clusters);
        strv_free(p->kept_users);
        free(p->current);
        free(p->text);
        *p = (KubeconfigPrune) {};
}

/* One YAML document whose root is a mapping: a second document would be lost when written back. */
int kubeconfig_doc_load(KubeconfigDoc *d, const char *text, size_t size) {
        yaml_document_t extra;
        YamlLoader l;
        int r;

        r = yaml_loader_open(&l, text, size, d->path, d->reterr);
        if (r >= 0)
                r = yaml_loader_next(&l, &d->doc, d->reterr);
        if (r == 0)
                r = set_errmsg(d->reterr, -EBADMSG, "%s: not a kubeconfig (the document is not a mapping)", d->path);
        if (r < 0) {
                yaml_loader_close(&l);
                return r;
        }
        d->root = yaml_document_get_root_node(&d->doc);
        if (d->root->type != YAML_MAPPING_NODE)
                r = set_errmsg(d->reterr, -EBADMSG, "%s: not a kubeconfig (the document is not a mapping)", d->path);
        else if ((r = yaml_loader_next(&l, &extra, d->reterr)) > 0) {
                yaml_document_delete(&extra);
                r = set_errmsg(d->reterr, -EBADMSG, "%s: holds more than one YAML document", d->path);
        }
        yaml_loader_close(&l);
        if (r < 0)
                yaml_document_delete(&d->doc);
        return r;
}

static bool is_null(const yaml_node_t *n) {
        const char *s = yaml_scalar_of(n);

        return !n || (s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                      (isempty(s) || streq(s, "~") || streq(s, "null") || streq(s, "Null") || streq(s, "NULL")));
}

const char *kubeconfig_doc_entry_name(KubeconfigDoc *d, yaml_node_item_t item) {
        return yaml_scalar_of(yaml_map_get(&d->doc, yaml_document_get_node(&d->doc, item), "name"));
}

/* The root's list "key" (NULL when absent or null): entries that each have a name, no two the same. */
static int list_of(KubeconfigDoc *d, const char *key, yaml_node_t **ret) {
        yaml_node_t *l = yaml_map_get(&d->doc, d->root, key);

        *ret = NULL;
        if (is_null(l))
                return 0;
        if (l->type != YAML_SEQUENCE_NODE)
                return set_errmsg(d->reterr, -EBADMSG, "%s: '%s' is not a list", d->path, key);
        for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++) {
                const char *n = kubeconfig_doc_entry_name(d, *i);

                if (!n)
                        return set_errmsg(d->reterr, -EBADMSG, "%s: an entry of '%s' has no name", d->path, key);
                for (yaml_node_item_t *j = l->data.sequence.items.start; j < i; j++)
                        if (streq(kubeconfig_doc_entry_name(d, *j), n))
                                return set_errmsg(
                                        d->reterr, -EBADMSG,
                                        "%s: two entries of '%s' are named \"%s\" (which one counts cannot be "
                                        "told)",
                                        d->path, key, n);
        }
        *ret = l;
        return 0;
}

/* The string field of an entry's body ("cluster" of a context): NULL when not one. */
static const char *body_field(KubeconfigDoc *d, yaml_node_item_t item, const char *body, const char *field) {
        yaml_node_t *e = yaml_document_get_node(&d->doc, item);

        return yaml_scalar_of(yaml_map_get(&d->doc, yaml_map_get(&d->doc, e, body), field));
}

/* A cluster entry's server and CA (the inline form wins, as in client-go); a CA that cannot be read
 * or decoded is none, so that it matches no cluster that names one. 0 when it names no server. */
static int cluster_id_of(KubeconfigDoc *d, yaml_node_item_t item, KubeClusterId *ret) {
        const char *server = body_field(d, item, "cluster", "server"),
                   *data = body_field(d, item, "cluster", "certificate-authority-data"),
                   *file = body_field(d, item, "cluster", "certificate-authority");
        cleanup_free char *node_path = NULL;

        *ret = (KubeClusterId) {};
        if (isempty(server))
                return 0;
        if (!isempty(data) && kubeconfig_pem_decode(data, &ret->ca, &ret->ca_size) == -ENOMEM)
                return -ENOMEM;
        if (isempty(data) && !isempty(file)) {
                if (kubeconfig_resolve_file(d->path, file, &node_path) < 0)
                        return -ENOMEM;
                if (fileio_read_beneath(d->root_fd, node_path, CA_MAX, &ret->ca, &ret->ca_size) == -ENOMEM)
                        return -ENOMEM;
        }
        ret->server = strdup(server);
        return ret->server ? 1 : -ENOMEM;
}

static int sort_clusters(KubeconfigDoc *d, yaml_node_t *clusters, const KubeClusterId *ids, size_t n_ids,
                         KubeconfigPrune *p) {
        for (yaml_node_item_t *i = clusters ? clusters->data.sequence.items.start : NULL;
             clusters && i < clusters->data.sequence.items.top; i++) {
                KubeClusterId c;
                bool ours = false;
                int r;

                r = cluster_id_of(d, *i, &c);
                for (size_t k = 0; r > 0 && k < n_ids && !ours; k++)
                        ours = kube_cluster_id_same(&ids[k], &c);
                kube_cluster_id_done(&c);
                if (r < 0 || strv_extend(ours ? &p->clusters : &p->kept_clusters, kubeconfig_doc_entry_name(d, *i)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int sort_contexts(KubeconfigDoc *d, yaml_node_t *contexts, KubeconfigPrune *p) {
        for (yaml_node_item_t *i = contexts ? contexts->data.sequence.items.start : NULL;
             contexts && i < contexts->data.sequence.items.top; i++) {
                const char *cluster = body_field(d, *i, "context", "cluster");
                bool ours = cluster && strv_contains(p->clusters, cluster);

                if (strv_extend(ours ? &p->contexts : &p->kept_contexts, kubeconfig_doc_entry_name(d, *i)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Is the user named by a context of list "names" (of contexts)? */
static bool user_named_by(KubeconfigDoc *d, yaml_node_t *contexts, char *const *names, const char *user) {
        for (yaml_node_item_t *i = contexts ? contexts->data.sequence.items.start : NULL;
             contexts && i < contexts->data.sequence.items.top; i++)
                if (strv_contains(names, kubeconfig_doc_entry_name(d, *i)) &&
                    streq_ptr(body_field(d, *i, "context", "user"), user))
                        return true;
        return false;
}

static int sort_users(KubeconfigDoc *d, yaml_node_t *users, yaml_node_t *contexts, KubeconfigPrune *p) {
        for (yaml_node_item_t *i = users ? users->data.sequence.items.start : NULL;
             users && i < users->data.sequence.items.top; i++) {
                const char *n = kubeconfig_doc_entry_name(d, *i);
                bool ours =
                        user_named_by(d, contexts, p->contexts, n) && !user_named_by(d, contexts, p->kept_contexts, n);

                if (strv_extend(ours ? &p->users : &p->kept_users, n) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Nothing but this cluster's entries and what says nothing (apiVersion, kind, the current context,
 * empty preferences and extensions): the file goes whole. */
static bool only_ours(KubeconfigDoc *d, const KubeconfigPrune *p) {
        static const char *const bare[] = { "apiVersion", "kind", "current-context", "clusters", "contexts", "users" };

        if (p->kept_contexts || p->kept_clusters || p->kept_users)
                return false;
        for (yaml_node_pair_t *q = d->root->data.mapping.pairs.start; q < d->root->data.mapping.pairs.top; q++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(&d->doc, q->key));
                yaml_node_t *v = yaml_document_get_node(&d->doc, q->value);
                bool known = false;

                for (size_t i = 0; k && i < ELEMENTSOF(bare); i++)
                        known = known || streq(k, bare[i]);
                if (known)
                        continue;
                if (!k || !(streq(k, "preferences") || streq(k, "extensions")))
                        return false;
                if (!is_null(v) &&
                    !(v->type == YAML_MAPPING_NODE && v->data.mapping.pairs.top == v->data.mapping.pairs.start) &&
                    !(v->type == YAML_SEQUENCE_NODE && v->data.sequence.items.top == v->data.sequence.items.start))
                        return false;
        }
        return true;
}

int kubeconfig_doc_classify(KubeconfigDoc *d, const KubeClusterId *ids, size_t n_ids, KubeconfigPrune *p) {
        yaml_node_t *clusters, *contexts, *users;
        const char *current;
        int r;

        r = list_of(d, "clusters", &clusters);
        if (r >= 0)
                r = list_of(d, "contexts", &contexts);
        if (r >= 0)
                r = list_of(d, "users", &users);
        if (r >= 0)
                r = sort_clusters(d, clusters, ids, n_ids, p);
        if (r >= 0)
                r = sort_contexts(d, contexts, p);
        if (r >= 0)
                r = sort_users(d, users, contexts, p);
        if (r < 0)
                return r;
        if (!p->clusters)
                return 0;
        current = yaml_scalar_of(yaml_map_get(&d->doc, d->root, "current-context"));
        if (current && strv_contains(p->contexts, current) && !(p->current = strdup(current)))
                return -ENOMEM;
        p->whole = only_ours(d, p);
        return 1;
}

int kubeconfig_entries(const char *path, const char *text, size_t size, int root_fd, const KubeClusterId *ids,
                       size_t n_ids, KubeconfigPrune *ret, char **reterr) {
        KubeconfigDoc d = { .path = path, .root_fd = root_fd, .reterr = reterr };
        KubeconfigPrune p = {};
        int r;

        *ret = (KubeconfigPrune) {};
        r = kubeconfig_doc_load(&d, text, size);
        if (r < 0)
                return r;
        r = kubeconfig_doc_classify(&d, ids, n_ids, &p);
        yaml_document_delete(&d.doc);
        if (r < 0) {
                kubeconfig_prune_done(&p);
                return r;
        }
        *ret = p;
        return r;
}

static int describe_list(FILE *f, const char *what, char **names) {
        STRV_FOREACH(n, names)
                if (fprintf(f, "%s%s \"%s\"", ftell(f) > 0 ? ", " : "", what, *n) < 0)
                        return -ENOMEM;
        return 0;
}

char *kubeconfig_prune_describe(const KubeconfigPrune *p, bool kept) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        (void) describe_list(f, "context", kept ? p->kept_contexts : p->contexts);
        (void) describe_list(f, "cluster", kept ? p->kept_clusters : p->clusters);
        (void) describe_list(f, "user", kept ? p->kept_users : p->users);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}
