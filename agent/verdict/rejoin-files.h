/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rejoin checks of the files a join wants absent (rejoin-files.c): each a row of rejoin-check.c's
 * table, OK, FAILED, UNCHECKED or UNKNOWN with its reason in *ret_msg. */
#pragma once

#include "agent/engine/context.h"
#include "agent/verdict/rejoin-state.h"

/* DirAvailableCheck /etc/kubernetes/manifests (RunJoinNodeChecks): absent or empty. */
int rejoin_check_manifests(Context *ctx, Rejoin *r, char **ret_msg);
/* FileAvailableCheck (RunJoinNodeChecks): kubelet.conf, bootstrap-kubelet.conf and (a worker's join,
 * JoinConfiguration.CACertPath's default) pki/ca.crt absent. */
int rejoin_check_kubeconfig(Context *ctx, Rejoin *r, char **ret_msg);
int rejoin_check_bootstrap_kubeconfig(Context *ctx, Rejoin *r, char **ret_msg);
int rejoin_check_ca(Context *ctx, Rejoin *r, char **ret_msg);
/* DirAvailableCheck of the local etcd's data directory (RunInitNodeChecks, a control-plane join only). */
int rejoin_check_etcd(Context *ctx, Rejoin *r, char **ret_msg);
