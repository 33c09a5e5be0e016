/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* /proc/self/mountinfo, parsed, with the octal escapes the kernel uses for odd characters. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct MountEntry {
        int mount_id;
        int parent_id;
        unsigned major, minor;
        char *root;        /* root of the mount within its file system */
        char *mount_point; /* absolute, unescaped */
        char *fstype;
        char *source;
        char *options;  /* per-mount options */
        unsigned order; /* line number: later lines are mounted on top of earlier ones */
} MountEntry;

typedef struct MountTable {
        MountEntry *entries;
        size_t n_entries, allocated;
} MountTable;

MountTable *mount_table_free(MountTable *t);

/* Parse from a stream (tests) or read /proc/self/mountinfo (f == NULL). -errno, -EBADMSG on a
 * malformed line. */
int mount_table_parse(FILE *f, MountTable **ret);
int mount_table_read(MountTable **ret);

/* Decode mountinfo's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash). */
int mountinfo_unescape(const char *s, char **ret);

/* The mounts whose mount point lies strictly beneath "prefix" (an absolute real path; "/" means
 * all but the root mount), sorted deepest first and, for the same mount point, topmost first.
 * Pointers into the table; free the array only. */
int mount_table_beneath(const MountTable *t, const char *prefix, const MountEntry ***ret, size_t *ret_n);

/* Is this exact absolute path a mount point in the table? */
bool mount_table_is_mount_point(const MountTable *t, const char *path);

/* The mount stacked on one of e's ancestors (at that ancestor's mount point), which hides e from
 * every path: e.g. a cni-* netns mount propagated into a /run/netns that was bind-mounted onto
 * itself twice. NULL when e is reachable. */
const MountEntry *mount_table_covering(const MountTable *t, const MountEntry *e);
