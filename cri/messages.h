/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CRI runtime.v1 messages this client uses: the types it decodes into, their encoders and their
 * bounds-checked decoders (field numbers from k8s.io/cri-api runtime/v1 api.proto). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/proto.h"

typedef enum CriSandboxState {
        CRI_SANDBOX_READY = 0,
        CRI_SANDBOX_NOTREADY = 1,
} CriSandboxState;

typedef enum CriContainerState {
        CRI_CONTAINER_CREATED = 0,
        CRI_CONTAINER_RUNNING = 1,
        CRI_CONTAINER_EXITED = 2,
        CRI_CONTAINER_UNKNOWN = 3,
} CriContainerState;

/* NamespaceOption.network: POD is a pod network, NODE the host's. */
typedef enum CriNamespaceMode {
        CRI_NAMESPACE_POD = 0,
        CRI_NAMESPACE_CONTAINER = 1,
        CRI_NAMESPACE_NODE = 2,
        CRI_NAMESPACE_TARGET = 3,
} CriNamespaceMode;

typedef struct CriVersion {
        char *version;
        char *runtime_name;
        char *runtime_version;
        char *runtime_api_version;
} CriVersion;

typedef struct CriSandbox {
        char *id;
        char *name;
        char *uid;
        char *namespace;
        uint32_t attempt;
        uint64_t state; /* CriSandboxState; other values are kept as sent */
        int64_t created_at;
        char *runtime_handler;
} CriSandbox;

typedef struct CriSandboxStatus {
        char *id;
        uint64_t state;
        char *ip;
        uint64_t network_mode; /* CriNamespaceMode; POD when the runtime says nothing */
} CriSandboxStatus;

typedef struct CriContainer {
        char *id;
        char *pod_sandbox_id;
        char *name;
        uint32_t attempt;
        char *image;
        uint64_t state; /* CriContainerState */
        int64_t created_at;
} CriContainer;

/* StatusResponse.status: the RuntimeReady and NetworkReady conditions (absent ones are false). */
typedef struct CriRuntimeStatus {
        bool runtime_ready, network_ready;
        char *runtime_reason, *network_reason, *network_message;
} CriRuntimeStatus;

void cri_version_done(CriVersion *v);
void cri_runtime_status_done(CriRuntimeStatus *s);
void cri_sandbox_status_done(CriSandboxStatus *s);
CriSandbox *cri_sandboxes_free(CriSandbox *l, size_t n);
CriContainer *cri_containers_free(CriContainer *l, size_t n);

const char *cri_sandbox_state_to_string(uint64_t s);
const char *cri_container_state_to_string(uint64_t s);

/* Requests. Each appends one message to w (an empty message appends nothing). */
void cri_encode_version_request(ProtoWriter *w, const char *version);
/* StopPodSandbox, RemovePodSandbox, PodSandboxStatus (non-verbose), RemoveContainer: {id = 1}. */
void cri_encode_id_request(ProtoWriter *w, const char *id);
void cri_encode_stop_container_request(ProtoWriter *w, const char *id, int64_t timeout_sec);
/* ListPodSandbox and ListContainers without a filter: the empty message. */
void cri_encode_list_request(ProtoWriter *w);
void cri_encode_status_request(ProtoWriter *w, bool verbose);

/* Responses: 0 and the result, -EBADMSG for a malformed message, -ENOMEM. Unknown fields of every
 * wire type are skipped; a known field with an unexpected wire type is treated as unknown. */
int cri_decode_version_response(const void *p, size_t n, CriVersion *ret);
int cri_decode_status_response(const void *p, size_t n, CriRuntimeStatus *ret);
/* A verbose StatusResponse's info[key] (containerd: "cniconfig", the CNI configuration it has loaded,
 * as JSON), or NULL in *ret when the response has none. */
int cri_decode_status_info(const void *p, size_t n, const char *key, char **ret);
int cri_decode_list_sandboxes_response(const void *p, size_t n, CriSandbox **ret, size_t *ret_n);
int cri_decode_sandbox_status_response(const void *p, size_t n, CriSandboxStatus *ret);
int cri_decode_list_containers_response(const void *p, size_t n, CriContainer **ret, size_t *ret_n);
/* Stop/Remove responses carry no fields the client needs; they must still be well formed. */
int cri_decode_empty_response(const void *p, size_t n);
