/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/node-name.c: under --root the host and node names are the tree's or unknown. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config/node-name.h"
#include "macro.h"
#include "string-util.h"

static void put(const char *dir, const char *name, const char *text) {
        char p[512];
        FILE *f;

        snprintf(p, sizeof p, "%s/%s", dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static void test_tree_host_name(void **state) {
        char dir[] = "/tmp/test-node-name.XXXXXX", p[512], outside[600], cmd[700];
        cleanup_free char *name = NULL;
        const char *source = NULL;
        int root_fd;

        assert_non_null(mkdtemp(dir));
        snprintf(cmd, sizeof cmd, "mkdir -p %s/tree/etc", dir);
        assert_int_equal(system(cmd), 0);
        snprintf(p, sizeof p, "%s/tree", dir);
        root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);

        /* No /etc/hostname in the tree: unknown, never the running system's gethostname(). */
        assert_int_equal(node_host_name(root_fd, false, &name), 0);
        assert_null(name);
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), -ENXIO);
        assert_null(name);

        /* A symlink to a file outside the tree is resolved inside it: still unknown. */
        snprintf(outside, sizeof outside, "%s/outside", dir);
        put(dir, "outside", "cp-1\n");
        snprintf(p, sizeof p, "%s/tree/etc/hostname", dir);
        assert_int_equal(symlink(outside, p), 0);
        assert_int_equal(node_host_name(root_fd, false, &name), 0);
        assert_null(name);
        assert_int_equal(unlink(p), 0);

        /* hostname(5): comments and blanks skipped, lower-cased as kubelet takes it. */
        put(dir, "tree/etc/hostname", "# this node\n\n  Worker-7 \nsecond\n");
        assert_int_equal(node_host_name(root_fd, false, &name), 1);
        assert_string_equal(name, "worker-7");
        name = mfree(name);
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "worker-7");
        assert_string_equal(source, "tree's /etc/hostname");
        name = mfree(name);

        /* --node-name wins; a name that is no node name is -EINVAL with the name for the message. */
        assert_int_equal(node_name_pick("cp-2", NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(source, "--node-name");
        name = mfree(name);
        assert_int_equal(node_name_pick("Not_A_Name", NULL, root_fd, false, &name, &source), -EINVAL);
        assert_string_equal(name, "Not_A_Name");
        name = mfree(name);

        /* On the node itself (root "/") the kernel's host name is the node's. */
        assert_int_equal(node_host_name(root_fd, true, &name), 1);
        assert_non_null(name);

        close(root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tree_host_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
