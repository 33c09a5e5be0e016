/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's rescue ladder, rung 3, below the CRI: when the rescue conflist (pods-rescue.h)
 * does not help or the runtime hangs, the runtime stopped, its shims killed and their mounts
 * unmounted (ladder_*). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "agent/engine/context.h"
#include "agent/os/runtime-info.h"
#include "time-util.h"

typedef struct LeftoverUnmount {
        unsigned rootfs, shm, netns;
        unsigned busy; /* could not be unmounted */
} LeftoverUnmount;

/* Rung 3 for the runtime listening on socket_path: stop its systemd unit (through phase_systemd_running(),
 * within the run's deadline), unless it did not answer (!answered) and nobody listens on the socket
 * any more: it died. Then, for containerd, SIGKILL every containerd-shim* of the k8s.io namespace
 * and this socket with all their descendants, children first, wait (about 3 s) for them to go, and
 * unmount what they left: container rootfs beneath STATE/io.containerd.runtime.v2.task/k8s.io, sandbox
 * shm beneath STATE/io.containerd.grpc.v1.cri/sandboxes, cni-* network namespaces in /run/netns;
 * deepest first, a busy mount counted, never detached. why says what made rung 3 needed; *ret_msg says
 * what was done. 1, -EBUSY when a process or a mount survived, or -errno. */
int ladder_rung3(Context *ctx, const char *socket_path, const RuntimeInfo *info, bool answered, const char *why,
                 char **ret_msg);

/* Is pid a containerd-shim* of the k8s.io namespace serving the runtime at socket_path? *ret_id (unless
 * NULL): its "-id", the sandbox it serves (runc v2 runs one shim per pod), malloc'd or NULL. */
bool ladder_is_shim(pid_t pid, const char *socket_path, char **ret_id);

/* How many containerd-shim* serve the runtime at socket_path in a namespace other than k8s.io (the
 * containers of Docker or of anyone else beside Kubernetes'). */
int ladder_foreign_shims(const char *socket_path, unsigned *ret);

/* The runtime restarted with its pods' tasks cleared, in two steps around the kill pass, so that the
 * runtime never sees the pods exit: a pod's RemovePodSandbox then finds no task to delete and no dead
 * shim to clean up after (each of which runs the shim binary or runc once per task); its metadata,
 * snapshots and CNI DEL remain. ladder_runtime_stop(): the runtime's systemd unit stopped (its shims
 * stay, KillMode=process), waiting at most wait_usec for the job (-ETIME: still stopping, the job left
 * to systemd), 1 stopped. ladder_runtime_clear_start(), after the kill pass: once nobody listens on the
 * socket (until deadline), every containerd-shim* of k8s.io and this socket SIGKILLed with what is left
 * beneath it, their mounts unmounted (as rung 3 does), the task state the runtime would clean up
 * after them (STATE/io.containerd.runtime.v2.task/k8s.io and STATE/runc/k8s.io) emptied (left in place
 * when a shim or a mount survived, or the runtime never stopped); then the unit started again, whatever
 * happened, and its CRI Status waited for. 1 with *ret_msg saying what was done, or -errno when the
 * runtime does not run and answer again. */
int ladder_runtime_stop(Context *ctx, const RuntimeInfo *info, usec_t wait_usec, char **ret_msg);
int ladder_runtime_clear_start(Context *ctx, const char *socket_path, const RuntimeInfo *info, usec_t deadline,
                               char **ret_msg);

/* What rung 3 would act on, counted only: containerd's shims for socket_path and their mounts (all
 * zero for another runtime). */
void ladder_residue(const char *socket_path, const RuntimeInfo *info, unsigned *ret_shims, LeftoverUnmount *ret);
