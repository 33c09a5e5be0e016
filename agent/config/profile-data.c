/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The built-in profiles, copied into the binary by the assembler (as embedded.c does for the default
 * manifest) so that a copied binary works alone. The Makefile makes this object depend on the files. */

#include "agent/config/profile.h"

#define EMBED(sym, file)                               \
        __asm__(".section .rodata\n"                   \
                ".balign 16\n"                         \
                ".type " #sym ", @object\n" #sym ":\n" \
                ".incbin \"" file "\"\n"               \
                ".byte 0\n"                            \
                ".size " #sym ", . - " #sym "\n"       \
                ".previous\n");                        \
        extern const char sym[]

EMBED(node_reset_profile_kubeadm, "manifests/profiles/kubeadm.conf");
EMBED(node_reset_profile_kubespray, "manifests/profiles/kubespray.conf");
EMBED(node_reset_profile_kubekey, "manifests/profiles/kubekey.conf");
EMBED(node_reset_profile_k3s, "manifests/profiles/k3s.conf");
EMBED(node_reset_profile_rke2, "manifests/profiles/rke2.conf");
EMBED(node_reset_profile_safety, "manifests/profiles/safety.conf");
EMBED(node_reset_profile_cni, "manifests/profiles/cni.conf");
EMBED(node_reset_profile_cni_cilium, "manifests/profiles/cni-cilium.conf");
EMBED(node_reset_profile_cni_calico, "manifests/profiles/cni-calico.conf");
EMBED(node_reset_profile_cni_flannel, "manifests/profiles/cni-flannel.conf");
EMBED(node_reset_profile_cni_kube_router, "manifests/profiles/cni-kube-router.conf");
EMBED(node_reset_profile_cni_weave, "manifests/profiles/cni-weave.conf");
EMBED(node_reset_profile_kube_proxy, "manifests/profiles/kube-proxy.conf");
EMBED(node_reset_profile_runtime_keep, "manifests/profiles/runtime-keep.conf");
EMBED(node_reset_profile_runtime_keep_base, "manifests/profiles/runtime-keep-base.conf");
EMBED(node_reset_profile_runtime_containerd, "manifests/profiles/runtime-containerd.conf");
EMBED(node_reset_profile_runtime_crio, "manifests/profiles/runtime-crio.conf");
EMBED(node_reset_profile_runtime_docker, "manifests/profiles/runtime-docker.conf");
EMBED(node_reset_profile_runtime_k3s, "manifests/profiles/runtime-k3s.conf");
EMBED(node_reset_profile_runtime_rke2, "manifests/profiles/runtime-rke2.conf");

const ProfileText profile_texts[] = {
        { "kubeadm", node_reset_profile_kubeadm },
        { "kubespray", node_reset_profile_kubespray },
        { "kubekey", node_reset_profile_kubekey },
        { "k3s", node_reset_profile_k3s },
        { "rke2", node_reset_profile_rke2 },
        { "safety", node_reset_profile_safety },
        { "cni", node_reset_profile_cni },
        { "cni-cilium", node_reset_profile_cni_cilium },
        { "cni-calico", node_reset_profile_cni_calico },
        { "cni-flannel", node_reset_profile_cni_flannel },
        { "cni-kube-router", node_reset_profile_cni_kube_router },
        { "cni-weave", node_reset_profile_cni_weave },
        { "kube-proxy", node_reset_profile_kube_proxy },
        { "runtime-keep", node_reset_profile_runtime_keep },
        { "runtime-keep-base", node_reset_profile_runtime_keep_base },
        { "runtime-containerd", node_reset_profile_runtime_containerd },
        { "runtime-crio", node_reset_profile_runtime_crio },
        { "runtime-docker", node_reset_profile_runtime_docker },
        { "runtime-k3s", node_reset_profile_runtime_k3s },
        { "runtime-rke2", node_reset_profile_runtime_rke2 },
        {},
};
