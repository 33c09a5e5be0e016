/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This cluster's kubeconfigs in the users' homes of a tree (kubekey v4 removes $SUDO_USER's). */
#pragma once

#include <stddef.h>

#include "agent/config/kubeconfig-prune.h"

/* This cluster as its own kubeconfigs name it (/etc/kubernetes/kubelet.conf and admin.conf, k3s's and
 * rke2's admin kubeconfigs): each source's server and CA, read beneath root_fd. *ret_n is 0 when none
 * names one. -ENOMEM only. */
int home_cluster_ids(int root_fd, KubeClusterId **ret, size_t *ret_n);
void home_cluster_ids_free(KubeClusterId *ids, size_t n);

/* This cluster's server in *ret_server (the first source's; NULL when none names it), and the ~/.kube
 * files of every home in the tree's /etc/passwd (root's included, each resolved beneath root_fd) that
 * hold an entry of this cluster (kubeconfig-prune.h): only of it, or beside another cluster's. A file
 * that does not parse is not listed. A home on a file system that does not answer is skipped: it is
 * logged, and remote_fs_unanswered() names it for the verdict. -ENOMEM only. */
int home_kubeconfigs_find(int root_fd, char **ret_server, char ***ret_paths);
