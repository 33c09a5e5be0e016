/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The test pause image's only program: sleep until SIGTERM or SIGINT, then exit 0. Built static. */

#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

int main(void) {
        struct sigaction sa = { .sa_handler = on_signal };

        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGINT, &sa, NULL);
        while (!stop)
                (void) pause();
        return 0;
}
