/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The detectors detect_node() runs in turn, one file each (agent/config/detect/); each adds to *d. */
#pragma once

#include <stdbool.h>

#include "agent/config/detect.h"

int detect_installer(int root_fd, Detection *d);
int detect_rancher_data_dirs(int root_fd, Detection *d);
int detect_runtime(int root_fd, Detection *d);
/* live: the running system's links too. */
int detect_cni(int root_fd, bool live, Detection *d);
/* live: the running kernel's IPVS services too. */
int detect_kube_proxy(int root_fd, bool live, Detection *d);
int detect_etcd(int root_fd, Detection *d);
int detect_kubelet_dir(int root_fd, Detection *d);
int detect_kubeconfigs(int root_fd, Detection *d);
