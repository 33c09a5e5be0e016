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

/* A k3s or rke2 node: the name its agent registers as, from its files, never the host name when they
 * say another (issue 39: a drain of the host name on a k3s node with node-name: drained nothing). */
static void test_rancher_node_name(void **state) {
        char dir[] = "/tmp/test-node-name.XXXXXX", p[512], cmd[1024];
        cleanup_free char *name = NULL;
        const char *source = NULL;
        int root_fd;

        assert_non_null(mkdtemp(dir));
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s/tree/etc/rancher/k3s/config.yaml.d %s/tree/etc/systemd/system %s/tree/etc/rancher/node "
                 "%s/tree/var/lib/rancher/k3s/agent",
                 dir, dir, dir, dir);
        assert_int_equal(system(cmd), 0);
        snprintf(p, sizeof p, "%s/tree", dir);
        root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        put(dir, "tree/etc/hostname", "host-7\n");

        /* The env file's K3S_NODE_NAME, under the config file and the command line. */
        put(dir, "tree/etc/systemd/system/k3s-agent.service.env", "K3S_URL=https://cp:6443\nK3S_NODE_NAME=From-Env\n");
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "from-env");
        assert_string_equal(source, "node name in k3s's or rke2's configuration");
        name = mfree(name);
        /* node-name: in config.yaml, then a drop-in's (the last wins); a file that is no .yaml says nothing. */
        put(dir, "tree/etc/rancher/k3s/config.yaml", "node-name: agent-1\ntoken: x\n");
        put(dir, "tree/etc/rancher/k3s/config.yaml.d/50-name.yaml", "node-name: agent-2\n");
        put(dir, "tree/etc/rancher/k3s/config.yaml.d/90-name.txt", "node-name: agent-3\n");
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "agent-2");
        name = mfree(name);
        /* --node-name in the unit's ExecStart= wins. */
        put(dir, "tree/etc/systemd/system/k3s-agent.service",
            "[Service]\nExecStart=/usr/local/bin/k3s \\\n    agent \\\n    --node-name=agent-unit\n");
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "agent-unit");
        name = mfree(name);
        /* --with-node-id: its id file, or the name is unknown. */
        put(dir, "tree/etc/rancher/k3s/config.yaml.d/60-id.yaml", "with-node-id: true\n");
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), -ENXIO);
        assert_null(name);
        put(dir, "tree/etc/rancher/node/id", "a1b2c3d4\n");
        assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "agent-unit-a1b2c3d4");
        name = mfree(name);
        /* The agent's own client certificate is what the API server knows it by. */
        snprintf(cmd, sizeof cmd,
                 "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 "
                 "-subj /O=system:nodes/CN=system:node:agent-cert -keyout %s/k.pem "
                 "-out %s/tree/var/lib/rancher/k3s/agent/client-kubelet.crt 2>/dev/null",
                 dir, dir);
        if (system(cmd) == 0) {
                assert_int_equal(node_name_pick(NULL, NULL, root_fd, false, &name, &source), 0);
                assert_string_equal(name, "agent-cert");
                assert_string_equal(source, "k3s's or rke2's client certificate");
                name = mfree(name);
        }
        /* --node-name wins over all of them. */
        assert_int_equal(node_name_pick("w1", NULL, root_fd, false, &name, &source), 0);
        assert_string_equal(name, "w1");

        close(root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tree_host_name),
                cmocka_unit_test(test_rancher_node_name),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
