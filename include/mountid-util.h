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

/* What /proc/self/fdinfo says of fd: the mount id, for kernels before 5.8 (no STATX_MNT_ID). */
static inline int fdinfo_mount_id(int fd, uint64_t *ret) {
        cleanup_fclose FILE *f = NULL;
        char p[64], line[256];
        int id;

        snprintf(p, sizeof p, "/proc/self/fdinfo/%d", fd);
        f = fopen(p, "re");
        if (!f)
                return negative_errno();
        while (fgets(line, sizeof line, f))
                if (sscanf(line, "mnt_id: %d", &id) == 1) {
                        *ret = (uint64_t) id;
                        return 0;
                }
        return -EOPNOTSUPP;
}

/* dfd/name (name "" for dfd itself), never followed: the mount it is on and what it is. Without
 * statx (ENOSYS or a seccomp filter's EPERM) only fstatat()'s device and inode: has_mount_id false. */
static inline int mount_identity_at(int dfd, const char *name, unsigned flags, MountIdentity *ret) {
        int at = MOUNT_ID_AT_FLAGS | (name[0] ? 0 : AT_EMPTY_PATH);
        struct statx sx = {};
        struct stat st;

        if (statx(dfd, name, at, STATX_TYPE | STATX_INO | STATX_MNT_ID, &sx) >= 0) {
                *ret = (MountIdentity) {
                        .mode = sx.stx_mode,
                        .dev = makedev(sx.stx_dev_major, sx.stx_dev_minor),
                        .ino = sx.stx_ino,
                        .mount_id = sx.stx_mnt_id,
                        .has_mount_id = sx.stx_mask & STATX_MNT_ID,
                };
                if (!ret->has_mount_id && !name[0])
                        ret->has_mount_id = fdinfo_mount_id(dfd, &ret->mount_id) >= 0;
                /* Asking for the unique id makes the kernel put it in stx_mnt_id instead: a second call. */
                if ((flags & MOUNT_ID_UNIQUE) && statx(dfd, name, at, STATX_MNT_ID_UNIQUE, &sx) >= 0 &&
                    (sx.stx_mask & STATX_MNT_ID_UNIQUE))
                        ret->unique_id = sx.stx_mnt_id;
                return 0;
        }
        if (errno != ENOSYS && errno != EPERM)
                return negative_errno();
        if (fstatat(dfd, name, &st, (at & ~AT_STATX_DONT_SYNC)) < 0)
                return negative_errno();
        *ret = (MountIdentity) { .mode = st.st_mode, .dev = st.st_dev, .ino = st.st_ino };
        if (!name[0])
                ret->has_mount_id = fdinfo_mount_id(dfd, &ret->mount_id) >= 0;
        return 0;
}

/* Are a and b on different mounts? Only the mount id tells a bind mount of the same file system;
 * st_dev counts for directories only (overlayfs gives a file the st_dev of the layer it is in). */
static inline bool mount_identity_other_mount(const MountIdentity *a, const MountIdentity *b) {
        if (a->has_mount_id && b->has_mount_id && a->mount_id != b->mount_id)
                return true;
        if (a->unique_id && b->unique_id && a->unique_id != b->unique_id)
                return true;
        return S_ISDIR(a->mode) && S_ISDIR(b->mode) && a->dev != b->dev;
}

/* The same inode on the same mount: what a plan saw is what the act holds. */
static inline bool mount_identity_same(const MountIdentity *a, const MountIdentity *b) {
        return a->dev == b->dev && a->ino == b->ino && !mount_identity_other_mount(a, b);
}
