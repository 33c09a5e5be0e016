/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for a user's kubeconfig without this cluster's entries: any bytes in, a refusal
 * with its reason or a file that holds nothing of this cluster any more, never a crash. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/kubeconfig-prune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* No CA: the server alone tells this cluster; no root, so no CA file is ever read. */
        const KubeClusterId id = { .server = (char *) "https://10.0.0.1:6443" };
        KubeconfigPrune p, again;
        char *err = NULL;
        int r;

        r = kubeconfig_prune("/root/.kube/config", (const char *) data, size, -EBADF, &id, 1, true, &p, &err);
        if (r < 0 && !err)
                abort(); /* every refusal says why (OOM aside, which the fuzzer does not inject) */
        if (r > 0 && !p.whole) {
                if (!p.text)
                        abort();
                /* What is written back holds nothing of this cluster, and parses. */
                if (kubeconfig_prune("/root/.kube/config", p.text, p.size, -EBADF, &id, 1, false, &again, &err) != 0)
                        abort();
                kubeconfig_prune_done(&again);
        }
        kubeconfig_prune_done(&p);
        free(err);
        return 0;
}
