/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for what Docker's Engine API answers: GET /containers/json and GET /version read
 * from any bytes (not NUL-terminated), the containers judged as docker_list_kubernetes() judges them,
 * the API version negotiated from the version's answer.
 * A list or -EBADMSG out, never a crash, never a leak. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/os/docker-api.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void containers(const char *json, size_t size) {
        DockerContainer *l = NULL;
        size_t n = 0;
        int r = docker_containers_parse(json, size, &l, &n);

        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 0 || (!l && n == 0));
        for (size_t i = 0; i < n; i++) {
                const DockerContainer *c = &l[i];

                assert(c->id && *c->id); /* DELETE /containers/ID needs one */
                /* A container of kubelet's has a type, a pod and a dockershim name. */
                if (docker_container_is_kubernetes(c))
                        assert(c->type && c->pod_uid && *c->pod_uid && c->name);
                if (docker_container_is_sandbox(c))
                        assert(c->type);
        }
        docker_containers_free(l, n);
}

static void version(const char *json, size_t size) {
        char api[DOCKER_API_MAX];
        DockerVersion v;
        int r = docker_version_parse(json, size, &v);

        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 0 ? v.version && *v.version : !v.version && !v.api && !v.min_api);
        if (r == 0) {
                r = docker_api_negotiate(&v, api);
                assert(r == 0 || r == -EBADMSG || r == -EPROTONOSUPPORT);
                /* Never below ours, and a MAJOR.MINOR that goes into the URL as it is. */
                assert(r < 0 || strspn(api, "0123456789.") == strlen(api));
        }
        docker_version_done(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Exactly size bytes, no NUL after them: a parser that reads past the answer is caught. */
        char *buf = malloc(size);

        if (!buf)
                return 0;
        memcpy(buf, data, size);
        containers(buf, size);
        version(buf, size);
        free(buf);
        return 0;
}
