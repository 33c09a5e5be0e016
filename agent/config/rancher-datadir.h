/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where k3s or rke2 keeps its state (its data dir), read from the node's files beneath a root fd. */
#pragma once

#include <stddef.h>

#include "string-util.h"

#define K3S_DEFAULT_DATA_DIR "/var/lib/rancher/k3s"
#define RKE2_DEFAULT_DATA_DIR "/var/lib/rancher/rke2"

/* The data directory of program ("k3s" or "rke2") as k3s resolves it (cmd/k3s/main.go findDataDir;
 * rke2 reuses k3s's CLI): $K3S_DATA_DIR/$RKE2_DATA_DIR from the env files the unit reads, then
 * --data-dir/-d in the unit's ExecStart=, then "data-dir" in the config file and its config.yaml.d
 * drop-ins (lexical order, later wins, "data-dir+" appends; the file --config/-c or *_CONFIG_FILE
 * names, when one does). 1 with a directory other than the default in *ret_dir and what said it in
 * *ret_evidence; 0 with the default in *ret_dir (*ret_evidence NULL); -EINVAL for another program;
 * -ENOMEM. A value that is no absolute, normalised path is ignored. */
int rancher_data_dir(int root_fd, const char *program, char **ret_dir, char **ret_evidence);

/* The node name k3s's or rke2's agent registers this node as (k3s pkg/agent/config: GetHostnameAndIPs,
 * lower-cased by kubelet's rules afterwards), when its files say one: --node-name in the unit's
 * ExecStart= wins over "node-name" in the config file and its config.yaml.d drop-ins (the last
 * wins), which wins over $K3S_NODE_NAME ($RKE2_NODE_NAME) in the env files the unit reads, as
 * configfilearg puts the file's flags before the command line's and urfave/cli takes the variable
 * as the flag's default; --with-node-id appends "-" and /etc/rancher/node/id. 1 with the name and
 * what said it, 0 when neither program is installed or none says one (the host name then), -ENXIO
 * for --with-node-id without its id file, -ENOMEM. */
#define RANCHER_NODE_ID "/etc/rancher/node/id"
int rancher_node_name(int root_fd, char **ret_name, char **ret_evidence);

/* /var/lib/rancher/k3s or /var/lib/rancher/rke2; NULL for another program. Inline: the manifest
 * parser's profile rebase needs no file reading. */
static inline const char *rancher_default_data_dir(const char *program) {
        return streq_ptr(program, "k3s")    ? K3S_DEFAULT_DATA_DIR
               : streq_ptr(program, "rke2") ? RKE2_DEFAULT_DATA_DIR
                                            : NULL;
}
