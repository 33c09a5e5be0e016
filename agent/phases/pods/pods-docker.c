/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase through Docker's Engine API: what kubeadm's reset did for dockershim nodes (docker
 * ps --filter name=k8s_, docker rm -f -v), by label and name, without a docker binary. Docker itself
 * keeps running: kubeadm left it so, and the operator's other containers, images and named volumes
 * are not this reset's (--with-runtime=docker stops and removes Docker in the services and files
 * phases). */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/engine/libraries.h"
#include "agent/os/docker-api.h"
#include "agent/phases/pods/pods-docker.h"
#include "cri/cri.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define DOCKER_PLAN_TIMEOUT_USEC (15 * USEC_PER_SEC)
/* A forced removal kills the container first: give it time, but never past the run's --timeout. */
#define DOCKER_CALL_TIMEOUT_USEC (30 * USEC_PER_SEC)
#define ID_SHORT 12

typedef struct DockerRow {
        char *socket; /* node path beneath the root */
        char *id;
        char api[DOCKER_API_MAX]; /* the version negotiated with the engine */
} DockerRow;

static void docker_row_free(void *p) {
        DockerRow *d = p;

        if (!d)
                return;
        free(d->socket);
        free(d->id);
        free(d);
}

static uint64_t call_timeout(const Context *ctx, uint64_t usec) {
        if (ctx->deadline_usec > 0)
                usec = u64_min(usec, usec_left(ctx->deadline_usec));
        return usec > USEC_PER_MSEC ? usec : USEC_PER_MSEC;
}

static int remove_apply(Action *a, Context *ctx, char **ret_msg) {
        const DockerRow *d = a->data;
        int r;

        r = docker_remove_container(ctx->root_fd, d->socket, d->api, d->id, call_timeout(ctx, DOCKER_CALL_TIMEOUT_USEC),
                                    ret_msg);
        if (r == 0)
                return set_errmsg(ret_msg, 0, "already gone");
        if (r > 0)
                return set_errmsg(ret_msg, 1, "removed through Docker's Engine API, its anonymous volumes with it");
        return r;
}

static int remove_check(Action *a, Context *ctx, char **ret_msg) {
        const DockerRow *d = a->data;
        int r;

        r = docker_container_exists(ctx->root_fd, d->socket, d->api, d->id, call_timeout(ctx, DOCKER_PLAN_TIMEOUT_USEC),
                                    ret_msg);
        if (r == -ECONNREFUSED || r == -ENOENT)
                return 0; /* Docker is not running: nothing of kubelet's runs in it */
        if (r > 0)
                return set_errmsg(ret_msg, 1, "the container still exists in Docker");
        return r;
}

static const ActionOps docker_container_ops = {
        .kind = "docker-remove-container",
        .apply = remove_apply,
        .check = remove_check,
        .free_data = docker_row_free,
};

static const ActionOps docker_sandbox_ops = {
        .kind = "docker-remove-pod",
        .apply = remove_apply,
        .check = remove_check,
        .free_data = docker_row_free,
};

static int engine_apply(Action *a, Context *ctx, char **ret_msg) {
        return set_errmsg(ret_msg, 0, "Docker keeps running: only kubelet's containers were its to remove");
}

static const ActionOps docker_engine_ops = {
        .kind = "docker",
        .apply = engine_apply,
};

/* An engine that was asked and did not answer as one (a hang, garbage, an API it will not speak): what
 * kubelet left in it could not be looked at. Its row fails when run, and verify counts it unobserved:
 * the verdict is unknown, never clean. */
static int unobserved_apply(Action *a, Context *ctx, char **ret_msg) {
        const int *error = a->data;

        return set_errmsg(ret_msg, *error, "%s", a->detail);
}

static const ActionOps docker_unobserved_ops = {
        .kind = "docker",
        .apply = unobserved_apply,
        .free_data = free,
};

static int unobserved_row(Plan *plan, const char *socket, int error, const char *err) {
        int *data = malloc(sizeof *data);
        Action *a;

        if (!data)
                return -ENOMEM;
        *data = error;
        a = plan_add(plan, &docker_unobserved_ops, "pods", socket, NULL, data);
        if (!a)
                return -ENOMEM;
        a->present = true;
        a->unobserved = true;
        a->code = "unobserved";
        return action_set_detail(a,
                                 "Docker's Engine API does not answer as Docker (%s): kubelet's containers in it "
                                 "cannot be listed, nor removed",
                                 err);
}

static int engine_row(Plan *plan, const char *socket, const char *fmt, ...) _printf_(3, 4);
static int engine_row(Plan *plan, const char *socket, const char *fmt, ...) {
        cleanup_free char *detail = NULL;
        va_list ap;
        Action *a;

        va_start(ap, fmt);
        detail = vstrprintf(fmt, ap);
        va_end(ap);
        a = plan_add(plan, &docker_engine_ops, "pods", socket, NULL, NULL);
        if (!a || !detail)
                return -ENOMEM;
        a->present = false; /* the engine itself is kept: nothing to do to it */
        a->detail = TAKE_PTR(detail);
        return 0;
}

static int container_row(Plan *plan, const char *socket, const char *api, const DockerContainer *c) {
        bool sandbox = docker_container_is_sandbox(c);
        char target[512];
        DockerRow *d;
        Action *a;

        d = calloc(1, sizeof *d);
        if (!d || !(d->socket = strdup(socket)) || !(d->id = strdup(c->id))) {
                docker_row_free(d);
                return -ENOMEM;
        }
        (void) snprintf(d->api, sizeof d->api, "%s", api);
        if (sandbox)
                snprintf(target, sizeof target, "%s/%s %.*s", strna(c->pod_namespace), strna(c->pod_name), ID_SHORT,
                         c->id);
        else
                snprintf(target, sizeof target, "%s/%s/%s %.*s", strna(c->pod_namespace), strna(c->pod_name),
                         strna(c->container_name), ID_SHORT, c->id);
        a = plan_add(plan, sandbox ? &docker_sandbox_ops : &docker_container_ops, "pods", target, NULL, d);
        if (!a)
                return -ENOMEM;
        a->present = true;
        return action_set_detail(a, "%s %s, Docker container %s: removed (force) with its anonymous volumes",
                                 strna(c->state), sandbox ? "pod sandbox" : "container", strna(c->name));
}

static int plan_engine(Context *ctx, Plan *plan, const char *socket) {
        cleanup_free char *err = NULL;
        char api[DOCKER_API_MAX] = "";
        DockerVersion v = {};
        DockerContainer *c = NULL;
        size_t n = 0, others = 0, sandboxes = 0;
        int r;

        r = docker_version(ctx->root_fd, socket, call_timeout(ctx, DOCKER_PLAN_TIMEOUT_USEC), &v, api, &err);
        if (r >= 0)
                r = docker_list_kubernetes(ctx->root_fd, socket, api, call_timeout(ctx, DOCKER_PLAN_TIMEOUT_USEC), &c,
                                           &n, &others, &err);
        if (r == -ENOMEM)
                goto finish;
        /* Nobody listens, or no socket: Docker is not running, and nothing of kubelet's runs in it. */
        if (r == -ECONNREFUSED || r == -ENOENT) {
                r = engine_row(plan, socket, "Docker is not running (%s): nothing of kubelet's runs in it", strna(err));
                goto finish;
        }
        if (r < 0) {
                log_warning("Docker's Engine API at %s does not answer as Docker: %s", socket, strna(err));
                r = unobserved_row(plan, socket, r, strna(err));
                goto finish;
        }
        for (size_t i = 0; i < n; i++)
                sandboxes += docker_container_is_sandbox(&c[i]);
        r = engine_row(plan, socket,
                       "Docker %s (API %s, spoken at %s) answers: %zu containers and %zu pod sandboxes of kubelet's "
                       "go, containers first; Docker, its images and every container kubelet did not make stay%s",
                       v.version, strna(v.api), api, n - sandboxes, sandboxes,
                       others > 0 ? " (some carry a dockershim label without its k8s_ name: kept)" : "");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = container_row(plan, socket, api, &c[i]);
finish:
        docker_containers_free(c, n);
        docker_version_done(&v);
        return r;
}

int pods_docker_plan(Context *ctx, Plan *plan, bool cri_dockerd_answered) {
        bool checked = false;
        int r = 0;

        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_DOCKER_ENDPOINT) {
                cleanup_free char *socket = NULL;

                r = cri_endpoint_to_path(e->args[0], &socket);
                if (r < 0)
                        return r;
                if (cri_dockerd_answered) {
                        r = engine_row(plan, socket, "%s",
                                       "cri-dockerd answers on its CRI socket: kubelet's pods go "
                                       "through it, Docker's Engine API is not asked");
                        continue;
                }
                /* libcurl is loaded at the first call, not when the phase was chosen. */
                if (!checked && (r = libraries_plan_missing(plan, "pods", DLIB_LIBCURL, "Docker's pods")) != 0)
                        return r < 0 ? r : 0;
                checked = true;
                r = plan_engine(ctx, plan, socket);
                if (r < 0)
                        return r;
        }
        return r;
}
