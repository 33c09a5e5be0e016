/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for kubeadm's ClusterStatus (data.ClusterStatus of the kubeadm-config ConfigMap, a
 * YAML text the API server hands over): whether it has a node's key in apiEndpoints, and the document
 * written back without it. Any bytes; never a crash, never a leak, and what is written reads back. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/forget/forget-kubeadm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void without(const char *text, const char *node) {
        KubeadmEndpoint e = {}, again = {};
        int r = kubeadm_cluster_status_without(text, node, &e);

        assert(r == 1 || r == 0 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 1 ? !!e.status_without : !e.status_without && !e.address);
        if (r == 1) {
                /* What forget would PATCH back is YAML again. */
                r = kubeadm_cluster_status_without(e.status_without, node, &again);
                assert(r >= 0 || r == -ENOMEM);
                kubeadm_endpoint_done(&again);
        }
        kubeadm_endpoint_done(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* The API takes a C string (a YAML scalar's value, which has no NUL: yaml_scalar_of()). */
        char *text = strndup((const char *) data, size);

        if (!text)
                return 0;
        without(text, "cp1");
        without(text, "");
        free(text);
        return 0;
}
