/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for etcd's command line read from a node's files: a static pod manifest through
 * libyaml (the first byte picks the container asked for) and an etcd environment file, on any
 * bytes. Never a crash, never a leak. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const containers[] = { "etcd", "kube-apiserver" };
        char **argv = NULL, *text;

        if (size == 0)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = '\0';
        if (pod_container_argv(text, size - 1, containers[data[0] & 1], &argv) > 0)
                (void) argv_flag(argv, "data-dir");
        strv_free(argv);
        argv = NULL;
        if (etcd_env_argv(text, size - 1, &argv, NULL) >= 0)
                (void) argv_flag(argv, "name");
        strv_free(argv);
        free(text);
        return 0;
}
