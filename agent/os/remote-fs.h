/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File systems that may never answer (NFS, CIFS, FUSE, autofs, ...): which mounts of the tree are
 * such, whether each answers, and work beneath them done where it can be given up. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/os/mountinfo.h"

/* How long one probe, or one item's work, may wait when --timeout leaves more time or none is given:
 * a server that answers at all answers a statfs() well within it. */
#define REMOTE_FS_WAIT_USEC (5ULL * 1000000ULL)
/* What a wait is given when the run's deadline has already passed. */
#define REMOTE_FS_WAIT_MIN_USEC (100ULL * 1000ULL)

/* The tree the run reads (root: its absolute path as mountinfo names it; root_fd: that directory)
 * and the run's deadline (--timeout; 0: none). Reads /proc/self/mountinfo once. Until it is
 * called, and for any other root fd, nothing is checked and all work is done in this process. */
int remote_fs_setup(const char *root, int root_fd, uint64_t deadline_usec);
/* The same from a mount table already read (the tests give one). */
int remote_fs_setup_table(const char *root, int root_fd, uint64_t deadline_usec, const MountTable *t);
/* Forget the tree, the mounts and what did not answer. */
void remote_fs_forget(void);

/* Is fstype one whose every operation may wait on another machine or on a daemon (network file
 * systems, FUSE, autofs)? Local ones fail with an error instead. */
bool remote_fs_type(const char *fstype);

/* Before reading at or beneath path (a node path of the tree at root_fd, as named: no symlink in it
 * is followed by the readers that call this): at the first check every such mount of the tree is
 * asked, all at once, by a statfs() in a child process given up at the wait. 0 when path lies on none
 * that did not answer (or there is none); -EHOSTDOWN when it does, or when it lies beneath a place
 * whose work did not finish (remote_fs_each()); *ret_why (optional) then names it. */
int remote_fs_check(int root_fd, const char *path, char **ret_why);

/* Does the tree at root_fd have any such mount (so that remote_fs_each() runs its work in a child)? */
bool remote_fs_present(int root_fd);
/* Does node path "path" (as named) lie on one, at or beneath its mount point? */
bool remote_fs_on(int root_fd, const char *path);

/* One piece of work beneath one path. */
typedef struct RemoteFsItem {
        const char *path; /* the node path it reads at or beneath (checked first, named when it hangs) */
        int result;       /* the work's result; -ETIME: it did not finish within the wait; -EHOSTDOWN: a
                           * mount on the way does not answer (not started); -EIO: its process died */
        char *out;        /* what the work wrote (NULL when it did not run) */
        size_t size;
        char *why; /* with -ETIME, -EHOSTDOWN or -EIO: in words, naming the mount or the path */
} RemoteFsItem;

/* fn(i, userdata, out) writes item i's result to out and returns it (-errno or >= 0). */
typedef int (*remote_fs_work_t)(size_t i, void *userdata, FILE *out);

/* Do the work of each item in turn. On a tree with such mounts it runs in a child process, whose
 * output comes back through a pipe: an item that does not finish within the wait (from its start,
 * and never past the run's deadline) is given up, the child killed (the kernel's waits on NFS and
 * FUSE are killable), its path remembered as not answering, and the rest go on in a new child.
 * Elsewhere it runs here. The work must touch nothing of this process but out: in a child, whatever
 * else it changes is lost. 0, or -ENOMEM. */
int remote_fs_each(int root_fd, RemoteFsItem *items, size_t n, remote_fs_work_t fn, void *userdata);
void remote_fs_items_done(RemoteFsItem *items, size_t n);

/* What did not answer in this run: the mount point, or the path of the work given up. */
typedef struct RemoteFsUnanswered {
        char *path; /* node path */
        char *why;
} RemoteFsUnanswered;

const RemoteFsUnanswered *remote_fs_unanswered(size_t *ret_n);
