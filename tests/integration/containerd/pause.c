/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The test pause image's only program: sleep until SIGTERM or SIGINT, then exit 0. Built static.
 * "--ignore-term": a hung workload, as a container's PID 1 without a handler is: SIGTERM does nothing
 * (the kernel drops it for a namespace's init), only SIGKILL ends it. */

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

int main(int argc, char *argv[]) {
        struct sigaction sa = { .sa_handler = on_signal };

        if (argc > 1 && strcmp(argv[1], "--ignore-term") == 0)
                for (;;)
                        (void) pause();
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGINT, &sa, NULL);
        while (!stop)
                (void) pause();
        return 0;
}
