/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rescue ladder, rungs 2 and 3, below the CRI: a loopback-only CNI conflist that lets
 * a runtime finish StopPodSandbox when the real CNI plugin fails its DEL (calico without its API
 * server), and, when even that fails or the runtime hangs, the shims killed and their mounts
 * unmounted. */
#pragma once

#include <stdbool.h>

/* Every rescue conflist ends so; an interrupted run's is found by it. */
#define CNI_RESCUE_SUFFIX "node-reset-rescue.conflist"

/* Write a conflist whose only plugin is loopback into conf_dir, under a name that sorts before every
 * other config there (libcni loads the first), and arm SIGINT/SIGTERM/SIGHUP/SIGQUIT handlers and an
 * atexit() handler that remove it before the process ends. One rescue at a time. Returns the path
 * (malloc'd). */
int cni_rescue_install(const char *conf_dir, char **ret_path, char **reterr_msg);
/* Remove it and disarm the handlers; 0 when it was already gone. Safe to call without install. */
int cni_rescue_remove(void);
/* Rescue conflists in conf_dir (left by a run that was killed), NULL-terminated full paths. */
int cni_rescue_find_stale(const char *conf_dir, char ***ret);
/* Remove one of them, only if it is what node-reset writes (a regular file with one name and exactly
 * the loopback-only conflist): 1 removed, 0 already gone, -EPERM (the reason in *reterr_msg) when the
 * file there is something else, left in place. */
int cni_rescue_remove_stale(const char *path, char **reterr_msg);

typedef struct ShimKill {
        unsigned shims;         /* containerd-shim* processes of the namespace */
        unsigned processes;     /* everything killed, shims and their descendants */
        unsigned survivors;     /* still there after SIGKILL and the wait */
} ShimKill;

/* SIGKILL every containerd-shim* whose command line names the containerd namespace (-namespace NS)
 * and, unless address is NULL, the runtime's socket (-address PATH), together with all its
 * descendants, children first, then wait (up to about 3 s) for them to go. */
int shims_kill(const char *namespace, const char *address, ShimKill *ret);
/* Count them only (verify). */
int shims_count(const char *namespace, const char *address, unsigned *ret);

typedef struct LeftoverUnmount {
        unsigned rootfs, shm, netns;
        unsigned busy;          /* could not be unmounted */
} LeftoverUnmount;

/* Unmount what the shims left: container rootfs beneath STATE/io.containerd.runtime.v2.task/NS,
 * sandbox shm beneath STATE/io.containerd.grpc.v1.cri/sandboxes, and cni-* network namespaces in
 * /run/netns. Deepest first; a busy mount is counted, never detached. dry_run only counts. */
int leftovers_unmount(const char *state_dir, const char *namespace, bool dry_run, LeftoverUnmount *ret);
