/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The etcd v3 calls a reset needs, on top of the gRPC channel and the message codec. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errno-util.h"
#include "etcd/etcd.h"
#include "grpc/proto.h"
#include "macro.h"

#define ETCD_PATH_MEMBER_LIST "/etcdserverpb.Cluster/MemberList"
#define ETCD_PATH_MEMBER_REMOVE "/etcdserverpb.Cluster/MemberRemove"
#define ETCD_PATH_SNAPSHOT "/etcdserverpb.Maintenance/Snapshot"
#define ETCD_PATH_STATUS "/etcdserverpb.Maintenance/Status"

struct EtcdClient {
        GrpcChannel *channel;
        char *endpoint;
};

int etcd_client_new(const char *endpoint, const EtcdTls *tls, EtcdClient **ret) {
        EtcdClient *c;
        size_t l;
        int r;

        if (!endpoint)
                return -EINVAL;
        c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->endpoint = strdup(endpoint);
        if (!c->endpoint) {
                free(c);
                return -ENOMEM;
        }
        /* etcd's own URLs may end in "/": the channel appends the method's path. */
        l = strlen(c->endpoint);
        if (l > 0 && c->endpoint[l - 1] == '/')
                c->endpoint[l - 1] = '\0';
        r = grpc_channel_new_url(c->endpoint, tls, &c->channel);
        if (r < 0) {
                etcd_client_free(c);
                return r;
        }
        grpc_channel_set_max_response(c->channel, ETCD_RESPONSE_MAX);
        *ret = c;
        return 0;
}

EtcdClient *etcd_client_free(EtcdClient *c) {
        if (!c)
                return NULL;
        grpc_channel_free(c->channel);
        free(c->endpoint);
        return mfree(c);
}

const char *etcd_client_endpoint(const EtcdClient *c) {
        return c->endpoint;
}

void etcd_client_set_timeout(EtcdClient *c, uint64_t usec) {
        grpc_channel_set_timeout(c->channel, usec);
}

void etcd_client_set_deadline(EtcdClient *c, uint64_t monotonic_usec) {
        grpc_channel_set_deadline(c->channel, monotonic_usec);
}

/* Run one call; on failure the call's reason goes to reterr_msg. */
static int run_call(EtcdClient *c, GrpcCall *call, char **reterr_msg) {
        int r;

        r = grpc_channel_run(c->channel, call, 1, 1);
        if (r >= 0)
                r = call->result;
        if (r < 0 && reterr_msg && !*reterr_msg)
                *reterr_msg = TAKE_PTR(call->message);
        return r;
}

static int unary_member_list(EtcdClient *c, const char *path, ProtoWriter *w, EtcdMemberList *ret, char **reterr_msg) {
        GrpcCall call = { .path = path, .request = w->buf, .request_len = w->len };
        EtcdMemberList l = {};
        int r;

        r = proto_writer_error(w);
        if (r < 0)
                return r;
        r = run_call(c, &call, reterr_msg);
        if (r >= 0) {
                r = etcd_decode_member_list(call.response, call.response_len, &l);
                if (r == -EBADMSG || r == -E2BIG)
                        r = set_errmsg(reterr_msg, -EBADMSG, "malformed answer to %s", path);
        }
        grpc_call_done(&call);
        if (r < 0)
                return r;
        if (ret)
                *ret = l;
        else
                etcd_member_list_done(&l);
        return 0;
}

int etcd_member_list(EtcdClient *c, EtcdMemberList *ret, char **reterr_msg) {
        ProtoWriter w;
        int r;

        proto_writer_init(&w);
        (void) etcd_encode_member_list_request(true, &w);
        r = unary_member_list(c, ETCD_PATH_MEMBER_LIST, &w, ret, reterr_msg);
        proto_writer_done(&w);
        return r;
}

int etcd_member_remove(EtcdClient *c, uint64_t id, EtcdMemberList *ret_after, char **reterr_msg) {
        ProtoWriter w;
        int r;

        proto_writer_init(&w);
        r = etcd_encode_member_remove_request(id, &w);
        if (r >= 0)
                r = unary_member_list(c, ETCD_PATH_MEMBER_REMOVE, &w, ret_after, reterr_msg);
        proto_writer_done(&w);
        return r;
}

int etcd_status(EtcdClient *c, EtcdStatus *ret, char **reterr_msg) {
        GrpcCall call = { .path = ETCD_PATH_STATUS }; /* StatusRequest is empty */
        int r;

        r = run_call(c, &call, reterr_msg);
        if (r >= 0) {
                r = etcd_decode_status(call.response, call.response_len, ret);
                if (r == -EBADMSG || r == -E2BIG)
                        r = set_errmsg(reterr_msg, -EBADMSG, "malformed answer to %s", ETCD_PATH_STATUS);
        }
        grpc_call_done(&call);
        return r;
}

typedef struct SnapshotSink {
        int fd;
        uint64_t written;
        uint64_t remaining; /* what the last chunk said is still to come */
        bool any;
} SnapshotSink;

static int write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int snapshot_chunk(const uint8_t *msg, size_t n, void *userdata) {
        SnapshotSink *s = userdata;
        EtcdSnapshotChunk chunk;
        int r;

        r = etcd_decode_snapshot_chunk(msg, n, &chunk);
        if (r < 0)
                return r;
        r = write_all(s->fd, chunk.blob, chunk.blob_len);
        if (r < 0)
                return r;
        s->written += chunk.blob_len;
        s->remaining = chunk.remaining_bytes;
        s->any = true;
        return 0;
}

int etcd_snapshot(EtcdClient *c, int fd, uint64_t max_bytes, uint64_t *ret_size, char **reterr_msg) {
        SnapshotSink sink = { .fd = fd };
        GrpcCall call = {
                .path = ETCD_PATH_SNAPSHOT,
                .on_message = snapshot_chunk,
                .userdata = &sink,
                .max_stream = max_bytes,
        };
        int r;

        /* SnapshotRequest is empty. */
        r = run_call(c, &call, reterr_msg);
        grpc_call_done(&call);
        if (r < 0)
                return r;
        if (!sink.any || sink.remaining != 0)
                return set_errmsg(reterr_msg, -EBADMSG, "the snapshot stream ended %llu bytes short",
                                  (unsigned long long) sink.remaining);
        if (ret_size)
                *ret_size = sink.written;
        return 0;
}
