/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/pods/pods-teardown.c: which CNI teardown the pods phase still asks for (the
 * plugins' kinds, the phases of the run, the manifest, host-local's dataDir, the runtime's conf dir)
 * and the concurrency each bound gives. */

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
#include <sys/stat.h>
#include <unistd.h>

#include "agent/config/manifest.h"
#include "agent/engine/engine.h"
#include "agent/phases/phases.h"
#include "agent/phases/pods/pods-teardown.h"
#include "macro.h"
#include "string-util.h"

#define BRIDGE_CONFLIST                                                                                    \
        "{\"cniVersion\":\"0.4.0\",\"name\":\"nr\",\"plugins\":[{\"type\":\"bridge\",\"bridge\":\"cni0\"," \
        "\"ipam\":{\"type\":\"host-local\",\"ranges\":[[{\"subnet\":\"10.244.1.0/24\"}]]}},"               \
        "{\"type\":\"portmap\",\"capabilities\":{\"portMappings\":true}}]}\n"

typedef struct Fixture {
        char dir[64];
        char conf_dir[96];
        char config[128];
        Manifest *manifest;
        PhaseSelection sel;
        Context ctx;
        RuntimeInfo info;
} Fixture;

static void write_config(Fixture *f, const char *text) {
        FILE *out = fopen(f->config, "we");

        assert_non_null(out);
        assert_int_equal(fputs(text, out) >= 0, 1);
        assert_int_equal(fclose(out), 0);
}

/* A node whose runtime loaded conf_dir/10-nr.conflist, every phase selected, the manifest given. */
static void fixture_new(Fixture *f, const char *manifest, const char *phases) {
        cleanup_free char *err = NULL;

        *f = (Fixture) {};
        snprintf(f->dir, sizeof f->dir, "/tmp/test-pods-teardown.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->conf_dir, sizeof f->conf_dir, "%s/net.d", f->dir);
        assert_int_equal(mkdir(f->conf_dir, 0755), 0);
        snprintf(f->config, sizeof f->config, "%s/10-nr.conflist", f->conf_dir);
        write_config(f, BRIDGE_CONFLIST);
        f->manifest = manifest_new();
        assert_non_null(f->manifest);
        assert_int_equal(manifest_parse_string(f->manifest, "test", manifest, "/", &err), 0);
        reset_phases_register();
        assert_int_equal(phase_selection_parse(&f->sel, phases, NULL, false, &err), 0);
        f->ctx = (Context) { .root = "/", .manifest = f->manifest, .cni_config = f->config, .selection = &f->sel };
        f->ctx.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(f->ctx.root_fd >= 0);
        f->info = (RuntimeInfo) { .kind = RUNTIME_CONTAINERD, .cni_conf_dir = f->conf_dir };
}

static void fixture_done(Fixture *f) {
        char cmd[128];

        manifest_free(f->manifest);
        close(f->ctx.root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
        assert_int_equal(system(cmd), 0);
}

static const char *const MANIFEST = "remove /var/lib/cni\nfirewall owned\n";

static PodsTeardownKind decide(Fixture *f, char **ret_why) {
        PodsTeardown t;

        assert_int_equal(pods_teardown_decide(&f->ctx, &f->info, &t), 0);
        *ret_why = TAKE_PTR(t.why);
        pods_teardown_done(&t);
        return t.kind;
}

static void test_node_local(void **state) {
        const char *other = NULL;
        size_t len = 0;

        assert_true(pods_teardown_node_local("bridge,host-local,portmap", NULL, NULL));
        assert_true(pods_teardown_node_local("flannel,portmap", NULL, NULL));
        assert_true(pods_teardown_node_local("loopback", NULL, NULL));
        assert_false(pods_teardown_node_local("calico,calico-ipam,portmap", &other, &len));
        assert_int_equal(len, strlen("calico"));
        assert_int_equal(strncmp(other, "calico", len), 0);
        assert_false(pods_teardown_node_local("bridge,dhcp", &other, &len));
        assert_int_equal(strncmp(other, "dhcp", len), 0);
        /* State no later phase removes: bandwidth's ifb device, firewall's firewalld zone entry. */
        assert_false(pods_teardown_node_local("bridge,portmap,bandwidth", &other, &len));
        assert_int_equal(strncmp(other, "bandwidth", len), 0);
        assert_false(pods_teardown_node_local("bridge,firewall", &other, &len));
        assert_int_equal(strncmp(other, "firewall", len), 0);
        /* A name only starting like a node-local one is another plugin. */
        assert_false(pods_teardown_node_local("bridgex", NULL, NULL));
        assert_false(pods_teardown_node_local("", NULL, NULL));
        assert_false(pods_teardown_node_local(NULL, NULL, NULL));
}

static void test_cheap(void **state) {
        cleanup_free char *why = NULL;
        Fixture f;

        fixture_new(&f, MANIFEST, NULL);
        assert_int_equal(decide(&f, &why), TEARDOWN_CHEAP);
        assert_true(startswith(why, "no DEL by bridge,host-local,portmap"));
        fixture_done(&f);
}

static void test_full_when_phases_missing(void **state) {
        cleanup_free char *why = NULL;
        Fixture f;

        fixture_new(&f, MANIFEST, "pods,firewall,files");
        assert_int_equal(decide(&f, &why), TEARDOWN_FULL);
        assert_non_null(strstr(why, "the network phase is not part of this run"));
        fixture_done(&f);
}

static void test_full_when_state_kept(void **state) {
        cleanup_free char *why = NULL, *why2 = NULL;
        Fixture f;

        fixture_new(&f, "remove /var/lib/kubelet\n", NULL);
        assert_int_equal(decide(&f, &why), TEARDOWN_FULL);
        assert_non_null(strstr(why, "does not remove /var/lib/cni"));
        fixture_done(&f);
        fixture_new(&f, "remove /var/lib/cni\nfirewall keep\n", NULL);
        assert_int_equal(decide(&f, &why2), TEARDOWN_FULL);
        assert_non_null(strstr(why2, "firewall keep"));
        fixture_done(&f);
}

static void test_full_cluster_ipam(void **state) {
        PodsTeardown t;
        Fixture f;

        fixture_new(&f, MANIFEST, NULL);
        write_config(&f, "{\"cniVersion\":\"0.3.1\",\"name\":\"k8s-pod-network\",\"plugins\":[{\"type\":\"calico\","
                         "\"ipam\":{\"type\":\"calico-ipam\"}},{\"type\":\"portmap\"}]}");
        assert_int_equal(pods_teardown_decide(&f.ctx, &f.info, &t), 0);
        assert_int_equal(t.kind, TEARDOWN_FULL);
        assert_true(t.ipam_lock);
        assert_true(t.agent_needed);
        assert_non_null(strstr(t.why, "calico may keep state off this node"));
        pods_teardown_done(&t);
        fixture_done(&f);
}

static void test_full_data_dir(void **state) {
        cleanup_free char *why = NULL;
        Fixture f;

        fixture_new(&f, MANIFEST, NULL);
        write_config(&f,
                     "{\"cniVersion\":\"0.4.0\",\"name\":\"nr\",\"plugins\":[{\"type\":\"bridge\",\"ipam\":{\"type\":"
                     "\"host-local\",\"dataDir\":\"/srv/ipam\"}}]}");
        assert_int_equal(decide(&f, &why), TEARDOWN_FULL);
        assert_non_null(strstr(why, "host-local keeps its addresses in /srv/ipam"));
        fixture_done(&f);
}

static void test_runtime_conf_dir(void **state) {
        cleanup_free char *why2 = NULL;
        PodsTeardown t;
        Fixture f;

        /* Detection read another directory than the running runtime's: the runtime's first file counts. */
        fixture_new(&f, MANIFEST, NULL);
        f.ctx.cni_config = "/nonexistent/net.d/10-other.conflist";
        assert_int_equal(pods_teardown_decide(&f.ctx, &f.info, &t), 0);
        assert_int_equal(t.kind, TEARDOWN_CHEAP);
        assert_string_equal(t.config, f.config);
        pods_teardown_done(&t);
        /* A rescue conflist left in front is not the runtime's config. */
        write_config(&f, BRIDGE_CONFLIST);
        {
                char rescue[160];
                FILE *out;

                snprintf(rescue, sizeof rescue, "%s/00-node-reset-rescue.conflist", f.conf_dir);
                out = fopen(rescue, "we");
                assert_non_null(out);
                fputs("{\"cniVersion\":\"0.4.0\",\"name\":\"node-reset-rescue\",\"plugins\":[{\"type\":\"loopback\"}]}"
                      "\n",
                      out);
                fclose(out);
        }
        assert_int_equal(pods_teardown_decide(&f.ctx, &f.info, &t), 0);
        assert_string_equal(t.config, f.config);
        pods_teardown_done(&t);
        f.info.kind = RUNTIME_CRIO;
        f.ctx.cni_config = f.config;
        assert_int_equal(decide(&f, &why2), TEARDOWN_FULL);
        assert_non_null(strstr(why2, "containerd only"));
        fixture_done(&f);
}

static void test_none(void **state) {
        cleanup_free char *why = NULL;
        Fixture f;

        fixture_new(&f, MANIFEST, NULL);
        assert_int_equal(unlink(f.config), 0);
        f.ctx.cni_config = NULL;
        assert_int_equal(decide(&f, &why), TEARDOWN_NONE);
        fixture_done(&f);
}

static void test_concurrency(void **state) {
        PodsTeardown locked = { .kind = TEARDOWN_FULL, .ipam_lock = true }, cheap = { .kind = TEARDOWN_CHEAP };
        const char *why = NULL;

        assert_int_equal(pods_concurrency(&locked, 30, 2, &why), 5);
        assert_non_null(strstr(why, "lock"));
        assert_int_equal(pods_concurrency(&cheap, 30, 2, &why), 8);
        assert_int_equal(pods_concurrency(&cheap, 3, 2, &why), 3);
        assert_int_equal(pods_concurrency(&cheap, 3000, 128, &why), 256);
        assert_int_equal(pods_concurrency(&cheap, 30, 0, &why), 4);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_node_local),
                cmocka_unit_test(test_cheap),
                cmocka_unit_test(test_full_when_phases_missing),
                cmocka_unit_test(test_full_when_state_kept),
                cmocka_unit_test(test_full_cluster_ipam),
                cmocka_unit_test(test_full_data_dir),
                cmocka_unit_test(test_runtime_conf_dir),
                cmocka_unit_test(test_none),
                cmocka_unit_test(test_concurrency),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
