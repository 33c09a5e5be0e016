/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/detect.c and agent/config/profile.c: detection on fixture trees shaped like each
 * installer's node (kubeadm, kubespray, kubekey, k3s, rke2, a symlinked /var/lib/kubelet, co-hosted
 * Docker, ambiguous and empty ones), the shim namespace rule, and the profiles it selects. */

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config/detect.h"
#include "agent/config/manifest.h"
#include "agent/config/profile.h"
#include "agent/config/cluster-cidrs.h"
#include "agent/config/rancher-datadir.h"
#include "agent/phases/network/network-links.h"
#include "netreset/link.h"
#include "tests/support/profiles.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static char tree[256];

/* Write node path "path" beneath the fixture tree with text, making its parents. */
static void put(const char *path, const char *text) {
        char cmd[PATH_MAX * 2], full[PATH_MAX];
        FILE *f;

        snprintf(full, sizeof full, "%s%s", tree, path);
        snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", full);
        assert_int_equal(system(cmd), 0);
        f = fopen(full, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

/* The host path of node path "path" in the fixture tree (a static buffer). */
static const char *tree_path(const char *path) {
        static char full[PATH_MAX];

        snprintf(full, sizeof full, "%s%s", tree, path);
        return full;
}

static void mkdir_p(const char *path) {
        char cmd[PATH_MAX * 2];

        snprintf(cmd, sizeof cmd, "mkdir -p '%s%s'", tree, path);
        assert_int_equal(system(cmd), 0);
}

static int setup_tree(void **state) {
        snprintf(tree, sizeof tree, "/tmp/test-detect.XXXXXX");
        assert_non_null(mkdtemp(tree));
        return 0;
}

static int teardown_tree(void **state) {
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
        assert_int_equal(system(cmd), 0);
        return 0;
}

static void detect(Detection *d) {
        int fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(detect_node(fd, false, d), 0);
        close(fd);
}

static bool evidence_has(char **l, const char *fragment) {
        STRV_FOREACH(s, l)
                if (strstr(*s, fragment))
                        return true;
        return false;
}

static const char kubelet_conf[] =
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: k\n"
        "contexts:\n- context:\n    cluster: k\n    user: u\n  name: c\ncurrent-context: c\n"
        "users:\n- name: u\n  user:\n    token: t\n";

/* A kubeadm worker: package-installed kubelet, containerd, flannel, kube-proxy in IPVS mode. */
static void kubeadm_worker(void) {
        put("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "[Service]\n");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock\"\n");
        put("/var/lib/kubelet/config.yaml", "kind: KubeletConfiguration\n"
                                            "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n");
        put("/etc/kubernetes/kubelet.conf", kubelet_conf);
        put("/etc/containerd/config.toml", "version = 2\n");
        put("/etc/cni/net.d/10-flannel.conflist",
            "{\"name\":\"cbr0\",\"plugins\":[{\"type\": \"flannel\",\"delegate\":{}},{\"type\":\"portmap\"}]}");
        put("/var/lib/kubelet/pods/0a/volumes/kubernetes.io~configmap/kube-proxy/config.conf",
            "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: \"ipvs\"\n");
}

static void test_kubeadm(void **state) {
        Detection d;
        const char *why;

        kubeadm_worker();
        put("/root/.kube/config", kubelet_conf);
        put("/root/.kube/other-cluster",
            "apiVersion: v1\nclusters:\n- cluster:\n    server: https://192.0.2.1:6443\n  name: o\n"
            "contexts:\n- context:\n    cluster: o\n    user: u\n  name: c\ncurrent-context: c\nusers:\n- name: u\n  "
            "user:\n    token: t\n");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_KUBEADM);
        assert_false(d.installer_ambiguous);
        assert_true(evidence_has(d.installer_evidence, "10-kubeadm.conf"));
        assert_string_equal(d.runtime.value, "containerd");
        assert_string_equal(d.runtime_endpoint, "unix:///run/containerd/containerd.sock");
        assert_false(d.docker_cohosted);
        assert_string_equal(d.cni.value, "flannel,portmap");
        assert_string_equal(d.kube_proxy_mode.value, "ipvs");
        assert_string_equal(d.etcd.value, "none");
        assert_null(d.kubelet_dir_target);
        assert_string_equal(d.cluster_server, "https://10.0.0.1:6443");
        /* Only the kubeconfig of this cluster is this reset's; the other cluster's stays. */
        assert_int_equal(strv_length(d.home_kubeconfigs), 1);
        assert_string_equal(d.home_kubeconfigs[0], "/root/.kube/config");
        assert_string_equal(profile_for_detection(&d, &why), "kubeadm");
        detection_done(&d);
}

static void test_kubeadm_control_plane(void **state) {
        Detection d;

        kubeadm_worker();
        put("/etc/kubernetes/manifests/etcd.yaml", "spec:\n  containers:\n  - command:\n    - etcd\n"
                                                   "    - --data-dir=/data/etcd\n");
        detect(&d);
        assert_string_equal(d.etcd.value, "static-pod");
        assert_string_equal(d.etcd_data_dir, "/data/etcd");
        detection_done(&d);
}

static void test_external_etcd(void **state) {
        Detection d;

        kubeadm_worker();
        put("/etc/kubernetes/kubeadm-config.yaml",
            "kind: ClusterConfiguration\netcd:\n  external:\n"
            "    endpoints:\n    - https://10.0.0.9:2379\nnetworking:\n  podSubnet: 10.244.0.0/16\n---\n"
            "kind: KubeProxyConfiguration\nmode: ipvs\n");
        detect(&d);
        assert_string_equal(d.etcd.value, "external");
        assert_string_equal(d.kube_proxy_mode.value, "ipvs");
        detection_done(&d);
}

/* kubespray: kubelet.env, kubelet-config.yaml, etcd through systemd, NodeLocal DNS. */
static void test_kubespray(void **state) {
        Detection d;
        const char *why;

        put("/etc/kubernetes/kubelet.env",
            "KUBELET_ARGS=\"--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock\"\n");
        put("/etc/kubernetes/kubelet-config.yaml",
            "containerRuntimeEndpoint: unix:///var/run/containerd/containerd.sock\n");
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"\"\n");
        put("/etc/kubernetes/kubelet.conf", kubelet_conf);
        put("/etc/etcd.env", "ETCD_DATA_DIR=/var/lib/etcd\nETCD_NAME=etcd1\n");
        put("/etc/systemd/resolved.conf.d/kubespray.conf", "[Resolve]\nDNS=169.254.25.10\n");
        mkdir_p("/usr/local/bin/kubernetes-scripts");
        put("/etc/cni/net.d/10-calico.conflist", "{\"name\":\"k8s-pod-network\",\"plugins\":[{\"type\":\"calico\","
                                                 "\"ipam\":{\"type\":\"calico-ipam\"}},{\"type\":\"bandwidth\"}]}");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_KUBESPRAY);
        assert_false(d.installer_ambiguous);
        assert_true(evidence_has(d.installer_evidence, "kubelet.env"));
        /* kubeadm's own flags file is there too: kubespray drives kubeadm, no ambiguity. */
        assert_true(evidence_has(d.installer_evidence, "kubeadm-flags.env"));
        assert_string_equal(d.runtime.value, "containerd");
        assert_string_equal(d.cni.value, "calico,calico-ipam,bandwidth");
        assert_string_equal(d.etcd.value, "systemd");
        assert_null(d.etcd_data_dir);
        assert_null(d.kube_proxy_mode.value);
        assert_false(d.kube_proxy_mode.ambiguous);
        assert_string_equal(profile_for_detection(&d, &why), "kubespray");
        assert_string_equal(why, "detected");
        detection_done(&d);
}

/* kubekey v3 with cri-dockerd: Docker is kubelet's runtime, so it is not "co-hosted". */
static void test_kubekey_docker(void **state) {
        Detection d;

        mkdir_p("/usr/local/bin/kube-scripts");
        put("/etc/systemd/system/backup-etcd.timer", "[Timer]\n");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/cri-dockerd.sock\"\n");
        put("/etc/systemd/system/cri-dockerd.service", "[Service]\n");
        mkdir_p("/var/lib/docker");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_KUBEKEY);
        assert_string_equal(d.runtime.value, "docker");
        assert_false(d.docker_cohosted);
        detection_done(&d);
}

/* kubeadm + containerd, and a Docker that runs other workloads: Docker is co-hosted, left alone. */
static void test_cohosted_docker(void **state) {
        Detection d;

        kubeadm_worker();
        put("/usr/bin/dockerd", "");
        mkdir_p("/var/lib/docker");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_true(d.docker_cohosted);
        assert_true(evidence_has(d.runtime.evidence, "not kubelet's runtime"));
        detection_done(&d);
}

static void test_k3s(void **state) {
        Detection d;

        put("/usr/local/bin/k3s", "");
        put("/etc/systemd/system/k3s.service", "[Service]\n");
        put("/etc/systemd/system/k3s.service.env", "K3S_TOKEN=secret\n");
        put("/etc/rancher/k3s/config.yaml", "kube-proxy-arg:\n- proxy-mode=ipvs\n");
        mkdir_p("/var/lib/rancher/k3s/server/db/etcd");
        put("/var/lib/rancher/k3s/agent/etc/cni/net.d/10-flannel.conflist",
            "{\"name\":\"cbr0\",\"plugins\":[{\"type\":\"flannel\"}]}");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_K3S);
        assert_string_equal(d.runtime.value, "containerd");
        assert_true(evidence_has(d.runtime.evidence, "embedded containerd"));
        assert_string_equal(d.kube_proxy_mode.value, "ipvs");
        assert_string_equal(d.etcd.value, "embedded");
        assert_string_equal(d.cni.value, "flannel");
        detection_done(&d);
}

static void test_rke2(void **state) {
        Detection d;
        const char *why;

        put("/usr/local/bin/rke2", "");
        put("/usr/local/lib/systemd/system/rke2-server.service", "[Service]\n");
        put("/etc/rancher/rke2/config.yaml", "token: x\n");
        mkdir_p("/var/lib/rancher/rke2/agent/containerd");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_RKE2);
        assert_string_equal(d.runtime.value, "containerd");
        assert_string_equal(profile_for_detection(&d, &why), "rke2");
        detection_done(&d);
}

static void assert_data_dir(const char *program, int expect, const char *dir, const char *evidence) {
        cleanup_free char *got = NULL, *why = NULL;
        int fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(rancher_data_dir(fd, program, &got, &why), expect);
        close(fd);
        assert_string_equal(got, dir);
        if (evidence)
                assert_non_null(strstr(why, evidence));
        else
                assert_null(why);
}

/* k3s's order (cmd/k3s/main.go findDataDir): the env var, then the flag, then the config files, the
 * drop-ins (only .yaml/.yml) in lexical order after the file, the last one winning. */
static void test_k3s_data_dir(void **state) {
        Detection d;

        assert_data_dir("k3s", 0, "/var/lib/rancher/k3s", NULL);
        put("/etc/rancher/k3s/config.yaml", "data-dir: /data/a\n");
        assert_data_dir("k3s", 1, "/data/a", "config.yaml: data-dir /data/a");
        put("/etc/rancher/k3s/config.yaml.d/20-b.yml", "data-dir: /data/b\n");
        put("/etc/rancher/k3s/config.yaml.d/10-c.yaml", "data-dir: /data/c\n");
        put("/etc/rancher/k3s/config.yaml.d/30-d.conf", "data-dir: /data/d\n");
        put("/etc/rancher/k3s/config.yaml.d/40-broken.yaml", "data-dir: [\n");
        assert_data_dir("k3s", 1, "/data/b", "20-b.yml: data-dir /data/b");
        put("/etc/systemd/system/k3s.service",
            "[Service]\nExecStart=/usr/local/bin/k3s server \\\n  -d /data/flag//\n");
        assert_data_dir("k3s", 1, "/data/flag", "k3s.service: ExecStart= --data-dir /data/flag");
        put("/etc/default/k3s", "# K3S_DATA_DIR=/data/commented\nK3S_DATA_DIR=/data/env\n");
        assert_data_dir("k3s", 1, "/data/env", "/etc/default/k3s: K3S_DATA_DIR /data/env");
        /* The default moves nothing; a guarded-looking path is the data dir all the same (only the
         * entries k3s makes beneath it go, never the directory). */
        put("/etc/default/k3s", "K3S_DATA_DIR=/var/lib/rancher/k3s\n");
        assert_data_dir("k3s", 0, "/var/lib/rancher/k3s", NULL);
        put("/etc/default/k3s", "K3S_DATA_DIR=/mnt/ssd\n");
        assert_data_dir("k3s", 1, "/mnt/ssd", "K3S_DATA_DIR /mnt/ssd");
        put("/usr/local/bin/k3s", "");
        put("/etc/default/k3s", "K3S_DATA_DIR=/srv/k3s\n");
        detect(&d);
        assert_string_equal(d.data_dir[INSTALLER_K3S], "/srv/k3s");
        assert_null(d.data_dir[INSTALLER_RKE2]);
        assert_null(d.data_dir_refused);
        assert_true(evidence_has(d.installer_evidence, "K3S_DATA_DIR /srv/k3s"));
        detection_done(&d);
        /* A relative one is refused, never replaced by the default in silence. */
        put("/etc/default/k3s", "K3S_DATA_DIR=k3s-data\n");
        detect(&d);
        assert_null(d.data_dir[INSTALLER_K3S]);
        assert_non_null(d.data_dir_refused);
        assert_non_null(strstr(d.data_dir_refused, "not an absolute path"));
        detection_done(&d);
        assert_int_equal(unlink(tree_path("/etc/default/k3s")), 0);
        /* rke2: its config file, the drop-in's "data-dir+" appending as k3s's FindString does: two
         * directories joined by a comma are no directory a line can name, refused. */
        put("/etc/rancher/rke2/config.yaml", "data-dir: /data/rke2\n");
        assert_data_dir("rke2", 1, "/data/rke2", "rke2/config.yaml: data-dir /data/rke2");
        put("/etc/rancher/rke2/config.yaml.d/50-more.yaml", "data-dir+: x\n");
        assert_data_dir("rke2", 0, "/var/lib/rancher/rke2", NULL);
}

/* systemctl edit k3s: a drop-in's ExecStart= (after the empty one that resets it) or Environment=
 * moves the data dir; a later drop-in by name wins, /etc's masks /usr/lib's of the same name. */
static void test_k3s_data_dir_dropin(void **state) {
        put("/etc/systemd/system/k3s.service", "[Service]\nExecStart=/usr/local/bin/k3s server\n");
        assert_data_dir("k3s", 0, "/var/lib/rancher/k3s", NULL);
        put("/etc/systemd/system/k3s.service.d/override.conf",
            "[Service]\nExecStart=\nExecStart=/usr/local/bin/k3s server --data-dir=/data/dropin\n");
        assert_data_dir("k3s", 1, "/data/dropin", "k3s.service.d/override.conf): ExecStart= --data-dir /data/dropin");
        put("/usr/lib/systemd/system/k3s.service.d/zz-env.conf", "[Service]\nEnvironment=K3S_DATA_DIR=/data/env\n");
        assert_data_dir("k3s", 1, "/data/env", "K3S_DATA_DIR /data/env");
        put("/etc/systemd/system/k3s.service.d/zz-env.conf", "[Service]\nEnvironment=OTHER=1\n");
        assert_data_dir("k3s", 1, "/data/dropin", "ExecStart= --data-dir /data/dropin");
}

/* /var/lib/rancher/k3s -> /data/k3s: the data dir is where the link leads, inside the tree, and the
 * link is named. */
static void test_k3s_data_dir_symlink(void **state) {
        char link[PATH_MAX];
        Detection d;

        put("/usr/local/bin/k3s", "");
        put("/data/k3s/server/token", "token");
        mkdir_p("/var/lib/rancher");
        snprintf(link, sizeof link, "%s/var/lib/rancher/k3s", tree);
        assert_int_equal(symlink("/data/k3s", link), 0);
        assert_data_dir("k3s", 1, "/data/k3s", NULL);
        detect(&d);
        assert_string_equal(d.data_dir[INSTALLER_K3S], "/data/k3s");
        assert_string_equal(d.data_dir_link[INSTALLER_K3S], "/var/lib/rancher/k3s");
        assert_true(evidence_has(d.installer_evidence, "/var/lib/rancher/k3s: a symlink to /data/k3s"));
        detection_done(&d);
}

/* /var/lib/kubelet on a data disk through a symlink: the target is found, inside the tree. */
static void test_symlinked_kubelet(void **state) {
        char link[PATH_MAX];
        Detection d;

        put("/data/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"\"\n");
        mkdir_p("/var/lib");
        snprintf(link, sizeof link, "%s/var/lib/kubelet", tree);
        /* An absolute link, as the data-disk trick writes it: resolved inside the tree, not the host. */
        assert_int_equal(symlink("/data/kubelet", link), 0);
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_KUBEADM);
        assert_string_equal(d.kubelet_dir_target, "/data/kubelet");
        detection_done(&d);
}

/* Two installers' own files: said, not guessed; the conservative profile. */
static void test_ambiguous(void **state) {
        Detection d;
        const char *why;

        put("/usr/local/bin/k3s", "");
        put("/etc/kubernetes/kubelet.env", "");
        put("/etc/containerd/config.toml", "");
        put("/etc/crio/crio.conf", "");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_NONE);
        assert_true(d.installer_ambiguous);
        assert_true(strv_contains(d.installer_candidates, "k3s"));
        assert_true(strv_contains(d.installer_candidates, "kubespray"));
        assert_string_equal(profile_for_detection(&d, &why), "kubeadm");
        assert_non_null(strstr(why, "--profile"));
        detection_done(&d);
}

/* kubelet's endpoints disagree: no runtime is chosen, the evidence shows both. */
static void test_runtime_ambiguous(void **state) {
        Detection d;

        put("/var/lib/kubelet/config.yaml", "containerRuntimeEndpoint: unix:///run/containerd/containerd.sock\n");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/crio/crio.sock\"\n");
        detect(&d);
        assert_null(d.runtime.value);
        assert_true(d.runtime.ambiguous);
        assert_int_equal(strv_length(d.runtime.evidence), 2);
        detection_done(&d);
}

/* A commented-out cri-dockerd endpoint above the real one (the node moved to containerd) is no
 * endpoint: the runtime is containerd, and the Docker next to it is co-hosted, left alone. */
static void test_runtime_commented_yaml(void **state) {
        Detection d;

        put("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", "[Service]\n");
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--pod-infra-container-image=pause:3.9\"\n");
        put("/var/lib/kubelet/config.yaml",
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
            "# containerRuntimeEndpoint: unix:///var/run/cri-dockerd.sock\n"
            "containerRuntimeEndpoint: \"unix:///run/containerd/containerd.sock\" # moved\n"
            "authentication:\n  containerRuntimeEndpoint: unix:///run/cri-dockerd.sock\n");
        put("/usr/bin/dockerd", "");
        mkdir_p("/var/lib/docker");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_string_equal(d.runtime_endpoint, "unix:///run/containerd/containerd.sock");
        assert_true(d.docker_cohosted);
        assert_false(evidence_has(d.runtime.evidence, "cri-dockerd"));
        detection_done(&d);
}

/* Environment files as systemd reads them, KUBELET_*ARGS as kubelet's argument vector: comments are
 * not assignments, the last assignment wins, "--flag value" is a flag too, other variables are not
 * kubelet's command line. */
static void test_runtime_env_file(void **state) {
        Detection d;

        put("/var/lib/kubelet/kubeadm-flags.env",
            "# KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/cri-dockerd.sock\"\n"
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/crio/crio.sock\"\n"
            "KUBELET_KUBEADM_ARGS=\"--cgroup-driver=systemd --container-runtime-endpoint "
            "unix:///run/containerd/containerd.sock\"\n"
            "DOCKER_ARGS=--container-runtime-endpoint=unix:///var/run/cri-dockerd.sock\n");
        put("/etc/default/kubelet", "KUBELET_EXTRA_ARGS='--node-ip=10.0.0.5 "
                                    "--container-runtime-endpoint=unix:///run/containerd/containerd.sock'\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_false(d.runtime.ambiguous);
        assert_string_equal(d.runtime_endpoint, "unix:///run/containerd/containerd.sock");
        assert_true(evidence_has(d.runtime.evidence, "(KUBELET_KUBEADM_ARGS)"));
        assert_true(evidence_has(d.runtime.evidence, "/etc/default/kubelet: kubelet's endpoint"));
        assert_false(evidence_has(d.runtime.evidence, "crio"));
        assert_false(evidence_has(d.runtime.evidence, "cri-dockerd"));
        detection_done(&d);
}

/* A file that does not parse is evidence of nothing, and the evidence says so. */
static void test_runtime_unparsable(void **state) {
        Detection d;

        put("/var/lib/kubelet/config.yaml", "kind: KubeletConfiguration\n"
                                            "containerRuntimeEndpoint: \"unix:///var/run/cri-dockerd.sock\n"
                                            "x: [\n");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///var/run/cri-dockerd.sock\n");
        put("/etc/kubernetes/kubelet-config.yaml", "just a scalar\n");
        put("/etc/containerd/config.toml", "version = 2\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_null(d.runtime_endpoint);
        assert_true(evidence_has(d.runtime.evidence, "/var/lib/kubelet/config.yaml: malformed YAML at line "));
        assert_true(
                evidence_has(d.runtime.evidence, "/var/lib/kubelet/kubeadm-flags.env: not an environment file (line"));
        assert_true(evidence_has(d.runtime.evidence, "/etc/kubernetes/kubelet-config.yaml: not a YAML mapping"));
        assert_true(evidence_has(d.runtime.evidence, "containerd is installed"));
        detection_done(&d);
}

/* kube-proxy's mode from YAML: the KubeProxyConfiguration document's own top-level key, k3s's
 * kube-proxy-arg list; a commented-out argument or another document's "mode" is no evidence. */
static void test_proxy_mode_yaml(void **state) {
        Detection d;

        put("/usr/local/bin/k3s", "");
        put("/etc/rancher/k3s/config.yaml", "kube-proxy-arg:\n# - proxy-mode=ipvs\n- metrics-bind-address=0.0.0.0\n"
                                            "- proxy-mode=nftables\n");
        detect(&d);
        assert_string_equal(d.kube_proxy_mode.value, "nftables");
        detection_done(&d);

        put("/etc/rancher/k3s/config.yaml", "# kube-proxy-arg: proxy-mode=ipvs\nwrite-kubeconfig-mode: 644\n");
        put("/etc/kubernetes/kubeadm-config.yaml", "kind: ClusterConfiguration\nmode: ipvs\n---\n"
                                                   "kind: KubeProxyConfiguration\n# mode: ipvs\nipvs:\n  mode: x\n");
        detect(&d);
        assert_string_equal(d.kube_proxy_mode.value, "iptables");
        detection_done(&d);

        put("/etc/kubernetes/kubeadm-config.yaml", "kind: KubeProxyConfiguration\nmode: \"ipvs\n");
        put("/etc/rancher/k3s/config.yaml", "kube-proxy-arg: proxy-mode=ipvs\n");
        detect(&d);
        assert_string_equal(d.kube_proxy_mode.value, "ipvs");
        assert_true(evidence_has(d.kube_proxy_mode.evidence, "kubeadm-config.yaml: malformed YAML at line "));
        detection_done(&d);
}

static const char calico_conflist[] =
        "{\"name\":\"k8s-pod-network\",\"plugins\":[{\"type\":\"calico\",\"ipam\":{\"type\":\"calico-ipam\"}}]}";
static const char cilium_conflist[] = "{\"name\":\"cilium\",\"plugins\":[{\"type\":\"cilium-cni\"}]}";

/* Profile text of cni-detected for d. */
static char *cni_profile(Detection *d) {
        ProfileSettings s = { .detection = d };
        const char *name;
        char *text = NULL, *err = NULL;

        profile_configure(&s);
        assert_int_equal(profile_text("cni-detected", &name, &text, &err), 0);
        profile_configure(NULL);
        assert_null(err);
        return text;
}

/* libcni loads only .conf, .conflist and .json names: a stale backup of cilium's list that sorts
 * first is no configuration, calico's is the node's CNI. */
static void test_cni_stale_backup(void **state) {
        cleanup_free char *text = NULL;
        Detection d;

        kubeadm_worker();
        put("/etc/cni/net.d/05-cilium.conflist.cilium_bak", cilium_conflist);
        put("/etc/cni/net.d/06-cilium.conflist~", cilium_conflist);
        put("/etc/cni/net.d/10-calico.conflist", calico_conflist);
        put("/etc/cni/net.d/10-flannel.conflist", "{\"name\":\"cbr0\",\"plugins\":[{\"type\":\"flannel\"}]}");
        detect(&d);
        assert_string_equal(d.cni.value, "calico,calico-ipam");
        assert_string_equal(d.cni_config, "/etc/cni/net.d/10-calico.conflist");
        assert_false(evidence_has(d.cni.evidence, "cilium"));
        text = cni_profile(&d);
        assert_non_null(strstr(text, "include profile:cni-calico"));
        assert_null(strstr(text, "cni-cilium"));
        assert_null(strstr(text, "cni-flannel"));
        detection_done(&d);
}

/* The runtime's own conf dir is the one it loads: containerd's conf_dir, CRI-O's network_dir (a
 * drop-in overriding the file) come before /etc/cni/net.d. */
static void test_cni_runtime_dir(void **state) {
        Detection d;

        kubeadm_worker();
        put("/etc/containerd/config.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
                                           "  bin_dir = \"/opt/cni/bin\"\n  conf_dir = \"/etc/cni/custom\"\n");
        put("/etc/cni/net.d/05-cilium.conflist", cilium_conflist);
        put("/etc/cni/custom/10-calico.conflist", calico_conflist);
        detect(&d);
        assert_string_equal(d.cni.value, "calico,calico-ipam");
        assert_string_equal(d.cni_config, "/etc/cni/custom/10-calico.conflist");
        detection_done(&d);

        put("/var/lib/kubelet/config.yaml", "containerRuntimeEndpoint: unix:///var/run/crio/crio.sock\n");
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"\"\n");
        put("/etc/crio/crio.conf", "[crio.network]\nnetwork_dir = \"/etc/cni/custom\"\n");
        put("/etc/crio/crio.conf.d/10-net.conf", "[crio.network]\nnetwork_dir = \"/etc/cni/crio\"\n");
        put("/etc/cni/crio/20-flannel.conflist", "{\"name\":\"cbr0\",\"plugins\":[{\"type\":\"flannel\"}]}");
        detect(&d);
        assert_string_equal(d.runtime.value, "crio");
        assert_string_equal(d.cni.value, "flannel");
        detection_done(&d);
}

/* A file libcni cannot parse is skipped, and said: the next valid one decides. */
static void test_cni_invalid_first(void **state) {
        Detection d;

        put("/etc/cni/net.d/01-cilium.conflist", "{\"name\":\"cilium\",\"plugins\":[{\"type\":\"cilium-cni\"}]");
        put("/etc/cni/net.d/02-cilium.conf", cilium_conflist); /* a list in a .conf: no top-level type */
        put("/etc/cni/net.d/03-cilium.conflist", "{\"plugins\":[{\"type\":\"cilium-cni\"}]}"); /* no name */
        put("/etc/cni/net.d/04-cilium.json", "// \"type\": \"cilium-cni\"\n{}");
        put("/etc/cni/net.d/10-calico.conflist", calico_conflist);
        /* The pods phase's rescue list left by a killed run, under any of its prefixes, is no CNI's. */
        put("/etc/cni/net.d/!node-reset-rescue.conflist",
            "{\"cniVersion\":\"0.4.0\",\"name\":\"node-reset-rescue\",\"plugins\":[{\"type\":\"loopback\"}]}");
        put("/etc/cni/net.d/0-node-reset-rescue.conflist",
            "{\"cniVersion\":\"0.4.0\",\"name\":\"node-reset-rescue\",\"plugins\":[{\"type\":\"loopback\"}]}");
        detect(&d);
        assert_string_equal(d.cni.value, "calico,calico-ipam");
        assert_true(evidence_has(d.cni.evidence, "01-cilium.conflist: not valid JSON: skipped"));
        assert_true(evidence_has(d.cni.evidence, "02-cilium.conf: a plugin has no type: skipped"));
        assert_true(evidence_has(d.cni.evidence, "03-cilium.conflist: the list has no name"));
        assert_true(evidence_has(d.cni.evidence, "04-cilium.json: not valid JSON"));
        detection_done(&d);
}

/* The ranges of the pods are those of the configuration the runtime loads, never of a second file of
 * its directory (a macvlan network on the host's LAN), plus kubelet's --pod-cidr and kube-proxy's
 * clusterCIDR (the ConfigMap kubelet projects; another kind's clusterCIDR is not read). */
static void test_cluster_cidrs_loaded_conf_only(void **state) {
        static const char *const want[][2] = {
                { "10.60.0.0/24", "/var/lib/kubelet/kubeadm-flags.env: --pod-cidr" },
                { "10.50.0.0/16", "/var/lib/kubelet/pods/p1/volumes/kubernetes.io~configmap/kube-proxy/config.conf: "
                                  "clusterCIDR" },
                { "10.244.0.0/16", "/etc/cni/net.d/10-bridge.conflist: ipam subnet" },
        };
        CLEANUP(cluster_cidrs_done) ClusterCidrs c = {};
        Detection d;
        int fd;

        put("/etc/cni/net.d/10-bridge.conflist",
            "{\"cniVersion\":\"0.4.0\",\"name\":\"k8s\",\"plugins\":[{\"type\":\"bridge\",\"ipam\":{\"type\":"
            "\"host-local\",\"ranges\":[[{\"subnet\":\"10.244.0.0/16\"}]]}}]}");
        put("/etc/cni/net.d/20-lan.conf", "{\"cniVersion\":\"0.4.0\",\"name\":\"lan\",\"type\":\"macvlan\",\"ipam\":"
                                          "{\"type\":\"host-local\",\"subnet\":\"192.168.77.0/24\"}}");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--node-ip=192.0.2.5 --pod-cidr=10.60.0.0/24\"\n");
        put("/var/lib/kubelet/pods/p1/volumes/kubernetes.io~configmap/kube-proxy/config.conf",
            "kind: KubeProxyConfiguration\nclusterCIDR: 10.50.0.0/16\n");
        put("/var/lib/kubelet/pods/p2/volumes/kubernetes.io~configmap/kube-proxy/config.conf",
            "kind: SomethingElse\nclusterCIDR: 192.168.78.0/24\n");
        detect(&d);
        assert_string_equal(d.cni_config, "/etc/cni/net.d/10-bridge.conflist");
        assert_string_equal(d.cni_loaded, "/etc/cni/net.d/10-bridge.conflist");
        fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(cluster_cidrs_read(fd, d.cni_loaded, &c), 0);
        assert_int_equal(c.n, ELEMENTSOF(want));
        for (size_t i = 0; i < c.n; i++) {
                assert_int_equal(c.items[i].kind, CIDR_POD);
                assert_string_equal(c.items[i].cidr, want[i][0]);
                assert_string_equal(c.items[i].source, want[i][1]);
        }
        cluster_cidrs_done(&c);
        /* No configuration loaded: no CNI range, whatever files the directory holds. */
        assert_int_equal(cluster_cidrs_read(fd, NULL, &c), 0);
        assert_int_equal(c.n, 2);
        close(fd);
        detection_done(&d);
}

static const char bridge_conflist[] =
        "{\"cniVersion\":\"0.4.0\",\"name\":\"k8s\",\"plugins\":[{\"type\":\"bridge\",\"ipam\":{\"type\":"
        "\"host-local\",\"ranges\":[[{\"subnet\":\"10.244.0.0/16\"}]]}}]}";

/* The pod ranges read from d's loaded configuration: how many, and whether cidr is one of them. */
static size_t pod_ranges(const Detection *d, const char *cidr, bool *ret_has) {
        CLEANUP(cluster_cidrs_done) ClusterCidrs c = {};
        int fd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(cluster_cidrs_read(fd, d->cni_loaded, &c), 0);
        close(fd);
        *ret_has = false;
        for (size_t i = 0; i < c.n; i++) {
                assert_int_equal(c.items[i].kind, CIDR_POD);
                *ret_has = *ret_has || streq(c.items[i].cidr, cidr);
        }
        return c.n;
}

/* The pod ranges are those of the configuration the runtime actually loads. containerd's CRI plugin
 * (go-cni loadFromConfDir) fails on a first file by name that does not load and loads none: no CNI
 * file's range is then a pod range, kubelet's and kube-proxy's still are; the CNI is still named by the
 * first file that loads. CRI-O's ocicni skips that file and loads the next: its range is the pods'. */
static void test_cni_ranges_runtime_loads(void **state) {
        Detection d;
        bool has;

        kubeadm_worker();
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint="
                                                  "unix:///run/containerd/containerd.sock --pod-cidr=10.60.0.0/24\"\n");
        put("/var/lib/kubelet/pods/0a/volumes/kubernetes.io~configmap/kube-proxy/config.conf",
            "kind: KubeProxyConfiguration\nclusterCIDR: 10.50.0.0/16\n");
        put("/etc/cni/net.d/05-cilium.conflist", "{\"name\":\"cilium\",\"plugins\":[{\"type\":\"cilium-cni\"}]");
        put("/etc/cni/net.d/07-bridge.conflist", bridge_conflist);
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_string_equal(d.cni.value, "bridge,host-local");
        assert_string_equal(d.cni_config, "/etc/cni/net.d/07-bridge.conflist");
        assert_null(d.cni_loaded);
        assert_true(evidence_has(d.cni.evidence, "05-cilium.conflist: not valid JSON: skipped in naming the CNI; "
                                                 "containerd's CRI plugin stops at it and loads no CNI configuration"));
        assert_true(evidence_has(d.cni.evidence, "07-bridge.conflist: plugins bridge,host-local (the first "
                                                 "configuration that loads: the node's CNI; not the runtime's, "
                                                 "which stops at /etc/cni/net.d/05-cilium.conflist"));
        assert_int_equal(pod_ranges(&d, "10.244.0.0/16", &has), 2);
        assert_false(has);
        assert_int_equal(pod_ranges(&d, "10.60.0.0/24", &has), 2);
        assert_true(has);
        assert_int_equal(pod_ranges(&d, "10.50.0.0/16", &has), 2);
        assert_true(has);
        detection_done(&d);

        put("/var/lib/kubelet/config.yaml", "containerRuntimeEndpoint: unix:///var/run/crio/crio.sock\n");
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--pod-cidr=10.60.0.0/24\"\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "crio");
        assert_string_equal(d.cni.value, "bridge,host-local");
        assert_string_equal(d.cni_loaded, "/etc/cni/net.d/07-bridge.conflist");
        assert_true(evidence_has(d.cni.evidence, "05-cilium.conflist: not valid JSON: skipped, as the runtime's"));
        assert_true(evidence_has(d.cni.evidence, "07-bridge.conflist: plugins bridge,host-local (the first "
                                                 "configuration the runtime loads)"));
        assert_int_equal(pod_ranges(&d, "10.244.0.0/16", &has), 3);
        assert_true(has);
        detection_done(&d);
}

/* No configuration left (a rerun after /etc/cni/net.d went): the CNI's own state says which. */
static void test_cni_from_state(void **state) {
        cleanup_free char *text = NULL;
        Detection d;

        kubeadm_worker();
        assert_int_equal(unlink(tree_path("/etc/cni/net.d/10-flannel.conflist")), 0);
        put("/etc/cni/net.d/10-calico.conflist.bak", calico_conflist);
        put("/var/lib/calico/nodename", "node-1\n");
        put("/var/lib/cni/networks/k8s-pod-network/10.0.0.5", "x\n");
        detect(&d);
        assert_string_equal(d.cni.value, "calico");
        assert_null(d.cni_config);
        assert_true(evidence_has(d.cni.evidence, "/var/lib/calico: calico's state directory exists"));
        text = cni_profile(&d);
        assert_non_null(strstr(text, "include profile:cni-calico"));
        assert_non_null(strstr(text, "No CNI configuration"));
        detection_done(&d);
}

/* cilium's BPF pins in the tree are its evidence too. */
static void test_cni_from_pins(void **state) {
        cleanup_free char *text = NULL;
        Detection d;

        put("/sys/fs/bpf/tc/globals/cilium_calls_00042", "");
        detect(&d);
        assert_string_equal(d.cni.value, "cilium");
        assert_true(evidence_has(d.cni.evidence, "/sys/fs/bpf/tc/globals/cilium_calls_00042: cilium's BPF pins"));
        text = cni_profile(&d);
        assert_non_null(strstr(text, "include profile:cni-cilium"));
        detection_done(&d);
}

/* Two CNIs' state: ambiguous, said, and no CNI's fragment; calico's with flannel's is canal. */
static void test_cni_state_ambiguous(void **state) {
        cleanup_free char *text = NULL;
        Detection d;

        put("/var/lib/calico/nodename", "node-1\n");
        put("/run/flannel/subnet.env", "FLANNEL_NETWORK=10.244.0.0/16\n");
        detect(&d);
        assert_string_equal(d.cni.value, "calico,flannel");
        text = cni_profile(&d);
        assert_non_null(strstr(text, "include profile:cni-calico"));
        assert_non_null(strstr(text, "include profile:cni-flannel"));
        detection_done(&d);
        text = mfree(text);

        put("/var/run/cilium/state/x", "");
        detect(&d);
        assert_null(d.cni.value);
        assert_true(d.cni.ambiguous);
        assert_true(evidence_has(d.cni.evidence, "cilium's state directory"));
        assert_true(evidence_has(d.cni.evidence, "calico's state directory"));
        text = cni_profile(&d);
        assert_null(strstr(text, "include "));
        assert_non_null(strstr(text, "ambiguous"));
        detection_done(&d);
}

static void test_nothing(void **state) {
        Detection d;
        const char *why;

        detect(&d);
        assert_int_equal(d.installer, INSTALLER_NONE);
        assert_false(d.installer_ambiguous);
        assert_null(d.runtime.value);
        assert_null(d.cni.value);
        assert_string_equal(d.etcd.value, "none");
        assert_string_equal(profile_for_detection(&d, &why), "kubeadm");
        detection_done(&d);
}

static void test_shim_cmdline(void **state) {
        static const char k8s[] = "/usr/bin/containerd-shim-runc-v2\0-namespace\0k8s.io\0-id\0abc\0-address\0/run/"
                                  "containerd/containerd.sock";
        static const char moby[] = "/usr/bin/containerd-shim-runc-v2\0-namespace\0moby\0-id\0abc";
        static const char eq[] = "/usr/bin/containerd-shim\0--namespace=k8s.io";
        static const char none[] = "/usr/bin/containerd-shim-runc-v2\0-id\0k8s.io";

        assert_true(detect_shim_cmdline_is_kubernetes(k8s, sizeof k8s));
        assert_false(detect_shim_cmdline_is_kubernetes(moby, sizeof moby));
        assert_true(detect_shim_cmdline_is_kubernetes(eq, sizeof eq));
        assert_false(detect_shim_cmdline_is_kubernetes(none, sizeof none));
        assert_false(detect_shim_cmdline_is_kubernetes("", 0));
        /* A cut-off command line ending in "-namespace" is not k8s.io's. */
        assert_false(detect_shim_cmdline_is_kubernetes("x\0-namespace", 12));
}

/* Every selectable profile parses; none removes the runtime's state in the default scope. */
static void test_profiles_parse(void **state) {
        static const char *const names[] = { "kubeadm", "kubespray", "kubekey", "k3s", "rke2" };

        profile_configure(NULL);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                Manifest *m = test_parse_profile(names[i], 0);

                assert_true(m->n_entries > 10);
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/lib/containerd"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/etc/containerd"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/opt/cni/bin"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/backups/kube_etcd"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/etc/rancher/node"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/root/.kube"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_UNIT, "docker.service"));
                assert_false(test_manifest_has_line(m, DIRECTIVE_UNIT, "containerd.service"));
                assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/lib/containerd"));
                assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/backups/kube_etcd"));
                assert_true(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/openebs"));
                manifest_free(m);
        }
        manifest_free(test_parse_profile("all", 0));
        manifest_free(test_parse_profile("nonesuch", -EINVAL));
}

/* Calico's WireGuard devices (kind wireguard) are the cni profile's, by name; the host's own WireGuard
 * device and a lookalike name are not. */
static void test_profile_wireguard_links(void **state) {
        LinkInfo links[] = {
                { .ifindex = 2, .name = "wireguard.cali", .kind = "wireguard" },
                { .ifindex = 3, .name = "wg-v6.cali", .kind = "wireguard" },
                { .ifindex = 4, .name = "wg0", .kind = "wireguard" },
                { .ifindex = 5, .name = "wireguard.calico", .kind = "wireguard" },
        };
        LinkTable t = { .links = links, .n = ELEMENTSOF(links) };
        Manifest *m;

        profile_configure(NULL);
        m = test_parse_profile("cni", 0);
        assert_non_null(network_link_selected_by(m, &t, &links[0]));
        assert_string_equal(network_link_selected_by(m, &t, &links[0])->args[0], "wireguard.cali");
        assert_string_equal(network_link_selected_by(m, &t, &links[1])->args[0], "wg-v6.cali");
        assert_null(network_link_selected_by(m, &t, &links[2]));
        assert_null(network_link_selected_by(m, &t, &links[3]));
        manifest_free(m);
}

static void test_profile_runtime_scope(void **state) {
        Detection d = {};
        ProfileSettings s = { .detection = &d, .with_runtime = true };
        Manifest *m;

        /* --with-runtime without a known runtime: refused, with the way out. */
        profile_configure(&s);
        manifest_free(test_parse_profile("kubeadm", -EINVAL));

        d.runtime.value = (char *) "containerd";
        m = test_parse_profile("kubeadm", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/lib/containerd"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_UNIT, "containerd.service"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_PROTECT, "/var/lib/containerd"));
        /* Docker is not kubelet's runtime here: never stopped. */
        assert_false(test_manifest_has_line(m, DIRECTIVE_UNIT, "docker.service"));
        manifest_free(m);

        s.runtime = "docker";
        m = test_parse_profile("kubespray", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_UNIT, "cri-dockerd.service"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/usr/local/bin/cri-dockerd"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_UNIT, "containerd.service"));
        manifest_free(m);

        s.runtime = NULL;
        d.installer = INSTALLER_K3S;
        m = test_parse_profile("k3s", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/var/lib/rancher/k3s/agent/containerd"));
        manifest_free(m);
        profile_configure(NULL);
}

static void test_profile_detected(void **state) {
        char *kube[] = { (char *) "/root/.kube/config", NULL };
        Detection d = { .kubelet_dir_target = (char *) "/data/kubelet",
                        .etcd_data_dir = (char *) "/srv/etcd",
                        .home_kubeconfigs = kube };
        ProfileSettings s = { .detection = &d };
        Manifest *m;

        profile_configure(&s);
        m = test_parse_profile("kubeadm", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_UNMOUNT, "/data/kubelet/*"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_EMPTY, "/data/kubelet"));
        assert_true(test_manifest_has_line(m, DIRECTIVE_EMPTY, "/srv/etcd"));
        /* Only this cluster's entries go from a user's kubeconfig, never the file on a guess. */
        assert_true(test_manifest_has_line(m, DIRECTIVE_PRUNE_KUBECONFIG, "/root/.kube/config"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_REMOVE, "/root/.kube/config"));
        manifest_free(m);

        /* A link to a system path, or a name needing quotes, is never turned into a line. */
        d.kubelet_dir_target = (char *) "/usr";
        d.etcd_data_dir = (char *) "/srv/e\ntcd";
        m = test_parse_profile("kubeadm", 0);
        assert_false(test_manifest_has_line(m, DIRECTIVE_EMPTY, "/usr"));
        assert_false(test_manifest_has_line(m, DIRECTIVE_UNMOUNT, "/usr/*"));
        manifest_free(m);
        profile_configure(NULL);
}

/* A kubeadm 1.20 worker joined with --cri-socket /var/run/dockershim.sock: kubeadm-flags.env names no
 * runtime (only --network-plugin), Docker is installed: Docker is kubelet's runtime, through
 * dockershim, not "co-hosted"; the detected profile asks its Engine API for the pods. */
static void test_dockershim(void **state) {
        Manifest *m = NULL;
        Detection d;

        put("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
            "[Service]\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBEADM_ARGS\n");
        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.2\"\n");
        put("/var/lib/kubelet/config.yaml", "kind: KubeletConfiguration\ncgroupDriver: cgroupfs\n");
        put("/usr/bin/dockerd", "");
        detect(&d);
        assert_string_equal(d.runtime.value, "docker");
        assert_string_equal(d.runtime_endpoint, "unix:///var/run/dockershim.sock");
        assert_false(d.docker_cohosted);
        assert_true(evidence_has(d.runtime.evidence, "dockershim"));
        profile_configure(&(ProfileSettings) { .detection = &d });
        m = test_parse_profile("kubeadm", 0);
        /* kubelet's default: where it asks Docker (a symlink resolved within the tree). */
        assert_true(test_manifest_has_line(m, DIRECTIVE_DOCKER_ENDPOINT, "unix:///var/run/docker.sock"));
        manifest_free(m);
        profile_configure(NULL);
        detection_done(&d);

        /* Docker listening elsewhere (daemon.json's hosts): there. */
        put("/etc/docker/daemon.json", "{\"hosts\": [\"tcp://0.0.0.0:2375\", \"unix:///run/dockerd/engine.sock\"]}");
        detect(&d);
        assert_string_equal(d.docker_endpoint, "unix:///run/dockerd/engine.sock");
        assert_true(evidence_has(d.runtime.evidence, "hosts"));
        detection_done(&d);
        /* kubelet's own --docker-endpoint wins: it is the one kubelet asks. */
        put("/etc/default/kubelet", "KUBELET_EXTRA_ARGS=\"--docker-endpoint=unix:///run/kubelet-docker.sock\"\n");
        detect(&d);
        assert_string_equal(d.docker_endpoint, "unix:///run/kubelet-docker.sock");
        profile_configure(&(ProfileSettings) { .detection = &d });
        m = test_parse_profile("kubeadm", 0);
        assert_true(test_manifest_has_line(m, DIRECTIVE_DOCKER_ENDPOINT, "unix:///run/kubelet-docker.sock"));
        manifest_free(m);
        profile_configure(NULL);
        detection_done(&d);
}

/* Debian's docker.io puts dockerd in /usr/sbin (docker-ce in /usr/bin), and before Docker first ran
 * neither /etc/docker nor /var/lib/docker exists: that dockerd alone says Docker is installed. */
static void test_dockershim_debian(void **state) {
        Detection d;

        put("/var/lib/kubelet/kubeadm-flags.env",
            "KUBELET_KUBEADM_ARGS=\"--network-plugin=cni --pod-infra-container-image=k8s.gcr.io/pause:3.2\"\n");
        put("/usr/sbin/dockerd", "");
        detect(&d);
        assert_string_equal(d.runtime.value, "docker");
        assert_string_equal(d.runtime_endpoint, "unix:///var/run/dockershim.sock");
        detection_done(&d);

        put("/etc/containerd/config.toml", "version = 2\n");
        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--container-runtime=remote "
                                                  "--container-runtime-endpoint=/run/containerd/containerd.sock\"\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_true(d.docker_cohosted);
        detection_done(&d);
}

/* The same flags file without Docker on the node is no evidence of dockershim; a remote runtime in
 * kubelet's unit, or kubeadm's criSocket naming containerd, says it is not dockershim. */
static void test_dockershim_not(void **state) {
        Detection d;

        put("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--network-plugin=cni\"\n");
        put("/etc/containerd/config.toml", "version = 2\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        detection_done(&d);

        put("/usr/bin/dockerd", "");
        put("/etc/kubernetes/kubeadm-config.yaml", "apiVersion: kubeadm.k8s.io/v1beta2\nkind: InitConfiguration\n"
                                                   "nodeRegistration:\n  criSocket: /run/containerd/containerd.sock\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        assert_true(d.docker_cohosted);
        assert_true(evidence_has(d.runtime.evidence, "not dockershim"));
        detection_done(&d);
}

/* kubeadm's criSocket, or --container-runtime=docker in /etc/default/kubelet, names dockershim. */
static void test_dockershim_said(void **state) {
        Detection d;

        put("/etc/kubernetes/kubeadm-config.yaml", "kind: ClusterConfiguration\n---\nkind: JoinConfiguration\n"
                                                   "nodeRegistration:\n  criSocket: /var/run/dockershim.sock\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "docker");
        detection_done(&d);
        (void) unlink(tree_path("/etc/kubernetes/kubeadm-config.yaml"));
        put("/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--container-runtime=docker\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "docker");
        assert_string_equal(d.runtime_endpoint, "unix:///var/run/dockershim.sock");
        detection_done(&d);
}

/* k3s with docker: true (a config.yaml.d drop-in), or --docker in its unit: its cri-dockerd. */
static void test_k3s_docker(void **state) {
        Detection d;

        put("/usr/local/bin/k3s", "");
        put("/etc/rancher/k3s/config.yaml", "write-kubeconfig-mode: \"0644\"\n");
        put("/etc/rancher/k3s/config.yaml.d/50-docker.yaml", "docker: true\n");
        detect(&d);
        assert_int_equal(d.installer, INSTALLER_K3S);
        assert_string_equal(d.runtime.value, "docker");
        assert_string_equal(d.runtime_endpoint, "unix:///run/k3s/cri-dockerd/cri-dockerd.sock");
        detection_done(&d);
        (void) unlink(tree_path("/etc/rancher/k3s/config.yaml.d/50-docker.yaml"));
        detect(&d);
        assert_string_equal(d.runtime.value, "containerd");
        detection_done(&d);
        put("/etc/systemd/system/k3s.service",
            "[Service]\nExecStart=/usr/local/bin/k3s \\\n    server \\\n    '--docker' \\\n");
        detect(&d);
        assert_string_equal(d.runtime.value, "docker");
        assert_true(evidence_has(d.runtime.evidence, "--docker"));
        detection_done(&d);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void) {
        const struct CMUnitTest tests[] = {
                T(test_kubeadm),
                T(test_kubeadm_control_plane),
                T(test_external_etcd),
                T(test_kubespray),
                T(test_kubekey_docker),
                T(test_cohosted_docker),
                T(test_dockershim),
                T(test_dockershim_debian),
                T(test_dockershim_not),
                T(test_dockershim_said),
                T(test_k3s_docker),
                T(test_k3s),
                T(test_rke2),
                T(test_k3s_data_dir),
                T(test_k3s_data_dir_dropin),
                T(test_k3s_data_dir_symlink),
                T(test_symlinked_kubelet),
                T(test_ambiguous),
                T(test_runtime_ambiguous),
                T(test_runtime_commented_yaml),
                T(test_runtime_env_file),
                T(test_runtime_unparsable),
                T(test_proxy_mode_yaml),
                T(test_cni_stale_backup),
                T(test_cni_runtime_dir),
                T(test_cni_invalid_first),
                T(test_cluster_cidrs_loaded_conf_only),
                T(test_cni_ranges_runtime_loads),
                T(test_cni_from_state),
                T(test_cni_from_pins),
                T(test_cni_state_ambiguous),
                T(test_nothing),
                cmocka_unit_test(test_shim_cmdline),
                cmocka_unit_test(test_profiles_parse),
                cmocka_unit_test(test_profile_wireguard_links),
                cmocka_unit_test(test_profile_runtime_scope),
                cmocka_unit_test(test_profile_detected),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
