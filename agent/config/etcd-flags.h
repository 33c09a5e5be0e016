/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* etcd's command line as this node's files give it: a static pod's container command and args (read
 * with libyaml), or /etc/etcd.env's ETCD_* assignments (read as systemd's EnvironmentFile= does). */
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
