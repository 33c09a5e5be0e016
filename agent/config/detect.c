/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Installer, runtime, CNI, kube-proxy mode and etcd detection from the files each installer leaves:
 * read beneath a root fd only (plus /proc and /sys when live), so --root and a rescue shell with
 * nothing running see the same answers. Each answer keeps its evidence; disagreeing evidence is
 * reported as ambiguous, never resolved by a guess. */

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/config/cni-conf.h"
#include "agent/config/detect.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/etcd-owner.h"
#include "agent/base/toml.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "agent/config/home-kubeconfigs.h"
#include "agent/config/kubeconfig.h"
#include "agent/config/kubelet-runtime.h"
#include "agent/config/rancher-datadir.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/link.h"
#include "netreset/nl.h"
#include "string-util.h"
#include "strv.h"

/* Config files are small; a bigger one is not what we look for. */
#define DETECT_FILE_MAX (1024U * 1024U)

static const char *const installer_names[_INSTALLER_MAX] = {
        [INSTALLER_NONE] = "none",       [INSTALLER_KUBEADM] = "kubeadm", [INSTALLER_KUBESPRAY] = "kubespray",
        [INSTALLER_KUBEKEY] = "kubekey", [INSTALLER_K3S] = "k3s",         [INSTALLER_RKE2] = "rke2",
};

const char *installer_to_string(Installer i) {
        return i >= 0 && i < _INSTALLER_MAX ? installer_names[i] : NULL;
}

Installer installer_from_string(const char *s) {
        for (Installer i = 0; s && i < _INSTALLER_MAX; i++)
                if (streq(installer_names[i], s))
                        return i;
        return _INSTALLER_INVALID;
}

/* A file or directory an installer writes and nothing else does. kubespray and kubekey drive kubeadm,
 * so kubeadm's own files are on their nodes too: kubeadm is what remains when no other one is seen.
 * Data that outlives a reinstall (kubekey's /var/backups/kube_etcd) is no evidence of the current one. */
typedef struct InstallerMark {
        Installer installer;
        const char *path;
        const char *what;
} InstallerMark;

static const InstallerMark installer_marks[] = {
        { INSTALLER_KUBEADM, "/var/lib/kubelet/kubeadm-flags.env", "kubelet flags written by kubeadm init/join" },
        { INSTALLER_KUBEADM, "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/lib/systemd/system/kubelet.service.d/10-kubeadm.conf", "kubeadm's kubelet drop-in" },
        { INSTALLER_KUBEADM, "/etc/kubernetes/kubelet.conf", "kubeadm's kubelet kubeconfig" },
        { INSTALLER_KUBESPRAY, "/etc/kubernetes/kubelet.env", "kubespray's kubelet environment file" },
        { INSTALLER_KUBESPRAY, "/etc/kubernetes/kubeadm-client.conf", "kubespray's kubeadm join configuration" },
        { INSTALLER_KUBESPRAY, "/usr/local/bin/kubernetes-scripts", "kubespray's scripts directory" },
        { INSTALLER_KUBESPRAY, "/usr/local/bin/etcd-scripts", "kubespray's etcd scripts" },
        { INSTALLER_KUBESPRAY, "/etc/systemd/resolved.conf.d/kubespray.conf", "kubespray's host DNS setting" },
        { INSTALLER_KUBESPRAY, "/etc/modules-load.d/kubespray-br_netfilter.conf", "kubespray's module list" },
        { INSTALLER_KUBEKEY, "/usr/local/bin/kube-scripts", "kubekey v3's scripts directory" },
        { INSTALLER_KUBEKEY, "/etc/systemd/system/backup-etcd.timer", "kubekey v3's etcd backup timer" },
        { INSTALLER_KUBEKEY, "/etc/kubekey", "kubekey's work directory" },
        { INSTALLER_K3S, "/usr/local/bin/k3s", "the k3s binary" },
        { INSTALLER_K3S, "/usr/local/bin/k3s-uninstall.sh", "k3s's uninstall script (server)" },
        { INSTALLER_K3S, "/usr/local/bin/k3s-agent-uninstall.sh", "k3s's uninstall script (agent)" },
        { INSTALLER_K3S, "/etc/rancher/k3s", "k3s's configuration" },
        { INSTALLER_K3S, "/var/lib/rancher/k3s", "k3s's data directory" },
        { INSTALLER_RKE2, "/usr/local/bin/rke2", "the rke2 binary" },
        { INSTALLER_RKE2, "/usr/bin/rke2", "the rke2 binary (RPM)" },
        { INSTALLER_RKE2, "/usr/local/bin/rke2-uninstall.sh", "rke2's uninstall script" },
        { INSTALLER_RKE2, "/etc/rancher/rke2", "rke2's configuration" },
        { INSTALLER_RKE2, "/var/lib/rancher/rke2", "rke2's data directory" },
};

static bool node_exists(int root_fd, const char *path) {
        return fileio_exists_beneath(root_fd, path);
}

/* The file's text, or NULL when it is missing, unreadable or too big (evidence of nothing). */
static char *node_read(int root_fd, const char *path) {
        char *text = NULL;
        size_t size;

        if (fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size) < 0)
                return NULL;
        return text;
}

static int evidence_add(char ***l, const char *path, const char *fmt, ...) _printf_(3, 4);
static int evidence_add(char ***l, const char *path, const char *fmt, ...) {
        cleanup_free char *what = NULL;
        va_list ap;

        va_start(ap, fmt);
        what = vstrprintf(fmt, ap);
        va_end(ap);
        if (!what)
                return -ENOMEM;
        return strv_consume(l, strprintf("%s: %s", path, what));
}

static int finding_set(Finding *f, const char *value) {
        if (!value)
                return 0;
        if (!f->value) {
                f->value = strdup(value);
                return f->value ? 0 : -ENOMEM;
        }
        if (!streq(f->value, value))
                f->ambiguous = true;
        return 0;
}

static void finding_done(Finding *f) {
        f->value = mfree(f->value);
        f->evidence = strv_free(f->evidence);
}

/* A finding that disagrees has no value: the evidence says what each side was. */
static void finding_settle(Finding *f) {
        if (f->ambiguous)
                f->value = mfree(f->value);
}

static int detect_installer(int root_fd, Detection *d) {
        char **own[_INSTALLER_MAX] = {};
        unsigned n_own = 0;
        Installer last = INSTALLER_NONE;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(installer_marks); i++) {
                const InstallerMark *m = installer_marks + i;

                if (!node_exists(root_fd, m->path))
                        continue;
                r = evidence_add(&own[m->installer], m->path, "%s", m->what);
                if (r >= 0)
                        r = evidence_add(&d->installer_evidence, m->path, "%s", m->what);
        }
        for (Installer i = INSTALLER_KUBESPRAY; r >= 0 && i < _INSTALLER_MAX; i++)
                if (own[i]) {
                        n_own++;
                        last = i;
                        r = strv_extend(&d->installer_candidates, installer_to_string(i));
                }
        /* k3s and rke2 never run kubeadm: its files next to theirs are two installs, not one. */
        if (r >= 0 && n_own == 1 && (last == INSTALLER_K3S || last == INSTALLER_RKE2) && own[INSTALLER_KUBEADM]) {
                n_own++;
                r = strv_extend(&d->installer_candidates, "kubeadm");
        }
        if (n_own == 1)
                d->installer = last;
        else if (n_own == 0 && own[INSTALLER_KUBEADM])
                d->installer = INSTALLER_KUBEADM;
        d->installer_ambiguous = n_own > 1;
        if (!d->installer_ambiguous)
                d->installer_candidates = strv_free(d->installer_candidates);
        for (Installer i = 0; i < _INSTALLER_MAX; i++)
                strv_free(own[i]);
        return r;
}

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
        { "/var/lib/kubelet/config.yaml", ENDPOINT_YAML, "containerRuntimeEndpoint" },
        { "/etc/kubernetes/kubelet-config.yaml", ENDPOINT_YAML, "containerRuntimeEndpoint" }, /* kubespray */
        { "/var/lib/kubelet/kubeadm-flags.env", ENDPOINT_ENV, NULL },
        { "/etc/kubernetes/kubelet.env", ENDPOINT_ENV, NULL }, /* kubespray */
        { "/etc/default/kubelet", ENDPOINT_ENV, NULL },        /* kubeadm's drop-in reads both */
        { "/etc/sysconfig/kubelet", ENDPOINT_ENV, NULL },
        { "/etc/rancher/k3s/config.yaml", ENDPOINT_YAML, "container-runtime-endpoint" },
        { "/etc/rancher/rke2/config.yaml", ENDPOINT_YAML, "container-runtime-endpoint" },
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

/* Every document of a YAML file, parsed whole before any is read: a file that does not parse is
 * evidence of nothing (said in f's evidence, then -EINVAL). The first YAML_DOCS_MAX are kept. */
#define YAML_DOCS_MAX 8U

typedef struct YamlFile {
        yaml_document_t docs[YAML_DOCS_MAX];
        size_t n;
} YamlFile;

static void yaml_file_done(YamlFile *y) {
        for (size_t i = 0; i < y->n; i++)
                yaml_document_delete(&y->docs[i]);
        y->n = 0;
}

static int yaml_file_next(yaml_parser_t *parser, YamlFile *y, bool *done) {
        yaml_document_t extra, *doc = y->n < YAML_DOCS_MAX ? &y->docs[y->n] : &extra;

        if (!yaml_parser_load(parser, doc))
                return parser->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
        *done = !yaml_document_get_root_node(doc);
        if (*done || doc == &extra)
                yaml_document_delete(doc);
        else
                y->n++;
        return 0;
}

static int yaml_file_load(Finding *f, const char *path, const char *text, size_t size, YamlFile *y) {
        yaml_parser_t parser;
        bool done = false;
        int r = 0;

        y->n = 0;
        if (!yaml_parser_initialize(&parser)) {
                r = evidence_add(&f->evidence, path, "%s", "not read (libyaml is not available): not evidence");
                return r < 0 ? r : -EINVAL;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, size);
        while (r >= 0 && !done)
                r = yaml_file_next(&parser, y, &done);
        if (r == -EINVAL && evidence_add(&f->evidence, path, "not valid YAML (line %zu: %s): not evidence",
                                         parser.problem_mark.line + 1, strempty(parser.problem)) < 0)
                r = -ENOMEM;
        yaml_parser_delete(&parser);
        if (r < 0)
                yaml_file_done(y);
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

static int detect_runtime(int root_fd, Detection *d) {
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

static const char *const cni_dirs[] = { "/etc/cni/net.d", "/var/lib/rancher/k3s/agent/etc/cni/net.d" };

/* The conf dir kubelet's runtime is configured with, when its configuration names one: containerd's
 * CRI cni conf_dir (config version 2, 1 and 3), CRI-O's network_dir (drop-ins override the file). */
static int cni_runtime_dir(int root_fd, const Detection *d, char **ret) {
        static const char *const containerd[] = { "plugins.io.containerd.grpc.v1.cri.cni", "plugins.cri.cni",
                                                  "plugins.io.containerd.cri.v1.runtime.cni", NULL };
        static const char *const crio[] = { "crio.network", NULL };
        bool is_crio = streq_ptr(d->runtime.value, "crio");
        cleanup_strv char **files = NULL;
        int r = 0;

        *ret = NULL;
        if (!streq_ptr(d->runtime.value, "containerd") && !is_crio)
                return 0;
        if (strv_extend(&files, is_crio ? "/etc/crio/crio.conf" : "/etc/containerd/config.toml") < 0)
                return -ENOMEM;
        if (is_crio) {
                cleanup_strv char **names = NULL;

                r = fileio_list_beneath(root_fd, "/etc/crio/crio.conf.d", "*", &names);
                STRV_FOREACH(n, names)
                        if (r >= 0)
                                r = strv_consume(&files, strprintf("/etc/crio/crio.conf.d/%s", *n));
        }
        STRV_FOREACH(f, files) {
                cleanup_free char *text = node_read(root_fd, *f), *v = NULL;

                if (r >= 0 && text &&
                    (r = toml_find_string(text, is_crio ? crio : containerd, is_crio ? "network_dir" : "conf_dir",
                                          &v)) > 0 &&
                    v[0] == '/') {
                        free(*ret);
                        *ret = TAKE_PTR(v);
                }
        }
        return r < 0 ? r : 0;
}

/* Does kubelet's runtime skip a CNI configuration that does not load and take the next by name?
 * CRI-O does (cri-o/ocicni pkg/ocicni/ocicni.go loadNetworks: "continue" on each error), and so did
 * dockershim, whose code cri-dockerd carries on (kubernetes pkg/kubelet/dockershim/network/cni/cni.go
 * getDefaultCNINetwork). containerd's CRI plugin does not: it loads its conf dir with
 * cni.WithDefaultConf (containerd pkg/cri/server/service_linux.go initPlatform, cniLoadOptions;
 * max_conf_num 1 by default), and go-cni's loadFromConfDir (containerd/go-cni opts.go) sorts the
 * .conf/.conflist/.json names and returns the error of the first file that does not load: the node
 * then has no CNI configuration at all. An unknown runtime counts as containerd: a file's ranges are
 * the pods' only when whichever runtime it is would load that file. */
static bool cni_runtime_skips_invalid(const Detection *d) {
        return streq_ptr(d->runtime.value, "crio") || streq_ptr(d->runtime.value, "docker");
}

/* A file of the conf dir that does not load (why): skipped in naming the CNI, and by a runtime that
 * skips it; where containerd stops at it, the first such file is *stopped, and no CNI file's range is
 * a pod range. */
static int cni_file_refused(Detection *d, const char *path, const char *why, char **stopped) {
        const char *who =
                d->runtime.value ? "containerd's CRI plugin" : "containerd's CRI plugin, if it is the runtime,";

        if (cni_runtime_skips_invalid(d))
                return evidence_add(&d->cni.evidence, path, "%s: skipped, as the runtime's libcni skips it", why);
        if (*stopped)
                return evidence_add(&d->cni.evidence, path, "%s: skipped in naming the CNI (containerd stops before)",
                                    why);
        *stopped = strdup(path);
        if (!*stopped)
                return -ENOMEM;
        return evidence_add(&d->cni.evidence, path,
                            "%s: skipped in naming the CNI; %s stops at it and loads no CNI configuration (go-cni "
                            "loadFromConfDir), so no CNI file's range is a pod range",
                            why, who);
}

/* One file of a CNI conf dir: 1 when it is a configuration libcni loads (then it names the CNI, and
 * its ranges are the pods' unless the runtime stopped at an earlier file), 0 when it does not (a
 * file that does not parse is evidence of nothing). */
static int cni_from_file(int root_fd, const char *path, Detection *d, char **stopped) {
        cleanup_free char *text = NULL, *types = NULL, *unread = NULL;
        const char *why = NULL;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                unread = strprintf("cannot be read (%s)", strerror(-r));
                return unread ? cni_file_refused(d, path, unread, stopped) : -ENOMEM;
        }
        r = cni_conf_types(strrchr(path, '/') + 1, text, size, &types, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return cni_file_refused(d, path, why, stopped);
        if (*stopped)
                r = evidence_add(&d->cni.evidence, path,
                                 "plugins %s (the first configuration that loads: the node's CNI; not the "
                                 "runtime's, which stops at %s: its ranges are not the pods')",
                                 types, *stopped);
        else
                r = evidence_add(&d->cni.evidence, path, "plugins %s (the first configuration the runtime loads)",
                                 types);
        if (r >= 0)
                r = finding_set(&d->cni, types);
        if (r >= 0 && !(d->cni_config = strdup(path)))
                r = -ENOMEM;
        if (r >= 0 && !*stopped && !(d->cni_loaded = strdup(path)))
                r = -ENOMEM;
        return r < 0 ? r : 1;
}

/* The runtime uses the first configuration libcni loads from its conf dir (names ending .conf,
 * .conflist or .json, in byte order, dot files included): its plugins are the node's CNI. */
static int cni_from_config(int root_fd, Detection *d) {
        cleanup_strv char **dirs = NULL;
        cleanup_free char *own = NULL, *stopped = NULL;
        int r;

        /* The runtime's own conf dir first, then the default ones. */
        r = cni_runtime_dir(root_fd, d, &own);
        if (r >= 0 && own)
                r = strv_extend(&dirs, own);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(cni_dirs); i++)
                r = strv_extend_unique(&dirs, cni_dirs[i]);
        STRV_FOREACH(dir, dirs) {
                cleanup_strv char **names = NULL;

                if (r < 0 || d->cni.value)
                        break;
                r = fileio_list_beneath(root_fd, *dir, NULL, &names);
                STRV_FOREACH(n, names) {
                        cleanup_free char *path = NULL;

                        if (r != 0)
                                break;
                        if (!cni_conf_name_loaded(*n) || cni_conf_name_is_rescue(*n))
                                continue;
                        path = strprintf("%s/%s", *dir, *n);
                        r = path ? cni_from_file(root_fd, path, d, &stopped) : -ENOMEM;
                }
        }
        return r < 0 ? r : 0;
}

/* What a CNI leaves on a node besides its configuration: its own links (the running system only),
 * its BPF pins and its state directories. Names no other software uses. */
typedef struct CniMark {
        const char *cni; /* the CNI's name, as the profile's fragment is named */
        const char *what;
        const char *dir;  /* node path; with glob, the directory whose entries are looked at */
        const char *glob; /* a link name pattern (dir NULL) or an entry name pattern */
} CniMark;

static const CniMark cni_marks[] = {
        { "cilium", "cilium's host link", NULL, "cilium_host" },
        { "cilium", "cilium's link", NULL, "cilium_net" },
        { "cilium", "cilium's tunnel link", NULL, "cilium_vxlan" },
        { "cilium", "cilium's BPF pins", "/sys/fs/bpf/tc/globals", "cilium_*" },
        { "cilium", "cilium's state directory", "/var/run/cilium", NULL },
        { "cilium", "cilium's state directory", "/run/cilium", NULL },
        { "cilium", "cilium's state directory", "/var/lib/cilium", NULL },
        /* calico names a workload's link "cali" and 11 hex digits of a hash */
        { "calico", "a calico workload link", NULL,
          "cali[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]" },
        { "calico", "calico's VXLAN link", NULL, "vxlan.calico" },
        { "calico", "calico's VXLAN link", NULL, "vxlan-v6.calico" },
        { "calico", "calico's BPF pins", "/sys/fs/bpf/tc/globals", "cali_*" },
        { "calico", "calico's state directory", "/var/lib/calico", NULL },
        { "calico", "calico's state directory", "/run/calico", NULL },
        { "flannel", "flannel's VXLAN link", NULL, "flannel.*" },
        { "flannel", "flannel's VXLAN link", NULL, "flannel-v6.*" },
        { "flannel", "flannel's WireGuard link", NULL, "flannel-wg*" },
        { "flannel", "flannel's subnet lease", "/run/flannel", NULL },
        { "flannel", "the flannel plugin's state", "/var/lib/cni/flannel", NULL },
        { "kube-router", "kube-router's bridge", NULL, "kube-bridge" },
        { "kube-router", "kube-router's dummy link", NULL, "kube-dummy-if" },
        { "kube-router", "kube-router's state directory", "/var/lib/kube-router", NULL },
        { "weave", "weave's bridge", NULL, "weave" },
        { "weave", "a weave link", NULL, "vethwe-*" },
        { "weave", "weave's state directory", "/var/lib/weave", NULL },
};

static int cni_mark_seen(Detection *d, char ***seen, const CniMark *m, const char *where) {
        int r = evidence_add(&d->cni.evidence, where, "%s exists (%s's)", m->what, m->cni);

        return r < 0 ? r : strv_extend_unique(seen, m->cni);
}

/* The links of the namespace this runs in: only for the running system, never for a --root tree. */
static int cni_from_links(Detection *d, char ***seen) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        CLEANUP(link_table_freep) LinkTable *t = NULL;
        cleanup_free char *err = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = link_table_read(rtnl, &t, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return evidence_add(&d->cni.evidence, "links", "cannot be listed (%s): not evidence",
                                    err ?: strerror(-r));
        for (size_t i = 0; r >= 0 && i < t->n; i++)
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(cni_marks); k++)
                        if (!cni_marks[k].dir && fnmatch(cni_marks[k].glob, t->links[i].name, 0) == 0) {
                                cleanup_free char *where = strprintf("link %s", t->links[i].name);

                                r = where ? cni_mark_seen(d, seen, cni_marks + k, where) : -ENOMEM;
                                break;
                        }
        return r;
}

static int cni_from_paths(int root_fd, Detection *d, char ***seen) {
        int r = 0;

        for (size_t k = 0; r >= 0 && k < ELEMENTSOF(cni_marks); k++) {
                const CniMark *m = cni_marks + k;
                cleanup_strv char **names = NULL;
                cleanup_free char *where = NULL;

                if (!m->dir || (!m->glob && !node_exists(root_fd, m->dir)))
                        continue;
                if (m->glob && ((r = fileio_list_beneath(root_fd, m->dir, m->glob, &names)) < 0 || !names))
                        continue;
                where = names ? strprintf("%s/%s", m->dir, names[0]) : strdup(m->dir);
                r = where ? cni_mark_seen(d, seen, m, where) : -ENOMEM;
        }
        return r;
}

/* No configuration the runtime loads: the CNI's own state on the node is the evidence (a rerun after
 * /etc/cni/net.d went, or an operator deleted it). One CNI's state decides; canal is calico's and
 * flannel's together; any other mix is ambiguous, and no CNI's state goes on a guess. */
static int cni_from_state(int root_fd, bool live, Detection *d) {
        cleanup_strv char **seen = NULL;
        int r = 0;

        if (live)
                r = cni_from_links(d, &seen);
        if (r >= 0)
                r = cni_from_paths(root_fd, d, &seen);
        if (r < 0 || !seen)
                return r;
        strv_sort(seen);
        if (strv_length(seen) == 2 && streq(seen[0], "calico") && streq(seen[1], "flannel"))
                return finding_set(&d->cni, "calico,flannel");
        STRV_FOREACH(c, seen)
                if ((r = finding_set(&d->cni, *c)) < 0)
                        return r;
        finding_settle(&d->cni);
        return 0;
}

static int detect_cni(int root_fd, bool live, Detection *d) {
        int r = cni_from_config(root_fd, d);

        if (r >= 0 && !d->cni.value)
                r = cni_from_state(root_fd, live, d);
        return r;
}

/* The YAML file at path, every document parsed (-EINVAL: absent, unreadable or not YAML). */
static int node_read_yaml(int root_fd, const char *path, Finding *f, YamlFile *y) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? -EINVAL : yaml_file_load(f, path, text, size, y);
}

/* kube-proxy's mode: the top-level "mode" of the document whose kind is KubeProxyConfiguration;
 * absent or "" is iptables on Linux. */
static int proxy_mode_from_file(int root_fd, const char *path, Detection *d) {
        YamlFile y;
        int r;

        r = node_read_yaml(root_fd, path, &d->kube_proxy_mode, &y);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        for (size_t i = 0; r >= 0 && i < y.n; i++) {
                yaml_node_t *root = yaml_document_get_root_node(&y.docs[i]);
                const char *mode;

                if (!streq_ptr(yaml_scalar_of(yaml_map_get(&y.docs[i], root, "kind")), "KubeProxyConfiguration"))
                        continue;
                mode = yaml_scalar_of(yaml_map_get(&y.docs[i], root, "mode"));
                mode = isempty(mode) ? "iptables" : mode;
                r = evidence_add(&d->kube_proxy_mode.evidence, path, "KubeProxyConfiguration mode %s", mode);
                if (r >= 0)
                        r = finding_set(&d->kube_proxy_mode, mode);
        }
        yaml_file_done(&y);
        return r;
}

int detect_kube_proxy_configmaps(int root_fd, char ***ret) {
        cleanup_strv char **pods = NULL, **l = NULL;
        int r;

        *ret = NULL;
        r = fileio_list_beneath(root_fd, "/var/lib/kubelet/pods", "*", &pods);
        STRV_FOREACH(p, pods)
                if (r >= 0)
                        r = strv_consume(&l, strprintf("/var/lib/kubelet/pods/%s/volumes/kubernetes.io~configmap/"
                                                       "kube-proxy/config.conf",
                                                       *p));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(l);
        return 0;
}

/* The ConfigMap kubelet projected into the kube-proxy pod is on disk on every kubeadm-built node. */
static int proxy_mode_from_pods(int root_fd, Detection *d) {
        cleanup_strv char **paths = NULL;
        int r;

        r = detect_kube_proxy_configmaps(root_fd, &paths);
        STRV_FOREACH(p, paths)
                if (r >= 0)
                        r = proxy_mode_from_file(root_fd, *p, d);
        return r;
}

/* k3s's and rke2's kube-proxy-arg: a string or a list of them, "proxy-mode=X" (the last one wins). */
static const char *k3s_proxy_mode(yaml_document_t *doc) {
        yaml_node_t *args = yaml_map_get(doc, yaml_document_get_root_node(doc), "kube-proxy-arg");
        const char *mode = NULL, *a;

        if (args && args->type == YAML_SCALAR_NODE)
                return startswith(strempty(yaml_scalar_of(args)), "proxy-mode=");
        for (yaml_node_item_t *i = args && args->type == YAML_SEQUENCE_NODE ? args->data.sequence.items.start : NULL;
             i && i < args->data.sequence.items.top; i++)
                if ((a = startswith(strempty(yaml_scalar_of(yaml_document_get_node(doc, *i))), "proxy-mode=")))
                        mode = a;
        return mode;
}

static int proxy_mode_from_k3s(int root_fd, const char *path, Detection *d) {
        const char *mode;
        YamlFile y;
        int r;

        r = node_read_yaml(root_fd, path, &d->kube_proxy_mode, &y);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        mode = y.n > 0 ? k3s_proxy_mode(&y.docs[0]) : NULL;
        if (!isempty(mode)) {
                r = evidence_add(&d->kube_proxy_mode.evidence, path, "kube-proxy-arg proxy-mode=%s", mode);
                if (r >= 0)
                        r = finding_set(&d->kube_proxy_mode, mode);
        }
        yaml_file_done(&y);
        return r;
}

/* The running kernel's view, only for the live system: IPVS virtual services, the dummy link. */
static int proxy_mode_live(Detection *d) {
        cleanup_free char *ipvs = NULL;
        size_t size;
        int r = 0;

        if (fileio_read_file("/proc/net/ip_vs", DETECT_FILE_MAX, &ipvs, &size) >= 0 &&
            (strstr(ipvs, "\nTCP") || strstr(ipvs, "\nUDP")))
                r = evidence_add(&d->kube_proxy_mode.evidence, "/proc/net/ip_vs", "%s", "IPVS virtual services exist");
        else if (access("/sys/class/net/kube-ipvs0", F_OK) >= 0)
                r = evidence_add(&d->kube_proxy_mode.evidence, "/sys/class/net/kube-ipvs0", "%s",
                                 "kube-proxy's IPVS dummy link exists");
        else
                return 0;
        return r < 0 ? r : finding_set(&d->kube_proxy_mode, "ipvs");
}

static int detect_kube_proxy(int root_fd, bool live, Detection *d) {
        int r;

        r = proxy_mode_from_file(root_fd, "/etc/kubernetes/kubeadm-config.yaml", d);
        if (r >= 0)
                r = proxy_mode_from_pods(root_fd, d);
        if (r >= 0)
                r = proxy_mode_from_k3s(root_fd, "/etc/rancher/k3s/config.yaml", d);
        if (r >= 0)
                r = proxy_mode_from_k3s(root_fd, "/etc/rancher/rke2/config.yaml", d);
        if (r >= 0 && live)
                r = proxy_mode_live(d);
        finding_settle(&d->kube_proxy_mode);
        return r;
}

static int etcd_mark(Detection *d, const char *path, const char *kind, const char *what) {
        int r = evidence_add(&d->etcd.evidence, path, "%s", what);

        return r < 0 ? r : finding_set(&d->etcd, kind);
}

/* --data-dir as etcd reads it: from the etcd container's command line, or ETCD_DATA_DIR as systemd
 * passes it. A file that does not parse names no directory, and says so. */
static int etcd_data_dir(Detection *d, const char *path, const char *text, bool pod) {
        cleanup_strv char **argv = NULL;
        const char *dir;
        int r;

        r = pod ? pod_container_argv(text, strlen(text), "etcd", &argv)
                : etcd_env_argv(text, strlen(text), &argv, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || (pod && r == 0))
                return evidence_add(&d->etcd.evidence, path, "%s", "does not parse: no data directory read from it");
        dir = argv_flag(argv, "data-dir");
        if (!dir || streq(dir, "/var/lib/etcd") || d->etcd_data_dir)
                return 0;
        d->etcd_data_dir = strdup(dir);
        if (!d->etcd_data_dir)
                return -ENOMEM;
        return evidence_add(&d->etcd.evidence, "data directory", "%s", d->etcd_data_dir);
}

static int detect_etcd(int root_fd, Detection *d) {
        cleanup_free char *pod = node_read(root_fd, "/etc/kubernetes/manifests/etcd.yaml");
        cleanup_free char *env = node_read(root_fd, "/etc/etcd.env");
        CLEANUP(etcd_scope_done) EtcdScope scope = {};
        int r;

        /* "external" is the one decision every phase follows (etcd-owner.h). */
        r = etcd_scope_decide(root_fd, &scope);
        if (r < 0)
                return r;

        if (pod &&
            (r = etcd_mark(d, "/etc/kubernetes/manifests/etcd.yaml", "static-pod", "kubeadm's etcd static pod")) >= 0)
                r = etcd_data_dir(d, "/etc/kubernetes/manifests/etcd.yaml", pod, true);
        if (r >= 0 && env &&
            (r = etcd_mark(d, "/etc/etcd.env", "systemd", "etcd run by systemd (kubespray, kubekey)")) >= 0)
                r = etcd_data_dir(d, "/etc/etcd.env", env, false);
        if (r >= 0 && scope.owner == ETCD_OWNER_FOREIGN)
                r = etcd_mark(d, scope.source, "external", scope.why);
        if (r >= 0 && node_exists(root_fd, "/var/lib/rancher/k3s/server/db/etcd"))
                r = etcd_mark(d, "/var/lib/rancher/k3s/server/db/etcd", "embedded", "k3s's embedded etcd");
        if (r >= 0 && node_exists(root_fd, "/var/lib/rancher/rke2/server/db/etcd"))
                r = etcd_mark(d, "/var/lib/rancher/rke2/server/db/etcd", "embedded", "rke2's embedded etcd");
        if (r >= 0 && !d->etcd.value && !d->etcd.evidence)
                r = finding_set(&d->etcd, "none");
        finding_settle(&d->etcd);
        return r;
}

/* k3s's and rke2's data dirs when configured elsewhere: the profiles' paths move with them. */
static int detect_rancher_data_dirs(int root_fd, Detection *d) {
        char **dirs[] = { &d->k3s_data_dir, &d->rke2_data_dir };
        const char *programs[] = { "k3s", "rke2" };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(programs); i++) {
                cleanup_free char *dir = NULL, *evidence = NULL;

                r = rancher_data_dir(root_fd, programs[i], &dir, &evidence);
                if (r > 0) {
                        *dirs[i] = TAKE_PTR(dir);
                        r = strv_consume(&d->installer_evidence, TAKE_PTR(evidence));
                }
        }
        return r;
}

/* A symlinked /var/lib/kubelet (a data disk): the node path it resolves to, inside the root. */
static int detect_kubelet_dir(int root_fd, Detection *d) {
        struct stat st;

        if (fstatat(root_fd, "var/lib/kubelet", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                return 0;
        return fileio_resolve_beneath(root_fd, "/var/lib/kubelet", &d->kubelet_dir_target);
}

/* This cluster's server, and the kubeconfigs of every home that name it (and only those). */
static int detect_kubeconfigs(int root_fd, Detection *d) {
        return home_kubeconfigs_find(root_fd, &d->cluster_server, &d->home_kubeconfigs);
}

int detect_node(int root_fd, bool live, Detection *ret) {
        Detection d = {};
        int r;

        r = detect_installer(root_fd, &d);
        if (r >= 0)
                r = detect_rancher_data_dirs(root_fd, &d);
        if (r >= 0)
                r = detect_runtime(root_fd, &d);
        if (r >= 0)
                r = detect_cni(root_fd, live, &d);
        if (r >= 0)
                r = detect_kube_proxy(root_fd, live, &d);
        if (r >= 0)
                r = detect_etcd(root_fd, &d);
        if (r >= 0)
                r = detect_kubelet_dir(root_fd, &d);
        if (r >= 0)
                r = detect_kubeconfigs(root_fd, &d);
        if (r < 0) {
                detection_done(&d);
                return r;
        }
        *ret = d;
        return 0;
}

void detection_done(Detection *d) {
        d->installer_evidence = strv_free(d->installer_evidence);
        d->installer_candidates = strv_free(d->installer_candidates);
        finding_done(&d->runtime);
        finding_done(&d->cni);
        d->cni_config = mfree(d->cni_config);
        d->cni_loaded = mfree(d->cni_loaded);
        finding_done(&d->kube_proxy_mode);
        finding_done(&d->etcd);
        d->runtime_endpoint = mfree(d->runtime_endpoint);
        d->etcd_data_dir = mfree(d->etcd_data_dir);
        d->k3s_data_dir = mfree(d->k3s_data_dir);
        d->rke2_data_dir = mfree(d->rke2_data_dir);
        d->kubelet_dir_target = mfree(d->kubelet_dir_target);
        d->cluster_server = mfree(d->cluster_server);
        d->home_kubeconfigs = strv_free(d->home_kubeconfigs);
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

static void emit_evidence(Emitter *e, char **evidence) {
        emit_open_array(e, "evidence");
        STRV_FOREACH(s, evidence)
                emit_string(e, COLOR_GREY, NULL, "\n    %s", *s);
        emit_close_array(e);
}

/* A name from the node in the text, or null in JSON with "unknown"/"ambiguous" said in the text. */
static void emit_name(Emitter *e, const char *key, const char *value, bool ambiguous) {
        if (value)
                emit_string(e, COLOR_BOLD, key, "%s", value);
        else {
                emit_null(e, key);
                emit_text(e, COLOR_YELLOW, "%s", ambiguous ? "ambiguous" : "unknown");
        }
}

static void emit_finding(Emitter *e, const char *key, const char *label, const Finding *f) {
        emit_open_object(e, key);
        emit_text(e, COLOR_NONE, "  %s: ", label);
        emit_name(e, "name", f->value, f->ambiguous);
        emit_bool(e, "ambiguous", NULL, f->ambiguous);
        emit_evidence(e, f->evidence);
        emit_text(e, COLOR_NONE, "\n");
}

static void emit_installer(Emitter *e, const Detection *d) {
        emit_open_object(e, "installer");
        emit_text(e, COLOR_NONE, "\ndetected:\n  installer: ");
        emit_name(e, "name", d->installer == INSTALLER_NONE ? NULL : installer_to_string(d->installer),
                  d->installer_ambiguous);
        if (d->installer == INSTALLER_NONE && !d->installer_ambiguous)
                emit_text(e, COLOR_NONE, " (no installer's files found)");
        emit_bool(e, "ambiguous", NULL, d->installer_ambiguous);
        emit_open_array(e, "candidates");
        STRV_FOREACH(c, d->installer_candidates)
                emit_string(e, COLOR_YELLOW, NULL, c == d->installer_candidates ? " (evidence of %s" : ", %s", *c);
        if (d->installer_candidates)
                emit_text(e, COLOR_YELLOW, ")");
        emit_close_array(e);
        emit_evidence(e, d->installer_evidence);
        emit_text(e, COLOR_NONE, "\n");
        emit_close_object(e);
}

void detection_emit(Emitter *e, const Detection *d, const char *profile, const char *profile_why) {
        emit_installer(e, d);
        emit_open_object(e, "profile");
        emit_text(e, COLOR_NONE, "  profile: ");
        if (profile)
                emit_string(e, COLOR_BOLD, "name", "%s", profile);
        else {
                emit_null(e, "name");
                emit_text(e, COLOR_NONE, "none (manifest given)");
        }
        emit_string(e, COLOR_GREY, "why", profile_why ? " (%s)" : NULL, profile_why);
        emit_text(e, COLOR_NONE, "\n");
        emit_close_object(e);
        emit_finding(e, "runtime", "runtime", &d->runtime);
        emit_string(e, COLOR_NONE, "endpoint", NULL, d->runtime_endpoint);
        emit_bool(e, "docker_cohosted", NULL, d->docker_cohosted);
        emit_close_object(e);
        emit_finding(e, "cni", "CNI", &d->cni);
        emit_close_object(e);
        emit_finding(e, "kube_proxy_mode", "kube-proxy mode", &d->kube_proxy_mode);
        emit_close_object(e);
        emit_finding(e, "etcd", "etcd", &d->etcd);
        emit_string(e, COLOR_NONE, "data_dir", NULL, d->etcd_data_dir);
        emit_close_object(e);
        emit_string(e, COLOR_NONE, "kubelet_dir",
                    d->kubelet_dir_target ? "  /var/lib/kubelet: a symlink to %s\n" : NULL, d->kubelet_dir_target);
        emit_string(e, COLOR_NONE, "cluster_server", d->cluster_server ? "  cluster: %s\n" : NULL, d->cluster_server);
}
