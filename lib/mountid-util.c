/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which mount a file is on: statx where it answers, fstatat and /proc/self/fdinfo where not. */

#include "mountid-util.h"

/* What /proc/self/fdinfo says of fd: the mount id, for kernels before 5.8 (no STATX_MNT_ID). */
static int fdinfo_mount_id(int fd, uint64_t *ret) {
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

int mount_identity_at(int dfd, const char *name, unsigned flags, MountIdentity *ret) {
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

bool mount_identity_other_mount(const MountIdentity *a, const MountIdentity *b) {
        if (a->has_mount_id && b->has_mount_id && a->mount_id != b->mount_id)
                return true;
        if (a->unique_id && b->unique_id && a->unique_id != b->unique_id)
                return true;
        return S_ISDIR(a->mode) && S_ISDIR(b->mode) && a->dev != b->dev;
}
