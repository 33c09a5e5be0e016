/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Mount-safe, symlink-safe removal of a tree beneath a root directory fd. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mountid-util.h"

typedef enum ProtectState {
        PROTECT_NONE,     /* free to remove */
        PROTECT_SELF,     /* this path is protected: leave it and everything beneath */
        PROTECT_CONTAINS, /* something beneath is protected: descend, but keep this directory */
} ProtectState;

/* Given a node path ("/var/lib/kubelet/pods"), say whether it is protected. */
typedef ProtectState (*protect_func_t)(const char *node_path, void *userdata);

/* What a plan saw at the target, for the run to take again (RemoveOptions.expect_top). */
typedef struct RemoveTop {
        bool present;     /* something was there; else whatever is there now must not be a mount point */
        bool mount_point; /* it was a mount point (it may be unmounted before the run: a plain
                           * directory of its parent's mount in its place is then expected) */
        MountIdentity id;
} RemoveTop;

typedef struct RemoveOptions {
        bool dry_run;  /* count what would go, change nothing */
        bool keep_top; /* "empty": remove the contents, keep the directory itself */
        protect_func_t protect;
        /* Optional, dry run only: a mount point that the mounts phase unmounts before the walk is
         * counted as a directory that goes (a plan's counts are then the run's), not left alone. */
        bool (*unmounted_first)(const char *node_path, void *userdata);
        void *userdata;
        uint64_t deadline_usec; /* CLOCK_MONOTONIC; 0 = none. Past it the walk stops with -ETIME */
        /* Optional: the target as the plan saw it (RemoveStats.top). Another inode, device or mount
         * there now fails the walk with -ESTALE before anything is touched. */
        const RemoveTop *expect_top;
} RemoveOptions;

typedef struct RemoveStats {
        unsigned files;                 /* non-directories removed (or that would be) */
        unsigned dirs;                  /* directories removed (or that would be) */
        unsigned flags_cleared;         /* immutable/append-only flags cleared to remove an entry */
        unsigned failed;                /* entries that could not be removed */
        char **kept_mounts;             /* node paths of mount points met and left alone (NULL-terminated) */
        unsigned unmounted_first;       /* dry run: mount points counted as gone (see unmounted_first) */
        char **kept_protected;          /* node paths left because protected */
        bool top_is_mount;              /* the target itself is a mount point: emptied, not removed */
        bool top_missing;               /* nothing at the target path */
        RemoveTop top;                  /* what was at the target (for RemoveOptions.expect_top) */
        char **kept_linked;             /* node paths of immutable/append-only files left because their
                                         * inode has other names (clearing the flag would change those) */
        char *first_error_path;         /* node path of the first failure */
        int first_error;                /* -errno of the first failure */
        const char *first_error_reason; /* static text saying more than strerror(), or NULL */
        char *symlink_component;        /* set when a path component above the target was seen to be a
                                         * symlink: the only failure that says nothing was attempted */
} RemoveStats;

void remove_stats_done(RemoveStats *s);

/* Remove node_path beneath root_fd, to any depth, with a bounded number of fds (a directory
 * opened again on the way back up must be the one entered, else the walk stops: -ESTALE). Never
 * follows a symlink (one found as the target or inside is removed as a link; one in a component
 * above the target stops everything with -ELOOP and sets symlink_component), never descends into
 * another mount (mount id and st_dev are checked on every directory), never touches a protected
 * path. Immutable/append-only flags are cleared when they are what stands in the way, except on
 * a non-directory with other hard links: that entry stays (-EMLINK, kept_linked).
 * Returns 0 when nothing was there to remove (already clean), 1 when something was (or, with
 * dry_run, would be) removed, and -errno of the first failure otherwise; a kept mount point
 * below the target counts as a failure (-EBUSY) because residue remains. Protected entries are
 * not failures. */
int remove_tree(int root_fd, const char *node_path, const RemoveOptions *o, RemoveStats *ret_stats);
