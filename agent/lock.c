/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One node-reset at a time: an flock on /run/node-reset.lock (beneath --root when given). */

#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent/lock.h"
#include "errno-util.h"
#include "macro.h"

#define LOCK_DIR "run"
#define LOCK_NAME "node-reset.lock"

/* /proc/locks lines: "1: FLOCK  ADVISORY  WRITE 1234 00:15:567 0 EOF". The holder may be a
 * process that is not node-reset at all (flock(1), a stuck copy), so the kernel is asked. */
pid_t lock_holder(int fd) {
        cleanup_fclose FILE *f = NULL;
        char line[256];
        struct stat st;

        if (fstat(fd, &st) < 0)
                return 0;
        f = fopen("/proc/locks", "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof line, f)) {
                unsigned maj, min;
                uint64_t ino;
                int pid;

                if (!strstr(line, "FLOCK"))
                        continue;
                if (sscanf(line, "%*s FLOCK %*s %*s %d %x:%x:%" SCNu64, &pid, &maj, &min, &ino) != 4)
                        continue;
                if (ino == (uint64_t) st.st_ino && makedev(maj, min) == st.st_dev)
                        return pid;
        }
        return 0;
}

int lock_acquire(int root_fd, pid_t *ret_holder) {
        cleanup_close int dfd = -EBADF, fd = -EBADF;
        char pid[32];
        int n;

        *ret_holder = 0;
        /* A --root tree (a node's disk in a rescue system) may have no run/ yet. */
        if (mkdirat(root_fd, LOCK_DIR, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        dfd = openat(root_fd, LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        fd = openat(dfd, LOCK_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int r = negative_errno();

                if (r == -EWOULDBLOCK)
                        *ret_holder = lock_holder(fd);
                return r;
        }
        /* The PID in the file is for people; the lock itself is the flock. */
        n = snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t) n, 0) != n)
                return negative_errno();
        return TAKE_FD(fd);
}
