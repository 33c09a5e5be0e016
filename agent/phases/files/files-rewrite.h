/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A file the files phase rewrites or removes whole: looked at once, read-only, then replaced (a new
 * file renamed over it) or unlinked only while its name still holds the inode looked at, unchanged. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "agent/config/manifest.h"
#include "agent/engine/plan.h"

typedef struct RewriteFile {
        int dir_fd;     /* its directory, opened beneath the root through no symlink */
        int fd;         /* the file, read-only */
        struct stat st; /* of the file, as opened */
        char *text;     /* all of it, NUL-terminated */
        size_t size;
} RewriteFile;

#define REWRITE_FILE_INIT \
        { .dir_fd = -EBADF, .fd = -EBADF }

void rewrite_file_done(RewriteFile *f);

/* Open and read the file at node path "path" beneath root_fd: 1 with f filled, 0 when there is no
 * file, or a refusal with its words in *ret_msg: -ELOOP a symlink (the path's or one above it),
 * -EPERM not a regular file of one name belonging to root (or, with dir_owner, to its directory's
 * owner: a user's own file), -EXDEV a file mounted over its name, -EFBIG larger than max. */
int rewrite_file_open(int root_fd, const char *path, size_t max, bool dir_owner, RewriteFile *f, char **ret_msg);

/* Put data in its place: a new file beside it with all of its metadata (owner, mode, xattrs, ACLs,
 * inode flags) exchanged with it, after checking that the name still holds the inode read, unchanged
 * (size, mtime, one name); the old inode then goes. Never writes into it. */
int rewrite_file_replace(const RewriteFile *f, const char *path, const void *data, size_t size, char **ret_msg);

/* Unlink it, only while its name holds the inode read, unchanged. */
int rewrite_file_unlink(const RewriteFile *f, const char *path, char **ret_msg);

/* One action per file, however many lines name it: the one of kind ops already planned for path. */
Action *rewrite_action_of(const Plan *plan, const ActionOps *ops, const char *path);
/* Another line for it: its place joins the action's reason, and its opt-in for a system path counts
 * only if every line has one (*system_path). -ENOMEM. */
int rewrite_action_join(Action *a, const ManifestEntry *e, bool *system_path);
