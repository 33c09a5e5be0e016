/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* RunPodSandbox, CreateContainer and StartContainer, for the test harness only. */

#include <errno.h>
#include <stdlib.h>

#include "tests/support/cri-testcalls.h"
#include "errno-util.h"
#include "macro.h"

/* PodSandboxMetadata{name = 1, uid = 2, namespace = 3} */
static void encode_metadata(ProtoWriter *w, const CriPodSpec *spec) {
        proto_put_string(w, 1, spec->name);
        proto_put_string(w, 2, spec->uid);
        proto_put_string(w, 3, spec->namespace);
}

/* LinuxPodSandboxConfig{cgroup_parent = 1, security_context = 2{namespace_options = 1{network = 1}}} */
static void encode_linux(ProtoWriter *w, const CriPodSpec *spec) {
        ProtoWriter sc, ns;

        proto_writer_init(&sc);
        proto_writer_init(&ns);
        proto_put_string(w, 1, spec->cgroup_parent);
        proto_put_varint(&ns, 1, spec->host_network ? CRI_NAMESPACE_NODE : CRI_NAMESPACE_POD);
        proto_put_message(&sc, 1, &ns);
        proto_put_message(w, 2, &sc);
        proto_writer_done(&ns);
        proto_writer_done(&sc);
}

/* PodSandboxConfig{metadata = 1, hostname = 2, labels = 6, linux = 8} */
void cri_encode_pod_config(ProtoWriter *w, const CriPodSpec *spec) {
        ProtoWriter md, lx;

        proto_writer_init(&md);
        proto_writer_init(&lx);
        encode_metadata(&md, spec);
        encode_linux(&lx, spec);
        proto_put_message(w, 1, &md);
        if (!spec->host_network)
                proto_put_string(w, 2, spec->name);
        proto_put_map_entry(w, 6, "io.kubernetes.pod.name", spec->name);
        proto_put_map_entry(w, 6, "io.kubernetes.pod.namespace", spec->namespace);
        proto_put_message(w, 8, &lx);
        proto_writer_done(&md);
        proto_writer_done(&lx);
}

/* A response whose only field of interest is a string id at field 1. */
static int call_for_id(CriClient *c, const char *method, ProtoWriter *w, char **ret_id, char **reterr_msg) {
        cleanup_free uint8_t *resp = NULL;
        size_t len = 0;
        int r;

        r = cri_client_unary(c, method, 0, w, &resp, &len, NULL, reterr_msg);
        proto_writer_done(w);
        if (r < 0)
                return r;
        r = cri_decode_id_response(resp, len, ret_id);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "malformed %s response", method);
        return 0;
}

/* RunPodSandboxRequest{config = 1, runtime_handler = 2} */
void cri_encode_run_sandbox_request(ProtoWriter *w, const CriPodSpec *spec) {
        ProtoWriter cfg;

        proto_writer_init(&cfg);
        cri_encode_pod_config(&cfg, spec);
        proto_put_message(w, 1, &cfg);
        proto_writer_done(&cfg);
}

static void encode_mount(ProtoWriter *w, const CriMountSpec *m) {
        ProtoWriter mw;

        proto_writer_init(&mw);
        proto_put_string(&mw, 1, m->container_path);
        proto_put_string(&mw, 2, m->host_path);
        if (m->readonly)
                proto_put_bool(&mw, 3, true);
        proto_put_message(w, 7, &mw);
        proto_writer_done(&mw);
}

/* CreateContainerRequest{pod_sandbox_id = 1, config = 2{metadata = 1{name = 1}, image = 2{image = 1},
 * args = 4, mounts = 7, labels = 9}, sandbox_config = 3} */
void cri_encode_create_container_request(ProtoWriter *w, const char *sandbox_id, const CriPodSpec *spec,
                                         const CriContainerSpec *container) {
        ProtoWriter cfg, md, img, sb;

        proto_writer_init(&cfg);
        proto_writer_init(&md);
        proto_writer_init(&img);
        proto_writer_init(&sb);
        proto_put_string(&md, 1, container->name);
        proto_put_string(&img, 1, container->image);
        proto_put_message(&cfg, 1, &md);
        proto_put_message(&cfg, 2, &img);
        for (const char *const *a = container->args; a && *a; a++)
                proto_put_string(&cfg, 4, *a);
        for (size_t i = 0; i < container->n_mounts; i++)
                encode_mount(&cfg, &container->mounts[i]);
        proto_put_map_entry(&cfg, 9, "io.kubernetes.container.name", container->name);
        cri_encode_pod_config(&sb, spec);
        proto_put_string(w, 1, sandbox_id);
        proto_put_message(w, 2, &cfg);
        proto_put_message(w, 3, &sb);
        proto_writer_done(&cfg);
        proto_writer_done(&md);
        proto_writer_done(&img);
        proto_writer_done(&sb);
}

int cri_decode_id_response(const void *p, size_t n, char **ret_id) {
        ProtoReader rd = proto_reader(p, n);
        char *id = NULL;
        ProtoField f;
        int r;

        while ((r = proto_next(&rd, &f)) > 0)
                if (f.number == 1 && (r = proto_field_string(&f, &id)) < 0)
                        break;
        if (r < 0 || !id) {
                free(id);
                return r == -ENOMEM ? r : -EBADMSG;
        }
        *ret_id = id;
        return 0;
}

int cri_run_sandbox(CriClient *c, const CriPodSpec *spec, char **ret_id, char **reterr_msg) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_run_sandbox_request(&w, spec);
        return call_for_id(c, "RunPodSandbox", &w, ret_id, reterr_msg);
}

int cri_create_container(CriClient *c, const char *sandbox_id, const CriPodSpec *spec,
                         const CriContainerSpec *container, char **ret_id, char **reterr_msg) {
        ProtoWriter w;

        proto_writer_init(&w);
        cri_encode_create_container_request(&w, sandbox_id, spec, container);
        return call_for_id(c, "CreateContainer", &w, ret_id, reterr_msg);
}

int cri_start_container(CriClient *c, const char *id, char **reterr_msg) {
        cleanup_free uint8_t *resp = NULL;
        size_t len = 0;
        ProtoWriter w;
        int r;

        proto_writer_init(&w);
        cri_encode_id_request(&w, id);
        r = cri_client_unary(c, "StartContainer", 0, &w, &resp, &len, NULL, reterr_msg);
        proto_writer_done(&w);
        return r;
}
