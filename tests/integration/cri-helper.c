/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods test's and benchmark's CRI client: creates pods on a test containerd, counts what is left,
 * does the sequential stop/remove baseline, and makes single calls against hostile servers.
 *
 *   cri-helper SOCKET [--timeout-ms N] [--max-response N] COMMAND [ARGS...]
 *     version | list-sandboxes | list-containers | stop-sandbox ID | status
 *                                  one call: "ok ..." and exit 0, or "error ERRNO: message" and exit 1
 *                                  (status: "ok runtime-ready=0|1 network-ready=0|1")
 *     list                         every sandbox and container, one per line
 *     count sandboxes|containers   a number
 *     run-pods N PREFIX CGROUP_PARENT HOST_EVERY CONTAINERS_EVERY CONCURRENCY [KUBELET_DIR]
 *                                  N sandboxes; every HOST_EVERY-th on the host network, every
 *                                  CONTAINERS_EVERY-th with a running container (0: none). With
 *                                  KUBELET_DIR, as kubelet hands volumes over: each container mounts
 *                                  its pod's emptyDir and projected volume from
 *                                  KUBELET_DIR/pods/UID/volumes/ (made by the caller, as kubelet makes
 *                                  them), and the first pod gets a second container, "hung", whose
 *                                  process ignores SIGTERM
 *     stop-remove-sequential       what crictl stopp/rmp do: one pod after the other, same client
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cri/cri.h"
#include "tests/support/cri-testcalls.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

#define IMAGE "registry.local/pause:test"

static CriClient *client;

static int print_error(int r, const char *msg) {
        printf("error %s: %s\n", strerrorname_np(-r) ?: "?", msg ?: strerror(-r));
        return 1;
}

/* One stop or remove, as the agent makes them: through cri_run_ops(). */
static int one_op(CriOpKind kind, const char *id, char **reterr) {
        CriOp op = { .kind = kind, .id = id };
        int r = cri_run_ops(client, 0, &op, 1, 1);

        if (r >= 0)
                r = op.result;
        if (r < 0 && op.message)
                *reterr = TAKE_PTR(op.message);
        cri_op_done(&op);
        return r;
}

static int cmd_single(const char *cmd, const char *arg) {
        cleanup_free char *err = NULL;
        int r;

        if (streq(cmd, "version")) {
                CriVersion v = {};

                r = cri_version(client, 0, &v, &err);
                if (r >= 0)
                        printf("ok %s %s %s\n", strna(v.runtime_name), strna(v.runtime_version),
                               strna(v.runtime_api_version));
                cri_version_done(&v);
        } else if (streq(cmd, "list-sandboxes")) {
                CriSandbox *s = NULL;
                size_t n = 0;

                r = cri_list_sandboxes(client, 0, &s, &n, &err);
                if (r >= 0)
                        printf("ok %zu\n", n);
                cri_sandboxes_free(s, n);
        } else if (streq(cmd, "list-containers")) {
                CriContainer *c = NULL;
                size_t n = 0;

                r = cri_list_containers(client, 0, &c, &n, &err);
                if (r >= 0)
                        printf("ok %zu\n", n);
                cri_containers_free(c, n);
        } else if (streq(cmd, "status")) {
                CriRuntimeStatus st = {};

                r = cri_status(client, 0, &st, &err);
                if (r >= 0)
                        printf("ok runtime-ready=%d network-ready=%d\n", st.runtime_ready, st.network_ready);
                cri_runtime_status_done(&st);
        } else if (streq(cmd, "stop-sandbox") && arg) {
                r = one_op(CRI_OP_STOP_SANDBOX, arg, &err);
                if (r >= 0)
                        printf("ok\n");
        } else {
                fprintf(stderr, "cri-helper: unknown command %s\n", cmd);
                return 2;
        }
        return r < 0 ? print_error(r, err) : 0;
}

static int cmd_list(bool count_only, const char *what) {
        cleanup_free char *err = NULL;
        CriSandbox *s = NULL;
        CriContainer *c = NULL;
        size_t ns = 0, nc = 0;
        int r;

        r = cri_list_sandboxes(client, 0, &s, &ns, &err);
        if (r >= 0)
                r = cri_list_containers(client, 0, &c, &nc, &err);
        if (r < 0)
                return print_error(r, err);
        if (count_only)
                printf("%zu\n", streq(what, "containers") ? nc : ns);
        for (size_t i = 0; !count_only && i < ns; i++)
                printf("sandbox %s %s/%s %s\n", s[i].id, strna(s[i].namespace), strna(s[i].name),
                       cri_sandbox_state_to_string(s[i].state));
        for (size_t i = 0; !count_only && i < nc; i++)
                printf("container %s %s %s %s\n", c[i].id, c[i].pod_sandbox_id, strna(c[i].name),
                       cri_container_state_to_string(c[i].state));
        cri_sandboxes_free(s, ns);
        cri_containers_free(c, nc);
        return 0;
}

/* Run one method for every request in ws at once; failures are printed and counted. */
static int run_batch(const char *method, ProtoWriter *ws, size_t n, unsigned concurrency, char **ret_ids) {
        cleanup_free GrpcCall *calls = calloc(n, sizeof(GrpcCall));
        char path[96];
        int failed = 0, r;

        if (!calls)
                return -ENOMEM;
        cri_client_path(client, method, path, sizeof path);
        for (size_t i = 0; i < n; i++)
                calls[i] = (GrpcCall) { .path = path, .request = ws[i].buf, .request_len = ws[i].len };
        r = grpc_channel_run(cri_client_channel(client), calls, n, concurrency);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0 && calls[i].result >= 0 && ret_ids &&
                    cri_decode_id_response(calls[i].response, calls[i].response_len, &ret_ids[i]) < 0)
                        calls[i].result = -EBADMSG;
                if (r >= 0 && calls[i].result < 0) {
                        fprintf(stderr, "%s: %s\n", method, strna(calls[i].message));
                        failed++;
                }
                grpc_call_done(&calls[i]);
                proto_writer_done(&ws[i]);
        }
        return r < 0 ? r : failed ? -EIO : 0;
}

typedef struct Pods {
        size_t n;
        CriPodSpec *specs;
        char **names, **uids;
        char **sandbox_ids;
        size_t *container_pod; /* each container's pod */
        bool *container_hung;
        size_t n_containers;
        char **container_ids;
        const char *kubelet_dir;
} Pods;

static void pods_done(Pods *p) {
        for (size_t i = 0; i < p->n; i++) {
                free(p->names[i]);
                free(p->uids[i]);
                free(p->sandbox_ids[i]);
        }
        for (size_t i = 0; i < p->n_containers; i++)
                free(p->container_ids[i]);
        free(p->specs);
        free(p->names);
        free(p->uids);
        free(p->sandbox_ids);
        free(p->container_pod);
        free(p->container_hung);
        free(p->container_ids);
}

/* At most one container per pod and the hung one. */
static int pods_alloc(Pods *p, size_t n) {
        p->n = n;
        p->specs = calloc(n, sizeof(CriPodSpec));
        p->names = calloc(n, sizeof(char *));
        p->uids = calloc(n, sizeof(char *));
        p->sandbox_ids = calloc(n, sizeof(char *));
        p->container_pod = calloc(n + 1, sizeof(size_t));
        p->container_hung = calloc(n + 1, sizeof(bool));
        p->container_ids = calloc(n + 1, sizeof(char *));
        return p->specs && p->names && p->uids && p->sandbox_ids && p->container_pod && p->container_hung &&
                               p->container_ids
                       ? 0
                       : -ENOMEM;
}

static void add_container(Pods *p, size_t pod, bool hung) {
        p->container_pod[p->n_containers] = pod;
        p->container_hung[p->n_containers++] = hung;
}

/* The volumes kubelet would hand over for one pod: an emptyDir and the service account's projected
 * volume (kubelet's pod volume directory layout: pkg/kubelet/kubelet_getters.go getPodVolumeDir). */
static int encode_container(const Pods *p, size_t k, ProtoWriter *w) {
        static const char *const hung_args[] = { "--ignore-term", NULL };
        size_t i = p->container_pod[k];
        cleanup_free char *empty = NULL, *projected = NULL;
        CriMountSpec mounts[2];
        CriContainerSpec c = {
                .name = p->container_hung[k] ? "hung" : "app",
                .image = IMAGE,
                .args = p->container_hung[k] ? hung_args : NULL,
                .mounts = mounts,
        };

        if (p->kubelet_dir) {
                if (asprintf(&empty, "%s/pods/%s/volumes/kubernetes.io~empty-dir/data", p->kubelet_dir, p->uids[i]) < 0 ||
                    asprintf(&projected, "%s/pods/%s/volumes/kubernetes.io~projected/kube-api-access", p->kubelet_dir,
                             p->uids[i]) < 0)
                        return -ENOMEM;
                mounts[0] = (CriMountSpec) { .container_path = "/data", .host_path = empty };
                mounts[1] = (CriMountSpec) { .container_path = "/var/run/secrets/kubernetes.io/serviceaccount",
                                             .host_path = projected,
                                             .readonly = true };
                c.n_mounts = 2;
        }
        cri_encode_create_container_request(w, p->sandbox_ids[i], &p->specs[i], &c);
        return 0;
}

static int run_containers(Pods *p, unsigned concurrency) {
        cleanup_free ProtoWriter *ws = calloc(p->n_containers ? p->n_containers : 1, sizeof(ProtoWriter));
        int r;

        if (!ws)
                return -ENOMEM;
        for (size_t k = 0; k < p->n_containers; k++)
                if (encode_container(p, k, &ws[k]) < 0)
                        return -ENOMEM;
        r = run_batch("CreateContainer", ws, p->n_containers, concurrency, p->container_ids);
        if (r < 0)
                return r;
        for (size_t k = 0; k < p->n_containers; k++)
                cri_encode_id_request(&ws[k], p->container_ids[k]);
        return run_batch("StartContainer", ws, p->n_containers, concurrency, NULL);
}

static int cmd_run_pods(char **argv, int argc) {
        unsigned long n = strtoul(argv[0], NULL, 10), host_every = strtoul(argv[3], NULL, 10),
                      with_every = strtoul(argv[4], NULL, 10), concurrency = strtoul(argv[5], NULL, 10);
        cleanup_free ProtoWriter *ws = NULL;
        size_t n_host = 0;
        Pods p = { .kubelet_dir = argc > 6 ? argv[6] : NULL };
        int r;

        if (n == 0 || pods_alloc(&p, n) < 0 || !(ws = calloc(n, sizeof(ProtoWriter))))
                return 2;
        for (size_t i = 0; i < n; i++) {
                if (asprintf(&p.names[i], "%s-%zu", argv[1], i) < 0 ||
                    asprintf(&p.uids[i], "uid-%s-%zu", argv[1], i) < 0)
                        return 2;
                p.specs[i] = (CriPodSpec) { .name = p.names[i],
                                            .namespace = "nr-test",
                                            .uid = p.uids[i],
                                            .cgroup_parent = argv[2],
                                            .host_network = host_every > 0 && i % host_every == host_every - 1 };
                n_host += p.specs[i].host_network;
                if (with_every > 0 && i % with_every == 0)
                        add_container(&p, i, false);
                cri_encode_run_sandbox_request(&ws[i], &p.specs[i]);
        }
        if (p.kubelet_dir)
                add_container(&p, 0, true);
        r = run_batch("RunPodSandbox", ws, n, (unsigned) concurrency, p.sandbox_ids);
        if (r >= 0)
                r = run_containers(&p, (unsigned) concurrency);
        if (r >= 0)
                printf("ran %zu sandboxes (%zu on the host network), %zu running containers\n", p.n, n_host,
                       p.n_containers);
        pods_done(&p);
        return r < 0 ? 1 : 0;
}

static int cmd_stop_remove_sequential(void) {
        cleanup_free char *err = NULL;
        CriSandbox *s = NULL;
        size_t n = 0;
        int r, failed = 0;

        r = cri_list_sandboxes(client, 0, &s, &n, &err);
        if (r < 0)
                return print_error(r, err);
        for (size_t i = 0; i < n; i++) {
                r = one_op(CRI_OP_STOP_SANDBOX, s[i].id, &err);
                if (r >= 0)
                        r = one_op(CRI_OP_REMOVE_SANDBOX, s[i].id, &err);
                if (r < 0) {
                        fprintf(stderr, "%s: %s\n", s[i].id, strna(err));
                        err = mfree(err);
                        failed++;
                }
        }
        printf("stopped and removed %zu of %zu sandboxes\n", n - failed, n);
        cri_sandboxes_free(s, n);
        return failed ? 1 : 0;
}

int main(int argc, char *argv[]) {
        int i = 2, r;

        if (argc < 3) {
                fprintf(stderr, "usage: cri-helper SOCKET [--timeout-ms N] [--max-response N] COMMAND [ARGS...]\n");
                return 2;
        }
        r = cri_client_new(argv[1], &client);
        if (r < 0)
                return print_error(r, "cannot create the client");
        cri_client_set_timeout(client, 60ULL * 1000000ULL);
        for (; i + 1 < argc && startswith(argv[i], "--"); i += 2)
                if (streq(argv[i], "--timeout-ms"))
                        cri_client_set_timeout(client, strtoull(argv[i + 1], NULL, 10) * 1000ULL);
                else if (streq(argv[i], "--max-response"))
                        cri_client_set_max_response(client, strtoull(argv[i + 1], NULL, 10));
        if (i >= argc)
                r = 2;
        else if (streq(argv[i], "list"))
                r = cmd_list(false, "");
        else if (streq(argv[i], "count") && i + 1 < argc)
                r = cmd_list(true, argv[i + 1]);
        else if (streq(argv[i], "run-pods") && i + 6 < argc)
                r = cmd_run_pods(argv + i + 1, argc - i - 1);
        else if (streq(argv[i], "stop-remove-sequential"))
                r = cmd_stop_remove_sequential();
        else
                r = cmd_single(argv[i], i + 1 < argc ? argv[i + 1] : NULL);
        cri_client_free(client);
        return r;
}
