/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file system that never answers, for the tests of a dead home or data directory: a FUSE mount
 * whose daemon never reads /dev/fuse, so every request (even the first, FUSE_INIT) waits forever.
 *
 *   fuse-dead DIR...
 *       mount one such file system on each DIR (as root, in the test's private mount namespace),
 *       print "ready", then wait until stdin is closed or a signal ends it; closing /dev/fuse
 *       (at exit) aborts the connections, so whatever waited on them fails with ENOTCONN and the
 *       mounts can be detached.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        char buf[256];

        if (argc < 2) {
                fprintf(stderr, "usage: fuse-dead DIR...\n");
                return 2;
        }
        for (int i = 1; i < argc; i++) {
                char opts[128];
                int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

                if (fd < 0) {
                        fprintf(stderr, "fuse-dead: /dev/fuse: %s\n", strerror(errno));
                        return 77;
                }
                snprintf(opts, sizeof opts, "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
                if (mount("nodev", argv[i], "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                        fprintf(stderr, "fuse-dead: mount %s: %s\n", argv[i], strerror(errno));
                        return 1;
                }
                /* The fd stays open, unread, until this process ends. */
        }
        printf("ready\n");
        fflush(stdout);
        while (read(STDIN_FILENO, buf, sizeof buf) > 0)
                ;
        return 0;
}
