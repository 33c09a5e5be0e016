/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the kubeconfig parser: any bytes in, a Kubeconfig or an error message out, never a crash. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/config/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Kubeconfig *k = NULL;
        char *err = NULL;

        if (kubeconfig_parse("/etc/kubernetes/kubelet.conf", (const char *) data, size, &k, &err) >= 0) {
                if (!k->server)
                        abort(); /* a parsed kubeconfig always has a server */
                kubeconfig_free(k);
        } else if (!err && size > 0)
                abort(); /* every refusal says why (OOM aside, which the fuzzer does not inject) */
        free(err);
        return 0;
}
