/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the file systems that may never answer: which types are such, which mounts of a
 * tree count, and work given up in its child while the rest goes on. A mount that really never
 * answers is tests/integration/test-dead-home.sh's (FUSE). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/os/remote-fs.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);

static char dir[] = "/tmp/test-remote-fs.XXXXXX";
static int root_fd = -EBADF;

static int setup(void **state) {
        assert_non_null(mkdtemp(dir));
        root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        return 0;
}

static int teardown(void **state) {
        remote_fs_forget();
        (void) close(root_fd);
        (void) rmdir(dir);
        return 0;
}

/* A mount table with the tree at dir: lines "FSTYPE MOUNT-POINT" (relative to dir, "" for dir
 * itself; "@/X" for a host path outside it). */
static void setup_with(const char *const *lines, uint64_t deadline) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        assert_non_null(f);
        fprintf(f, "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n");
        for (unsigned i = 0; lines[i]; i += 2)
                fprintf(f, "%u 1 0:%u / %s%s rw - %s src%u rw\n", i + 2, i + 50,
                        startswith(lines[i + 1], "@") ? "" : dir,
                        startswith(lines[i + 1], "@") ? lines[i + 1] + 1 : lines[i + 1], lines[i], i);
        assert_int_equal(fclose(f), 0);
        f = fmemopen(text, size, "r");
        assert_non_null(f);
        assert_int_equal(mount_table_parse(f, &t), 0);
        fclose(f);
        free(text);
        assert_int_equal(remote_fs_setup_table(dir, root_fd, deadline, t), 0);
}

static void test_types(void **state) {
        assert_true(remote_fs_type("nfs4"));
        assert_true(remote_fs_type("cifs"));
        assert_true(remote_fs_type("fuse"));
        assert_true(remote_fs_type("fuse.sshfs"));
        assert_true(remote_fs_type("autofs"));
        assert_false(remote_fs_type("ext4"));
        assert_false(remote_fs_type("tmpfs"));
        assert_false(remote_fs_type("overlay"));
        assert_false(remote_fs_type("fusectl"));
        assert_false(remote_fs_type(NULL));
}

/* Only the mount a path reaches counts: a local one stacked on a remote one hides it; one outside
 * the tree is not the tree's. */
static void test_which_mounts(void **state) {
        setup_with((const char *const[]) { "ext4", "/data", "nfs4", "@/srv/elsewhere", NULL }, 0);
        assert_false(remote_fs_present(root_fd));
        setup_with((const char *const[]) { "nfs4", "/home", "tmpfs", "/home", NULL }, 0);
        assert_false(remote_fs_present(root_fd));
        setup_with((const char *const[]) { "tmpfs", "/home", "nfs4", "/home", NULL }, 0);
        assert_true(remote_fs_present(root_fd));
        assert_true(remote_fs_on(root_fd, "/home"));
        assert_true(remote_fs_on(root_fd, "/home/alice/.kube"));
        assert_false(remote_fs_on(root_fd, "/homes"));
        assert_false(remote_fs_on(root_fd, "/etc/kubernetes"));
        /* The tree itself on such a mount. */
        setup_with((const char *const[]) { "fuse.sshfs", "", NULL }, 0);
        assert_true(remote_fs_present(root_fd));
        assert_true(remote_fs_on(root_fd, "/etc/kubernetes"));
        /* Another root fd than the tree's: never checked. */
        assert_false(remote_fs_present(STDIN_FILENO));
        remote_fs_forget();
        assert_false(remote_fs_present(root_fd));
}

typedef struct Seen {
        bool ran_here;
} Seen;

static int work(size_t i, void *userdata, FILE *out) {
        Seen *s = userdata;

        s->ran_here = true; /* visible only when the work runs in this process */
        if (i == 1)
                for (;;)
                        pause(); /* a read that never returns */
        fprintf(out, "item %zu", i);
        return (int) i;
}

/* No such mount: the work is done here, in order, every item. */
static void test_each_here(void **state) {
        RemoteFsItem items[] = { { .path = "/home/a" } }; /* (item 1 would hang) */
        Seen seen = {};

        setup_with((const char *const[]) { "ext4", "/home", NULL }, 0);
        assert_int_equal(remote_fs_each(root_fd, items, ELEMENTSOF(items), work, &seen), 0);
        assert_true(seen.ran_here);
        assert_int_equal(items[0].result, 0);
        assert_string_equal(items[0].out, "item 0");
        remote_fs_items_done(items, ELEMENTSOF(items));
}

/* With such a mount the work runs in a child: the item that hangs is given up at the deadline, named,
 * and what lies beneath it is not started; the items before and after it are done. */
static void test_each_child(void **state) {
        RemoteFsItem items[] = {
                { .path = "/home/bob" },
                { .path = "/home/alice" },
                { .path = "/home/alice/.kube/config" },
                { .path = "/home/carol" },
        };
        const RemoteFsUnanswered *dead;
        cleanup_free char *why = NULL;
        Seen seen = {};
        size_t n;

        setup_with((const char *const[]) { "nfs4", "/home", NULL }, now(CLOCK_MONOTONIC) + 300 * USEC_PER_MSEC);
        assert_true(remote_fs_present(root_fd));
        assert_int_equal(remote_fs_each(root_fd, items, ELEMENTSOF(items), work, &seen), 0);
        assert_false(seen.ran_here);
        assert_int_equal(items[0].result, 0);
        assert_string_equal(items[0].out, "item 0");
        assert_int_equal(items[1].result, -ETIME);
        assert_null(items[1].out);
        assert_non_null(strstr(items[1].why, "/home/alice did not finish"));
        assert_int_equal(items[2].result, -EHOSTDOWN);
        assert_null(items[2].out);
        assert_int_equal(items[3].result, 3);
        assert_string_equal(items[3].out, "item 3");
        dead = remote_fs_unanswered(&n);
        assert_int_equal(n, 1);
        assert_string_equal(dead[0].path, "/home/alice");
        /* Every later read beneath it is refused at once; a sibling is not. */
        assert_int_equal(remote_fs_check(root_fd, "/home/alice/.kube", &why), -EHOSTDOWN);
        assert_non_null(strstr(why, "/home/alice"));
        assert_int_equal(remote_fs_check(root_fd, "home/alice", NULL), -EHOSTDOWN);
        assert_int_equal(remote_fs_check(root_fd, "/home/alice2", NULL), 0);
        assert_int_equal(remote_fs_check(root_fd, "/home", NULL), 0);
        remote_fs_items_done(items, ELEMENTSOF(items));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_types),
                cmocka_unit_test(test_which_mounts),
                cmocka_unit_test(test_each_here),
                cmocka_unit_test(test_each_child),
        };

        return cmocka_run_group_tests(tests, setup, teardown);
}
