/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Docker as kubelet's runtime, read from what kubelet runs with: dockershim inside kubelet 1.20-1.23
 * (no remote runtime flag, --container-runtime=docker, kubeadm's criSocket naming dockershim) and k3s
 * with docker (its embedded cri-dockerd). The endpoint files detect.c reads come first; this answers
 * only when none of them names an endpoint. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define DOCKERSHIM_ENDPOINT "unix:///var/run/dockershim.sock"
/* k3s >= 1.24 with docker: its embedded cri-dockerd (k3s pkg/agent/cridockerd). */
#define K3S_CRI_DOCKERD_ENDPOINT "unix:///run/k3s/cri-dockerd/cri-dockerd.sock"

typedef enum KubeletRuntime {
        KUBELET_RUNTIME_UNSAID, /* the flags name no runtime */
        KUBELET_RUNTIME_DOCKER, /* --container-runtime=docker, or an endpoint that is dockershim's */
        KUBELET_RUNTIME_REMOTE, /* --container-runtime=remote, or another endpoint */
} KubeletRuntime;

/* What kubelet's command line says of its runtime (argv[0] is the program): the last
 * --container-runtime-endpoint decides when there is one, else the last --container-runtime. */
KubeletRuntime kubelet_runtime_of_argv(char *const *argv);

/* Is this NAME=VALUE pair of an environment file a KUBELET_*ARGS variable (KUBELET_KUBEADM_ARGS of
 * kubeadm-flags.env, KUBELET_EXTRA_ARGS of /etc/default/kubelet, KUBELET_ARGS and the like), one
 * kubeadm's drop-in and the distributions' units expand unbraced into kubelet's argv, so split at
 * blanks? */
bool kubelet_env_is_args(const char *pair);

/* kubelet's words from an environment file its unit reads: every KUBELET_*ARGS value split at blanks
 * (systemd expands an unbraced $VAR so), after "kubelet". -EBADMSG for a file that is no environment
 * file, -ENOMEM. */
int kubelet_env_argv(const char *text, size_t size, char ***ret);

/* k3s's command line asks for Docker: "--docker" (or --docker=true) after the program. */
bool k3s_argv_docker(char *const *argv);

/* kubelet's --docker-endpoint default (pkg/kubelet/config/flags.go, dockershim). */
#define DOCKER_ENDPOINT_DEFAULT "unix:///var/run/docker.sock"

typedef struct KubeletDocker {
        const char *endpoint; /* static: DOCKERSHIM_ENDPOINT or K3S_CRI_DOCKERD_ENDPOINT; NULL when
                               * Docker is not kubelet's runtime (or the evidence disagrees) */
        /* Docker's Engine API as kubelet reaches it: its --docker-endpoint, else the first unix socket of
         * daemon.json's "hosts", else DOCKER_ENDPOINT_DEFAULT. Set with endpoint. */
        char *docker_endpoint;
        char **evidence; /* "PATH: what it says", for and against */
} KubeletDocker;

/* Look beneath root_fd: kubelet's unit and its drop-ins, its environment files, kubeadm's
 * configuration, k3s's configuration and unit, Docker's daemon.json. docker_installed: Docker's daemon
 * is on the node (the absence of a remote runtime flag means dockershim only then). -ENOMEM only. */
int kubelet_docker_detect(int root_fd, bool docker_installed, KubeletDocker *ret);
void kubelet_docker_done(KubeletDocker *k);
