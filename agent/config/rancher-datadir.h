/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where k3s or rke2 keeps its state (its data dir), read from the node's files beneath a root fd. */
#pragma once

#include <stdbool.h>

#include "agent/config/installers.h"

/* An installer's data directory as found on the node. */
typedef struct RancherDataDir {
        char *dir;      /* the node path it resolves to beneath the root (symlinks followed inside it) */
        char *spelled;  /* as configured, or the default when nothing names another */
        char *evidence; /* "PATH: what said it", NULL for the default */
        char *refused;  /* why a configured value cannot be used (relative, several joined by
                         * data-dir+, characters no manifest line carries): dir is then the default,
                         * and nothing may be reset on its word */
        bool link;      /* spelled is itself a symlink, to dir */
} RancherDataDir;

void rancher_data_dir_done(RancherDataDir *d);

/* The data directory of info's program as k3s resolves it (cmd/k3s/main.go findDataDir; rke2 reuses
 * k3s's CLI): $K3S_DATA_DIR/$RKE2_DATA_DIR from the env files the units read and the units'
 * Environment=/EnvironmentFile= (drop-ins included), then --data-dir/-d in the unit's ExecStart= (a
 * drop-in's wins, systemctl edit), then "data-dir" in the config file and its config.yaml.d drop-ins
 * (lexical order, later wins, "data-dir+" appends; the file --config/-c or *_CONFIG_FILE names, when
 * one does). Then resolved beneath the root: a data dir that is a symlink (/var/lib/rancher/k3s ->
 * /data/k3s) is where it leads. 0 and *ret; -EINVAL for a row without a data directory; -ENOMEM. */
int rancher_data_dir_find(int root_fd, const InstallerInfo *info, RancherDataDir *ret);

/* The same for "k3s" or "rke2", only the resolved dir: 1 when it is not the default, 0 when it is
 * (a refused value leaves the default), -EINVAL for another program, -ENOMEM. *ret_evidence may be
 * NULL for the default. */
int rancher_data_dir(int root_fd, const char *program, char **ret_dir, char **ret_evidence);
