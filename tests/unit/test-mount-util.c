/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for mount-util, as root in a private mount namespace: unmounting only what was seen,
 * never through a symlink swapped in (the resolver it reaches mounts by is test-chase.c's). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/mount-util.h"
#include "agent/os/mountinfo.h"
#include "macro.h"
#include "string-util.h"
#include "tests/support/child.h"

static char dir[] = "/tmp/test-mount-util.XXXXXX";

static int setup(void **state) {
        if (!mkdtemp(dir))
                return -1;
        test_sh("cd %s && mkdir -p a/b/c real/x && ln -s real link && ln -s b a/lb && touch a/file", dir);
        return 0;
}

static int teardown(void **state) {
        test_sh("rm -rf %s", dir);
        return 0;
}

static int mount_entry_at(const char *abs, MountEntry *ret) {
        MountTable *t = NULL;
        int r = -ENOENT;

        if (mount_table_read(&t) < 0)
                return -EIO;
        for (size_t i = 0; i < t->n_entries; i++)
                if (streq(t->entries[i].mount_point, abs)) {
                        *ret = (MountEntry) { .mount_id = t->entries[i].mount_id,
                                              .major = t->entries[i].major,
                                              .minor = t->entries[i].minor };
                        r = 0; /* the last one: the topmost */
                }
        mount_table_free(t);
        return r;
}

static bool mounted(const char *abs) {
        MountEntry m;

        return mount_entry_at(abs, &m) == 0;
}

/* Plan (observe), swap a directory on the way for a symlink to a tree with its own mount, act. */
static int child_swap(void *userdata) {
        char p[512], out[512];
        MountEntry m;
        MountSeen seen;
        char *msg = NULL;
        int root_fd, fd, r;

        if (unshare(CLONE_NEWNS) < 0)
                return errno == EPERM ? 77 : 1;
        CHECK(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0); /* "none": valgrind */
        test_sh("mkdir -p %s/t/pods/p1/v %s/outside/v", dir, dir);
        snprintf(p, sizeof p, "%s/t/pods/p1/v", dir);
        snprintf(out, sizeof out, "%s/outside/v", dir);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0);
        CHECK(mount("tmpfs", out, "tmpfs", 0, NULL) == 0);
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root_fd >= 0);
        CHECK(mount_entry_at(p, &m) == 0);
        mount_seen_observe(root_fd, "/t/pods/p1/v", &m, &seen);
        CHECK(seen.mount_id == m.mount_id);

        test_sh("cd %s/t/pods && mv p1 p1.old && ln -s ../outside p1", dir);
        for (int flags = 0; flags <= MNT_DETACH; flags += MNT_DETACH) {
                r = mount_unmount_seen(root_fd, "/t/pods/p1/v", &seen, flags, &msg);
                CHECK(r == -ELOOP);
                CHECK(msg && strstr(msg, "/t/pods/p1 is now a symlink"));
                msg = mfree(msg);
                CHECK(mounted(out));
        }
        /* A mount of another file system in the planned one's place: left alone, planned one still there. */
        test_sh("cd %s/t/pods && rm p1 && mkdir -p p1/v", dir);
        snprintf(p, sizeof p, "%s/t/pods/p1/v", dir);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0);
        r = mount_unmount_seen(root_fd, "/t/pods/p1/v", &seen, 0, &msg);
        CHECK(r == -ESTALE && msg && strstr(msg, "still mounted"));
        msg = mfree(msg);
        CHECK(mounted(p));
        CHECK(umount(p) == 0);

        /* Back in place: it goes, once; then it is verifiably gone. */
        test_sh("cd %s/t/pods && rm -r p1 && mv p1.old p1", dir);
        fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(fd >= 0);
        CHECK(mount_unmount_seen(root_fd, "/t/pods/p1/v", &seen, 0, &msg) == -EBUSY && !msg);
        CHECK(mount_unmount_seen(root_fd, "/t/pods/p1/v", &seen, MNT_DETACH, &msg) == 1);
        close(fd);
        CHECK(!mounted(p));
        r = mount_unmount_seen(root_fd, "/t/pods/p1/v", &seen, 0, &msg);
        CHECK(r == 0 && msg && strstr(msg, "already unmounted"));
        msg = mfree(msg);
        CHECK(mounted(out));
        close(root_fd);
        return 0;
}

/* Stacked mounts go topmost first, each by its own id; a bind-mounted file too. */
static int child_stacked(void *userdata) {
        char p[512], f[512];
        MountEntry lower, upper, file;
        MountSeen s_lower, s_upper, s_file;
        char *msg = NULL;
        int root_fd;

        if (unshare(CLONE_NEWNS) < 0)
                return errno == EPERM ? 77 : 1;
        CHECK(mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0); /* "none": valgrind */
        test_sh("mkdir -p %s/s/v && touch %s/s/file %s/s/src", dir, dir, dir);
        snprintf(p, sizeof p, "%s/s/v", dir);
        snprintf(f, sizeof f, "%s/s/file", dir);
        root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        CHECK(root_fd >= 0);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0 && mount_entry_at(p, &lower) == 0);
        CHECK(mount("tmpfs", p, "tmpfs", 0, NULL) == 0 && mount_entry_at(p, &upper) == 0);
        test_sh("mount --bind %s/s/src %s", dir, f);
        CHECK(mount_entry_at(f, &file) == 0);
        mount_seen_observe(root_fd, "/s/v", &lower, &s_lower);
        mount_seen_observe(root_fd, "/s/v", &upper, &s_upper);
        mount_seen_observe(root_fd, "/s/file", &file, &s_file);
        /* The lower one is covered: refused while the upper one is there, not "already clean". */
        CHECK(mount_unmount_seen(root_fd, "/s/v", &s_lower, 0, &msg) == -ESTALE);
        msg = mfree(msg);
        CHECK(mount_unmount_seen(root_fd, "/s/v", &s_upper, 0, &msg) == 1);
        CHECK(mount_unmount_seen(root_fd, "/s/v", &s_lower, 0, &msg) == 1);
        CHECK(mount_unmount_seen(root_fd, "/s/file", &s_file, 0, &msg) == 1);
        CHECK(!mounted(p) && !mounted(f) && !msg);
        close(root_fd);
        return 0;
}

static void test_unmount_swap(void **state) {
        test_run_in_child(child_swap, NULL);
}

static void test_unmount_stacked(void **state) {
        test_run_in_child(child_stacked, NULL);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_unmount_swap),
                cmocka_unit_test(test_unmount_stacked),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
