/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* etcd's command line as this node's files give it: a static pod's container command and args (read
 * with libyaml), /etc/etcd.env's ETCD_* assignments (read as systemd's EnvironmentFile= does), or
 * etcd's own YAML configuration file (k3s's and rke2's server/db/etcd/config). */
#pragma once

#include <stddef.h>

/* The argument vector of the container named container (or whose command[0] is that program) in a
 * static pod manifest: command followed by args. 1 found, 0 no such container, -EBADMSG for a file
 * that is no YAML pod spec, -EOPNOTSUPP without libyaml, -ENOMEM. */
int pod_container_argv(const char *text, size_t size, const char *container, char ***ret);

/* An etcd environment file as the command line etcd reads from it: "etcd --data-dir=X" for
 * ETCD_DATA_DIR=X, as etcd maps its ETCD_* variables to flags. -EBADMSG (line in *ret_line) for a
 * file that is no environment file. */
int etcd_env_argv(const char *text, size_t size, char ***ret, unsigned *ret_line);

/* etcd's ETCD_* variables among "KEY=value" pairs appended to *argv as the flags etcd maps them to. */
int etcd_env_pairs_argv(char **pairs, char ***argv);

/* etcd's YAML configuration file (--config-file; k3s and rke2 write one beside the data, see
 * etcd-owner.h) as the command line it stands for: "etcd --name=X --data-dir=Y ...", the
 * client-transport-security keys as --cert-file & co., peer-transport-security's as --peer-*, a
 * list joined by commas. -EBADMSG for a file that is no such mapping, -EOPNOTSUPP without libyaml. */
int etcd_config_argv(const char *text, size_t size, char ***ret);
