/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This cluster's entries in a kubeconfig that may hold others, and the file without them. kubectl's
 * "config delete-context", "delete-cluster" and "delete-user" (staging/src/k8s.io/kubectl/pkg/cmd/
 * config/delete_*.go) each drop one entry by name and write the rest back through client-go's
 * clientcmd.ModifyConfig: preferences, extensions and every other entry are kept as they were.
 * delete-context leaves a current-context that names the deleted context (and warns); here it is
 * unset, as "kubectl config unset current-context" would, since it names nothing any more. client-go
 * keeps the last of two entries of one name (its v1 conversion fills a map): which one the user
 * meant cannot be told, so such a file is refused. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/kubeconfig-prune.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* client-go writes five levels; what a user may add (extensions) gets room. */
#define KUBECONFIG_DEPTH_MAX 64U
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

/* What the file is read for: its document, its node path, the root its CA files are read beneath. */
typedef struct Doc {
        yaml_document_t doc;
        yaml_node_t *root;
        const char *path;
        int root_fd;
        char **reterr;
} Doc;

/* One YAML document whose root is a mapping: a second document would be lost when written back. */
static int doc_load(Doc *d, const char *text, size_t size) {
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

static const char *entry_name(Doc *d, yaml_node_item_t item) {
        return yaml_scalar_of(yaml_map_get(&d->doc, yaml_document_get_node(&d->doc, item), "name"));
}

/* The root's list "key" (NULL when absent or null): entries that each have a name, no two the same. */
static int list_of(Doc *d, const char *key, yaml_node_t **ret) {
        yaml_node_t *l = yaml_map_get(&d->doc, d->root, key);

        *ret = NULL;
        if (is_null(l))
                return 0;
        if (l->type != YAML_SEQUENCE_NODE)
                return set_errmsg(d->reterr, -EBADMSG, "%s: '%s' is not a list", d->path, key);
        for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++) {
                const char *n = entry_name(d, *i);

                if (!n)
                        return set_errmsg(d->reterr, -EBADMSG, "%s: an entry of '%s' has no name", d->path, key);
                for (yaml_node_item_t *j = l->data.sequence.items.start; j < i; j++)
                        if (streq(entry_name(d, *j), n))
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
static const char *body_field(Doc *d, yaml_node_item_t item, const char *body, const char *field) {
        yaml_node_t *e = yaml_document_get_node(&d->doc, item);

        return yaml_scalar_of(yaml_map_get(&d->doc, yaml_map_get(&d->doc, e, body), field));
}

/* A cluster entry's server and CA (the inline form wins, as in client-go); a CA that cannot be read
 * or decoded is none, so that it matches no cluster that names one. 0 when it names no server. */
static int cluster_id_of(Doc *d, yaml_node_item_t item, KubeClusterId *ret) {
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

static int sort_clusters(Doc *d, yaml_node_t *clusters, const KubeClusterId *ids, size_t n_ids, KubeconfigPrune *p) {
        for (yaml_node_item_t *i = clusters ? clusters->data.sequence.items.start : NULL;
             clusters && i < clusters->data.sequence.items.top; i++) {
                KubeClusterId c;
                bool ours = false;
                int r;

                r = cluster_id_of(d, *i, &c);
                for (size_t k = 0; r > 0 && k < n_ids && !ours; k++)
                        ours = kube_cluster_id_same(&ids[k], &c);
                kube_cluster_id_done(&c);
                if (r < 0 || strv_extend(ours ? &p->clusters : &p->kept_clusters, entry_name(d, *i)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int sort_contexts(Doc *d, yaml_node_t *contexts, KubeconfigPrune *p) {
        for (yaml_node_item_t *i = contexts ? contexts->data.sequence.items.start : NULL;
             contexts && i < contexts->data.sequence.items.top; i++) {
                const char *cluster = body_field(d, *i, "context", "cluster");
                bool ours = cluster && strv_contains(p->clusters, cluster);

                if (strv_extend(ours ? &p->contexts : &p->kept_contexts, entry_name(d, *i)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Is the user named by a context of list "names" (of contexts)? */
static bool user_named_by(Doc *d, yaml_node_t *contexts, char *const *names, const char *user) {
        for (yaml_node_item_t *i = contexts ? contexts->data.sequence.items.start : NULL;
             contexts && i < contexts->data.sequence.items.top; i++)
                if (strv_contains(names, entry_name(d, *i)) && streq_ptr(body_field(d, *i, "context", "user"), user))
                        return true;
        return false;
}

static int sort_users(Doc *d, yaml_node_t *users, yaml_node_t *contexts, KubeconfigPrune *p) {
        for (yaml_node_item_t *i = users ? users->data.sequence.items.start : NULL;
             users && i < users->data.sequence.items.top; i++) {
                const char *n = entry_name(d, *i);
                bool ours =
                        user_named_by(d, contexts, p->contexts, n) && !user_named_by(d, contexts, p->kept_contexts, n);

                if (strv_extend(ours ? &p->users : &p->kept_users, n) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Nothing but this cluster's entries and what says nothing (apiVersion, kind, the current context,
 * empty preferences and extensions): the file goes whole. */
static bool only_ours(Doc *d, const KubeconfigPrune *p) {
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

static int classify(Doc *d, const KubeClusterId *ids, size_t n_ids, KubeconfigPrune *p) {
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

/* Take the named entries out of the root's list "key". */
static void drop_entries(Doc *d, const char *key, char *const *names) {
        yaml_node_t *l = yaml_map_get(&d->doc, d->root, key);
        yaml_node_item_t *out;

        if (!l || l->type != YAML_SEQUENCE_NODE)
                return;
        out = l->data.sequence.items.start;
        for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++)
                if (!strv_contains(names, entry_name(d, *i)))
                        *out++ = *i;
        l->data.sequence.items.top = out;
}

static void drop_current(Doc *d) {
        yaml_node_pair_t *out = d->root->data.mapping.pairs.start;

        for (yaml_node_pair_t *q = d->root->data.mapping.pairs.start; q < d->root->data.mapping.pairs.top; q++)
                if (!streq_ptr(yaml_scalar_of(yaml_document_get_node(&d->doc, q->key)), "current-context"))
                        *out++ = *q;
        d->root->data.mapping.pairs.top = out;
}

/* The document as it is to be: what the emitter writes, and what that must read back as. */
static void drop_ours(Doc *d, const KubeconfigPrune *p) {
        drop_entries(d, "contexts", p->contexts);
        drop_entries(d, "clusters", p->clusters);
        drop_entries(d, "users", p->users);
        if (p->current)
                drop_current(d);
}

/* Written back by the emitter, then read again beside the original without our entries: the same
 * meaning, or the file is not edited. Takes d's document. */
static int write_without(Doc *d, const char *text, size_t size, KubeconfigPrune *p) {
        Doc meant = { .path = d->path, .root_fd = d->root_fd, .reterr = d->reterr };
        Doc back = meant;
        bool same;
        int r;

        drop_ours(d, p);
        r = yaml_document_check_depth(&d->doc, KUBECONFIG_DEPTH_MAX);
        if (r < 0) {
                yaml_document_delete(&d->doc);
                return r == -EBADMSG ? set_errmsg(d->reterr, r, "%s: nests deeper than %u levels", d->path,
                                                  KUBECONFIG_DEPTH_MAX)
                                     : r;
        }
        r = yaml_document_emit(&d->doc, &p->text);
        if (r < 0)
                return r;
        p->size = strlen(p->text);
        r = doc_load(&meant, text, size);
        if (r < 0)
                return r;
        drop_ours(&meant, p);
        r = doc_load(&back, p->text, p->size);
        if (r < 0) {
                yaml_document_delete(&meant.doc);
                return r;
        }
        same = yaml_document_check_depth(&back.doc, KUBECONFIG_DEPTH_MAX) == 0 &&
               yaml_node_equal(&meant.doc, meant.root, &back.doc, back.root);
        yaml_document_delete(&meant.doc);
        yaml_document_delete(&back.doc);
        if (!same)
                return set_errmsg(d->reterr, -EBADMSG, "%s: written back it would not read the same", d->path);
        return 0;
}

int kubeconfig_prune(const char *path, const char *text, size_t size, int root_fd, const KubeClusterId *ids,
                     size_t n_ids, bool emit, KubeconfigPrune *ret, char **reterr) {
        Doc d = { .path = path, .root_fd = root_fd, .reterr = reterr };
        KubeconfigPrune p = {};
        int r;

        *ret = (KubeconfigPrune) {};
        r = doc_load(&d, text, size);
        if (r < 0)
                return r;
        r = classify(&d, ids, n_ids, &p);
        if (r > 0 && emit && !p.whole) {
                int k = write_without(&d, text, size, &p);

                r = k < 0 ? k : r;
        } else
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
