/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Docker as kubelet's runtime, from kubelet's unit, its drop-ins and environment files, kubeadm's
 * configuration, and k3s's configuration and unit, each read as what it is (unit file, env file,
 * YAML, argv). */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/installers.h"
#include "agent/base/json.h"
#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "agent/config/kubelet-runtime.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "chase.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define KUBELET_FILE_MAX (256U * 1024U)
#define DOCKER_DAEMON_JSON "/etc/docker/daemon.json"

/* Go's pflag takes "--flag=value", "--flag value", and one dash too: argv_flag() reads them so. */
KubeletRuntime kubelet_runtime_of_argv(char *const *argv) {
        const char *ep = argv_flag(argv, "container-runtime-endpoint");
        const char *rt = argv_flag(argv, "container-runtime");

        if (!isempty(ep))
                return strstr(ep, "dockershim") ? KUBELET_RUNTIME_DOCKER : KUBELET_RUNTIME_REMOTE;
        if (streq_ptr(rt, "docker"))
                return KUBELET_RUNTIME_DOCKER;
        if (streq_ptr(rt, "remote"))
                return KUBELET_RUNTIME_REMOTE;
        return KUBELET_RUNTIME_UNSAID;
}

bool kubelet_env_is_args(const char *pair) {
        const char *eq = strchr(pair, '=');

        return startswith(pair, "KUBELET_") && eq && eq - pair >= 12 && strncmp(eq - 4, "ARGS", 4) == 0;
}

int kubelet_env_argv(const char *text, size_t size, char ***ret) {
        cleanup_strv char **pairs = NULL, **argv = NULL;
        int r;

        r = env_file_parse(text, size, &pairs, NULL);
        if (r < 0)
                return r;
        if (strv_extend(&argv, "kubelet") < 0)
                return -ENOMEM;
        STRV_FOREACH(p, pairs) {
                cleanup_strv char **words = NULL;

                if (!kubelet_env_is_args(*p))
                        continue;
                if (argv_split_blanks(strchr(*p, '=') + 1, &words) < 0)
                        return -ENOMEM;
                STRV_FOREACH(w, words)
                        if (strv_extend(&argv, *w) < 0)
                                return -ENOMEM;
        }
        *ret = TAKE_PTR(argv);
        return 0;
}

bool k3s_argv_docker(char *const *argv) {
        for (char *const *a = argv && argv[0] ? argv + 1 : NULL; a && *a; a++) {
                if (streq(*a, "--"))
                        break;
                if (streq(*a, "--docker") || streq(*a, "--docker=true"))
                        return true;
        }
        return false;
}

/* --- Reading the node --------------------------------------------------------------------- */

typedef struct Verdict {
        KubeletDocker *k;
        unsigned docker, remote, k3s_docker;
        bool flags_env;        /* kubeadm-flags.env parsed */
        char *docker_endpoint; /* kubelet's last --docker-endpoint, and the file that said it */
        char *docker_endpoint_from;
} Verdict;

static int say(Verdict *v, const char *path, const char *fmt, ...) _printf_(3, 4);
static int say(Verdict *v, const char *path, const char *fmt, ...) {
        cleanup_free char *what = NULL;
        va_list ap;

        va_start(ap, fmt);
        what = vstrprintf(fmt, ap);
        va_end(ap);
        return what ? strv_consume(&v->k->evidence, strprintf("%s: %s", path, what)) : -ENOMEM;
}

static int judge_argv(Verdict *v, const char *path, char *const *argv) {
        const char *ep = argv_flag(argv, "docker-endpoint");

        if (!isempty(ep)) {
                free(v->docker_endpoint);
                free(v->docker_endpoint_from);
                v->docker_endpoint = strdup(ep);
                v->docker_endpoint_from = strdup(path);
                if (!v->docker_endpoint || !v->docker_endpoint_from)
                        return -ENOMEM;
        }
        switch (kubelet_runtime_of_argv(argv)) {
        case KUBELET_RUNTIME_DOCKER:
                v->docker++;
                return say(v, path, "%s",
                           "kubelet runs with Docker (--container-runtime=docker or dockershim's socket)");
        case KUBELET_RUNTIME_REMOTE:
                v->remote++;
                return say(v, path, "%s", "kubelet runs with a remote (CRI) runtime: not dockershim");
        default:
                return 0;
        }
}

static const char *const kubelet_env_files[] = {
        KUBEADM_FLAGS_ENV, "/etc/default/kubelet", "/etc/sysconfig/kubelet", KUBESPRAY_KUBELET_ENV, /* kubespray */
};

static int read_env_files(int root_fd, Verdict *v) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(kubelet_env_files); i++) {
                cleanup_free char *text = NULL;
                cleanup_strv char **argv = NULL;
                size_t size;

                if (fileio_read_beneath(root_fd, kubelet_env_files[i], KUBELET_FILE_MAX, &text, &size) < 0)
                        continue;
                r = kubelet_env_argv(text, size, &argv);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = say(v, kubelet_env_files[i], "%s", "not an environment file: not evidence");
                        continue;
                }
                if (i == 0)
                        v->flags_env = true;
                r = judge_argv(v, kubelet_env_files[i], argv);
        }
        return r;
}

static const char *const unit_dirs[] = { "/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system" };

/* A unit's files as systemd reads them: the first unit file found, then its drop-ins. */
static int unit_files(int root_fd, const char *unit, char ***ret) {
        cleanup_strv char **files = NULL;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(unit_dirs); i++) {
                cleanup_free char *path = strprintf("%s/%s", unit_dirs[i], unit);
                int fd;

                if (!path)
                        return -ENOMEM;
                if (files || (fd = chaseat(root_fd, path, 0, O_PATH, NULL, NULL)) < 0)
                        continue;
                (void) close_nointr(fd);
                r = strv_extend(&files, path);
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(unit_dirs); i++) {
                cleanup_free char *dir = strprintf("%s/%s.d", unit_dirs[i], unit);
                cleanup_strv char **names = NULL;

                r = dir ? fileio_list_beneath(root_fd, dir, "*.conf", &names) : -ENOMEM;
                STRV_FOREACH(n, names)
                        if (r >= 0)
                                r = strv_consume(&files, strprintf("%s/%s", dir, *n));
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(files);
        return 0;
}

/* The command line the unit runs: the last ExecStart= of its file and drop-ins. 1 with it. */
static int unit_argv(int root_fd, const char *unit, char ***ret, char **ret_path) {
        cleanup_strv char **files = NULL;
        int r;

        *ret = NULL;
        *ret_path = NULL;
        r = unit_files(root_fd, unit, &files);
        STRV_FOREACH(f, files) {
                cleanup_free char *text = NULL;
                char **argv = NULL;
                size_t size;

                if (r < 0 || fileio_read_beneath(root_fd, *f, KUBELET_FILE_MAX, &text, &size) < 0)
                        continue;
                r = unit_exec_start_argv(text, size, &argv);
                if (r <= 0)
                        continue;
                strv_free(*ret);
                free(*ret_path);
                *ret = argv;
                *ret_path = strdup(*f);
                if (!*ret_path)
                        return -ENOMEM;
        }
        return r == -ENOMEM ? r : *ret != NULL;
}

static int read_kubelet_unit(int root_fd, Verdict *v) {
        cleanup_strv char **argv = NULL;
        cleanup_free char *path = NULL;
        int r;

        r = unit_argv(root_fd, "kubelet.service", &argv, &path);
        if (r <= 0)
                return r;
        return judge_argv(v, path, argv);
}

/* kubeadm's InitConfiguration/JoinConfiguration: nodeRegistration.criSocket. */
static int kubeadm_cri_socket(yaml_document_t *doc, const char *path, void *userdata) {
        Verdict *v = userdata;
        yaml_node_t *root = yaml_document_get_root_node(doc);
        const char *sock = yaml_scalar_of(yaml_map_get(doc, yaml_map_get(doc, root, "nodeRegistration"), "criSocket"));

        if (isempty(sock))
                return 0;
        if (strstr(sock, "dockershim")) {
                v->docker++;
                return say(v, path, "kubeadm's criSocket is dockershim's (%s)", sock);
        }
        v->remote++;
        return say(v, path, "kubeadm's criSocket is %s: not dockershim", sock);
}

static const char *const kubeadm_configs[] = {
        KUBEADM_CONFIG, KUBEADM_CONFIG_ALT, KUBESPRAY_KUBEADM_CLIENT, /* kubespray's join configuration */
};

static int read_yaml_file(int root_fd, const char *path, Verdict *v,
                          int (*fn)(yaml_document_t *, const char *, void *)) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        if (fileio_read_beneath(root_fd, path, KUBELET_FILE_MAX, &text, &size) < 0)
                return 0;
        r = yaml_each_document(text, size, path, fn, v, NULL);
        return r == -EBADMSG ? 0 : r; /* a file that does not parse gives nothing more */
}

/* k3s's config.yaml, then each YAML file of config.yaml.d, merged in that order: "docker: true". */
static int k3s_docker_key(yaml_document_t *doc, const char *path, void *userdata) {
        Verdict *v = userdata;
        const char *b = yaml_scalar_of(yaml_map_get(doc, yaml_document_get_root_node(doc), "docker"));

        if (!b)
                return 0;
        if (streq(b, "true")) {
                v->k3s_docker++;
                return say(v, path, "%s", "docker: true (k3s runs its pods in Docker, through its cri-dockerd)");
        }
        v->k3s_docker = 0; /* a later file's "docker: false" overrides */
        return say(v, path, "docker: %s", b);
}

static int read_k3s(int root_fd, Verdict *v) {
        static const char *const units[] = { "k3s.service", "k3s-agent.service" };
        cleanup_strv char **drops = NULL;
        int r;

        r = read_yaml_file(root_fd, K3S_CONFIG, v, k3s_docker_key);
        if (r >= 0)
                r = fileio_list_beneath(root_fd, K3S_CONFIG ".d", "*.yaml", &drops);
        STRV_FOREACH(n, drops) {
                cleanup_free char *path = strprintf(K3S_CONFIG ".d/%s", *n);

                if (r >= 0)
                        r = path ? read_yaml_file(root_fd, path, v, k3s_docker_key) : -ENOMEM;
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(units); i++) {
                cleanup_strv char **argv = NULL;
                cleanup_free char *path = NULL;

                r = unit_argv(root_fd, units[i], &argv, &path);
                if (r > 0 && k3s_argv_docker(argv)) {
                        v->k3s_docker++;
                        r = say(v, path, "%s", "k3s runs with --docker (its pods in Docker, through its cri-dockerd)");
                }
        }
        return r < 0 ? r : 0;
}

/* dockerd's daemon.json "hosts": where it listens when its command line says nothing (-H wins over
 * it, and a unit that passes -H with daemon.json hosts fails to start). The first unix socket. */
static int daemon_json_host(int root_fd, char **ret) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_free char *text = NULL;
        const JsonValue *hosts;
        size_t size;
        int r;

        *ret = NULL;
        if (fileio_read_beneath(root_fd, DOCKER_DAEMON_JSON, KUBELET_FILE_MAX, &text, &size) < 0)
                return 0;
        r = json_parse(text, size, &v);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        hosts = json_get(v, "hosts", false);
        for (size_t i = 0; hosts && hosts->type == JSON_ARRAY && i < hosts->n; i++) {
                const char *h = json_string_of(hosts->items[i]);

                if (h && startswith(h, "unix:///"))
                        return (*ret = strdup(h)) ? 1 : -ENOMEM;
        }
        return 0;
}

/* Where Docker's Engine API is, as kubelet asks it. */
static int decide_docker_endpoint(int root_fd, Verdict *v) {
        char *host = NULL;
        int r;

        if (v->docker_endpoint) {
                v->k->docker_endpoint = TAKE_PTR(v->docker_endpoint);
                return say(v, v->docker_endpoint_from, "kubelet's --docker-endpoint is %s", v->k->docker_endpoint);
        }
        r = daemon_json_host(root_fd, &host);
        if (r < 0)
                return r;
        if (r > 0) {
                v->k->docker_endpoint = host;
                return say(v, DOCKER_DAEMON_JSON, "dockerd listens on %s (hosts)", host);
        }
        v->k->docker_endpoint = strdup(DOCKER_ENDPOINT_DEFAULT);
        return v->k->docker_endpoint ? 0 : -ENOMEM;
}

static int decide(Verdict *v, bool docker_installed) {
        if (v->k3s_docker > 0) {
                v->k->endpoint = K3S_CRI_DOCKERD_ENDPOINT;
                return 0;
        }
        if (v->remote > 0)
                return 0;
        if (v->docker > 0) {
                v->k->endpoint = DOCKERSHIM_ENDPOINT;
                return 0;
        }
        /* kubeadm 1.20-1.23 writes --container-runtime=remote and the endpoint into kubeadm-flags.env for
         * every criSocket but dockershim's (cmd/kubeadm/app/phases/kubelet/flags.go,
         * buildKubeletArgMapCommon); 1.24+ always writes the endpoint. No runtime flag there, none in the
         * unit or any other file, and Docker installed: dockershim. */
        if (!v->flags_env || !docker_installed)
                return 0;
        v->k->endpoint = DOCKERSHIM_ENDPOINT;
        return say(v, KUBEADM_FLAGS_ENV, "%s",
                   "no runtime flag anywhere and Docker installed: kubeadm joined with dockershim (1.20-1.23)");
}

int kubelet_docker_detect(int root_fd, bool docker_installed, KubeletDocker *ret) {
        KubeletDocker k = {};
        Verdict v = { .k = &k };
        int r;

        r = read_env_files(root_fd, &v);
        if (r >= 0)
                r = read_kubelet_unit(root_fd, &v);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(kubeadm_configs); i++)
                r = read_yaml_file(root_fd, kubeadm_configs[i], &v, kubeadm_cri_socket);
        if (r >= 0)
                r = read_k3s(root_fd, &v);
        if (r >= 0)
                r = decide(&v, docker_installed);
        if (r >= 0 && k.endpoint)
                r = decide_docker_endpoint(root_fd, &v);
        free(v.docker_endpoint);
        free(v.docker_endpoint_from);
        if (r < 0) {
                kubelet_docker_done(&k);
                return r;
        }
        *ret = k;
        return 0;
}

void kubelet_docker_done(KubeletDocker *k) {
        k->evidence = strv_free(k->evidence);
        k->docker_endpoint = mfree(k->docker_endpoint);
        k->endpoint = NULL;
}
