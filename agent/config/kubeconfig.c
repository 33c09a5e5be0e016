/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kubelet's kubeconfig, read with libyaml: the current context's server and the node's credentials. */

#include <openssl/evp.h>
#include <yaml.h>

#include "agent/os/fileio.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/yaml-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define KUBECONFIG_MAX (1024 * 1024)
#define PEM_MAX (1024 * 1024)

/* What parsing carries around: the document, and the file's name for every message. */
typedef struct Parse {
        yaml_document_t *doc;
        const char *path;
        char **reterr;
} Parse;

static yaml_node_t *map_get(const Parse *p, yaml_node_t *map, const char *key) {
        return yaml_map_get(p->doc, map, key);
}

/* An optional string field: absent or empty is *ret == NULL; anything but a string is an error. */
static int get_string(const Parse *p, yaml_node_t *map, const char *where, const char *key, char **ret) {
        yaml_node_t *n = map_get(p, map, key);
        const char *s;

        *ret = NULL;
        if (!n)
                return 0;
        s = yaml_scalar_of(n);
        if (!s)
                return set_errmsg(p->reterr, -EINVAL, "%s: %s%s%s is not a string", p->path, strempty(where),
                                  where ? " " : "", key);
        if (isempty(s))
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

/* contexts/clusters/users are lists of {name: N, <field>: {...}}: the mapping of the entry named name. */
static int find_named(const Parse *p, yaml_node_t *root, const char *list, const char *field, const char *name,
                      yaml_node_t **ret) {
        yaml_node_t *l = map_get(p, root, list);

        if (l && l->type != YAML_SEQUENCE_NODE)
                return set_errmsg(p->reterr, -EINVAL, "%s: '%s' is not a list", p->path, list);
        for (yaml_node_item_t *i = l ? l->data.sequence.items.start : NULL; l && i < l->data.sequence.items.top; i++) {
                yaml_node_t *entry = yaml_document_get_node(p->doc, *i);
                const char *n = yaml_scalar_of(map_get(p, entry, "name"));
                yaml_node_t *v;

                if (!n || !streq(n, name))
                        continue;
                v = map_get(p, entry, field);
                if (!v || v->type != YAML_MAPPING_NODE)
                        return set_errmsg(p->reterr, -EINVAL, "%s: %s \"%s\" has no '%s' mapping", p->path, field, name,
                                          field);
                *ret = v;
                return 0;
        }
        return set_errmsg(p->reterr, -EINVAL, "%s: %s \"%s\" not found in '%s'", p->path, field, name, list);
}

/* The current context, or the only one when current-context is not set. */
static int pick_context(const Parse *p, yaml_node_t *root, Kubeconfig *k, yaml_node_t **ret) {
        yaml_node_t *l;
        int r;

        r = get_string(p, root, NULL, "current-context", &k->context);
        if (r < 0)
                return r;
        if (!k->context) {
                l = map_get(p, root, "contexts");
                if (!l || l->type != YAML_SEQUENCE_NODE ||
                    l->data.sequence.items.top - l->data.sequence.items.start != 1)
                        return set_errmsg(p->reterr, -EINVAL, "%s: no current-context, and not exactly one context",
                                          p->path);
                k->context = strdup(strempty(yaml_scalar_of(
                        map_get(p, yaml_document_get_node(p->doc, *l->data.sequence.items.start), "name"))));
                if (!k->context)
                        return -ENOMEM;
        }
        return find_named(p, root, "contexts", "context", k->context, ret);
}

/* A "-data" field: standard base64, line breaks and blanks allowed (YAML folds long values), the
 * final padding optional. libcrypto does the decoding; only what it is stricter or looser about
 * than client-go is settled here: blanks are dropped first, and '=' may only end the text. */
int kubeconfig_pem_decode(const char *in, char **ret, size_t *ret_size) {
        size_t len = strlen(in), n = 0, pad = 0;
        cleanup_free char *clean = malloc(len + 3);
        cleanup_free unsigned char *out = NULL;
        int k;

        if (!clean)
                return -ENOMEM;
        for (const char *c = in; *c; c++) {
                if (strchr(" \t\r\n", *c))
                        continue;
                if (*c == '=')
                        pad++;
                else if (pad > 0)
                        return -EINVAL;
                clean[n++] = *c;
        }
        if (pad > 2 || (pad > 0 && n % 4 != 0) || n % 4 == 1)
                return -EINVAL;
        while (n % 4 != 0) {
                clean[n++] = '=';
                pad++;
        }
        out = malloc(n / 4 * 3 + 1);
        if (!out)
                return -ENOMEM;
        k = EVP_DecodeBlock(out, (const unsigned char *) clean, (int) n);
        if (k < 0 || (size_t) k < pad)
                return -EINVAL;
        /* EVP_DecodeBlock counts the padding's zero bytes as data. */
        out[k - (int) pad] = '\0';
        *ret_size = (size_t) k - pad;
        *ret = (char *) TAKE_PTR(out);
        return 0;
}

/* A relative file name in a kubeconfig is relative to the kubeconfig's own directory. */
int kubeconfig_resolve_file(const char *kubeconfig, const char *file, char **ret) {
        const char *slash = strrchr(kubeconfig, '/');
        int n;

        if (file[0] == '/' || !slash)
                n = asprintf(ret, "%s", file);
        else
                n = asprintf(ret, "%.*s/%s", (int) (slash - kubeconfig), kubeconfig, file);
        return n < 0 ? -ENOMEM : 0;
}

/* "certificate-authority" or "certificate-authority-data": the inline form wins, as in client-go. */
static int get_pem(const Parse *p, yaml_node_t *map, const char *where, const char *key, KubeconfigPem *pem) {
        cleanup_free char *file = NULL, *data = NULL;
        char data_key[64];
        int r;

        snprintf(data_key, sizeof data_key, "%s-data", key);
        r = get_string(p, map, where, key, &file);
        if (r >= 0)
                r = get_string(p, map, where, data_key, &data);
        if (r < 0)
                return r;
        pem->file_and_data = file && data;
        if (data) {
                r = kubeconfig_pem_decode(data, &pem->data, &pem->size);
                if (r == -EINVAL)
                        return set_errmsg(p->reterr, r, "%s: %s %s is not valid base64", p->path, where, data_key);
                return r;
        }
        return file ? kubeconfig_resolve_file(p->path, file, &pem->file) : 0;
}

/* A boolean as client-go reads one (sigs.k8s.io/yaml through go-yaml v2, then encoding/json into a
 * bool): a plain scalar of YAML 1.1's booleans; anything else (a quoted "true", a word) fails. */
static int get_bool(const Parse *p, yaml_node_t *map, const char *where, const char *key, bool *ret) {
        static const char *const yes[] = { "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE" };
        static const char *const no[] = { "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE" };
        yaml_node_t *n = map_get(p, map, key);
        const char *s = yaml_scalar_of(n);

        *ret = false;
        if (!n)
                return 0;
        for (size_t i = 0; s && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && i < ELEMENTSOF(yes); i++) {
                if (streq(s, yes[i]))
                        return *ret = true, 0;
                if (streq(s, no[i]))
                        return 0;
        }
        return set_errmsg(p->reterr, -EINVAL, "%s: %s %s is not a boolean", p->path, where, key);
}

static int parse_cluster(const Parse *p, yaml_node_t *cluster, Kubeconfig *k) {
        int r;

        r = get_string(p, cluster, "cluster", "server", &k->server);
        if (r >= 0 && !k->server)
                r = set_errmsg(p->reterr, -EINVAL, "%s: cluster \"%s\" has no server", p->path, k->cluster);
        if (r >= 0)
                r = get_bool(p, cluster, "cluster", "insecure-skip-tls-verify", &k->insecure);
        if (r >= 0)
                r = get_string(p, cluster, "cluster", "proxy-url", &k->proxy_url);
        if (r >= 0)
                r = get_pem(p, cluster, "cluster", "certificate-authority", &k->ca);
        return r;
}

static int parse_user(const Parse *p, yaml_node_t *user, Kubeconfig *k) {
        static const char *const unsupported[] = { "exec", "auth-provider", "username", "tokenFile" };
        int r;

        /* These need programs or files node-reset does not run; probing without them would look
         * "unauthorized" and count as evidence against a healthy control plane. */
        for (size_t i = 0; i < ELEMENTSOF(unsupported); i++)
                if (map_get(p, user, unsupported[i]))
                        return set_errmsg(p->reterr, -EOPNOTSUPP, "%s: user \"%s\" uses '%s', which is not supported",
                                          p->path, k->user, unsupported[i]);
        r = get_pem(p, user, "user", "client-certificate", &k->cert);
        if (r >= 0)
                r = get_pem(p, user, "user", "client-key", &k->key);
        if (r >= 0)
                r = get_string(p, user, "user", "token", &k->token);
        return r;
}

static int parse_document(const Parse *p, yaml_node_t *root, Kubeconfig *k) {
        yaml_node_t *context, *cluster, *user;
        int r;

        if (!root || root->type != YAML_MAPPING_NODE)
                return set_errmsg(p->reterr, -EINVAL, "%s: not a kubeconfig (the document is not a mapping)", p->path);
        r = pick_context(p, root, k, &context);
        if (r >= 0)
                r = get_string(p, context, "context", "cluster", &k->cluster);
        if (r >= 0 && !k->cluster)
                r = set_errmsg(p->reterr, -EINVAL, "%s: context \"%s\" names no cluster", p->path, k->context);
        if (r >= 0)
                r = get_string(p, context, "context", "user", &k->user);
        if (r >= 0)
                r = find_named(p, root, "clusters", "cluster", k->cluster, &cluster);
        if (r >= 0)
                r = parse_cluster(p, cluster, k);
        if (r < 0 || !k->user)
                return r;
        r = find_named(p, root, "users", "user", k->user, &user);
        if (r >= 0)
                r = parse_user(p, user, k);
        return r;
}

int kubeconfig_parse(const char *path, const char *text, size_t size, Kubeconfig **ret, char **reterr) {
        Kubeconfig *k = calloc(1, sizeof *k);
        yaml_document_t doc;
        int r;

        if (!k || !(k->path = strdup(path))) {
                kubeconfig_free(k);
                return -ENOMEM;
        }
        r = yaml_load_first(text, size, path, &doc, reterr);
        if (r >= 0) {
                r = parse_document(&(Parse) { .doc = &doc, .path = path, .reterr = reterr },
                                   yaml_document_get_root_node(&doc), k);
                yaml_document_delete(&doc);
        }
        if (r < 0) {
                kubeconfig_free(k);
                return r;
        }
        *ret = k;
        return 0;
}

static int read_pem(int root_fd, const Kubeconfig *k, const char *what, KubeconfigPem *pem, char **reterr) {
        int r;

        if (!pem->file || pem->data)
                return 0;
        r = fileio_read_beneath(root_fd, pem->file, PEM_MAX, &pem->data, &pem->size);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot read %s %s (named in %s): %s", what, pem->file, k->path,
                                  strerror(-r));
        return 0;
}

int kubeconfig_load(int root_fd, const char *path, Kubeconfig **ret, char **reterr) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, KUBECONFIG_MAX, &text, &size);
        if (r < 0)
                return set_errmsg(reterr, r, "Cannot read %s: %s", path, strerror(-r));
        return kubeconfig_parse(path, text, size, ret, reterr);
}

/* clientcmd's parseProxyURL: http, https and socks5 only. */
static bool proxy_url_valid(const char *u) {
        return startswith(u, "http://") || startswith(u, "https://") || startswith(u, "socks5://");
}

/* What client-go refuses before it connects (kubeconfig_read_files()). */
static int validate_tls(const Kubeconfig *k, char **reterr) {
        const char *why = NULL;

        if (k->insecure && (k->ca.file || k->ca.data))
                why = "certificate-authority(-data) together with insecure-skip-tls-verify: client-go refuses it "
                      "(\"specifying a root certificates file with the insecure flag is not allowed\"): the server "
                      "would not be verified and the credentials sent to whoever answers";
        else if (k->ca.file_and_data)
                why = "certificate-authority-data and certificate-authority are both given";
        else if (k->cert.file_and_data)
                why = "client-certificate-data and client-certificate are both given";
        else if (k->key.file_and_data)
                why = "client-key-data and client-key are both given";
        else if ((k->cert.file || k->cert.data) && !k->key.file && !k->key.data)
                why = "a client certificate without client-key(-data)";
        else if (k->proxy_url && !proxy_url_valid(k->proxy_url))
                why = "proxy-url is no http, https or socks5 URL";
        if (!why)
                return 0;
        return set_errmsg(reterr, -EINVAL, "%s: %s", k->path, why);
}

int kubeconfig_read_files(Kubeconfig *k, int root_fd, char **reterr) {
        int r;

        r = validate_tls(k, reterr);
        if (r >= 0)
                r = read_pem(root_fd, k, "certificate-authority", &k->ca, reterr);
        if (r >= 0)
                r = read_pem(root_fd, k, "client-certificate", &k->cert, reterr);
        if (r >= 0)
                r = read_pem(root_fd, k, "client-key", &k->key, reterr);
        return r;
}

static void pem_done(KubeconfigPem *pem) {
        free(pem->file);
        if (pem->data)
                explicit_bzero(pem->data, pem->size);
        free(pem->data);
}

Kubeconfig *kubeconfig_free(Kubeconfig *k) {
        if (!k)
                return NULL;
        free(k->path);
        free(k->context);
        free(k->cluster);
        free(k->user);
        free(k->server);
        free(k->proxy_url);
        if (k->token)
                explicit_bzero(k->token, strlen(k->token));
        free(k->token);
        pem_done(&k->ca);
        pem_done(&k->cert);
        pem_done(&k->key);
        free(k);
        return NULL;
}
