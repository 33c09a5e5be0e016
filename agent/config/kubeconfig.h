/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubelet's kubeconfig, read with libyaml: the current context's server and the node's credentials. */
#pragma once

#include "agent/config/installers.h"

#include <stdbool.h>
#include <stddef.h>

#define KUBECONFIG_DEFAULT KUBEADM_KUBELET_CONF

/* A PEM object given either as a file or inline (the "-data" form, base64). */
typedef struct KubeconfigPem {
        char *file; /* absolute node path; NULL for the -data form or when not given */
        char *data; /* the PEM bytes once known, NUL-terminated; NULL when not given */
        size_t size;
        bool file_and_data; /* both forms were given (client-go's validation refuses that) */
} KubeconfigPem;

typedef struct Kubeconfig {
        char *path;                     /* node path of the kubeconfig itself */
        char *context, *cluster, *user; /* the names followed from current-context */
        char *server;
        char *proxy_url; /* the cluster's proxy-url, NULL when none */
        bool insecure;   /* insecure-skip-tls-verify */
        char *token;     /* a bearer token (bootstrap kubeconfigs), NULL when none */
        KubeconfigPem ca, cert, key;
} Kubeconfig;

/* Parse a kubeconfig held in memory; path names it in errors and anchors relative file names
 * (resolved against its directory). Files are not read: only the -data forms are filled in.
 * Returns the YAML loader's -EBADMSG (malformed YAML) or -ELIBACC (no libyaml), -EINVAL (a missing
 * context/cluster/user, bad base64) or -EOPNOTSUPP (exec or auth-provider credentials), with a
 * message naming the file in *reterr. */
int kubeconfig_parse(const char *path, const char *text, size_t size, Kubeconfig **ret, char **reterr);

/* Read and parse the kubeconfig at node path "path" beneath root_fd (symlinks resolved inside it). */
int kubeconfig_load(int root_fd, const char *path, Kubeconfig **ret, char **reterr);

/* Read the certificate-authority, client-certificate and client-key files that k names (beneath
 * root_fd), unless their -data form was given, then refuse what client-go refuses before it connects
 * with a kubeconfig (k8s.io/client-go/tools/clientcmd/validation.go validateClusterInfo and
 * validateAuthInfo, transport/transport.go TLSConfigFor): a CA together with
 * insecure-skip-tls-verify ("specifying a root certificates file with the insecure flag is not
 * allowed": verification would be off and the credentials sent to whoever answers), both forms of
 * the CA, the client certificate or its key, a client certificate without a key, a proxy-url that is
 * no http, https or socks5 URL. -EINVAL with the file and why in *reterr. */
int kubeconfig_read_files(Kubeconfig *k, int root_fd, char **reterr);

Kubeconfig *kubeconfig_free(Kubeconfig *k);

/* A "-data" field's base64 into its bytes, NUL-terminated (what client-go accepts: line breaks and
 * blanks, the final padding optional). -EINVAL, -ENOMEM. */
int kubeconfig_pem_decode(const char *base64, char **ret, size_t *ret_size);

/* The node path of a file a kubeconfig at node path "kubeconfig" names: a relative one is relative
 * to the kubeconfig's own directory. -ENOMEM only. */
int kubeconfig_resolve_file(const char *kubeconfig, const char *file, char **ret);
