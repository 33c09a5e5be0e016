/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Encoders and bounds-checked decoders for the etcdserverpb messages the client uses (field numbers
 * from etcd's api/etcdserverpb/rpc.proto). */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "etcd/etcd.h"
#include "grpc/proto.h"
#include "macro.h"
#include "strv.h"

/* rpc.proto */
enum {
        MEMBER_LIST_REQUEST_LINEARIZABLE = 1,
        MEMBER_REMOVE_REQUEST_ID = 1,
        MEMBER_LIST_RESPONSE_HEADER = 1, /* and MemberRemoveResponse */
        MEMBER_LIST_RESPONSE_MEMBERS = 2,
        MEMBER_ID = 1,
        MEMBER_NAME = 2,
        MEMBER_PEER_URLS = 3,
        MEMBER_CLIENT_URLS = 4,
        MEMBER_IS_LEARNER = 5,
        RESPONSE_HEADER_CLUSTER_ID = 1,
        RESPONSE_HEADER_MEMBER_ID = 2,
        STATUS_RESPONSE_HEADER = 1,
        STATUS_RESPONSE_IS_LEARNER = 10,
        SNAPSHOT_RESPONSE_REMAINING_BYTES = 2,
        SNAPSHOT_RESPONSE_BLOB = 3,
};

static void member_done(EtcdMember *m) {
        free(m->name);
        strv_free(m->peer_urls);
        strv_free(m->client_urls);
        *m = (EtcdMember) {};
}

void etcd_member_list_done(EtcdMemberList *l) {
        for (size_t i = 0; l->members && i < l->n_members; i++)
                member_done(&l->members[i]);
        free(l->members);
        *l = (EtcdMemberList) {};
}

const EtcdMember *etcd_member_list_find(const EtcdMemberList *l, uint64_t id) {
        for (size_t i = 0; i < l->n_members; i++)
                if (l->members[i].id == id)
                        return &l->members[i];
        return NULL;
}

int etcd_encode_member_list_request(bool linearizable, ProtoWriter *w) {
        proto_put_bool(w, MEMBER_LIST_REQUEST_LINEARIZABLE, linearizable);
        return proto_writer_error(w);
}

int etcd_encode_member_remove_request(uint64_t id, ProtoWriter *w) {
        /* ID 0 is never a member's: proto3 would leave it out, and etcd would read "no ID". */
        if (id == 0)
                return -EINVAL;
        proto_put_varint(w, MEMBER_REMOVE_REQUEST_ID, id);
        return proto_writer_error(w);
}

/* A known field with another wire type is left alone, like an unknown one. */
static void get_u64(const ProtoField *f, uint64_t *ret) {
        if (f->wire_type == PROTO_WIRE_VARINT)
                *ret = f->value;
}

static int get_url(const ProtoField *f, char ***l) {
        char *s = NULL;
        int r;

        if (f->wire_type != PROTO_WIRE_LEN)
                return 0;
        if (f->len > ETCD_URL_MAX || strv_length(*l) >= ETCD_URLS_MAX)
                return -E2BIG;
        r = proto_field_string(f, &s);
        if (r < 0)
                return r;
        return strv_consume(l, s);
}

static int member_field(const ProtoField *f, EtcdMember *m) {
        switch (f->number) {
        case MEMBER_ID:
                get_u64(f, &m->id);
                return 0;
        case MEMBER_NAME:
                if (f->wire_type != PROTO_WIRE_LEN)
                        return 0;
                if (f->len > ETCD_URL_MAX)
                        return -E2BIG;
                free(m->name);
                m->name = NULL;
                return proto_field_string(f, &m->name);
        case MEMBER_PEER_URLS:
                return get_url(f, &m->peer_urls);
        case MEMBER_CLIENT_URLS:
                return get_url(f, &m->client_urls);
        case MEMBER_IS_LEARNER:
                if (f->wire_type == PROTO_WIRE_VARINT)
                        m->is_learner = f->value != 0;
                return 0;
        }
        return 0;
}

static int decode_member(const ProtoField *f, EtcdMember *ret) {
        EtcdMember m = {};
        ProtoReader r;
        ProtoField g;
        int k;

        k = proto_field_reader(f, &r);
        if (k < 0)
                return k;
        while ((k = proto_next(&r, &g)) > 0)
                if ((k = member_field(&g, &m)) < 0)
                        break;
        if (k >= 0 && !m.name)
                k = (m.name = strdup("")) ? 0 : -ENOMEM;
        if (k < 0) {
                member_done(&m);
                return k;
        }
        *ret = m;
        return 0;
}

static int decode_header(const ProtoField *f, EtcdMemberList *l) {
        ProtoReader r;
        ProtoField g;
        int k;

        if (f->wire_type != PROTO_WIRE_LEN)
                return 0;
        r = proto_reader(f->data, f->len);
        while ((k = proto_next(&r, &g)) > 0) {
                if (g.number == RESPONSE_HEADER_CLUSTER_ID)
                        get_u64(&g, &l->cluster_id);
                else if (g.number == RESPONSE_HEADER_MEMBER_ID)
                        get_u64(&g, &l->member_id);
        }
        return k;
}

static int add_member(const ProtoField *f, EtcdMemberList *l, size_t *allocated) {
        int r;

        if (f->wire_type != PROTO_WIRE_LEN)
                return 0;
        if (l->n_members >= ETCD_MEMBERS_MAX)
                return -E2BIG;
        if (l->n_members == *allocated) {
                size_t n = *allocated ? *allocated * 2 : 4;
                EtcdMember *a = reallocarray(l->members, n, sizeof(EtcdMember));

                if (!a)
                        return -ENOMEM;
                l->members = a;
                *allocated = n;
        }
        r = decode_member(f, &l->members[l->n_members]);
        if (r < 0)
                return r;
        l->n_members++;
        return 0;
}

int etcd_decode_member_list(const void *p, size_t n, EtcdMemberList *ret) {
        ProtoReader r = proto_reader(p, n);
        EtcdMemberList l = {};
        size_t allocated = 0;
        ProtoField f;
        int k;

        while ((k = proto_next(&r, &f)) > 0) {
                if (f.number == MEMBER_LIST_RESPONSE_HEADER)
                        k = decode_header(&f, &l);
                else if (f.number == MEMBER_LIST_RESPONSE_MEMBERS)
                        k = add_member(&f, &l, &allocated);
                if (k < 0)
                        break;
        }
        if (k < 0) {
                etcd_member_list_done(&l);
                return k;
        }
        *ret = l;
        return 0;
}

int etcd_decode_status(const void *p, size_t n, EtcdStatus *ret) {
        ProtoReader r = proto_reader(p, n);
        EtcdMemberList header = {};
        EtcdStatus s = {};
        ProtoField f;
        int k;

        while ((k = proto_next(&r, &f)) > 0) {
                if (f.number == STATUS_RESPONSE_HEADER)
                        k = decode_header(&f, &header);
                else if (f.number == STATUS_RESPONSE_IS_LEARNER && f.wire_type == PROTO_WIRE_VARINT)
                        s.is_learner = f.value != 0;
                if (k < 0)
                        return k;
        }
        if (k < 0)
                return k;
        s.cluster_id = header.cluster_id;
        s.member_id = header.member_id;
        *ret = s;
        return 0;
}

int etcd_decode_snapshot_chunk(const void *p, size_t n, EtcdSnapshotChunk *ret) {
        ProtoReader r = proto_reader(p, n);
        EtcdSnapshotChunk c = {};
        ProtoField f;
        int k;

        while ((k = proto_next(&r, &f)) > 0) {
                if (f.number == SNAPSHOT_RESPONSE_REMAINING_BYTES)
                        get_u64(&f, &c.remaining_bytes);
                else if (f.number == SNAPSHOT_RESPONSE_BLOB && f.wire_type == PROTO_WIRE_LEN) {
                        c.blob = f.data;
                        c.blob_len = f.len;
                }
        }
        if (k < 0)
                return k;
        *ret = c;
        return 0;
}
