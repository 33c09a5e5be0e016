/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Docker's Engine API over its unix socket: the version, kubelet's containers by label, and their
 * removal, with the JSON answers read by agent/base/json.c. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/http.h"
#include "agent/base/json.h"
#include "agent/os/docker-api.h"
#include "agent/os/fileio.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define DOCKER_ANSWER_MAX (16U << 20)
/* The filter {"label":["io.kubernetes.docker.type"]}, URL-encoded: every container with that label. */
#define DOCKER_LIST_QUERY "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22" DOCKER_LABEL_TYPE "%22%5D%7D"

static char *dup_or_null(const char *s) {
        return s ? strdup(s) : NULL;
}

static void container_done(DockerContainer *c) {
        free(c->id);
        free(c->name);
        free(c->state);
        free(c->type);
        free(c->pod_uid);
        free(c->pod_name);
        free(c->pod_namespace);
        free(c->container_name);
        *c = (DockerContainer) {};
}

void docker_containers_free(DockerContainer *c, size_t n) {
        for (size_t i = 0; c && i < n; i++)
                container_done(&c[i]);
        free(c);
}

static const char *label(const JsonValue *labels, const char *key) {
        return json_string_of(json_get(labels, key, false));
}

/* One element of the array; Go fills the struct fields (Id, Names, State) ignoring case. */
static int container_parse(const JsonValue *o, DockerContainer *c) {
        const JsonValue *names = json_get(o, "Names", true), *labels = json_get(o, "Labels", true);
        const char *id = json_string_of(json_get(o, "Id", true));
        const char *name = names && names->type == JSON_ARRAY && names->n > 0 ? json_string_of(names->items[0]) : NULL;

        if (o->type != JSON_OBJECT || !id || (labels && labels->type != JSON_OBJECT && labels->type != JSON_NULL))
                return -EBADMSG;
        if (name && name[0] == '/')
                name++;
        *c = (DockerContainer) {
                .id = strdup(id),
                .name = dup_or_null(name),
                .state = dup_or_null(json_string_of(json_get(o, "State", true))),
                .type = dup_or_null(label(labels, DOCKER_LABEL_TYPE)),
                .pod_uid = dup_or_null(label(labels, DOCKER_LABEL_POD_UID)),
                .pod_name = dup_or_null(label(labels, DOCKER_LABEL_POD_NAME)),
                .pod_namespace = dup_or_null(label(labels, DOCKER_LABEL_POD_NAMESPACE)),
                .container_name = dup_or_null(label(labels, DOCKER_LABEL_CONTAINER_NAME)),
        };
        if (!c->id || (name && !c->name) || (c->type == NULL) != (label(labels, DOCKER_LABEL_TYPE) == NULL))
                return -ENOMEM;
        return 0;
}

int docker_containers_parse(const char *json, size_t size, DockerContainer **ret, size_t *ret_n) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        DockerContainer *l;
        int r;

        r = json_parse(json, size, &v);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        if (v->type != JSON_ARRAY)
                return -EBADMSG;
        l = calloc(v->n ? v->n : 1, sizeof *l);
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < v->n; i++) {
                r = container_parse(v->items[i], &l[i]);
                if (r < 0) {
                        docker_containers_free(l, v->n);
                        return r;
                }
        }
        *ret = l;
        *ret_n = v->n;
        return 0;
}

/* k8s_<container>_<pod>_<namespace>_<uid>_<attempt>, or with a random suffix after it (7 parts). */
static bool name_is_dockershim(const char *name, bool sandbox) {
        const char *p[8];
        size_t n = 0;
        char *end;

        if (!name)
                return false;
        for (const char *s = name; n < ELEMENTSOF(p); s = strchr(s, '_') + 1) {
                p[n++] = s;
                if (!strchr(s, '_'))
                        break;
        }
        if ((n != 6 && n != 7) || !startswith(name, "k8s_"))
                return false;
        if (sandbox != (strncmp(p[1], "POD_", 4) == 0))
                return false;
        if (!ascii_isdigit(*p[5]))
                return false;
        (void) strtoul(p[5], &end, 10);
        return *end == (n == 7 ? '_' : '\0');
}

bool docker_container_is_sandbox(const DockerContainer *c) {
        return streq_ptr(c->type, DOCKER_TYPE_SANDBOX);
}

bool docker_container_is_kubernetes(const DockerContainer *c) {
        bool sandbox = docker_container_is_sandbox(c);

        if (!sandbox && !streq_ptr(c->type, DOCKER_TYPE_CONTAINER))
                return false;
        return !isempty(c->pod_uid) && name_is_dockershim(c->name, sandbox);
}

void docker_version_done(DockerVersion *v) {
        v->version = mfree(v->version);
        v->api = mfree(v->api);
        v->min_api = mfree(v->min_api);
}

int docker_version_parse(const char *json, size_t size, DockerVersion *ret) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const char *version, *api, *min;
        int r;

        *ret = (DockerVersion) {};
        r = json_parse(json, size, &v);
        if (r < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        version = json_string_of(json_get(v, "Version", true));
        api = json_string_of(json_get(v, "ApiVersion", true));
        min = json_string_of(json_get(v, "MinAPIVersion", true));
        if (v->type != JSON_OBJECT || !version)
                return -EBADMSG;
        *ret = (DockerVersion) { .version = strdup(version), .api = dup_or_null(api), .min_api = dup_or_null(min) };
        if (!ret->version || (api && !ret->api) || (min && !ret->min_api)) {
                docker_version_done(ret);
                return -ENOMEM;
        }
        return 0;
}

/* "MAJOR.MINOR" as a number to compare (1.44 is 1044), -1 for anything else. */
static long api_number(const char *s) {
        unsigned long major, minor;
        char *end;

        if (!s || !ascii_isdigit(s[0]))
                return -1;
        major = strtoul(s, &end, 10);
        if (*end != '.' || !ascii_isdigit(end[1]) || major > 99)
                return -1;
        minor = strtoul(end + 1, &end, 10);
        if (*end != '\0' || minor > 999)
                return -1;
        return (long) (major * 1000 + minor);
}

int docker_api_negotiate(const DockerVersion *v, char ret[static DOCKER_API_MAX]) {
        long ours = api_number(DOCKER_API_OURS), max = v->api ? api_number(v->api) : ours;
        long min = v->min_api ? api_number(v->min_api) : ours;

        if (max < 0 || min < 0)
                return -EBADMSG;
        if (max < ours)
                return -EPROTONOSUPPORT;
        (void) snprintf(ret, DOCKER_API_MAX, "%s", min > ours ? v->min_api : DOCKER_API_OURS);
        return 0;
}

/* --- Calls -------------------------------------------------------------------------------- */

/* Docker's own words for a failure: {"message": "..."}. */
static char *answer_message(const HttpResult *res) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        const char *m;

        if (!res->body || json_parse(res->body, res->body_size, &v) < 0 ||
            !(m = json_string_of(json_get(v, "message", true))))
                return strprintf("HTTP %ld", res->status);
        return strprintf("HTTP %ld: %s", res->status, m);
}

/* One call; api NULL: unversioned (the engine's newest). */
static int call(int root_fd, const char *socket, const char *api, const char *method, const char *path,
                uint64_t timeout_usec, HttpResult *res, char **reterr_msg) {
        cleanup_free char *url = api ? strprintf("http://docker/v%s%s", api, path) : strprintf("http://docker%s", path);
        cleanup_close int fd = -EBADF;
        char proc[FILEIO_PROC_FD_MAX];
        HttpRequest req;
        int r;

        *res = (HttpResult) {};
        if (!url)
                return -ENOMEM;
        fd = fileio_socket_in_root(root_fd, socket, proc);
        if (fd < 0)
                return set_errmsg(reterr_msg, fd, "%s: %s", socket, fileio_socket_strerror(fd));
        req = (HttpRequest) {
                .url = url,
                .method = method,
                .unix_socket = proc,
                .response_max = DOCKER_ANSWER_MAX,
                .connect_timeout_ms = timeout_usec / USEC_PER_MSEC,
                .timeout_ms = timeout_usec / USEC_PER_MSEC,
        };
        r = http_perform(&req, res);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "%s %s: %s", method, path, res->error[0] ? res->error : strerror(-r));
        if (res->code == CURLE_OK)
                return res->truncated ? set_errmsg(reterr_msg, -EFBIG, "%s %s: the answer is larger than %u bytes",
                                                   method, path, DOCKER_ANSWER_MAX)
                                      : 0;
        r = res->code == CURLE_COULDNT_CONNECT      ? -ECONNREFUSED
            : res->code == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
                                                    : -EIO;
        return set_errmsg(reterr_msg, r, "%s %s on %s: %s", method, path, socket, res->error);
}

/* An answer with a status other than the call's success (and 404 where that means gone). */
static int unexpected(const HttpResult *res, const char *what, char **reterr_msg) {
        cleanup_free char *m = answer_message(res);

        return set_errmsg(reterr_msg, -EPROTO, "%s: %s", what, strna(m));
}

int docker_version(int root_fd, const char *socket, uint64_t timeout_usec, DockerVersion *ret,
                   char ret_api[static DOCKER_API_MAX], char **reterr_msg) {
        HttpResult res;
        int r;

        *ret = (DockerVersion) {};
        r = call(root_fd, socket, NULL, "GET", "/version", timeout_usec, &res, reterr_msg);
        if (r >= 0 && res.status != 200)
                r = unexpected(&res, "GET /version", reterr_msg);
        else if (r >= 0 && (r = docker_version_parse(strempty(res.body), res.body_size, ret)) < 0)
                r = set_errmsg(reterr_msg, r == -ENOMEM ? r : -EPROTO, "GET /version: not Docker's answer");
        http_result_done(&res);
        if (r >= 0 && (r = docker_api_negotiate(ret, ret_api)) < 0)
                r = set_errmsg(reterr_msg, r == -EPROTONOSUPPORT ? r : -EPROTO,
                               "Docker %s speaks API %s to %s, and node-reset needs %s at least", ret->version,
                               strna(ret->min_api), strna(ret->api), DOCKER_API_OURS);
        if (r < 0)
                docker_version_done(ret);
        return r;
}

/* Keep kubelet's containers, sandboxes after containers (the order they go in). */
static void keep_kubernetes(DockerContainer *l, size_t n, size_t *ret_n, size_t *ret_others) {
        size_t k = 0, others = 0;

        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        if (!l[i].id || !docker_container_is_kubernetes(&l[i]) ||
                            docker_container_is_sandbox(&l[i]) != (pass == 1))
                                continue;
                        if (k != i) {
                                DockerContainer t = l[k];

                                l[k] = l[i];
                                l[i] = t;
                        }
                        k++;
                }
        for (size_t i = k; i < n; i++) {
                others += l[i].id != NULL;
                container_done(&l[i]);
        }
        *ret_n = k;
        *ret_others = others;
}

int docker_list_kubernetes(int root_fd, const char *socket, const char *api, uint64_t timeout_usec,
                           DockerContainer **ret, size_t *ret_n, size_t *ret_others, char **reterr_msg) {
        DockerContainer *l = NULL;
        HttpResult res;
        size_t n = 0;
        int r;

        r = call(root_fd, socket, api, "GET", DOCKER_LIST_QUERY, timeout_usec, &res, reterr_msg);
        if (r >= 0 && res.status != 200)
                r = unexpected(&res, "GET /containers/json", reterr_msg);
        else if (r >= 0 && (r = docker_containers_parse(strempty(res.body), res.body_size, &l, &n)) < 0)
                r = set_errmsg(reterr_msg, r == -ENOMEM ? r : -EPROTO, "GET /containers/json: not Docker's answer");
        http_result_done(&res);
        if (r < 0)
                return r;
        keep_kubernetes(l, n, ret_n, ret_others);
        *ret = l;
        return 0;
}

/* A container ID as the Engine API gives it: hex only, so it needs no escaping in a URL. */
static bool id_valid(const char *id) {
        return !isempty(id) && strspn(id, "0123456789abcdef") == strlen(id) && strlen(id) <= 64;
}

/* A call on one container: its ID checked, then "200 (or 204) yes, 404 no" as 1 and 0. */
static int call_on(int root_fd, const char *socket, const char *api, const char *method, const char *id,
                   const char *suffix, uint64_t timeout_usec, char **reterr_msg) {
        cleanup_free char *path = NULL;
        HttpResult res;
        int r;

        if (!id_valid(id))
                return set_errmsg(reterr_msg, -EINVAL, "'%s' is no container ID", id);
        path = strprintf("/containers/%s%s", id, suffix);
        if (!path)
                return -ENOMEM;
        r = call(root_fd, socket, api, method, path, timeout_usec, &res, reterr_msg);
        if (r >= 0)
                r = res.status == 200 || res.status == 204 ? 1
                    : res.status == 404                    ? 0
                                                           : unexpected(&res, method, reterr_msg);
        http_result_done(&res);
        return r;
}

int docker_remove_container(int root_fd, const char *socket, const char *api, const char *id, uint64_t timeout_usec,
                            char **reterr_msg) {
        return call_on(root_fd, socket, api, "DELETE", id, "?force=1&v=1", timeout_usec, reterr_msg);
}

int docker_container_exists(int root_fd, const char *socket, const char *api, const char *id, uint64_t timeout_usec,
                            char **reterr_msg) {
        return call_on(root_fd, socket, api, "GET", id, "/json", timeout_usec, reterr_msg);
}
