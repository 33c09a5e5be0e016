/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unmount what the plan saw, and nothing else: every name on the way to a mount point beneath
 * /var/lib/kubelet can be swapped by a pod between the plan and the act. */

#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "agent/os/mount-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "chase.h"
#include "mountid-util.h"

#ifdef __NR_statmount
#define NR_statmount __NR_statmount
#elif defined(__alpha__)
#define NR_statmount 567
#else
#define NR_statmount 457 /* the same on every other architecture */
#endif

int mount_open_nofollow(int root_fd, const char *path, int flags) {
        return chaseat(root_fd, path, CHASE_NO_SYMLINKS, flags | O_PATH, NULL, NULL);
}

/* Type, mount id, device and (where the kernel has it) the never-reused mount id of an O_PATH fd. */
static int seen_fd(int fd, MountIdentity *ret) {
        return mount_identity_at(fd, "", MOUNT_ID_UNIQUE, ret);
}

void mount_seen_observe(int root_fd, const char *path, const MountEntry *m, MountSeen *ret) {
        cleanup_close int fd = -EBADF;
        MountIdentity s;

        *ret = (MountSeen) { .mount_id = m->mount_id, .dev = makedev(m->major, m->minor) };
        fd = mount_open_nofollow(root_fd, path, 0);
        if (fd < 0 || seen_fd(fd, &s) < 0 || !s.has_mount_id || s.mount_id != (uint64_t) m->mount_id)
                return; /* covered, swapped or gone already: the act decides, against mountinfo */
        ret->dev = s.dev;
        ret->unique_id = s.unique_id;
}

/* 1 when no mount with this id is left in this namespace, 0 when it is still mounted somewhere. */
static int mount_id_gone(int mount_id) {
        MountTable *t = NULL;
        int r;

        r = mount_table_read(&t);
        if (r < 0)
                return r;
        r = 1;
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].mount_id == mount_id)
                        r = 0;
        mount_table_free(t);
        return r;
}

/* statmount(2) (Linux 6.8) by the never-reused mount id: 1 when no such mount is left in this
 * namespace, 0 when it is still mounted, -errno when the kernel cannot tell. */
static int unique_mount_gone(uint64_t unique_id) {
        struct {
                uint32_t size, spare;
                uint64_t mnt_id, param;
        } req = { .size = 24, .mnt_id = unique_id, .param = 1 /* STATMOUNT_SB_BASIC */ };
        uint64_t buf[64];

        if (unique_id == 0)
                return -EOPNOTSUPP;
        if (syscall(NR_statmount, &req, buf, sizeof buf, 0) >= 0)
                return 0;
        return errno == ENOENT ? 1 : negative_errno();
}

/* Nothing of the planned mount is reachable at path (why says what is there instead): that is
 * "already clean" only when the mount itself is gone, never because the way to it changed. */
static int unreachable(const MountSeen *seen, const char *path, const char *why, char **ret_msg) {
        int r = unique_mount_gone(seen->unique_id);

        /* Without statmount, the 32-bit id in mountinfo: a reused one reads "still mounted", the safe way. */
        if (r < 0)
                r = mount_id_gone(seen->mount_id);

        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read /proc/self/mountinfo: %s", strerror(-r));
        if (r > 0)
                return set_errmsg(ret_msg, 0, "already unmounted (%s)", why);
        return set_errmsg(ret_msg, -ESTALE,
                          "mount point changed since the plan: %s %s while mount %d is still mounted; nothing "
                          "unmounted",
                          path, why, seen->mount_id);
}

/* A symlink on the way is never "already clean": the path no longer leads where the plan looked. */
static int refuse_symlink(int root_fd, const char *path, char **ret_msg) {
        cleanup_close int fd = -EBADF;
        size_t stop = 0;

        fd = chaseat(root_fd, path, CHASE_NO_SYMLINKS, O_PATH, NULL, &stop);
        if (fd == -ELOOP)
                return set_errmsg(ret_msg, -ELOOP,
                                  "mount point changed since the plan: %.*s is now a symlink; nothing unmounted",
                                  (int) stop, path);
        return set_errmsg(ret_msg, -ELOOP,
                          "mount point changed since the plan: a symlink on the way to %s; nothing unmounted", path);
}

/* The mount at fd is the planned one: same mount id, same device, same unique id when known. */
static int check_seen(int root_fd, const char *path, int fd, const MountSeen *seen, MountIdentity *ret_now,
                      char **ret_msg) {
        cleanup_free char *why = NULL;
        MountIdentity s;
        int r;

        r = seen_fd(fd, &s);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot stat %s: %s", path, strerror(-r));
        if (S_ISLNK(s.mode))
                return refuse_symlink(root_fd, path, ret_msg);
        if (!s.has_mount_id)
                return set_errmsg(ret_msg, -EOPNOTSUPP, "cannot tell which mount %s is: nothing unmounted", path);
        if (s.mount_id != (uint64_t) seen->mount_id) {
                why = strprintf("now leads to mount %" PRIu64 ", which is left alone", s.mount_id);
                return unreachable(seen, path, why ?: "leads to another mount", ret_msg);
        }
        if (s.dev != seen->dev || (seen->unique_id && s.unique_id && s.unique_id != seen->unique_id))
                return set_errmsg(ret_msg, -ESTALE,
                                  "mount point changed since the plan: %s leads to a mount with the planned id %d "
                                  "that is not the planned one (device %u:%u, planned %u:%u); nothing unmounted",
                                  path, seen->mount_id, major(s.dev), minor(s.dev), major(seen->dev), minor(seen->dev));
        *ret_now = s;
        return 1;
}

/* What umount2(2) said, once the mount was checked. */
static int umount_failed(int err, const MountSeen *seen, const char *path, char **ret_msg) {
        if (err == EBUSY)
                return -EBUSY;
        if (err == EINVAL || err == ENOENT)
                return unreachable(seen, path, "changed while being unmounted", ret_msg);
        errno = err;
        return set_errmsg(ret_msg, -err, "umount: %m");
}

/* Unmount by name in the pinned parent: our own handle on the mount would make it busy (umount2 on
 * /proc/self/fd/N says EBUSY unless detaching). The name is looked up without following it, in a
 * directory that cannot move away; it was checked an instant ago, and is checked again after. */
static int unmount_by_name(int pfd, const char *name, const MountSeen *seen, uint64_t unique_id, const char *path,
                           char **ret_msg) {
        char proc[sizeof("/proc/self/fd//") + 12 + NAME_MAX];

        snprintf(proc, sizeof proc, "/proc/self/fd/%d/%s", pfd, name);
        if (umount2(proc, UMOUNT_NOFOLLOW) < 0)
                return umount_failed(errno, seen, path, ret_msg);
        /* Where the kernel can say it in O(1), make sure the checked mount is the one that went. (Reading
         * mountinfo instead would cost O(mounts) per unmount: seconds on a node with thousands.) */
        if (unique_mount_gone(unique_id) == 0)
                return set_errmsg(ret_msg, -ESTALE,
                                  "unmounted %s, but mount %d is still mounted: another mount took the name between "
                                  "the check and the unmount",
                                  path, seen->mount_id);
        return 1;
}

/* Detach through the handle itself: exactly the mount checked, whatever the names do meanwhile. */
static int detach_fd(int fd, const MountSeen *seen, const char *path, char **ret_msg) {
        char proc[sizeof("/proc/self/fd/") + 12];

        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        /* Not UMOUNT_NOFOLLOW: that would name the magic link in /proc, not the mount (EINVAL). */
        if (umount2(proc, MNT_DETACH) < 0)
                return umount_failed(errno, seen, path, ret_msg);
        return 1;
}

int mount_unmount_seen(int root_fd, const char *path, const MountSeen *seen, int flags, char **ret_msg) {
        cleanup_close int pfd = -EBADF, fd = -EBADF;
        const char *name = NULL;
        MountIdentity now = {};
        int r;

        /* The root itself has no parent to unmount it from: -EINVAL. */
        r = pfd = chaseat(root_fd, path, CHASE_NO_SYMLINKS | CHASE_PARENT, O_PATH, &name, NULL);
        if (r == -EINVAL)
                return set_errmsg(ret_msg, r, "cannot unmount '%s': %s", path, strerror(-r));
        if (pfd >= 0)
                r = fd = RET_NERRNO(openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (r == -ELOOP)
                return refuse_symlink(root_fd, path, ret_msg);
        if (r == -ENOENT || r == -ENOTDIR)
                return unreachable(seen, path, r == -ENOENT ? "no longer exists" : "has a file on the way", ret_msg);
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot open %s: %s", path, strerror(-r));
        r = check_seen(root_fd, path, fd, seen, &now, ret_msg);
        if (r <= 0)
                return r;
        if (flags & MNT_DETACH)
                return detach_fd(fd, seen, path, ret_msg);
        fd = close_nointr(fd);
        return unmount_by_name(pfd, name, seen, now.unique_id, path, ret_msg);
}
