/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which mount a file is on: the one answer every module compares (mount id, device, unique id). */
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "errno-util.h"
#include "macro.h"

#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x1000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x4000U
#endif

/* Never follow, never trigger an automount, never ask a network file system's server (a dead NFS
 * server must not hang the reset). */
#define MOUNT_ID_AT_FLAGS (AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC)

/* MountIdentity.flags, what to ask for beyond type, device, inode and mount id. */
#define MOUNT_ID_UNIQUE 1U /* the never-reused mount id too (Linux 6.8): one more statx() */

typedef struct MountIdentity {
        mode_t mode;
        dev_t dev;
        ino_t ino;
        uint64_t mount_id;  /* the 32-bit id mountinfo shows */
        uint64_t unique_id; /* 0: the kernel does not say (before 6.8, or not asked for) */
        bool has_mount_id;  /* false without statx (a seccomp filter, Linux < 4.11) */
} MountIdentity;

/* dfd/name (name "" for dfd itself), never followed: the mount it is on and what it is. Without
 * statx (ENOSYS or a seccomp filter's EPERM) only fstatat()'s device and inode: has_mount_id false. */
int mount_identity_at(int dfd, const char *name, unsigned flags, MountIdentity *ret);

/* Are a and b on different mounts? Only the mount id tells a bind mount of the same file system;
 * st_dev counts for directories only (overlayfs gives a file the st_dev of the layer it is in). */
bool mount_identity_other_mount(const MountIdentity *a, const MountIdentity *b);

/* The same inode on the same mount: what a plan saw is what the act holds. */
static inline bool mount_identity_same(const MountIdentity *a, const MountIdentity *b) {
        return a->dev == b->dev && a->ino == b->ino && !mount_identity_other_mount(a, b);
}
