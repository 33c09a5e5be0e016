/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A SQLite database copied with sqlite3_backup_*() (sqlite.org/backup.html): the library reads the
 * source as a reader of its own (WAL included, the shared-memory index honoured), so the copy is a
 * committed state even while kine, in k3s, writes it. Copying the file, its -wal and its -shm by hand
 * is consistent only once the writer is proven stopped, which a backup before the services stop is not. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/fileio.h"
#include "agent/os/sqlite-copy.h"
#include "dlib/dlopen.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define BUSY_WAIT_MS 1000
#define STEP_PAGES 1024

/* The database's bytes on disk: the main file and its write-ahead log. */
static int source_size(int dir, const char *name, uint64_t *ret) {
        char wal[NAME_MAX + 8];
        struct stat st;

        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        *ret = (uint64_t) st.st_size;
        if (snprintf(wal, sizeof wal, "%s-wal", name) < (int) sizeof wal &&
            fstatat(dir, wal, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISREG(st.st_mode))
                *ret += (uint64_t) st.st_size;
        return 0;
}

/* SQLite's result as an errno: a full disk is the disk's, anything else SQLite's refusal. */
static int sqlite_errno(int rc) {
        switch (rc & 0xff) {
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_IOERR:
                return -EIO;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -ETIME;
        case SQLITE_CANTOPEN:
                return -ENOENT;
        default:
                return -EBADMSG;
        }
}

/* Every page, a step at a time; a writer holding its lock is waited for until the deadline. */
static int backup_pages(sqlite3 *dst, sqlite3 *src, uint64_t deadline) {
        sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
        int rc;

        if (!b)
                return SQLITE_ERROR;
        for (;;) {
                rc = sqlite3_backup_step(b, STEP_PAGES);
                if (rc == SQLITE_OK)
                        continue;
                if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) &&
                    (deadline == 0 || now(CLOCK_MONOTONIC) + 100000ULL < deadline)) {
                        (void) usleep(100000);
                        continue;
                }
                break;
        }
        return rc == SQLITE_DONE ? sqlite3_backup_finish(b) : (sqlite3_backup_finish(b), rc);
}

/* Open both through the directories' descriptors (/proc/self/fd/N/NAME): the source directory was
 * resolved beneath the root without a symlink, and the copy goes where the caller made room. */
static int copy_open(int src_dir, const char *src_name, int dst_dir, const char *dst_name, uint64_t deadline,
                     char **reterr_msg) {
        char src[FILEIO_PROC_FD_MAX + NAME_MAX + 1], dst[FILEIO_PROC_FD_MAX + NAME_MAX + 1];
        sqlite3 *s = NULL, *d = NULL;
        int rc;

        (void) snprintf(src, sizeof src, "/proc/self/fd/%d/%s", src_dir, src_name);
        (void) snprintf(dst, sizeof dst, "/proc/self/fd/%d/%s", dst_dir, dst_name);
        rc = sqlite3_open_v2(src, &s, SQLITE_OPEN_READONLY, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_open_v2(dst, &d, SQLITE_OPEN_READWRITE, NULL);
        if (rc == SQLITE_OK)
                (void) sqlite3_busy_timeout(s, BUSY_WAIT_MS);
        if (rc == SQLITE_OK)
                rc = backup_pages(d, s, deadline);
        if (rc != SQLITE_OK)
                *reterr_msg = strprintf("SQLite: %s", strna(sqlite3_errmsg(d && rc != SQLITE_CANTOPEN ? d : s)));
        (void) sqlite3_close_v2(d);
        (void) sqlite3_close_v2(s);
        return rc == SQLITE_OK ? 0 : sqlite_errno(rc);
}

static int sync_file(int dir, const char *name) {
        cleanup_close int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return negative_errno();
        return fsync(fd) < 0 ? negative_errno() : 0;
}

int sqlite_copy(int src_dir, const char *src_name, int dst_dir, const char *dst_name, uint64_t max,
                uint64_t deadline_usec, uint64_t *ret_size, char **reterr_msg) {
        cleanup_close int fd = -EBADF;
        char journal[NAME_MAX + 16];
        uint64_t size = 0;
        struct stat st;
        int r;

        r = source_size(src_dir, src_name, &size);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "%s", strerror(-r));
        if (size > max)
                return set_errmsg(reterr_msg, -EFBIG, "%" PRIu64 " bytes, over %" PRIu64, size, max);
        if (dlib_load(DLIB_LIBSQLITE3) < 0)
                return set_errmsg(reterr_msg, -EOPNOTSUPP, "%s", strna(dlib_why(DLIB_LIBSQLITE3)));
        fd = openat(dst_dir, dst_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return set_errmsg(reterr_msg, negative_errno(), "%m");
        r = copy_open(src_dir, src_name, dst_dir, dst_name, deadline_usec, reterr_msg);
        if (r >= 0)
                r = sync_file(dst_dir, dst_name);
        if (r >= 0 && fstat(fd, &st) >= 0)
                size = (uint64_t) st.st_size;
        if (r < 0) {
                (void) unlinkat(dst_dir, dst_name, 0);
                if (snprintf(journal, sizeof journal, "%s-journal", dst_name) < (int) sizeof journal)
                        (void) unlinkat(dst_dir, journal, 0);
                return *reterr_msg ? r : set_errmsg(reterr_msg, r, "%s", strerror(-r));
        }
        *ret_size = size;
        return 1;
}
