/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's name as the API server knows it: from the kubelet's client certificate (libcrypto), else
 * its host name, the tree's own under --root. */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <string.h>
#include <unistd.h>

#include "agent/config/node-name.h"
#include "agent/config/rancher-datadir.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"

#define NODE_CN_PREFIX "system:node:"

DEFINE_TRIVIAL_CLEANUP_FUNC(BIO *, BIO_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(X509 *, X509_free);

/* The API server knows a node by its client certificate's subject, CN=system:node:NAME. Asking
 * under another name (a host name that differs from the node name) would get 403 or 404 from a
 * healthy control plane: evidence against it that is not true. Returns 1 and the name, or 0. */
static int node_from_certificate(const KubeconfigPem *cert, char **ret) {
        CLEANUP(BIO_freep) BIO *b = NULL;
        CLEANUP(X509_freep) X509 *x = NULL;
        const char *name;
        char cn[256];

        if (!cert || !cert->data || cert->size > INT_MAX)
                return 0;
        b = BIO_new_mem_buf(cert->data, (int) cert->size);
        x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
        ERR_clear_error();
        if (!x || X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof cn) <= 0)
                return 0;
        name = startswith(cn, NODE_CN_PREFIX);
        if (isempty(name))
                return 0;
        *ret = strdup(name);
        return *ret ? 1 : -ENOMEM;
}

bool node_name_is_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 253 || !isalnum((unsigned char) s[0]) || !isalnum((unsigned char) s[n - 1]))
                return false;
        for (const char *p = s; *p; p++)
                if (!islower((unsigned char) *p) && !isdigit((unsigned char) *p) && *p != '-' && *p != '.')
                        return false;
        return true;
}

/* hostname(5): the first line that is neither empty nor a comment, without the blanks around it. */
static int hostname_file_parse(char *text, char **ret) {
        for (char *line = text, *next; line; line = next) {
                size_t n;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                line += strspn(line, " \t\r");
                n = strlen(line);
                while (n > 0 && strchr(" \t\r", line[n - 1]))
                        n--;
                if (n == 0 || line[0] == '#')
                        continue;
                *ret = strndup(line, n);
                return *ret ? 1 : -ENOMEM;
        }
        return 0;
}

int node_host_name(int root_fd, bool on_node, char **ret) {
        cleanup_free char *text = NULL;
        char host[HOST_NAME_MAX + 1] = "";
        int r;

        *ret = NULL;
        if (on_node) {
                if (gethostname(host, sizeof host - 1) < 0 || isempty(host))
                        return 0;
                *ret = strdup(host);
        } else {
                /* The tree's own file, read beneath the root; the running system's name is not the tree's. */
                r = fileio_read_beneath(root_fd, "/etc/hostname", 4096, &text, NULL);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || (r = hostname_file_parse(text, ret)) <= 0)
                        return r == -ENOMEM ? r : 0;
        }
        if (!*ret)
                return -ENOMEM;
        for (char *p = *ret; *p; p++)
                *p = (char) tolower((unsigned char) *p);
        return 1;
}

/* k3s's and rke2's agent keeps its kubelet's client certificate in <data-dir>/agent/client-kubelet.crt
 * (k3s pkg/agent/config: clientKubeletCert), CN=system:node:NAME as kubeadm's: 1 and the name, or 0. */
static int node_from_rancher_certificate(int root_fd, char **ret) {
        static const char *const programs[] = { "k3s", "rke2" };

        for (size_t i = 0; i < ELEMENTSOF(programs); i++) {
                cleanup_free char *dir = NULL, *evidence = NULL, *path = NULL;
                KubeconfigPem pem = {};
                int r;

                r = rancher_data_dir(root_fd, programs[i], &dir, &evidence);
                if (r < 0)
                        return r;
                path = strprintf("%s/agent/client-kubelet.crt", dir);
                if (!path)
                        return -ENOMEM;
                r = fileio_read_beneath(root_fd, path, 1024 * 1024, &pem.data, &pem.size);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                r = node_from_certificate(&pem, ret);
                free(pem.data);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* What k3s's or rke2's files say the node is called, lower-cased as k3s does (GetHostnameAndIPs). */
static int node_from_rancher(int root_fd, char **ret, const char **ret_source) {
        cleanup_free char *evidence = NULL;
        int r;

        r = node_from_rancher_certificate(root_fd, ret);
        if (r != 0) {
                *ret_source = "k3s's or rke2's client certificate";
                return r;
        }
        r = rancher_node_name(root_fd, ret, &evidence);
        if (r <= 0)
                return r;
        for (char *p = *ret; *p; p++)
                *p = (char) tolower((unsigned char) *p);
        *ret_source = "node name in k3s's or rke2's configuration";
        return 1;
}

int node_name_pick(const char *override, const KubeconfigPem *cert, int root_fd, bool on_node, char **ret,
                   const char **ret_source) {
        int r = 0;

        *ret = NULL;
        if (override) {
                *ret = strdup(override);
                *ret_source = "--node-name";
        } else if ((r = node_from_certificate(cert, ret)) > 0)
                *ret_source = "client certificate";
        else if (r == 0 && (r = node_from_rancher(root_fd, ret, ret_source)) != 0) {
                if (r == -ENXIO)
                        *ret_source = NULL;
                if (r < 0)
                        return r;
        } else if (r == 0) {
                r = node_host_name(root_fd, on_node, ret);
                if (r == 0) {
                        *ret_source = NULL;
                        return -ENXIO;
                }
                *ret_source = on_node ? "hostname" : "tree's /etc/hostname";
        }
        if (r < 0 || !*ret)
                return -ENOMEM;
        return node_name_is_valid(*ret) ? 0 : -EINVAL;
}
