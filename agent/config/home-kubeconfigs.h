/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* This cluster's kubeconfigs in the users' homes of a tree (kubekey v4 removes $SUDO_USER's). */
#pragma once

/* This cluster (server and CA, from /etc/kubernetes/kubelet.conf or admin.conf, or k3s's and rke2's
 * admin kubeconfigs) in *ret_server (the first source's server; NULL when none names it), and the
 * ~/.kube files of every home in the tree's /etc/passwd (root's included, each resolved beneath
 * root_fd) that name the same server and, when the cluster's source names one, the same CA. Another
 * cluster's kubeconfig and one that does not parse are not listed. -ENOMEM only. */
int home_kubeconfigs_find(int root_fd, char **ret_server, char ***ret_paths);
