/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CNI configuration directories a kept container runtime watches, so the files phase empties
 * them instead of deleting them (or has the runtime restarted when a manifest line takes a parent). */
#pragma once

#include "agent/engine/context.h"

typedef struct CniKeep {
        char *conf_dir; /* node path of the directory the runtime watches */
        char *unit;     /* the runtime's systemd unit */
        char *runtime;  /* "containerd", "cri-o", ... */
        char *socket;   /* its CRI socket */
} CniKeep;

typedef struct CniKeepSet {
        CniKeep *items;
        size_t n;
} CniKeepSet;

void cni_keep_set_done(CniKeepSet *s);

/* The runtimes that answer on this run's CRI sockets (--cri-endpoint, the manifest's cri-endpoint
 * lines, else the known sockets on a node, not beneath --root) and keep running: a running process
 * listens on the socket and no unit line of the manifest stops its unit. -ENOMEM only. */
int cni_keep_find(const Context *ctx, CniKeepSet *ret);

/* The runtime that watches exactly node_path, or NULL. */
const CniKeep *cni_keep_watched(const CniKeepSet *s, const char *node_path);
/* The first runtime whose watched directory is strictly beneath node_path, or NULL. */
const CniKeep *cni_keep_beneath(const CniKeepSet *s, const char *node_path);

/* Does a unit line of the manifest stop this unit? Then the runtime is not kept (--with-runtime). */
bool cni_keep_manifest_stops(const Manifest *m, const char *unit);
