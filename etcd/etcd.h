/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An etcd v3 client for what a node reset needs: Cluster.MemberList, Cluster.MemberRemove,
 * Maintenance.Status and Maintenance.Snapshot, over the gRPC library (HTTP/2 + TLS with a client certificate). A
 * library: no printing; failures are -errno with etcd's grpc-message (or the transport's reason) through reterr_msg.
 * Field numbers from etcd's api/etcdserverpb/rpc.proto. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/grpc.h"
#include "grpc/proto.h"

/* Bounds on what a member may send: a MemberList answer (a real one is well under 64 KiB), the
 * members in it, the URLs of one member, one URL. */
#define ETCD_RESPONSE_MAX (4U << 20)
#define ETCD_MEMBERS_MAX 1024
#define ETCD_URLS_MAX 64
#define ETCD_URL_MAX 2048

typedef struct EtcdMember {
        uint64_t id;
        char *name;         /* "" for a member added but never started */
        char **peer_urls;   /* strv */
        char **client_urls; /* strv; empty for a member never started */
        bool is_learner;
} EtcdMember;

typedef struct EtcdMemberList {
        uint64_t cluster_id; /* from the response header */
        uint64_t member_id;  /* the member that answered */
        EtcdMember *members;
        size_t n_members;
} EtcdMemberList;

void etcd_member_list_done(EtcdMemberList *l);
const EtcdMember *etcd_member_list_find(const EtcdMemberList *l, uint64_t id);

/* MemberListRequest{linearizable=1} (3.5+; 3.4 ignores it and answers from its own view). */
int etcd_encode_member_list_request(bool linearizable, ProtoWriter *w);
/* MemberRemoveRequest{ID=1}. */
int etcd_encode_member_remove_request(uint64_t id, ProtoWriter *w);
/* MemberListResponse and MemberRemoveResponse share their layout: {header=1, members=2}.
 * -EBADMSG for anything malformed, -E2BIG past the bounds above. */
int etcd_decode_member_list(const void *p, size_t n, EtcdMemberList *ret);

/* What a member says of itself in a StatusResponse{header=1, ..., isLearner=10}: the response
 * header's cluster_id and member_id are the answering member's own. */
typedef struct EtcdStatus {
        uint64_t cluster_id;
        uint64_t member_id;
        bool is_learner;
} EtcdStatus;

int etcd_decode_status(const void *p, size_t n, EtcdStatus *ret);

/* One SnapshotResponse{header=1, remaining_bytes=2, blob=3}: blob points into p. */
typedef struct EtcdSnapshotChunk {
        uint64_t remaining_bytes;
        const uint8_t *blob;
        size_t blob_len;
} EtcdSnapshotChunk;

int etcd_decode_snapshot_chunk(const void *p, size_t n, EtcdSnapshotChunk *ret);

/* Client TLS files, as etcd's own flags name them. */
typedef GrpcTls EtcdTls;

typedef struct EtcdClient EtcdClient;

/* endpoint: "https://host:port" or "http://host:port" (a trailing "/" is dropped). Nothing is
 * connected yet. */
int etcd_client_new(const char *endpoint, const EtcdTls *tls, EtcdClient **ret);
EtcdClient *etcd_client_free(EtcdClient *c);
const char *etcd_client_endpoint(const EtcdClient *c);
/* Each call's deadline (0: the default, 10 s), and a deadline no call runs past (CLOCK_MONOTONIC
 * microseconds; 0 = none), as for grpc_channel_set_timeout() and grpc_channel_set_deadline(). */
void etcd_client_set_timeout(EtcdClient *c, uint64_t usec);
void etcd_client_set_deadline(EtcdClient *c, uint64_t monotonic_usec);

int etcd_member_list(EtcdClient *c, EtcdMemberList *ret, char **reterr_msg);
/* Maintenance.Status: who answers (a learner answers it too, unlike MemberList). */
int etcd_status(EtcdClient *c, EtcdStatus *ret, char **reterr_msg);
/* ret_after (may be NULL): the members after the removal, as the answering member says. */
int etcd_member_remove(EtcdClient *c, uint64_t id, EtcdMemberList *ret_after, char **reterr_msg);
/* The member's backend as a stream of chunks written to fd, at most max_bytes (the stream is refused
 * past it); *ret_size the bytes written. -EBADMSG when the stream ends before remaining_bytes says
 * it is whole. */
int etcd_snapshot(EtcdClient *c, int fd, uint64_t max_bytes, uint64_t *ret_size, char **reterr_msg);
