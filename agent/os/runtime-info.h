/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the pods phase learns about a container runtime from outside the CRI: which process listens on
 * its socket, the config it runs with, its CNI conf dir and state dir, its systemd unit. Read-only. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef enum RuntimeKind {
        RUNTIME_UNKNOWN,
        RUNTIME_CONTAINERD, /* containerd, and the one embedded in k3s/rke2 */
        RUNTIME_CRIO,
        RUNTIME_CRI_DOCKERD,
} RuntimeKind;

typedef struct RuntimeInfo {
        RuntimeKind kind;
        pid_t pid;          /* listens on the socket; 0 when none was found */
        char *exe;          /* its executable's file name */
        char *config;       /* the config file it was started with, or the default one */
        char *unit;         /* its systemd unit (from its cgroup), or the usual name */
        char *cni_conf_dir; /* where the rescue conflist goes */
        char *state_dir;    /* containerd's state (rootfs, shm, sockets) */
        char *root_dir;     /* containerd's persistent root */
} RuntimeInfo;

/* The sockets probed when neither --cri-endpoint nor the manifest names one, in order: containerd,
 * CRI-O, cri-dockerd, k3s/rke2, k3s's cri-dockerd. NULL-terminated. */
extern const char *const pods_known_sockets[];

void runtime_info_done(RuntimeInfo *i);
/* Fill in everything that can be found; runtime_name is Version's answer (may be NULL). Never fails
 * for lack of information: defaults stand in. -ENOMEM only. */
int runtime_info_probe(const char *socket_path, const char *runtime_name, RuntimeInfo *ret);
const char *runtime_kind_to_string(RuntimeKind k);
/* The TOML tables (NULL-terminated) where a containerd config file keeps its CRI plugin's CNI settings
 * (conf_dir), chosen by the file's top-level "version" as containerd itself does: 3 (containerd 2.x)
 * splits the CRI plugin and the runtime half holds them, plugins.'io.containerd.cri.v1.runtime'.cni;
 * 2, plugins."io.containerd.grpc.v1.cri".cni; 1 or none, plugins.cri.cni. containerd 2.x migrates a
 * version 2 file as it loads it, so the file's version decides, not the binary's. */
const char *const *runtime_containerd_cni_tables(const char *config_text);
