/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The processes test's stand-in for shims, kubelet and containers: copies of this binary installed
 * under the names and paths the processes phase looks for.
 *
 *   proc-helper [--ignore-term] [-namespace NS] [CHILD...]
 *       "-namespace NS" is taken and ignored, as a containerd shim's (the agent kills only the shims
 *       of containerd's k8s.io namespace, by their command line); start each CHILD (another copy, which ignores SIGTERM like a container's PID 1), print
 *       "ready" once they run, then sleep until killed. With --ignore-term, SIGTERM is ignored.
 */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        int first = 1;

        if (argc > 1 && strcmp(argv[1], "--ignore-term") == 0) {
                (void) signal(SIGTERM, SIG_IGN);
                first = 2;
        }
        if (argc > first + 1 && strcmp(argv[first], "-namespace") == 0)
                first += 2;
        for (int i = first; i < argc; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return 1;
                if (pid == 0) {
                        execl(argv[i], argv[i], "--ignore-term", (char *) NULL);
                        _exit(127);
                }
        }
        /* Not a reliable readiness signal for the children (they may still be in exec), but they
         * are in the process table, which is what the test looks at. */
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
