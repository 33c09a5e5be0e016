/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The room the backup needs, measured in the blocks of the file system it goes to, against the room
 * there is: a full disk is said in the plan, before the run finds it. */

#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "agent/node/backup-kept.h"
#include "agent/phases/backup/backup-copy.h"
#include "agent/phases/backup/backup-room.h"
#include "agent/phases/backup/backup-sources.h"
#include "chase.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* The free bytes and the block size of the file system the backup goes to: BACKUP_DIR's, or that of
 * its nearest ancestor there is (the run makes the rest). */
static int backup_fs_space(const Context *ctx, uint64_t *ret_free, uint64_t *ret_block) {
        static const char *const dirs[] = { BACKUP_DIR, "/var/backups", "/var", "/" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                cleanup_close int fd =
                        chaseat(ctx->root_fd, dirs[i], CHASE_NO_SYMLINKS, O_PATH | O_DIRECTORY, NULL, NULL);
                struct statvfs sv;

                if (fd == -ENOENT || fd == -ENOTDIR)
                        continue;
                if (fd < 0)
                        return fd;
                if (fstatvfs(fd, &sv) < 0)
                        return negative_errno();
                *ret_free = (uint64_t) sv.f_bavail * sv.f_frsize;
                *ret_block = sv.f_frsize ?: 4096;
                return 0;
        }
        return -ENOENT;
}

/* What the backup would write, counted in the backup file system's blocks: the sources as they are,
 * a block per directory and link, the run's directories, and the member's backend (member/snap/db)
 * for its snapshot (a snapshot is that size, give or take its free pages). */
static int backup_measure(const Context *ctx, const char *data_dir, uint64_t block, uint64_t *ret) {
        cleanup_free char *db = data_dir ? strprintf("%s/member/snap/db", data_dir) : NULL;
        cleanup_strv char **sources = NULL;
        BackupRun b = { .dry = true, .block = block };
        struct stat st;
        int r;

        r = backup_paths(ctx, BACKUP_SOURCES, &sources);
        for (char **s = sources; r >= 0 && s && *s; s++)
                r = backup_save_source(ctx, -EBADF, *s, &b);
        if (r >= 0)
                r = backup_save_datastores(ctx, -EBADF, &b);
        if (r < 0)
                return r;
        if (db && backup_path_exists(ctx, db) && fstatat(ctx->root_fd, db + 1, &st, AT_SYMLINK_NOFOLLOW) >= 0 &&
            S_ISREG(st.st_mode))
                b.written += ((uint64_t) st.st_size + block - 1) / block * block;
        *ret = b.written + 4 * block;
        return 0;
}

int backup_room(const Context *ctx, const char *data_dir, char **ret) {
        uint64_t need = 0, avail = 0, block = 0;
        int r;

        r = backup_fs_space(ctx, &avail, &block);
        if (r >= 0)
                r = backup_measure(ctx, data_dir, block, &need);
        if (r < 0)
                return set_errmsg(ret, 0, "; the room it needs cannot be told: %s", strerror(-r));
        if (need <= avail)
                return set_errmsg(ret, 0, "; about %" PRIu64 " KiB to write, %" PRIu64 " KiB free where it goes",
                                  need >> 10, avail >> 10);
        return set_errmsg(
                ret, 0,
                "; NO ROOM: about %" PRIu64 " KiB to write, %" PRIu64 " KiB free where it goes: without "
                "the backup the control plane's CAs and the etcd data directory are kept, everything else is reset",
                need >> 10, avail >> 10);
}
