/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/files/files-kubeconfig.c: the plan's words, the run that edits only
 * the bytes and the inode the plan read, the file removed whole, a symlink left, and verify. */

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
#include "agent/engine/plan.h"
#include "agent/os/fileio.h"
#include "agent/phases/files/files-kubeconfig.h"
#include "macro.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

#define THIS "https://10.0.0.1:6443"

static char dir[64];
static int root_fd = -EBADF;
/* One run's context: its plan, its run and its verify, as the engine keeps it. */
static Context run;

static const char merged[] = "clusters:\n"
                             "- {name: k, cluster: {server: '" THIS "'}}\n"
                             "- {name: o, cluster: {server: 'https://192.0.2.7:6443'}}\n"
                             "contexts:\n"
                             "- {name: c, context: {cluster: k, user: u}}\n"
                             "- {name: d, context: {cluster: o, user: v}}\n"
                             "current-context: d\n"
                             "users:\n- {name: u, user: {token: t}}\n- {name: v, user: {token: other-token}}\n";
static const char only[] = "clusters:\n- {name: k, cluster: {server: '" THIS "'}}\n"
                           "contexts:\n- {name: c, context: {cluster: k, user: u}}\n"
                           "users:\n- {name: u, user: {token: t}}\n";

static void put(const char *path, const char *text) {
        cleanup_free char *dirs = strdup(path + 1);
        int fd;

        for (char *s = strchr(dirs, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                (void) mkdirat(root_fd, dirs, 0755);
                *s = '/';
        }
        fd = openat(root_fd, path + 1, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
}

static char *get(const char *path) {
        char *text = NULL;
        size_t size;

        return fileio_read_beneath(root_fd, path, 1 << 20, &text, &size) < 0 ? NULL : text;
}

static int setup(void **state) {
        strcpy(dir, "/tmp/test-files-kubeconfig.XXXXXX");
        assert_non_null(mkdtemp(dir));
        root_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(root_fd >= 0);
        put("/etc/kubernetes/kubelet.conf", only);
        run = (Context) { .root = dir, .root_fd = root_fd };
        return 0;
}

static int teardown(void **state) {
        char cmd[128];

        context_states_done(&run);
        (void) close(root_fd);
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        assert_int_equal(system(cmd), 0);
        return 0;
}

/* Plan the manifest's lines; the context the rows act with. */
static Plan *plan_of(const Manifest *m, Context *ctx) {
        Plan *p = plan_new();

        assert_non_null(p);
        ctx->manifest = m;
        ctx->pass = ENGINE_PASS_PLAN;
        for (size_t i = 0; i < m->n_entries; i++)
                assert_int_equal(files_kubeconfig_plan(ctx, p, &m->entries[i], NULL), 0);
        return p;
}

static Manifest *manifest_of(const char *text) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_non_null(m);
        assert_int_equal(manifest_parse_string(m, "t.conf", text, NULL, &err), 0);
        return m;
}

static int apply(Action *a, Context *ctx, char **msg) {
        ctx->pass = ENGINE_PASS_EXECUTE;
        return a->ops->apply(a, ctx, msg);
}

static void test_plan_run_verify(void **state) {
        CLEANUP(manifest_freep) Manifest *m = NULL;
        CLEANUP(plan_freep) Plan *p = NULL;
        cleanup_free char *msg = NULL, *after = NULL;
        Context *ctx = &run;

        put("/home/alice/.kube/merged", merged);
        put("/home/alice/.kube/only", only);
        assert_int_equal(symlinkat("merged", root_fd, "home/alice/.kube/link"), 0);
        m = manifest_of("prune-kubeconfig /home/alice/.kube/merged\n"
                        "prune-kubeconfig /home/alice/.kube/only\n"
                        "prune-kubeconfig /home/alice/.kube/link\n"
                        "prune-kubeconfig /home/alice/.kube/merged\n");
        p = plan_of(m, ctx);
        /* Two lines naming one file are one row. */
        assert_int_equal(p->n_actions, 3);
        assert_string_equal(p->actions[0]->detail, "remove context \"c\", cluster \"k\", user \"u\" (this cluster's); "
                                                   "keep context \"d\", cluster \"o\", user \"v\"");
        assert_non_null(strstr(p->actions[0]->reason, "t.conf:4"));
        assert_true(p->actions[0]->present);
        assert_string_equal(p->actions[1]->detail,
                            "remove the file: it holds only this cluster (context \"c\", cluster \"k\", user \"u\")");
        assert_string_equal(p->actions[2]->code, "symlink");

        assert_int_equal(apply(p->actions[0], ctx, &msg), 1);
        assert_string_equal(msg, "removed context \"c\", cluster \"k\", user \"u\" (this cluster's); "
                                 "kept context \"d\", cluster \"o\", user \"v\"");
        after = get("/home/alice/.kube/merged");
        assert_null(strstr(after, THIS));
        assert_non_null(strstr(after, "other-token"));
        assert_non_null(strstr(after, "current-context: d"));
        msg = mfree(msg);
        assert_int_equal(apply(p->actions[1], ctx, &msg), 1);
        assert_int_equal(faccessat(root_fd, "home/alice/.kube/only", F_OK, AT_SYMLINK_NOFOLLOW), -1);
        /* The symlink and what it leads to are as the run left them. */
        assert_int_equal(faccessat(root_fd, "home/alice/.kube/link", F_OK, AT_SYMLINK_NOFOLLOW), 0);

        /* Verify: nothing of this cluster is left to find. */
        for (size_t i = 0; i < 2; i++) {
                msg = mfree(msg);
                assert_int_equal(p->actions[i]->ops->check(p->actions[i], ctx, &msg), 0);
        }
}

/* What the plan read is what the run edits: other bytes, or another inode with the same bytes, are
 * refused, the file untouched. */
static void test_changed_since_plan(void **state) {
        CLEANUP(manifest_freep) Manifest *m = manifest_of("prune-kubeconfig /home/alice/.kube/config\n");
        CLEANUP(plan_freep) Plan *p = NULL;
        cleanup_free char *msg = NULL, *after = NULL;
        Context *ctx = &run;
        int fd;

        put("/home/alice/.kube/config", merged);
        p = plan_of(m, ctx);
        fd = openat(root_fd, "home/alice/.kube/config", O_WRONLY | O_APPEND | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "# a user's edit\n", 16), 16);
        close(fd);
        assert_int_equal(apply(p->actions[0], ctx, &msg), -ESTALE);
        assert_string_equal(msg, "it changed since the plan read it: not edited");
        after = get("/home/alice/.kube/config");
        assert_non_null(strstr(after, THIS));
        assert_non_null(strstr(after, "# a user's edit"));
        /* verify: still there */
        msg = mfree(msg);
        assert_int_equal(p->actions[0]->ops->check(p->actions[0], ctx, &msg), 1);

        plan_free(TAKE_PTR(p));
        after = mfree(after);
        put("/home/alice/.kube/config", merged);
        p = plan_of(m, ctx);
        put("/home/alice/.kube/new", merged);
        assert_int_equal(renameat(root_fd, "home/alice/.kube/new", root_fd, "home/alice/.kube/config"), 0);
        msg = mfree(msg);
        assert_int_equal(apply(p->actions[0], ctx, &msg), -ESTALE);
        assert_non_null(strstr(msg, "another file"));
        after = get("/home/alice/.kube/config");
        assert_string_equal(after, merged);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_plan_run_verify, setup, teardown),
                cmocka_unit_test_setup_teardown(test_changed_since_plan, setup, teardown),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
