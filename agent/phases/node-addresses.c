/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The node's own addresses as its configuration names them: kubelet's --node-ip, the API server's advertise address. */

/* The network phase never deletes an address the node is known by, whatever a manifest says: a
 * kube-vip manifest whose "address" is the node IP would otherwise take the node off the network.
 * Each file is read as what it is (env files as systemd reads EnvironmentFile=, their values as
 * argument vectors; static pods and kubeadm's configuration as YAML); a file that does not parse
 * names no address. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "agent/config/yaml-util.h"
#include "agent/node/fileio.h"
#include "agent/phases/node-addresses.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define NODE_FILE_MAX (256U * 1024U)

/* One shell-style word from *p (whole: the rest of the text, as an env file's value, trailing
 * blanks cut): quotes removed, backslash escapes outside single quotes kept literal. NULL at the end
 * of the text; *ret_oom on allocation failure. */
static char *next_word(const char **p, bool whole, bool *ret_oom) {
        const char *s = *p + strspn(*p, " \t");
        char *w, *o, q = 0;

        if (!*s)
                return NULL;
        w = o = malloc(strlen(s) + 1);
        if (!w) {
                *ret_oom = true;
                return NULL;
        }
        for (; *s && (q || whole || !strchr(" \t", *s)); s++) {
                if (!q && (*s == '\'' || *s == '"'))
                        q = *s;
                else if (q && *s == q)
                        q = 0;
                else if (*s == '\\' && q != '\'' && s[1])
                        *o++ = *++s;
                else
                        *o++ = *s;
        }
        while (whole && o > w && strchr(" \t\r", o[-1]))
                o--;
        *o = 0;
        *p = s;
        return w;
}

static int split_words(const char *s, char ***words) {
        bool oom = false;
        char *w;

        while ((w = next_word(&s, false, &oom)))
                if (strv_consume(words, w) < 0)
                        return -ENOMEM;
        return oom ? -ENOMEM : 0;
}

/* The value of one "NAME=VALUE" line when NAME is one of names: quotes removed as systemd does. */
static int env_line(const char *line, const char *const *names, char **last) {
        const char *eq = strchr(line, '='), *p;
        bool oom = false;
        size_t klen;

        line += strspn(line, " \t");
        if (!eq || *line == '#' || *line == ';')
                return 0;
        klen = (size_t) (eq - line);
        while (klen > 0 && strchr(" \t", line[klen - 1]))
                klen--;
        for (size_t i = 0; names[i]; i++) {
                if (strlen(names[i]) != klen || strncmp(line, names[i], klen) != 0)
                        continue;
                p = eq + 1;
                free(last[i]);
                last[i] = next_word(&p, true, &oom);
                if (!last[i] && !oom)
                        last[i] = strdup("");
                return last[i] ? 0 : -ENOMEM;
        }
        return 0;
}

int node_env_words(const char *text, const char *const *names, char ***words) {
        size_t n = strv_length((char *const *) names);
        char **last = calloc(n + 1, sizeof(char *));
        cleanup_free char *copy = strdup(text);
        char *save = NULL;
        int r = 0;

        if (!last || !copy) {
                free(last);
                return -ENOMEM;
        }
        for (char *line = strtok_r(copy, "\n", &save); line && r >= 0; line = strtok_r(NULL, "\n", &save))
                r = env_line(line, names, last);
        for (size_t i = 0; i < n && r >= 0; i++)
                if (last[i])
                        r = split_words(last[i], words);
        for (size_t i = 0; i < n; i++)
                free(last[i]);
        free(last);
        return r;
}

const char *node_flag_value(char *const *argv, const char *flag) {
        const char *value = NULL;

        for (size_t i = 0; argv && argv[i]; i++) {
                const char *a = argv[i], *rest;
                size_t len = strlen(flag);

                if (a[0] != '-')
                        continue;
                a += a[1] == '-' ? 2 : 1;
                if (strncmp(a, flag, len) != 0)
                        continue;
                rest = a + len;
                if (*rest == '=')
                        value = rest + 1;
                else if (!*rest && argv[i + 1])
                        value = argv[++i];
        }
        return value;
}

static int add_address(NodeAddresses *l, const char *text, const char *what, const char *path) {
        NodeAddress a = {};
        NodeAddress *v;

        a.family = strchr(text, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(a.family, text, a.bytes) != 1)
                return 0;
        a.source = strprintf("%s (%s)", what, path);
        v = a.source ? reallocarray(l->v, l->n + 1, sizeof *v) : NULL;
        if (!v) {
                free(a.source);
                return -ENOMEM;
        }
        l->v = v;
        l->v[l->n++] = a;
        return 0;
}

/* Each entry of a comma list ("10.0.0.5,fd00::5": kubelet's dual-stack --node-ip). */
static int add_list(NodeAddresses *l, const char *list, const char *what, const char *path) {
        cleanup_free char *copy = strdup(list);
        char *save = NULL;
        int r = 0;

        if (!copy)
                return -ENOMEM;
        for (char *t = strtok_r(copy, ",", &save); t && r >= 0; t = strtok_r(NULL, ",", &save))
                r = add_address(l, t, what, path);
        return r;
}

static int read_kubelet_env(int root_fd, const char *path, NodeAddresses *l) {
        static const char *const names[] = { "KUBELET_KUBEADM_ARGS", "KUBELET_EXTRA_ARGS", "KUBELET_ARGS",
                                             "KUBELET_ADDRESS", NULL };
        cleanup_free char *text = NULL;
        cleanup_strv char **words = NULL;
        const char *ip;
        size_t size;

        if (fileio_read_beneath(root_fd, path, NODE_FILE_MAX, &text, &size) < 0 || memchr(text, 0, size))
                return 0;
        if (node_env_words(text, names, &words) < 0)
                return -ENOMEM;
        ip = node_flag_value(words, "node-ip");
        return ip ? add_list(l, ip, "kubelet's --node-ip", path) : 0;
}

/* The scalars of a sequence node, as a strv (non-scalars skipped). */
static int sequence_words(yaml_document_t *doc, yaml_node_t *seq, char ***words) {
        if (!seq || seq->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
                const char *s = yaml_scalar_of(yaml_document_get_node(doc, *i));

                if (s && strv_extend(words, s) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* --advertise-address in the command and args of every container of a static pod. */
static int pod_advertise(yaml_document_t *doc, const char *path, void *userdata) {
        NodeAddresses *l = userdata;
        yaml_node_t *root = yaml_document_get_root_node(doc);
        yaml_node_t *cs = yaml_map_get(doc, yaml_map_get(doc, root, "spec"), "containers");

        if (!cs || cs->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = cs->data.sequence.items.start; i < cs->data.sequence.items.top; i++) {
                yaml_node_t *c = yaml_document_get_node(doc, *i);
                cleanup_strv char **argv = NULL;
                const char *ip;

                if (sequence_words(doc, yaml_map_get(doc, c, "command"), &argv) < 0 ||
                    sequence_words(doc, yaml_map_get(doc, c, "args"), &argv) < 0)
                        return -ENOMEM;
                ip = node_flag_value(argv, "advertise-address");
                if (ip && add_address(l, ip, "the API server's --advertise-address", path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* kubeadm's InitConfiguration / JoinConfiguration (controlPlane.localAPIEndpoint). */
static int kubeadm_advertise(yaml_document_t *doc, const char *path, void *userdata) {
        NodeAddresses *l = userdata;
        yaml_node_t *root = yaml_document_get_root_node(doc);
        yaml_node_t *eps[] = { yaml_map_get(doc, root, "localAPIEndpoint"),
                               yaml_map_get(doc, yaml_map_get(doc, root, "controlPlane"), "localAPIEndpoint") };

        for (size_t i = 0; i < ELEMENTSOF(eps); i++) {
                const char *ip = yaml_scalar_of(yaml_map_get(doc, eps[i], "advertiseAddress"));

                if (ip && add_address(l, ip, "kubeadm's advertiseAddress", path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Every document of a YAML file, each given to fn; a file that does not parse gives nothing more. */
static int read_yaml(int root_fd, const char *path, void *userdata,
                     int (*fn)(yaml_document_t *, const char *, void *)) {
        cleanup_free char *text = NULL;
        yaml_parser_t parser;
        size_t size;
        int r = 0;

        if (fileio_read_beneath(root_fd, path, NODE_FILE_MAX, &text, &size) < 0 || !yaml_parser_initialize(&parser))
                return 0;
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, size);
        for (unsigned n = 0; r >= 0 && n < 64; n++) {
                yaml_document_t doc;
                bool empty;

                if (!yaml_parser_load(&parser, &doc))
                        break;
                empty = !yaml_document_get_root_node(&doc);
                if (!empty)
                        r = fn(&doc, path, userdata);
                yaml_document_delete(&doc);
                if (empty)
                        break;
        }
        yaml_parser_delete(&parser);
        return r;
}

typedef struct FlagQuery {
        const char *flag;
        char *value;
} FlagQuery;

static int pod_flag(yaml_document_t *doc, const char *path, void *userdata) {
        yaml_node_t *cs = yaml_map_get(doc, yaml_map_get(doc, yaml_document_get_root_node(doc), "spec"), "containers");
        FlagQuery *q = userdata;

        if (!cs || cs->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = cs->data.sequence.items.start; i < cs->data.sequence.items.top; i++) {
                yaml_node_t *c = yaml_document_get_node(doc, *i);
                cleanup_strv char **argv = NULL;
                const char *v;

                if (sequence_words(doc, yaml_map_get(doc, c, "command"), &argv) < 0 ||
                    sequence_words(doc, yaml_map_get(doc, c, "args"), &argv) < 0)
                        return -ENOMEM;
                v = node_flag_value(argv, q->flag);
                if (v) {
                        free(q->value);
                        q->value = strdup(v);
                        if (!q->value)
                                return -ENOMEM;
                }
        }
        return 0;
}

int node_apiserver_flag(int root_fd, const char *flag, char **ret) {
        FlagQuery q = { flag, NULL };
        int r;

        r = read_yaml(root_fd, "/etc/kubernetes/manifests/kube-apiserver.yaml", &q, pod_flag);
        if (r < 0) {
                free(q.value);
                return r;
        }
        *ret = q.value;
        return 0;
}

int node_addresses_read(int root_fd, NodeAddresses *ret) {
        static const char *const env_files[] = { "/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet",
                                                 "/etc/sysconfig/kubelet", "/etc/kubernetes/kubelet.env" };
        static const char *const kubeadm_files[] = { "/etc/kubernetes/kubeadm-config.yaml",
                                                     "/etc/kubernetes/kubeadm.yaml" };
        NodeAddresses l = {};
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(env_files) && r >= 0; i++)
                r = read_kubelet_env(root_fd, env_files[i], &l);
        if (r >= 0)
                r = read_yaml(root_fd, "/etc/kubernetes/manifests/kube-apiserver.yaml", &l, pod_advertise);
        for (size_t i = 0; i < ELEMENTSOF(kubeadm_files) && r >= 0; i++)
                r = read_yaml(root_fd, kubeadm_files[i], &l, kubeadm_advertise);
        if (r < 0) {
                node_addresses_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

void node_addresses_done(NodeAddresses *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i].source);
        free(l->v);
        *l = (NodeAddresses) {};
}

const char *node_addresses_find(const NodeAddresses *l, int family, const uint8_t *addr) {
        for (size_t i = 0; i < l->n; i++)
                if (l->v[i].family == family && memcmp(l->v[i].bytes, addr, family == AF_INET ? 4 : 16) == 0)
                        return l->v[i].source;
        return NULL;
}
