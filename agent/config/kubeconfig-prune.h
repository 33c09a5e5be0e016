/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This cluster's entries in a kubeconfig that may hold others, and the file without them: what
 * "kubectl config delete-context", "delete-cluster" and "delete-user" would leave. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* One cluster as kubeconfigs name it: its API server and, when known, its CA. */
typedef struct KubeClusterId {
        char *server;
        char *ca; /* the CA's PEM; NULL when the cluster's own kubeconfig names none that can be read */
        size_t ca_size;
} KubeClusterId;

void kube_cluster_id_done(KubeClusterId *c);
/* The same server, and the same CA when cluster names one. */
bool kube_cluster_id_same(const KubeClusterId *cluster, const KubeClusterId *c);

typedef struct KubeconfigPrune {
        char **contexts, **clusters, **users; /* this cluster's: they go */
        char **kept_contexts, **kept_clusters, **kept_users;
        char *current; /* current-context, when it names a context that goes: it is unset */
        bool whole;    /* nothing but this cluster is in it: the file goes whole */
        char *text;    /* with emit, when some entries go and others stay: the file without them */
        size_t size;
} KubeconfigPrune;

/* Which entries of the kubeconfig text (at node path "path"; the certificate-authority files it names
 * are read beneath root_fd) are of one of the clusters ids: the clusters whose server and CA are one
 * of them, the contexts that name those clusters, and the users that only those contexts name
 * (another context's user stays, and so does one no context names). With emit, and when others
 * stay, the text without them: written by libyaml's emitter, read back and compared with what was
 * meant before it is given. Returns 1 when something is of these clusters, 0 when nothing is,
 * -EBADMSG when the text is no kubeconfig that can be edited (malformed, two documents, two entries
 * of one name, ...; *reterr says why), -ENOMEM. */
int kubeconfig_prune(const char *path, const char *text, size_t size, int root_fd, const KubeClusterId *ids,
                     size_t n_ids, bool emit, KubeconfigPrune *ret, char **reterr);
void kubeconfig_prune_done(KubeconfigPrune *p);

/* 'context "c", cluster "k", user "u"': what goes, or (kept) what stays; NULL on OOM. */
char *kubeconfig_prune_describe(const KubeconfigPrune *p, bool kept);
