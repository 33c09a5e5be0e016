/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CRI RuntimeService calls a reset needs, on top of the gRPC channel and the message codec. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cri/cri.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define CRI_SERVICE_V1 "runtime.v1.RuntimeService"
#define CRI_SERVICE_V1ALPHA2 "runtime.v1alpha2.RuntimeService"
#define CRI_PATH_MAX 96

struct CriClient {
        GrpcChannel *channel;
        const char *service;
};

int cri_endpoint_to_path(const char *endpoint, char **ret) {
        const char *p;
        char *s;

        if (!endpoint)
                return -EINVAL;
        p = startswith(endpoint, "unix://") ?: endpoint;
        if (p[0] != '/')
                return -EINVAL;
        s = strdup(p);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int cri_client_new(const char *endpoint, CriClient **ret) {
        cleanup_free char *path = NULL;
        CriClient *c;
        int r;

        r = cri_endpoint_to_path(endpoint, &path);
        if (r < 0)
                return r;
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        r = grpc_channel_new(path, &c->channel);
        if (r < 0) {
                free(c);
                return r;
        }
        c->service = CRI_SERVICE_V1;
        *ret = c;
        return 0;
}

CriClient *cri_client_free(CriClient *c) {
        if (!c)
                return NULL;
        grpc_channel_free(c->channel);
        return mfree(c);
}

const char *cri_client_socket_path(const CriClient *c) {
        return grpc_channel_socket_path(c->channel);
}

void cri_client_set_timeout(CriClient *c, uint64_t usec) {
        grpc_channel_set_timeout(c->channel, usec);
}

void cri_client_set_max_response(CriClient *c, size_t max) {
        grpc_channel_set_max_response(c->channel, max);
}

GrpcChannel *cri_client_channel(CriClient *c) {
        return c->channel;
}

const char *cri_client_service(const CriClient *c) {
        return c->service;
}

const char *cri_client_api_version(const CriClient *c) {
        return streq(c->service, CRI_SERVICE_V1ALPHA2) ? "v1alpha2" : "v1";
}

const char *cri_client_path(const CriClient *c, const char *method, char *buf, size_t size) {
        snprintf(buf, size, "/%s/%s", c->service, method);
        return buf;
}

int cri_client_unary(CriClient *c, const char *method, uint64_t deadline, const ProtoWriter *request,
                     uint8_t **ret_response, size_t *ret_len, int *ret_grpc_status, char **reterr_msg) {
        char path[CRI_PATH_MAX];
        GrpcCall call = {
                .path = cri_client_path(c, method, path, sizeof path),
                .request = request->buf,
                .request_len = request->len,
                .deadline_usec = deadline,
        };
        int r;

        if (proto_writer_error(request) < 0)
                return proto_writer_error(request);
        r = grpc_channel_run(c->channel, &call, 1, 1);
        if (r >= 0)
                r = call.result;
        if (ret_grpc_status)
                *ret_grpc_status = call.grpc_status;
        if (r < 0) {
                if (reterr_msg && call.message && !*reterr_msg)
                        *reterr_msg = TAKE_PTR(call.message);
                grpc_call_done(&call);
                return r;
        }
        *ret_response = TAKE_PTR(call.response);
        *ret_len = call.response_len;
        grpc_call_done(&call);
        return 0;
}

/* Encode, call, decode; decode is NULL for the empty responses. */
typedef int (*decode_fn)(const void *p, size_t n, void *ret, void *ret_n);

static int call_simple(CriClient *c, const char *method, uint64_t deadline, ProtoWriter *w, decode_fn decode, void *ret,
                       void *ret_n, int *ret_grpc_status, char **reterr_msg) {
        cleanup_free uint8_t *resp = NULL;
        size_t len = 0;
        int r;

        r = cri_client_unary(c, method, deadline, w, &resp, &len, ret_grpc_status, reterr_msg);
        proto_writer_done(w);
        if (r < 0)
                return r;
        r = decode ? decode(resp, len, ret, ret_n) : cri_decode_empty_response(resp, len);
        if (r == -EBADMSG || r == -E2BIG)
                return set_errmsg(reterr_msg, -EBADMSG, "malformed %s response", method);
        return r;
}

static int decode_version(const void *p, size_t n, void *ret, void *ret_n) {
        return cri_decode_version_response(p, n, ret);
}

static int decode_sandboxes(const void *p, size_t n, void *ret, void *ret_n) {
        return cri_decode_list_sandboxes_response(p, n, ret, ret_n);
}

static int decode_containers(const void *p, size_t n, void *ret, void *ret_n) {
        return cri_decode_list_containers_response(p, n, ret, ret_n);
}

int cri_version(CriClient *c, uint64_t deadline, CriVersion *ret, char **reterr_msg) {
        cleanup_free char *err = NULL;
        ProtoWriter w;
        int r, status = -1;

        proto_writer_init(&w);
        cri_encode_version_request(&w, "v1");
        r = call_simple(c, "Version", deadline, &w, decode_version, ret, NULL, &status, &err);
        if (r < 0 && status == GRPC_UNIMPLEMENTED && streq(c->service, CRI_SERVICE_V1)) {
                c->service = CRI_SERVICE_V1ALPHA2;
                err = mfree(err);
                proto_writer_init(&w);
                cri_encode_version_request(&w, "v1alpha2");
                r = call_simple(c, "Version", deadline, &w, decode_version, ret, NULL, &status, &err);
                if (r < 0)
                        c->service = CRI_SERVICE_V1;
        }
        if (r < 0 && reterr_msg && !*reterr_msg)
                *reterr_msg = TAKE_PTR(err);
        return r;
}

static int decode_runtime_status(const void *p, size_t n, void *ret, void *ret_n) {
        return cri_decode_status_response(p, n, ret);
}

int cri_status(CriClient *c, uint64_t deadline, CriRuntimeStatus *ret, char **reterr_msg) {
        ProtoWriter w;

        /* StatusRequest{verbose = 1}: false, the empty message. */
        proto_writer_init(&w);
        return call_simple(c, "Status", deadline, &w, decode_runtime_status, ret, NULL, NULL, reterr_msg);
}

int cri_wait_status(const char *endpoint, uint64_t call_timeout_usec, uint64_t deadline, uint64_t poll_usec,
                    bool need_ready, char **reterr_msg) {
        CLEANUP(cri_client_freep) CriClient *c = NULL;
        int r;

        r = cri_client_new(endpoint, &c);
        if (r < 0)
                return r;
        cri_client_set_timeout(c, call_timeout_usec);
        for (;;) {
                CriRuntimeStatus st = {};

                if (reterr_msg)
                        *reterr_msg = mfree(*reterr_msg);
                r = cri_status(c, deadline, &st, reterr_msg);
                if (r >= 0 && need_ready && !st.runtime_ready)
                        r = set_errmsg(reterr_msg, -EAGAIN, "RuntimeReady is false: %s", strna(st.runtime_reason));
                cri_runtime_status_done(&st);
                if (r >= 0 || now(CLOCK_MONOTONIC) + poll_usec >= deadline)
                        return r;
                (void) usleep((useconds_t) poll_usec);
        }
}

static int decode_status_info(const void *p, size_t n, void *ret, void *key) {
        return cri_decode_status_info(p, n, key, ret);
}

int cri_status_info(CriClient *c, uint64_t deadline, const char *key, char **ret, char **reterr_msg) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_status_request(&w, true);
        return call_simple(c, "Status", deadline, &w, decode_status_info, ret, (void *) key, NULL, reterr_msg);
}

int cri_list_sandboxes(CriClient *c, uint64_t deadline, CriSandbox **ret, size_t *ret_n, char **reterr_msg) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_list_request(&w);
        return call_simple(c, "ListPodSandbox", deadline, &w, decode_sandboxes, ret, ret_n, NULL, reterr_msg);
}

int cri_list_containers(CriClient *c, uint64_t deadline, CriContainer **ret, size_t *ret_n, char **reterr_msg) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_list_request(&w);
        return call_simple(c, "ListContainers", deadline, &w, decode_containers, ret, ret_n, NULL, reterr_msg);
}

static const char *const op_methods[_CRI_OP_MAX] = {
        [CRI_OP_STOP_SANDBOX] = "StopPodSandbox",     [CRI_OP_REMOVE_SANDBOX] = "RemovePodSandbox",
        [CRI_OP_STOP_CONTAINER] = "StopContainer",    [CRI_OP_REMOVE_CONTAINER] = "RemoveContainer",
        [CRI_OP_SANDBOX_STATUS] = "PodSandboxStatus",
};

const char *cri_op_kind_to_method(CriOpKind k) {
        if (k < 0 || k >= _CRI_OP_MAX)
                return NULL;
        return op_methods[k];
}

void cri_op_done(CriOp *op) {
        op->message = mfree(op->message);
        cri_sandbox_status_done(&op->status);
}

/* The request of one op; a failure to encode is the op's result. */
static int op_encode(const CriOp *op, ProtoWriter *w) {
        if (op->kind == CRI_OP_STOP_CONTAINER)
                cri_encode_stop_container_request(w, op->id, op->timeout_sec);
        else
                cri_encode_id_request(w, op->id);
        return proto_writer_error(w);
}

static void op_settle(CriOp *op, GrpcCall *call) {
        int r = call->result;

        op->grpc_status = call->grpc_status;
        if (r < 0) {
                op->message = TAKE_PTR(call->message);
                op->result = r;
                return;
        }
        r = op->kind == CRI_OP_SANDBOX_STATUS
                    ? cri_decode_sandbox_status_response(call->response, call->response_len, &op->status)
                    : cri_decode_empty_response(call->response, call->response_len);
        if (r < 0 && r != -ENOMEM)
                r = set_errmsg(&op->message, -EBADMSG, "malformed %s response", op_methods[op->kind]);
        op->result = r;
}

int cri_run_ops(CriClient *c, uint64_t deadline, CriOp *ops, size_t n, unsigned concurrency) {
        cleanup_free GrpcCall *calls = NULL;
        cleanup_free ProtoWriter *ws = NULL;
        cleanup_free char(*paths)[CRI_PATH_MAX] = NULL;
        int r;

        if (n == 0)
                return 0;
        calls = calloc(n, sizeof(GrpcCall));
        ws = calloc(n, sizeof(ProtoWriter));
        paths = calloc(n, CRI_PATH_MAX);
        if (!calls || !ws || !paths)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ops[i].result = 0;
                ops[i].grpc_status = -1;
                if (!cri_op_kind_to_method(ops[i].kind) || op_encode(&ops[i], &ws[i]) < 0) {
                        r = -EINVAL;
                        goto finish;
                }
                calls[i] = (GrpcCall) {
                        .path = cri_client_path(c, op_methods[ops[i].kind], paths[i], CRI_PATH_MAX),
                        .request = ws[i].buf,
                        .request_len = ws[i].len,
                        .deadline_usec = deadline,
                };
        }
        r = grpc_channel_run(c->channel, calls, n, concurrency);
        for (size_t i = 0; r >= 0 && i < n; i++)
                op_settle(&ops[i], &calls[i]);
finish:
        for (size_t i = 0; i < n; i++) {
                proto_writer_done(&ws[i]);
                grpc_call_done(&calls[i]);
        }
        return r;
}
