/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One node-reset at a time: an flock on /run/node-reset.lock (beneath --root when given). */

#include <fcntl.h>
#include <inttypes.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "agent/os/fileio.h"
#include "agent/engine/lock.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

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

/* An existing lock file is written into only when it holds what node-reset (or flock(1)) leaves there:
 * nothing, or a PID. Anything longer is data that is not ours to truncate. */
static int check_pid_only(int fd, char **reterr_msg) {
        char buf[33];
        ssize_t n;

        n = pread(fd, buf, sizeof buf - 1, 0);
        if (n < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot read it: %m");
        buf[n] = '\0';
        if ((size_t) n == sizeof buf - 1 || strspn(buf, "0123456789\n") != (size_t) n)
                return set_errmsg(reterr_msg, -EPERM, "it holds data that is not a PID: refusing to write into it");
        return 0;
}

int lock_acquire(int root_fd, pid_t *ret_holder, char **reterr_msg) {
        cleanup_close int dfd = -EBADF, fd = -EBADF;
        cleanup_free char *why = NULL;
        bool created;
        char pid[32];
        int n, r;

        *ret_holder = 0;
        /* A --root tree (a node's disk in a rescue system) may have no run/ yet. */
        if (mkdirat(root_fd, LOCK_DIR, 0755) < 0 && errno != EEXIST)
                return set_errmsg(reterr_msg, negative_errno(), "cannot create the directory: %m");
        dfd = openat(root_fd, LOCK_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
                return set_errmsg(reterr_msg, negative_errno(), "cannot open the directory " LOCK_DIR "/: %m");
        /* With --root, run/ is an ordinary directory of a node's disk: the name may be a hard link to a
         * PV's file, a device or a FIFO. Only a file we create or can account for is opened for writing. */
        fd = fileio_open_own(dfd, LOCK_NAME, O_RDWR, 0600, &created, &why);
        if (fd < 0 && why)
                return set_errmsg(reterr_msg, fd, "%s: refusing to write into it", why);
        if (fd < 0)
                return set_errmsg(reterr_msg, fd, "%s", strerror(-fd));
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                r = negative_errno();
                if (r == -EWOULDBLOCK)
                        *ret_holder = lock_holder(fd);
                return set_errmsg(reterr_msg, r, "%s", strerror(-r));
        }
        if (!created) {
                r = check_pid_only(fd, reterr_msg);
                if (r < 0)
                        return r;
        }
        /* The PID in the file is for people; the lock itself is the flock. The fd is the inode checked
         * above, whatever the name refers to by now. */
        n = snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t) n, 0) != n)
                return set_errmsg(reterr_msg, negative_errno(), "cannot write the PID: %m");
        return TAKE_FD(fd);
}
