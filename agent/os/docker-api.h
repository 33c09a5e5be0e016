/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Docker's Engine API on its unix socket (libcurl through agent/base/http.c): the containers
 * kubelet made through dockershim or cri-dockerd, listed by their labels and removed one by one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The labels dockershim (kubernetes pkg/kubelet/dockershim/docker_service.go, containerTypeLabelKey)
 * and cri-dockerd (its fork) put on every container they create, beside kubelet's own pod labels
 * (pkg/kubelet/types/labels.go). */
#define DOCKER_LABEL_TYPE "io.kubernetes.docker.type"
#define DOCKER_TYPE_CONTAINER "container"
#define DOCKER_TYPE_SANDBOX "podsandbox"
#define DOCKER_LABEL_POD_UID "io.kubernetes.pod.uid"
#define DOCKER_LABEL_POD_NAME "io.kubernetes.pod.name"
#define DOCKER_LABEL_POD_NAMESPACE "io.kubernetes.pod.namespace"
#define DOCKER_LABEL_CONTAINER_NAME "io.kubernetes.container.name"

typedef struct DockerContainer {
        char *id;
        char *name;  /* the first of its names, without Docker's leading '/' */
        char *state; /* "running", "exited", "created", ... */
        char *type;  /* DOCKER_LABEL_TYPE's value */
        char *pod_uid, *pod_name, *pod_namespace, *container_name;
} DockerContainer;

/* GET /containers/json's answer: every container of the array, its labels as Go reads a map (the
 * last of a repeated key). 0; -EBADMSG for a text that is no such array; -ENOMEM. */
int docker_containers_parse(const char *json, size_t size, DockerContainer **ret, size_t *ret_n);
void docker_containers_free(DockerContainer *c, size_t n);

/* One kubelet made, and nobody else: a dockershim type label ("container" or "podsandbox"), a pod
 * UID label, and a name in dockershim's k8s_<container>_<pod>_<namespace>_<uid>_<attempt> form
 * (pkg/kubelet/dockershim/naming.go), which kubeadm's own reset filtered on. */
bool docker_container_is_kubernetes(const DockerContainer *c);
bool docker_container_is_sandbox(const DockerContainer *c);

/* The API version node-reset speaks by choice: 1.24 has the label filter, force and v on DELETE, and
 * every engine from 1.12 on serves it, unless its minimum is above (Docker 29's is 1.44). */
#define DOCKER_API_OURS "1.24"
#define DOCKER_API_MAX 16

/* GET /version's answer. */
typedef struct DockerVersion {
        char *version; /* the engine's version ("20.10.24") */
        char *api;     /* the newest API version it speaks ("1.41"), NULL when it says none */
        char *min_api; /* the oldest ("1.12"), NULL when it says none (engines before API 1.25) */
} DockerVersion;

/* GET /version's answer read: -EBADMSG, -ENOMEM. */
int docker_version_parse(const char *json, size_t size, DockerVersion *ret);
void docker_version_done(DockerVersion *v);

/* The API version to speak with this engine, as Docker's client negotiates (client/client.go
 * NegotiateAPIVersion: never above the engine's ApiVersion), raised to its MinAPIVersion when ours is
 * below it (the engine would refuse ours: "client version 1.24 is too old"). -EPROTONOSUPPORT when
 * the engine's newest is below 1.24 (before Docker 1.12), -EBADMSG for a version that is no
 * MAJOR.MINOR. */
int docker_api_negotiate(const DockerVersion *v, char ret[static DOCKER_API_MAX]);

/* The calls. socket is a node path beneath root_fd, reached by fileio_socket_in_root(): resolved
 * there (a symlink followed as if root_fd were "/", never out of it) and refused unless it is a
 * socket (-ENOTSOCK); the connection goes through /proc/self/fd/N of that O_PATH descriptor, so no
 * path outside the root is ever connected to.
 * timeout_usec bounds each call. Failures say why in *reterr_msg: -ECONNREFUSED (nobody listens),
 * -ENOENT (no socket), -ETIMEDOUT, -EPROTO (an HTTP answer that is not the call's, or no HTTP),
 * -ENOMEM. */

/* GET /version, unversioned (every engine answers it at its own newest), and the API version to
 * speak (docker_api_negotiate()) in ret_api. */
int docker_version(int root_fd, const char *socket, uint64_t timeout_usec, DockerVersion *ret,
                   char ret_api[static DOCKER_API_MAX], char **reterr_msg);
/* Every container (running or not) that carries DOCKER_LABEL_TYPE, asked with a label filter, then
 * judged one by one by docker_container_is_kubernetes(); *ret_others counts those it refused. api is
 * the version docker_version() negotiated. */
int docker_list_kubernetes(int root_fd, const char *socket, const char *api, uint64_t timeout_usec,
                           DockerContainer **ret, size_t *ret_n, size_t *ret_others, char **reterr_msg);
/* DELETE /containers/ID?force=1&v=1: killed if running, removed with its anonymous volumes (named
 * volumes and images stay). 1 removed, 0 already gone. */
int docker_remove_container(int root_fd, const char *socket, const char *api, const char *id, uint64_t timeout_usec,
                            char **reterr_msg);
/* GET /containers/ID/json: 1 it exists, 0 it does not. */
int docker_container_exists(int root_fd, const char *socket, const char *api, const char *id, uint64_t timeout_usec,
                            char **reterr_msg);
