/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A CRI RuntimeService client: the calls a node reset needs, one at a time or many at once. No
 * printing; failures are -errno with the runtime's grpc-message (or the transport's reason) returned
 * through reterr_msg. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "grpc/grpc.h"
#include "macro.h"
#include "cri/messages.h"

typedef struct CriClient CriClient;

/* endpoint: "unix:///path" or an absolute path. Nothing is connected yet. */
int cri_client_new(const char *endpoint, CriClient **ret);
CriClient *cri_client_free(CriClient *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(CriClient *, cri_client_free);
/* The socket path of "unix:///path" or "/path"; -EINVAL for anything else (tcp, relative). */
int cri_endpoint_to_path(const char *endpoint, char **ret);
const char *cri_client_socket_path(const CriClient *c);
/* The deadline of each call from now on (0: the default, 10 s). */
void cri_client_set_timeout(CriClient *c, uint64_t usec);
void cri_client_set_max_response(CriClient *c, size_t max);
GrpcChannel *cri_client_channel(CriClient *c);
/* "runtime.v1.RuntimeService", or v1alpha2 once Version found only that. */
const char *cri_client_service(const CriClient *c);
/* The CRI version of that service: "v1" or "v1alpha2". */
const char *cri_client_api_version(const CriClient *c);
/* "/<service>/<method>" in buf. */
const char *cri_client_path(const CriClient *c, const char *method, char *buf, size_t size);

/* Every call takes a deadline (CLOCK_MONOTONIC microseconds; 0 = none): the call's timeout is cut to
 * what is left of it, and a call that would start too close to it fails with -ETIME instead. */

/* One unary call of the client's service: request bytes in, response bytes out. */
int cri_client_unary(CriClient *c, const char *method, uint64_t deadline, const ProtoWriter *request,
                     uint8_t **ret_response, size_t *ret_len, int *ret_grpc_status, char **reterr_msg);

/* Version falls back to runtime.v1alpha2 when the runtime does not implement v1 (containerd before
 * 1.6, CRI-O before 1.23), and the client keeps using the service that answered. */
int cri_version(CriClient *c, uint64_t deadline, CriVersion *ret, char **reterr_msg);
/* RuntimeService/Status, not verbose: whether the runtime answers and its conditions. */
int cri_status(CriClient *c, uint64_t deadline, CriRuntimeStatus *ret, char **reterr_msg);
/* Status asked of the runtime at endpoint (each call within call_timeout_usec) again every poll_usec
 * until it answers (with need_ready: and says RuntimeReady; a runtime's CRI says "not initialized"
 * for a moment after it started), at most until deadline: 0, or the last answer's failure. */
int cri_wait_status(const char *endpoint, uint64_t call_timeout_usec, uint64_t deadline, uint64_t poll_usec,
                    bool need_ready, char **reterr_msg);
/* RuntimeService/Status, verbose: the runtime's info[key] (NULL when it has none). */
int cri_status_info(CriClient *c, uint64_t deadline, const char *key, char **ret, char **reterr_msg);
int cri_list_sandboxes(CriClient *c, uint64_t deadline, CriSandbox **ret, size_t *ret_n, char **reterr_msg);
int cri_list_containers(CriClient *c, uint64_t deadline, CriContainer **ret, size_t *ret_n, char **reterr_msg);

/* Stops, removes and status reads, one or many at once: the agent's only way to change a pod. */
typedef enum CriOpKind {
        CRI_OP_STOP_SANDBOX,
        CRI_OP_REMOVE_SANDBOX,
        CRI_OP_STOP_CONTAINER,
        CRI_OP_REMOVE_CONTAINER,
        CRI_OP_SANDBOX_STATUS,
        _CRI_OP_MAX,
} CriOpKind;

typedef struct CriOp {
        CriOpKind kind;
        const char *id;
        int64_t timeout_sec; /* StopContainer's grace period */

        int result;              /* 0 or -errno */
        int grpc_status;         /* -1 when the runtime never said */
        char *message;           /* why it failed */
        CriSandboxStatus status; /* CRI_OP_SANDBOX_STATUS */
} CriOp;

const char *cri_op_kind_to_method(CriOpKind k);
/* Runs every op (at most concurrency at a time); each gets its own result. Returns -ENOMEM or
 * another failure to run at all, else 0. */
int cri_run_ops(CriClient *c, uint64_t deadline, CriOp *ops, size_t n, unsigned concurrency);
void cri_op_done(CriOp *op);
