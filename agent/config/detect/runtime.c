/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The container runtime kubelet is told to use, from each file an installer writes its endpoint in. */

#include <string.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "agent/config/envfile.h"
#include "agent/config/kubelet-runtime.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static const char *runtime_of_endpoint(const char *ep) {
        if (strstr(ep, "cri-dockerd") || strstr(ep, "dockershim"))
                return "docker";
        if (strstr(ep, "crio"))
                return "crio";
        if (strstr(ep, "containerd"))
                return "containerd";
        return NULL;
}

typedef enum EndpointFormat {
        ENDPOINT_YAML, /* a top-level key of a YAML mapping (kubelet's config file, k3s's and rke2's) */
        ENDPOINT_ENV,  /* an environment file whose KUBELET_*ARGS variables are kubelet's command line */
} EndpointFormat;

typedef struct EndpointSource {
        const char *path;
        EndpointFormat format;
        const char *key;
} EndpointSource;

static const EndpointSource endpoint_sources[] = {
        { KUBELET_CONFIG, ENDPOINT_YAML, "containerRuntimeEndpoint" },
        { KUBESPRAY_KUBELET_CONFIG, ENDPOINT_YAML, "containerRuntimeEndpoint" }, /* kubespray */
        { KUBEADM_FLAGS_ENV, ENDPOINT_ENV, NULL },
        { KUBESPRAY_KUBELET_ENV, ENDPOINT_ENV, NULL },  /* kubespray */
        { "/etc/default/kubelet", ENDPOINT_ENV, NULL }, /* kubeadm's drop-in reads both */
        { "/etc/sysconfig/kubelet", ENDPOINT_ENV, NULL },
        { K3S_CONFIG, ENDPOINT_YAML, "container-runtime-endpoint" },
        { RKE2_CONFIG, ENDPOINT_YAML, "container-runtime-endpoint" },
};

static int endpoint_found(Detection *d, const char *path, const char *key, const char *ep) {
        const char *rt = runtime_of_endpoint(ep);
        int r = evidence_add(&d->runtime.evidence, path, "kubelet's endpoint %s (%s)", ep, key);

        if (r >= 0)
                r = finding_set(&d->runtime, rt ?: ep);
        if (r >= 0 && !d->runtime_endpoint && !(d->runtime_endpoint = strdup(ep)))
                r = -ENOMEM;
        return r;
}

/* Every value of key in the document's top-level mapping (a key given twice with two values is
 * ambiguous, not the first one's). */
static int endpoint_in_yaml_doc(Detection *d, const char *path, yaml_document_t *doc, const char *key) {
        yaml_node_t *root = yaml_document_get_root_node(doc);
        int r = 0;

        if (!root)
                return 0;
        if (root->type != YAML_MAPPING_NODE)
                return evidence_add(&d->runtime.evidence, path, "%s", "not a YAML mapping: not evidence");
        for (yaml_node_pair_t *i = root->data.mapping.pairs.start; r >= 0 && i < root->data.mapping.pairs.top; i++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(doc, i->key));
                const char *ep = yaml_scalar_of(yaml_document_get_node(doc, i->value));

                if (k && streq(k, key) && !isempty(ep))
                        r = endpoint_found(d, path, key, ep);
        }
        return r;
}

/* kubelet reads the first document of its configuration file. */
static int endpoint_from_yaml(Detection *d, const char *path, const char *text, size_t size, const char *key) {
        YamlFile y;
        int r;

        r = yaml_file_load(&d->runtime, path, text, size, &y);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        r = y.n > 0 ? endpoint_in_yaml_doc(d, path, &y.docs[0], key) : 0;
        yaml_file_done(&y);
        return r;
}

static int endpoint_from_env(Detection *d, const char *path, const char *text, size_t size) {
        cleanup_strv char **pairs = NULL;
        unsigned line = 0;
        int r;

        r = env_file_parse(text, size, &pairs, &line);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return evidence_add(&d->runtime.evidence, path, "not an environment file (line %u): not evidence",
                                    line);
        STRV_FOREACH(p, pairs) {
                cleanup_free char *line_argv = NULL, *key = NULL;
                cleanup_strv char **argv = NULL;
                const char *eq = strchr(*p, '='), *ep;

                if (!kubelet_env_is_args(*p))
                        continue;
                line_argv = strprintf("kubelet %s", eq + 1);
                key = strndup(*p, (size_t) (eq - *p));
                if (!line_argv || !key || argv_split_blanks(line_argv, &argv) < 0)
                        return -ENOMEM;
                ep = argv_flag(argv, "container-runtime-endpoint");
                if (!isempty(ep) && (r = endpoint_found(d, path, key, ep)) < 0)
                        return r;
        }
        return 0;
}

/* What kubelet is told to talk to, wherever an installer wrote it, each file read as what it is. */
static int runtime_from_endpoints(int root_fd, Detection *d) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(endpoint_sources); i++) {
                const EndpointSource *s = endpoint_sources + i;
                cleanup_free char *text = NULL;
                size_t size;

                r = fileio_read_beneath(root_fd, s->path, DETECT_FILE_MAX, &text, &size);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        r = r == -ENOENT || r == -ENOTDIR
                                    ? 0
                                    : evidence_add(&d->runtime.evidence, s->path, "cannot be read (%s): not evidence",
                                                   strerror(-r));
                        continue;
                }
                r = s->format == ENDPOINT_YAML ? endpoint_from_yaml(d, s->path, text, size, s->key)
                                               : endpoint_from_env(d, s->path, text, size);
        }
        return r;
}

typedef struct RuntimeMark {
        const char *runtime;
        const char *path;
} RuntimeMark;

static const RuntimeMark runtime_marks[] = {
        { "containerd", "/etc/containerd/config.toml" },
        { "crio", "/etc/crio/crio.conf" },
        { "crio", "/etc/crio/crio.conf.d" },
        { "docker", "/etc/systemd/system/cri-dockerd.service" },
        { "docker", "/etc/systemd/system/cri-docker.service" },
        { "docker", "/lib/systemd/system/cri-docker.service" },
        { "docker", "/usr/local/bin/cri-dockerd" },
        { "docker", "/usr/bin/cri-dockerd" },
};

/* No endpoint written anywhere: the installed runtime, if exactly one is; k3s and rke2 embed theirs. */
static int runtime_from_installs(int root_fd, Detection *d) {
        int r = 0;

        if (d->installer == INSTALLER_K3S || d->installer == INSTALLER_RKE2) {
                r = evidence_add(&d->runtime.evidence, installer_to_string(d->installer),
                                 "%s runs its embedded containerd (no container-runtime-endpoint set)",
                                 installer_to_string(d->installer));
                return r < 0 ? r : finding_set(&d->runtime, "containerd");
        }
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(runtime_marks); i++)
                if (node_exists(root_fd, runtime_marks[i].path)) {
                        r = evidence_add(&d->runtime.evidence, runtime_marks[i].path,
                                         "%s is installed (no endpoint in kubelet's configuration)",
                                         runtime_marks[i].runtime);
                        if (r >= 0)
                                r = finding_set(&d->runtime, runtime_marks[i].runtime);
                }
        return r;
}

/* docker-ce installs /usr/bin/dockerd, Debian's and Ubuntu's docker.io /usr/sbin/dockerd; /etc/docker and
 * /var/lib/docker exist once Docker has run. */
static const char *const docker_marks[] = { "/usr/bin/dockerd", "/usr/sbin/dockerd", "/usr/local/bin/dockerd",
                                            "/etc/docker", "/var/lib/docker" };

/* No endpoint written anywhere: Docker may still be kubelet's runtime, through dockershim or k3s's
 * cri-dockerd (kubelet-runtime.c). */
static int runtime_from_kubelet_docker(int root_fd, Detection *d) {
        KubeletDocker k = {};
        bool installed = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(docker_marks) && !installed; i++)
                installed = node_exists(root_fd, docker_marks[i]);
        r = kubelet_docker_detect(root_fd, installed, &k);
        if (r < 0)
                return r;
        STRV_FOREACH(e, k.evidence)
                if (r >= 0)
                        r = strv_extend(&d->runtime.evidence, *e);
        if (r >= 0 && k.endpoint) {
                r = finding_set(&d->runtime, "docker");
                if (r >= 0 && !(d->runtime_endpoint = strdup(k.endpoint)))
                        r = -ENOMEM;
        }
        kubelet_docker_done(&k);
        return r;
}

int detect_runtime(int root_fd, Detection *d) {
        int r;

        r = runtime_from_endpoints(root_fd, d);
        if (r >= 0 && !d->runtime.value && !d->runtime.ambiguous)
                r = runtime_from_kubelet_docker(root_fd, d);
        if (r >= 0 && !d->runtime.value && !d->runtime.ambiguous)
                r = runtime_from_installs(root_fd, d);
        finding_settle(&d->runtime);
        if (r < 0 || streq_ptr(d->runtime.value, "docker"))
                return r;
        for (size_t i = 0; i < ELEMENTSOF(docker_marks); i++)
                if (node_exists(root_fd, docker_marks[i])) {
                        d->docker_cohosted = true;
                        return evidence_add(&d->runtime.evidence, docker_marks[i], "%s",
                                            "Docker is installed but is not kubelet's runtime: it is left alone");
                }
        return 0;
}

bool detect_shim_cmdline_is_kubernetes(const char *cmdline, size_t size) {
        const char *end = cmdline + size, *prev = NULL;

        for (const char *a = cmdline; a < end; a += strnlen(a, end - a) + 1) {
                if (streq(a, "-namespace=k8s.io") || streq(a, "--namespace=k8s.io"))
                        return true;
                if (prev && (streq(prev, "-namespace") || streq(prev, "--namespace")))
                        return streq(a, "k8s.io");
                prev = a;
        }
        return false;
}
