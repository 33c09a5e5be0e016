/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark helper (not a test, not the agent): the runtime's floor for removing every pod. Built on
 * the project's own CRI client (cri/, grpc/) and nothing else: Version, ListPodSandbox, then one
 * RemovePodSandbox per pod, every one in flight at once. On containerd that one call force-stops the
 * sandbox (its containers, the CNI DEL) and removes its containers (pkg/cri/server/sandbox_remove.go):
 * the fewest calls that leave what StopContainer, StopPodSandbox, RemoveContainer and RemovePodSandbox
 * leave. No kill pass, no plan, no report, no stand-in CNI config: the real DEL of every pod.
 *
 *   cri-floor SOCKET
 *
 * Prints one line: "pods N list_ms L remove_ms R failed F left K", where K is what a second listing
 * (not timed) still shows. Exit 0 when every call succeeded and nothing is left. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cri/cri.h"
#include "macro.h"
#include "time-util.h"

#define CALL_TIMEOUT_USEC (300 * USEC_PER_SEC)

static uint64_t ms_since(uint64_t t) {
        return (now(CLOCK_MONOTONIC) - t) / USEC_PER_MSEC;
}

int main(int argc, char **argv) {
        CLEANUP(cri_client_freep) CriClient *c = NULL;
        cleanup_free CriOp *ops = NULL;
        cleanup_free char *err = NULL;
        CriSandbox *s = NULL, *left = NULL;
        size_t n = 0, n_left = 0, failed = 0;
        uint64_t t, list_ms, remove_ms;
        CriVersion v = {};
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: cri-floor SOCKET\n");
                return 2;
        }
        r = cri_client_new(argv[1], &c);
        if (r < 0) {
                fprintf(stderr, "cri-floor: %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        cri_client_set_timeout(c, CALL_TIMEOUT_USEC);
        t = now(CLOCK_MONOTONIC);
        r = cri_version(c, 0, &v, &err);
        cri_version_done(&v);
        if (r >= 0)
                r = cri_list_sandboxes(c, 0, &s, &n, &err);
        list_ms = ms_since(t);
        if (r < 0) {
                fprintf(stderr, "cri-floor: %s: %s\n", argv[1], err ?: strerror(-r));
                return 1;
        }
        ops = calloc(n ?: 1, sizeof(CriOp));
        if (!ops)
                return 1;
        for (size_t i = 0; i < n; i++)
                ops[i] = (CriOp) { .kind = CRI_OP_REMOVE_SANDBOX, .id = s[i].id };
        t = now(CLOCK_MONOTONIC);
        r = cri_run_ops(c, 0, ops, n, n > 0 ? (unsigned) n : 1);
        remove_ms = ms_since(t);
        for (size_t i = 0; i < n; i++) {
                if (r < 0 || ops[i].result < 0) {
                        failed++;
                        fprintf(stderr, "cri-floor: RemovePodSandbox %s: %s\n", s[i].id,
                                ops[i].message ?: strerror(-(r < 0 ? r : ops[i].result)));
                }
                cri_op_done(&ops[i]);
        }
        if (cri_list_sandboxes(c, 0, &left, &n_left, NULL) < 0)
                n_left = (size_t) -1;
        printf("pods %zu list_ms %llu remove_ms %llu failed %zu left %zd\n", n, (unsigned long long) list_ms,
               (unsigned long long) remove_ms, failed, (ssize_t) n_left);
        cri_sandboxes_free(s, n);
        cri_sandboxes_free(left, n_left == (size_t) -1 ? 0 : n_left);
        return failed == 0 && n_left == 0 ? 0 : 1;
}
