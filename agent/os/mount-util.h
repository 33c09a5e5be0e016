/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unmount exactly the mount a plan saw: reached without following any symlink, checked by mount id. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "agent/os/mountinfo.h"

/* What a plan knows about one mount. The mount id comes from mountinfo; dev and unique_id are what
 * statx(2) reported for the mount point when the plan could reach it by its path (st_dev differs from
 * mountinfo's major:minor on btrfs subvolumes; unique_id needs Linux 6.8), else mountinfo's device
 * and 0 (unknown). */
typedef struct MountSeen {
        int mount_id;
        dev_t dev;
        uint64_t unique_id;
} MountSeen;

/* chaseat(CHASE_NO_SYMLINKS) with O_PATH added to flags: the way every mount point is reached.
 * -ELOOP on a symlink, -ENOENT, -ENOTDIR, -EXDEV on "..", -errno. */
int mount_open_nofollow(int root_fd, const char *path, int flags);

/* Record m as seen at node path "path" beneath root_fd (read-only; never fails: what cannot be
 * observed is left to mountinfo's figures). */
void mount_seen_observe(int root_fd, const char *path, const MountEntry *m, MountSeen *ret);

/* Unmount the mount recorded in seen, found at node path "path" beneath root_fd. flags is 0 or
 * MNT_DETACH. Returns 1 when unmounted; 0 when it is verifiably gone already (the path has no
 * symlink, whatever is there now is another mount or none, and seen's mount id is no longer in
 * /proc/self/mountinfo); -EBUSY when busy (nothing done, no message); otherwise a negative errno and
 * the reason in *ret_msg: a symlink on the way (-ELOOP), another mount in its place while the
 * planned one is still mounted (-ESTALE), or the error of a system call. Never acts on anything
 * but the planned mount. */
int mount_unmount_seen(int root_fd, const char *path, const MountSeen *seen, int flags, char **ret_msg);
