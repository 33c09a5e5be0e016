/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A user's kubeconfig written back without this cluster's entries (kubeconfig-entries.h says which).
 * kubectl's "config delete-context", "delete-cluster" and "delete-user" (staging/src/k8s.io/kubectl/
 * pkg/cmd/config/delete_*.go) each drop one entry by name and write the rest back through client-go's
 * clientcmd.ModifyConfig: preferences, extensions and every other entry are kept as they were.
 * delete-context leaves a current-context that names the deleted context (and warns); here it is
 * unset, as "kubectl config unset current-context" would, since it names nothing any more. */

#include <errno.h>
#include <string.h>

#include "agent/config/yaml-util.h"
#include "agent/phases/files/files-kubeconfig-prune.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* client-go writes five levels; what a user may add (extensions) gets room. */
#define KUBECONFIG_DEPTH_MAX 64U

/* Take the named entries out of the root's list "key". */
static void drop_entries(KubeconfigDoc *d, const char *key, char *const *names) {
        yaml_node_t *l = yaml_map_get(&d->doc, d->root, key);
        yaml_node_item_t *out;

        if (!l || l->type != YAML_SEQUENCE_NODE)
                return;
        out = l->data.sequence.items.start;
        for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++)
                if (!strv_contains(names, kubeconfig_doc_entry_name(d, *i)))
                        *out++ = *i;
        l->data.sequence.items.top = out;
}

static void drop_current(KubeconfigDoc *d) {
        yaml_node_pair_t *out = d->root->data.mapping.pairs.start;

        for (yaml_node_pair_t *q = d->root->data.mapping.pairs.start; q < d->root->data.mapping.pairs.top; q++)
                if (!streq_ptr(yaml_scalar_of(yaml_document_get_node(&d->doc, q->key)), "current-context"))
                        *out++ = *q;
        d->root->data.mapping.pairs.top = out;
}

/* The document as it is to be: what the emitter writes, and what that must read back as. */
static void drop_ours(KubeconfigDoc *d, const KubeconfigPrune *p) {
        drop_entries(d, "contexts", p->contexts);
        drop_entries(d, "clusters", p->clusters);
        drop_entries(d, "users", p->users);
        if (p->current)
                drop_current(d);
}

/* Written back by the emitter, then read again beside the original without our entries: the same
 * meaning, or the file is not edited. Takes d's document. */
static int write_without(KubeconfigDoc *d, const char *text, size_t size, KubeconfigPrune *p) {
        KubeconfigDoc meant = { .path = d->path, .root_fd = d->root_fd, .reterr = d->reterr };
        KubeconfigDoc back = meant;
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
        r = kubeconfig_doc_load(&meant, text, size);
        if (r < 0)
                return r;
        drop_ours(&meant, p);
        r = kubeconfig_doc_load(&back, p->text, p->size);
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
        KubeconfigDoc d = { .path = path, .root_fd = root_fd, .reterr = reterr };
        KubeconfigPrune p = {};
        int r;

        if (!emit)
                return kubeconfig_entries(path, text, size, root_fd, ids, n_ids, ret, reterr);
        *ret = (KubeconfigPrune) {};
        r = kubeconfig_doc_load(&d, text, size);
        if (r < 0)
                return r;
        r = kubeconfig_doc_classify(&d, ids, n_ids, &p);
        if (r > 0 && !p.whole) {
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
