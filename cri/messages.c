/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Encoders and decoders for the CRI runtime.v1 messages this client uses. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cri/messages.h"
#include "macro.h"
#include "string-util.h"
#include "alloc-util.h"

/* A node runs a few hundred pods; a list past this is an attack on the memory (an empty element
 * costs 2 bytes on the wire and a struct here). */
#define CRI_LIST_MAX 65536U

void cri_version_done(CriVersion *v) {
        free(v->version);
        free(v->runtime_name);
        free(v->runtime_version);
        free(v->runtime_api_version);
        *v = (CriVersion) {};
}

void cri_sandbox_status_done(CriSandboxStatus *s) {
        free(s->id);
        free(s->ip);
        *s = (CriSandboxStatus) {};
}

static void sandbox_done(CriSandbox *s) {
        free(s->id);
        free(s->name);
        free(s->uid);
        free(s->namespace);
        free(s->runtime_handler);
}

static void container_done(CriContainer *c) {
        free(c->id);
        free(c->pod_sandbox_id);
        free(c->name);
        free(c->image);
}

CriSandbox *cri_sandboxes_free(CriSandbox *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                sandbox_done(&l[i]);
        return mfree(l);
}

CriContainer *cri_containers_free(CriContainer *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                container_done(&l[i]);
        return mfree(l);
}

const char *cri_sandbox_state_to_string(uint64_t s) {
        switch (s) {
        case CRI_SANDBOX_READY:
                return "READY";
        case CRI_SANDBOX_NOTREADY:
                return "NOTREADY";
        }
        return "UNKNOWN";
}

const char *cri_container_state_to_string(uint64_t s) {
        static const char *const names[] = {
                [CRI_CONTAINER_CREATED] = "CREATED",
                [CRI_CONTAINER_RUNNING] = "RUNNING",
                [CRI_CONTAINER_EXITED] = "EXITED",
                [CRI_CONTAINER_UNKNOWN] = "UNKNOWN",
        };

        return s < ELEMENTSOF(names) ? names[s] : "UNKNOWN";
}

void cri_encode_version_request(ProtoWriter *w, const char *version) {
        proto_put_string(w, 1, version);
}

void cri_encode_id_request(ProtoWriter *w, const char *id) {
        proto_put_string(w, 1, id);
}

void cri_encode_stop_container_request(ProtoWriter *w, const char *id, int64_t timeout_sec) {
        proto_put_string(w, 1, id);
        proto_put_varint(w, 2, (uint64_t) timeout_sec);
}

void cri_encode_list_request(ProtoWriter *w) {
        (void) w;
}

void cri_encode_status_request(ProtoWriter *w, bool verbose) {
        /* StatusRequest{verbose = 1}; false is the empty message. */
        if (verbose)
                proto_put_bool(w, 1, true);
}

/* Field helpers: a known field with another wire type is left alone, like an unknown one. */
static int get_string(const ProtoField *f, char **ret) {
        return f->wire_type == PROTO_WIRE_LEN ? proto_field_string(f, ret) : 0;
}

static void get_u64(const ProtoField *f, uint64_t *ret) {
        if (f->wire_type == PROTO_WIRE_VARINT)
                *ret = f->value;
}

static void get_u32(const ProtoField *f, uint32_t *ret) {
        if (f->wire_type == PROTO_WIRE_VARINT)
                *ret = (uint32_t) f->value;
}

static void get_i64(const ProtoField *f, int64_t *ret) {
        if (f->wire_type == PROTO_WIRE_VARINT)
                *ret = (int64_t) f->value;
}

/* Walk the fields of a LEN field (or, with f NULL, of a whole buffer) and hand each to fn. */
typedef int (*field_fn)(const ProtoField *f, void *userdata);

static int walk(ProtoReader r, field_fn fn, void *userdata) {
        ProtoField f;
        int k;

        while ((k = proto_next(&r, &f)) > 0) {
                k = fn(&f, userdata);
                if (k < 0)
                        return k;
        }
        return k;
}

static int walk_field(const ProtoField *f, field_fn fn, void *userdata) {
        if (f->wire_type != PROTO_WIRE_LEN)
                return 0;
        return walk(proto_reader(f->data, f->len), fn, userdata);
}

static int version_field(const ProtoField *f, void *userdata) {
        CriVersion *v = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &v->version);
        case 2:
                return get_string(f, &v->runtime_name);
        case 3:
                return get_string(f, &v->runtime_version);
        case 4:
                return get_string(f, &v->runtime_api_version);
        }
        return 0;
}

int cri_decode_version_response(const void *p, size_t n, CriVersion *ret) {
        CriVersion v = {};
        int k;

        k = walk(proto_reader(p, n), version_field, &v);
        if (k < 0) {
                cri_version_done(&v);
                return k;
        }
        *ret = v;
        return 0;
}

void cri_runtime_status_done(CriRuntimeStatus *s) {
        free(s->runtime_reason);
        free(s->network_reason);
        free(s->network_message);
        *s = (CriRuntimeStatus) {};
}

typedef struct Condition {
        char *type, *reason, *message;
        uint64_t status;
} Condition;

/* RuntimeCondition{type = 1, status = 2, reason = 3, message = 4} */
static int condition_field(const ProtoField *f, void *userdata) {
        Condition *c = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &c->type);
        case 2:
                get_u64(f, &c->status);
                break;
        case 3:
                return get_string(f, &c->reason);
        case 4:
                return get_string(f, &c->message);
        }
        return 0;
}

/* RuntimeStatus{conditions = 1}: each condition by its type; the last of a type wins. */
static int runtime_status_field(const ProtoField *f, void *userdata) {
        CriRuntimeStatus *s = userdata;
        Condition c = {};
        int k = 0;

        if (f->number != 1)
                return 0;
        k = walk_field(f, condition_field, &c);
        if (k >= 0 && c.type && streq(c.type, "RuntimeReady")) {
                s->runtime_ready = c.status != 0;
                free(s->runtime_reason);
                s->runtime_reason = TAKE_PTR(c.reason);
        } else if (k >= 0 && c.type && streq(c.type, "NetworkReady")) {
                s->network_ready = c.status != 0;
                free(s->network_reason);
                free(s->network_message);
                s->network_reason = TAKE_PTR(c.reason);
                s->network_message = TAKE_PTR(c.message);
        }
        free(c.type);
        free(c.reason);
        free(c.message);
        return k;
}

/* StatusResponse{status = 1, info = 2 (verbose only, skipped)} */
static int status_response_field(const ProtoField *f, void *userdata) {
        return f->number == 1 ? walk_field(f, runtime_status_field, userdata) : 0;
}

int cri_decode_status_response(const void *p, size_t n, CriRuntimeStatus *ret) {
        CriRuntimeStatus s = {};
        int k;

        k = walk(proto_reader(p, n), status_response_field, &s);
        if (k < 0) {
                cri_runtime_status_done(&s);
                return k;
        }
        *ret = s;
        return 0;
}

typedef struct InfoLookup {
        const char *key;
        char *value;
} InfoLookup;

/* One map<string, string> entry {key = 1, value = 2}. */
typedef struct MapEntry {
        char *key, *value;
} MapEntry;

static int map_entry_field(const ProtoField *f, void *userdata) {
        MapEntry *e = userdata;

        if (f->number == 1)
                return get_string(f, &e->key);
        if (f->number == 2)
                return get_string(f, &e->value);
        return 0;
}

/* StatusResponse{info = 2: map<string, string>}: the last entry of the key wins, as in Go's map. */
static int status_info_field(const ProtoField *f, void *userdata) {
        InfoLookup *l = userdata;
        MapEntry e = {};
        int k;

        if (f->number != 2)
                return 0;
        k = walk_field(f, map_entry_field, &e);
        if (k >= 0 && streq_ptr(e.key, l->key)) {
                free(l->value);
                l->value = TAKE_PTR(e.value);
        }
        free(e.key);
        free(e.value);
        return k;
}

int cri_decode_status_info(const void *p, size_t n, const char *key, char **ret) {
        InfoLookup l = { .key = key };
        int k;

        k = walk(proto_reader(p, n), status_info_field, &l);
        if (k < 0) {
                free(l.value);
                return k;
        }
        *ret = l.value;
        return 0;
}

/* PodSandboxMetadata{name = 1, uid = 2, namespace = 3, attempt = 4} */
static int sandbox_metadata_field(const ProtoField *f, void *userdata) {
        CriSandbox *s = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &s->name);
        case 2:
                return get_string(f, &s->uid);
        case 3:
                return get_string(f, &s->namespace);
        case 4:
                get_u32(f, &s->attempt);
                break;
        }
        return 0;
}

/* PodSandbox{id = 1, metadata = 2, state = 3, created_at = 4, labels = 5, annotations = 6,
 * runtime_handler = 7}; the maps are skipped. */
static int sandbox_field(const ProtoField *f, void *userdata) {
        CriSandbox *s = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &s->id);
        case 2:
                return walk_field(f, sandbox_metadata_field, s);
        case 3:
                get_u64(f, &s->state);
                break;
        case 4:
                get_i64(f, &s->created_at);
                break;
        case 7:
                return get_string(f, &s->runtime_handler);
        }
        return 0;
}

/* Room for one more element. */
static int grow(void **arr, size_t *allocated, size_t n, size_t size) {
        if (n >= CRI_LIST_MAX)
                return -E2BIG;
        return greedy_realloc(arr, allocated, n + 1, size);
}

typedef struct SandboxList {
        CriSandbox *items;
        size_t n, allocated;
} SandboxList;

static int sandbox_list_field(const ProtoField *f, void *userdata) {
        SandboxList *l = userdata;
        int k;

        if (f->number != 1 || f->wire_type != PROTO_WIRE_LEN)
                return 0;
        k = grow((void **) &l->items, &l->allocated, l->n, sizeof(CriSandbox));
        if (k < 0)
                return k;
        l->items[l->n] = (CriSandbox) {};
        /* Counted before filling, so that a failure frees what the element already holds. */
        return walk_field(f, sandbox_field, &l->items[l->n++]);
}

int cri_decode_list_sandboxes_response(const void *p, size_t n, CriSandbox **ret, size_t *ret_n) {
        SandboxList l = {};
        int k;

        k = walk(proto_reader(p, n), sandbox_list_field, &l);
        if (k < 0) {
                cri_sandboxes_free(l.items, l.n);
                return k;
        }
        *ret = l.items;
        *ret_n = l.n;
        return 0;
}

/* NamespaceOption{network = 1, ...} inside Namespace{options = 2} inside
 * LinuxPodSandboxStatus{namespaces = 1}. */
static int namespace_option_field(const ProtoField *f, void *userdata) {
        if (f->number == 1)
                get_u64(f, userdata);
        return 0;
}

static int namespace_field(const ProtoField *f, void *userdata) {
        return f->number == 2 ? walk_field(f, namespace_option_field, userdata) : 0;
}

static int linux_status_field(const ProtoField *f, void *userdata) {
        return f->number == 1 ? walk_field(f, namespace_field, userdata) : 0;
}

/* PodSandboxNetworkStatus{ip = 1, additional_ips = 2} */
static int network_status_field(const ProtoField *f, void *userdata) {
        return f->number == 1 ? get_string(f, userdata) : 0;
}

/* PodSandboxStatus{id = 1, metadata = 2, state = 3, created_at = 4, network = 5, linux = 6, ...} */
static int sandbox_status_field(const ProtoField *f, void *userdata) {
        CriSandboxStatus *s = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &s->id);
        case 3:
                get_u64(f, &s->state);
                break;
        case 5:
                return walk_field(f, network_status_field, &s->ip);
        case 6:
                return walk_field(f, linux_status_field, &s->network_mode);
        }
        return 0;
}

/* PodSandboxStatusResponse{status = 1, info = 2, containers_statuses = 3, timestamp = 4} */
static int sandbox_status_response_field(const ProtoField *f, void *userdata) {
        return f->number == 1 ? walk_field(f, sandbox_status_field, userdata) : 0;
}

int cri_decode_sandbox_status_response(const void *p, size_t n, CriSandboxStatus *ret) {
        CriSandboxStatus s = {};
        int k;

        k = walk(proto_reader(p, n), sandbox_status_response_field, &s);
        if (k < 0) {
                cri_sandbox_status_done(&s);
                return k;
        }
        *ret = s;
        return 0;
}

/* ContainerMetadata{name = 1, attempt = 2} */
static int container_metadata_field(const ProtoField *f, void *userdata) {
        CriContainer *c = userdata;

        if (f->number == 1)
                return get_string(f, &c->name);
        if (f->number == 2)
                get_u32(f, &c->attempt);
        return 0;
}

/* ImageSpec{image = 1, ...} */
static int image_spec_field(const ProtoField *f, void *userdata) {
        return f->number == 1 ? get_string(f, userdata) : 0;
}

/* Container{id = 1, pod_sandbox_id = 2, metadata = 3, image = 4, image_ref = 5, state = 6,
 * created_at = 7, labels = 8, annotations = 9, image_id = 10} */
static int container_field(const ProtoField *f, void *userdata) {
        CriContainer *c = userdata;

        switch (f->number) {
        case 1:
                return get_string(f, &c->id);
        case 2:
                return get_string(f, &c->pod_sandbox_id);
        case 3:
                return walk_field(f, container_metadata_field, c);
        case 4:
                return walk_field(f, image_spec_field, &c->image);
        case 6:
                get_u64(f, &c->state);
                break;
        case 7:
                get_i64(f, &c->created_at);
                break;
        }
        return 0;
}

typedef struct ContainerList {
        CriContainer *items;
        size_t n, allocated;
} ContainerList;

static int container_list_field(const ProtoField *f, void *userdata) {
        ContainerList *l = userdata;
        int k;

        if (f->number != 1 || f->wire_type != PROTO_WIRE_LEN)
                return 0;
        k = grow((void **) &l->items, &l->allocated, l->n, sizeof(CriContainer));
        if (k < 0)
                return k;
        l->items[l->n] = (CriContainer) {};
        return walk_field(f, container_field, &l->items[l->n++]);
}

int cri_decode_list_containers_response(const void *p, size_t n, CriContainer **ret, size_t *ret_n) {
        ContainerList l = {};
        int k;

        k = walk(proto_reader(p, n), container_list_field, &l);
        if (k < 0) {
                cri_containers_free(l.items, l.n);
                return k;
        }
        *ret = l.items;
        *ret_n = l.n;
        return 0;
}

int cri_decode_empty_response(const void *p, size_t n) {
        return proto_validate(p, n);
}
