/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What this run's backup could not save, kept in its Context: the backup phase says it, the files
 * phase keeps those rows and the report names them. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/base/path.h"
#include "agent/node/backup-kept.h"
#include "agent/os/remote-fs.h"
#include "macro.h"
#include "strv.h"

typedef struct BackupKept {
        char *unsaved;   /* what could not be saved when the backup could not be written; NULL when it was */
        char **kept;     /* with unsaved: the rows with no other copy (node paths) */
        char **uncopied; /* written: the datastores it could not copy, with their -wal and -shm */
} BackupKept;

static void kept_done(void *p) {
        BackupKept *k = p;

        free(k->unsaved);
        strv_free(k->kept);
        strv_free(k->uncopied);
}

static const ContextStateType kept_type = {
        .name = "backup-kept",
        .size = sizeof(BackupKept),
        .done = kept_done,
};

int backup_kept_unwritten(Context *ctx, char *unsaved, char **kept) {
        BackupKept *k = context_state(ctx, &kept_type);

        if (!k) {
                free(unsaved);
                strv_free(kept);
                return -ENOMEM;
        }
        free(k->unsaved);
        k->unsaved = unsaved;
        strv_free(k->kept);
        k->kept = kept;
        return 0;
}

int backup_kept_uncopied(Context *ctx, char **uncopied) {
        BackupKept *k = context_state(ctx, &kept_type);

        if (!k) {
                strv_free(uncopied);
                return -ENOMEM;
        }
        strv_free(k->uncopied);
        k->uncopied = uncopied;
        return 0;
}

const char *const *backup_unsaved_rows(const Context *ctx, size_t *ret_n) {
        const BackupKept *k = context_state_peek(ctx, &kept_type);
        char **rows = !k ? NULL : k->unsaved ? k->kept : k->uncopied;

        *ret_n = strv_length(rows);
        return (const char *const *) rows;
}

const char *backup_unsaved_why(const Context *ctx) {
        const BackupKept *k = context_state_peek(ctx, &kept_type);

        return k && k->unsaved ? "the backup could not be written" : "the backup could not copy it";
}

/* Is the row there, on a mount that answers? */
static bool row_exists(const Context *ctx, const char *path) {
        struct stat st;

        return remote_fs_check(ctx->root_fd, path, NULL) >= 0 &&
               fstatat(ctx->root_fd, path + 1, &st, AT_SYMLINK_NOFOLLOW) >= 0;
}

int backup_unsaved_kept_beneath(const Context *ctx, const char *target, char ***ret) {
        cleanup_strv char **l = NULL;
        const char *const *rows;
        size_t n;

        rows = backup_unsaved_rows(ctx, &n);
        for (size_t i = 0; i < n; i++)
                if ((path_startswith_dir(target, rows[i]) || path_startswith_dir(rows[i], target) ||
                     path_pattern_below(target, rows[i])) &&
                    row_exists(ctx, rows[i]) && strv_extend(&l, rows[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}
