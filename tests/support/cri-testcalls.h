/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Calls that create pods, for the test harness only: the agent never creates anything. Kept out of
 * the agent's link by living in their own object file. */
#pragma once

#include <stdbool.h>

#include "cri/cri.h"

typedef struct CriPodSpec {
        const char *name;
        const char *namespace;
        const char *uid;
        const char *cgroup_parent;      /* cgroupfs syntax, e.g. "/nr-test-123" */
        bool host_network;
} CriPodSpec;

/* Mount{container_path = 1, host_path = 2, readonly = 3}: a volume as kubelet hands it over. */
typedef struct CriMountSpec {
        const char *container_path;
        const char *host_path;
        bool readonly;
} CriMountSpec;

typedef struct CriContainerSpec {
        const char *name;
        const char *image;
        const char *const *args; /* ContainerConfig.args, the entrypoint's arguments; NULL-terminated or NULL */
        const CriMountSpec *mounts;
        size_t n_mounts;
} CriContainerSpec;

/* The PodSandboxConfig of a spec (RunPodSandbox's config, CreateContainer's sandbox_config). */
void cri_encode_pod_config(ProtoWriter *w, const CriPodSpec *spec);

void cri_encode_run_sandbox_request(ProtoWriter *w, const CriPodSpec *spec);
void cri_encode_create_container_request(ProtoWriter *w, const char *sandbox_id, const CriPodSpec *spec,
                                         const CriContainerSpec *container);
/* RunPodSandboxResponse{pod_sandbox_id = 1}, CreateContainerResponse{container_id = 1} */
int cri_decode_id_response(const void *p, size_t n, char **ret_id);

int cri_run_sandbox(CriClient *c, const CriPodSpec *spec, char **ret_id, char **reterr_msg);
int cri_create_container(CriClient *c, const char *sandbox_id, const CriPodSpec *spec,
                         const CriContainerSpec *container, char **ret_id, char **reterr_msg);
int cri_start_container(CriClient *c, const char *id, char **reterr_msg);
