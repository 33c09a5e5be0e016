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

#include "agent/config/detect.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/node/fileio.h"
#include "agent/config/kubeconfig.h"
#include "errno-util.h"
#include "macro.h"
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
        int fd = fileio_open_resolve_beneath(root_fd, path, O_PATH);

        if (fd < 0)
                return false;
        (void) close_nointr(fd);
        return true;
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

/* The value after key in text ("key: value", "key=value"), unquoted, up to the end of the word. */
static char *text_value_after(const char *text, const char *key) {
        const char *p = strstr(text, key);
        size_t n;

        if (!p)
                return NULL;
        p += strlen(key);
        p += strspn(p, " \t\"'");
        n = strcspn(p, " \t\r\n\"'");
        return n > 0 ? strndup(p, n) : NULL;
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

typedef struct EndpointSource {
        const char *path;
        const char *key;
} EndpointSource;

static const EndpointSource endpoint_sources[] = {
        { "/var/lib/kubelet/config.yaml", "containerRuntimeEndpoint:" },
        { "/etc/kubernetes/kubelet-config.yaml", "containerRuntimeEndpoint:" }, /* kubespray */
        { "/var/lib/kubelet/kubeadm-flags.env", "--container-runtime-endpoint=" },
        { "/etc/kubernetes/kubelet.env", "--container-runtime-endpoint=" }, /* kubespray */
        { "/etc/rancher/k3s/config.yaml", "container-runtime-endpoint:" },
        { "/etc/rancher/rke2/config.yaml", "container-runtime-endpoint:" },
};

/* What kubelet is told to talk to, wherever an installer wrote it. */
static int runtime_from_endpoints(int root_fd, Detection *d) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(endpoint_sources); i++) {
                const EndpointSource *s = endpoint_sources + i;
                cleanup_free char *text = node_read(root_fd, s->path), *ep = NULL;
                const char *rt;

                if (!text || !(ep = text_value_after(text, s->key)))
                        continue;
                rt = runtime_of_endpoint(ep);
                r = evidence_add(&d->runtime.evidence, s->path, "kubelet's endpoint %s", ep);
                if (r >= 0)
                        r = finding_set(&d->runtime, rt ?: ep);
                if (r >= 0 && !d->runtime_endpoint)
                        d->runtime_endpoint = TAKE_PTR(ep);
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

static const char *const docker_marks[] = { "/usr/bin/dockerd", "/usr/local/bin/dockerd", "/etc/docker",
                                            "/var/lib/docker" };

static int detect_runtime(int root_fd, Detection *d) {
        int r;

        r = runtime_from_endpoints(root_fd, d);
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

/* The names in node directory dir matching glob, sorted; an unreadable directory has none. */
static int dir_list(int root_fd, const char *dir, const char *glob, char ***ret) {
        cleanup_strv char **l = NULL;
        struct dirent *de;
        DIR *dp;
        int fd, r = 0;

        *ret = NULL;
        fd = fileio_open_resolve_beneath(root_fd, dir, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return 0;
        dp = fdopendir(fd);
        if (!dp) {
                (void) close_nointr(fd);
                return 0;
        }
        while (r >= 0 && (de = readdir(dp)))
                if (de->d_name[0] != '.' && fnmatch(glob, de->d_name, FNM_PERIOD) == 0)
                        r = strv_extend(&l, de->d_name);
        closedir(dp);
        if (r < 0)
                return r;
        if (l)
                qsort(l, strv_length(l), sizeof(char *), strcmp_ptr);
        *ret = TAKE_PTR(l);
        return 0;
}

/* Every "type": "X" in a CNI config, in order, comma separated. A plain scan: a conflist is JSON and
 * "type" means a plugin type at every level the CNI spec defines (ipam's type is one too). */
static char *cni_types(const char *text) {
        cleanup_strv char **types = NULL;
        char *joined = NULL;
        size_t size = 0;
        FILE *f;

        for (const char *p = text; (p = strstr(p, "\"type\""));) {
                cleanup_free char *v = NULL;
                size_t n;

                p += strlen("\"type\"");
                p += strspn(p, " \t\r\n");
                if (*p != ':')
                        continue;
                p++;
                p += strspn(p, " \t\r\n");
                if (*p != '"')
                        continue;
                n = strcspn(++p, "\"");
                v = strndup(p, n);
                if (!v || strv_extend_unique(&types, v) < 0)
                        return NULL;
        }
        f = open_memstream(&joined, &size);
        if (!f)
                return NULL;
        STRV_FOREACH(t, types)
                fprintf(f, "%s%s", t == types ? "" : ",", *t);
        if (fclose(f) != 0)
                return mfree(joined);
        return joined;
}

static const char *const cni_dirs[] = { "/etc/cni/net.d", "/var/lib/rancher/k3s/agent/etc/cni/net.d" };

/* The runtime uses the first configuration in name order: its plugins are the node's CNI. */
static int detect_cni(int root_fd, Detection *d) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(cni_dirs); i++) {
                cleanup_strv char **names = NULL;

                r = dir_list(root_fd, cni_dirs[i], "*.conf*", &names);
                STRV_FOREACH(n, names) {
                        cleanup_free char *path = strprintf("%s/%s", cni_dirs[i], *n), *text = NULL, *types = NULL;

                        if (!path)
                                return -ENOMEM;
                        if (r < 0 || startswith(*n, "00-node-reset-rescue") || !(text = node_read(root_fd, path)))
                                continue;
                        types = cni_types(text);
                        if (!types)
                                return -ENOMEM;
                        r = evidence_add(&d->cni.evidence, path, "plugins %s", isempty(types) ? "(none)" : types);
                        if (r >= 0 && !d->cni.value && !isempty(types)) {
                                r = finding_set(&d->cni, types);
                                if (r >= 0 && !(d->cni_config = strdup(path)))
                                        r = -ENOMEM;
                        }
                }
        }
        return r;
}

/* kube-proxy's "mode:" in a KubeProxyConfiguration (a top-level key); "" is iptables on Linux. */
static const char *proxy_mode_in(const char *text, char **buf) {
        const char *doc = strstr(text, "KubeProxyConfiguration"), *p;

        if (!doc)
                return NULL;
        for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (startswith(p, "mode:")) {
                        *buf = text_value_after(p, "mode:");
                        return *buf && !startswith(*buf, "#") ? *buf : "iptables";
                }
        return "iptables";
}

static int proxy_mode_from_file(int root_fd, const char *path, Detection *d) {
        cleanup_free char *text = node_read(root_fd, path), *buf = NULL;
        const char *mode;
        int r;

        if (!text || !(mode = proxy_mode_in(text, &buf)))
                return 0;
        r = evidence_add(&d->kube_proxy_mode.evidence, path, "KubeProxyConfiguration mode %s", mode);
        return r < 0 ? r : finding_set(&d->kube_proxy_mode, mode);
}

/* The ConfigMap kubelet projected into the kube-proxy pod is on disk on every kubeadm-built node. */
static int proxy_mode_from_pods(int root_fd, Detection *d) {
        cleanup_strv char **pods = NULL;
        int r;

        r = dir_list(root_fd, "/var/lib/kubelet/pods", "*", &pods);
        STRV_FOREACH(p, pods) {
                cleanup_free char *path = strprintf(
                        "/var/lib/kubelet/pods/%s/volumes/kubernetes.io~configmap/kube-proxy/config.conf", *p);

                if (!path)
                        return -ENOMEM;
                if (r >= 0)
                        r = proxy_mode_from_file(root_fd, path, d);
        }
        return r;
}

static int proxy_mode_from_k3s(int root_fd, const char *path, Detection *d) {
        cleanup_free char *text = node_read(root_fd, path), *mode = NULL;
        int r;

        if (!text || !(mode = text_value_after(text, "proxy-mode=")))
                return 0;
        r = evidence_add(&d->kube_proxy_mode.evidence, path, "kube-proxy-arg proxy-mode=%s", mode);
        return r < 0 ? r : finding_set(&d->kube_proxy_mode, mode);
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

/* kubeadm's ClusterConfiguration with "etcd:" → "external:": this node runs no etcd of its own. */
static bool kubeadm_etcd_external(const char *text) {
        const char *p = strstr(text, "\netcd:\n");

        if (!p)
                return false;
        for (p += strlen("\netcd:\n"); *p == ' '; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
                const char *w = p + strspn(p, " ");

                if (startswith(w, "external:"))
                        return true;
        }
        return false;
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
        cleanup_free char *cfg = node_read(root_fd, "/etc/kubernetes/kubeadm-config.yaml");
        int r = 0;

        if (pod &&
            (r = etcd_mark(d, "/etc/kubernetes/manifests/etcd.yaml", "static-pod", "kubeadm's etcd static pod")) >= 0)
                r = etcd_data_dir(d, "/etc/kubernetes/manifests/etcd.yaml", pod, true);
        if (r >= 0 && env &&
            (r = etcd_mark(d, "/etc/etcd.env", "systemd", "etcd run by systemd (kubespray, kubekey)")) >= 0)
                r = etcd_data_dir(d, "/etc/etcd.env", env, false);
        if (r >= 0 && !env && node_exists(root_fd, "/etc/systemd/system/etcd.service"))
                r = etcd_mark(d, "/etc/systemd/system/etcd.service", "systemd", "an etcd unit");
        if (r >= 0 && cfg && kubeadm_etcd_external(cfg))
                r = etcd_mark(d, "/etc/kubernetes/kubeadm-config.yaml", "external",
                              "ClusterConfiguration names an external etcd");
        if (r >= 0 && node_exists(root_fd, "/var/lib/rancher/k3s/server/db/etcd"))
                r = etcd_mark(d, "/var/lib/rancher/k3s/server/db/etcd", "embedded", "k3s's embedded etcd");
        if (r >= 0 && node_exists(root_fd, "/var/lib/rancher/rke2/server/db/etcd"))
                r = etcd_mark(d, "/var/lib/rancher/rke2/server/db/etcd", "embedded", "rke2's embedded etcd");
        if (r >= 0 && !d->etcd.value && !d->etcd.evidence)
                r = finding_set(&d->etcd, "none");
        finding_settle(&d->etcd);
        return r;
}

/* A symlinked /var/lib/kubelet (a data disk): the node path it resolves to, inside the root. */
static int detect_kubelet_dir(int root_fd, Detection *d) {
        char self[64], host[PATH_MAX], root[PATH_MAX];
        struct stat st;
        const char *rest;
        ssize_t n;
        int fd;

        if (fstatat(root_fd, "var/lib/kubelet", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(st.st_mode))
                return 0;
        fd = fileio_open_resolve_beneath(root_fd, "/var/lib/kubelet", O_PATH | O_DIRECTORY);
        if (fd < 0)
                return 0;
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        n = readlink(self, host, sizeof host - 1);
        (void) close_nointr(fd);
        snprintf(self, sizeof self, "/proc/self/fd/%d", root_fd);
        if (n <= 0)
                return 0;
        host[n] = 0;
        n = readlink(self, root, sizeof root - 1);
        if (n <= 0)
                return 0;
        root[n] = 0;
        rest = streq(root, "/") ? host : startswith(host, root);
        if (!rest || rest[0] != '/')
                return 0;
        d->kubelet_dir_target = strdup(rest);
        return d->kubelet_dir_target ? 0 : -ENOMEM;
}

static int server_of(int root_fd, const char *path, char **ret) {
        Kubeconfig *k = NULL;
        cleanup_free char *err = NULL;

        *ret = NULL;
        if (kubeconfig_load(root_fd, path, &k, &err) < 0)
                return 0;
        *ret = k->server ? strdup(k->server) : NULL;
        kubeconfig_free(k);
        return 0;
}

/* This cluster's server, and the files of /root/.kube that point at it (and only those). */
static int detect_kubeconfigs(int root_fd, Detection *d) {
        cleanup_strv char **names = NULL;
        cleanup_free char *admin = NULL;
        int r;

        (void) server_of(root_fd, "/etc/kubernetes/kubelet.conf", &d->cluster_server);
        (void) server_of(root_fd, "/etc/kubernetes/admin.conf", &admin);
        if (!d->cluster_server)
                d->cluster_server = TAKE_PTR(admin);
        if (!d->cluster_server)
                return 0;
        r = dir_list(root_fd, "/root/.kube", "*", &names);
        STRV_FOREACH(n, names) {
                cleanup_free char *path = strprintf("/root/.kube/%s", *n), *server = NULL;

                if (!path)
                        return -ENOMEM;
                if (r < 0)
                        break;
                (void) server_of(root_fd, path, &server);
                if (server && (streq(server, d->cluster_server) || streq_ptr(server, admin)))
                        r = strv_extend(&d->root_kubeconfigs, path);
        }
        return r;
}

int detect_node(int root_fd, bool live, Detection *ret) {
        Detection d = {};
        int r;

        r = detect_installer(root_fd, &d);
        if (r >= 0)
                r = detect_runtime(root_fd, &d);
        if (r >= 0)
                r = detect_cni(root_fd, &d);
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
        finding_done(&d->kube_proxy_mode);
        finding_done(&d->etcd);
        d->runtime_endpoint = mfree(d->runtime_endpoint);
        d->etcd_data_dir = mfree(d->etcd_data_dir);
        d->kubelet_dir_target = mfree(d->kubelet_dir_target);
        d->cluster_server = mfree(d->cluster_server);
        d->root_kubeconfigs = strv_free(d->root_kubeconfigs);
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
