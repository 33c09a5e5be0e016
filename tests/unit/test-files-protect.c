/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/files/files-protect.c: every source of protection against every row
 * kind (remove, empty, edit, unlink, and the walk beneath a removal), planning and running, which
 * source is named when several keep a path, and the words and codes the report gives. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/etcd-owner.h"
#include "agent/config/manifest.h"
#include "agent/engine/plan.h"
#include "agent/node/backup-kept.h"
#include "agent/node/etcd.h"
#include "agent/phases/files/files-protect.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);

static const ProtectKind every_row[] = { PROTECT_REMOVE, PROTECT_EMPTY, PROTECT_EDIT, PROTECT_UNLINK };

static Manifest *manifest_of(const char *text) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;

        assert_non_null(m);
        assert_int_equal(manifest_parse_string(m, "t.conf", text, NULL, &err), 0);
        return m;
}

static ProtectState ask(const Context *ctx, ProtectKind kind, const char *path) {
        return files_protect_decide(ctx, &(ProtectRow) { .kind = kind }, path, NULL);
}

/* The decision with its reasons; *why is left for the caller to check and free. */
static ProtectState ask_why(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *why) {
        ProtectState s = files_protect_decide(ctx, row, path, why);

        /* Words exactly when the row must leave the path. */
        assert_true((s == PROTECT_SELF) == (why->message != NULL));
        assert_true((s == PROTECT_NONE) == (why->source == PROTECT_BY_NOTHING));
        /* The walk, which asks for every entry, gets the same answer without reasons. */
        assert_int_equal(files_protect_decide(ctx, row, path, NULL), s);
        return s;
}

static void assert_why(const Context *ctx, ProtectKind kind, const char *path, ProtectState want, ProtectSource source,
                       const char *code, const char *message) {
        ProtectWhy why = {};

        assert_int_equal(ask_why(ctx, &(ProtectRow) { .kind = kind }, path, &why), want);
        assert_int_equal(why.source, source);
        if (code)
                assert_string_equal(why.code, code);
        else
                assert_null(why.code);
        if (message)
                assert_string_equal(why.message, message);
        protect_why_done(&why);
}

/* A path one source keeps, and the words a row of that kind gets for it. */
typedef struct Words {
        ProtectKind kind;
        const char *path, *message;
} Words;

static void assert_words(const Context *ctx, ProtectSource source, const Words *w, size_t n) {
        for (size_t i = 0; i < n; i++)
                assert_why(ctx, w[i].kind, w[i].path, PROTECT_SELF, source, NULL, w[i].message);
}

/* "protect": the path and all beneath it for every row; its ancestors hold it, which matters only to
 * a recursive row. A glob covers what it matches. */
static void test_manifest(void **state) {
        CLEANUP(manifest_freep)
        Manifest *m = manifest_of("remove /var/lib/kubelet\n"
                                  "protect /var/lib/keep\n"
                                  "protect /var/lib/kubelet/pods/*/volumes\n");
        const Context ctx = { .manifest = m };

        for (size_t i = 0; i < ELEMENTSOF(every_row); i++) {
                assert_why(&ctx, every_row[i], "/var/lib/keep", PROTECT_SELF, PROTECT_BY_MANIFEST, "protected",
                           "protected by t.conf:2");
                assert_why(&ctx, every_row[i], "/var/lib/keep/a/b", PROTECT_SELF, PROTECT_BY_MANIFEST, "protected",
                           "protected by t.conf:2");
                assert_why(&ctx, every_row[i], "/var/lib/kubelet/pods/p1/volumes/x", PROTECT_SELF, PROTECT_BY_MANIFEST,
                           "protected", "protected by t.conf:3");
                assert_int_equal(ask(&ctx, every_row[i], "/var/lib/keeper"), PROTECT_NONE);
                assert_int_equal(ask(&ctx, every_row[i], "/var/lib/kubelet/pods/p1/etc-hosts"), PROTECT_NONE);
        }
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/lib/keep/a"), PROTECT_SELF);
        /* Beneath a directory: a removal keeps it and goes in; one inode holds nothing beneath it. */
        assert_why(&ctx, PROTECT_REMOVE, "/var/lib", PROTECT_CONTAINS, PROTECT_BY_MANIFEST, NULL, NULL);
        assert_int_equal(ask(&ctx, PROTECT_EMPTY, "/var/lib/kubelet"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/lib/kubelet/pods"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_EDIT, "/var/lib"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_UNLINK, "/var/lib/kubelet/pods"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/"), PROTECT_CONTAINS);
}

/* Asked when a row runs, for what it acts on: a walk's entries were weighed at its target, and the
 * opt-in lets its own line through. */
static void test_system_path(void **state) {
        static const Words words[] = {
                { PROTECT_REMOVE, "/etc/ssh",
                  "/etc/ssh is a system path that no allow-system-path names: nothing removed" },
                { PROTECT_EMPTY, "/var/lib",
                  "/var/lib is a system path that no allow-system-path names: nothing removed" },
                { PROTECT_EDIT, "/etc/resolv.conf", "a system path that no allow-system-path names: not edited" },
                { PROTECT_UNLINK, "/usr/local/bin", "a system path that no allow-system-path names: not unlinked" },
        };
        Context ctx = {};

        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(ask(&ctx, every_row[i], "/etc/ssh"), PROTECT_NONE); /* the parser's, when planning */
        ctx.pass = ENGINE_PASS_EXECUTE;
        assert_words(&ctx, PROTECT_BY_SYSTEM_PATH, words, ELEMENTSOF(words));
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/etc/ssh"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/etc/kubernetes"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_EDIT, "/etc/kubernetes/kubelet.conf"), PROTECT_NONE);
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = every_row[i], .system_path = true },
                                                      "/etc/resolv.conf", NULL),
                                 PROTECT_NONE);
}

static void test_refusal(void **state) {
        const Context ctx = { .pass = ENGINE_PASS_EXECUTE };
        ProtectWhy why = {};
        char *msg = NULL;

        assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_EDIT }, "/etc/resolv.conf", &why),
                         PROTECT_SELF);
        assert_int_equal(why.error, -EPERM);
        assert_int_equal(files_protect_refuse(&why, &msg), -EPERM);
        assert_string_equal(msg, "a system path that no allow-system-path names: not edited");
        free(msg);
        protect_why_done(&why);
        assert_int_equal(why.source, PROTECT_BY_NOTHING);
        assert_null(why.message);
}

/* node-reset's own backups: under every manifest, for every row. */
static void test_backups(void **state) {
        static const Words words[] = {
                { PROTECT_REMOVE, "/var/backups/node-reset",
                  "node-reset's backups (/var/backups/node-reset) are never removed" },
                { PROTECT_EMPTY, "/var/backups/node-reset/x",
                  "node-reset's backups (/var/backups/node-reset) are never removed" },
                { PROTECT_EDIT, "/var/backups/node-reset/x/etc/kubernetes/admin.conf",
                  "node-reset's backups (/var/backups/node-reset) are never edited" },
                { PROTECT_UNLINK, "/var/backups/node-reset/latest",
                  "node-reset's backups (/var/backups/node-reset) are never removed" },
        };
        CLEANUP(manifest_freep) Manifest *m = manifest_of("remove /var/backups/node-reset\n");
        const Context ctx = { .manifest = m };

        for (size_t i = 0; i < ELEMENTSOF(every_row); i++) {
                assert_int_equal(ask(&ctx, every_row[i], "/var/backups/node-reset"), PROTECT_SELF);
                assert_int_equal(ask(&ctx, every_row[i], "/var/backups/node-reset/20261203T000000Z/etc"), PROTECT_SELF);
                assert_int_equal(ask(&ctx, every_row[i], "/var/backups/kube_etcd"), PROTECT_NONE);
                assert_int_equal(ask(&ctx, every_row[i], "/var/backups/node-reset-old"), PROTECT_NONE);
        }
        assert_words(&ctx, PROTECT_BY_BACKUPS, words, ELEMENTSOF(words));
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/backups/node-reset/x"), PROTECT_SELF);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/var/backups"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_EDIT, "/var/backups"), PROTECT_NONE);
}

/* The run's decision of who owns the etcd (node_etcd_scope()), lent by the test: run_done() takes it
 * back before the run's states are freed. */
static void lend_scope(Context *ctx, EtcdScope *scope) {
        NodeEtcdRun *run = node_etcd_run(ctx);

        assert_non_null(run);
        run->scope = scope;
}

static void run_done(Context *ctx) {
        NodeEtcdRun *run = node_etcd_run(ctx);

        assert_non_null(run);
        run->scope = NULL;
        context_states_done(ctx);
}

/* An etcd no installer of this node made: what it keeps stays, for every row. */
static void test_etcd_scope(void **state) {
        char *keep[] = { (char *) "/var/lib/etcd", (char *) "/etc/etcd.env",
                         (char *) "/etc/kubernetes/kubeadm-config.yaml", NULL };
        EtcdScope scope = { .owner = ETCD_OWNER_FOREIGN,
                            .why = (char *) "etcd.service: no installer's, out of scope",
                            .keep = keep };
        Context ctx = {};

        lend_scope(&ctx, &scope);
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++) {
                assert_why(&ctx, every_row[i], "/var/lib/etcd/member", PROTECT_SELF, PROTECT_BY_ETCD_SCOPE,
                           "out-of-scope", "etcd.service: no installer's, out of scope");
                assert_why(&ctx, every_row[i], "/etc/etcd.env", PROTECT_SELF, PROTECT_BY_ETCD_SCOPE, "out-of-scope",
                           NULL);
                assert_int_equal(ask(&ctx, every_row[i], "/etc/kubernetes/pki"), PROTECT_NONE);
        }
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/lib/etcd"), PROTECT_SELF);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/etc/kubernetes"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_EDIT, "/etc/kubernetes"), PROTECT_NONE);
        /* An etcd an installer of this node made is the run's to reset. */
        scope.owner = ETCD_OWNER_ENV;
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(ask(&ctx, every_row[i], "/etc/etcd.env"), PROTECT_NONE);
        run_done(&ctx);
}

/* The backup could not be written: a run keeps the rows that have no other copy. */
static void test_unsaved(void **state) {
        static const Words words[] = {
                { PROTECT_REMOVE, "/etc/kubernetes/pki/ca.key",
                  "the backup could not be written, so kept (no other copy): nothing removed" },
                { PROTECT_EDIT, "/etc/kubernetes/pki/sa.key",
                  "the backup could not be written, so kept (no other copy): not edited" },
                { PROTECT_UNLINK, "/etc/kubernetes/ssl/ca.crt",
                  "the backup could not be written, so kept (no other copy): not unlinked" },
        };
        /* As the backup phase leaves them: the fixed rows, and k3s's beneath its data dir. */
        static char *kept[] = { (char *) "/etc/kubernetes/pki/ca.key", (char *) "/etc/kubernetes/pki/sa.key",
                                (char *) "/etc/kubernetes/pki/ca.crt", (char *) "/etc/kubernetes/ssl/ca.crt",
                                (char *) "/data/k3s/server/token",     NULL };
        Context ctx = {};
        char **rows = NULL;

        for (char **k = kept; *k; k++)
                assert_int_equal(strv_extend(&rows, *k), 0);
        assert_int_equal(backup_kept_unwritten(&ctx, strdup("/etc/kubernetes/pki"), rows), 0);
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(ask(&ctx, every_row[i], "/etc/kubernetes/pki/ca.key"), PROTECT_NONE);
        ctx.pass = ENGINE_PASS_EXECUTE;
        assert_words(&ctx, PROTECT_BY_UNSAVED, words, ELEMENTSOF(words));
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/etc/kubernetes/pki/ca.crt"), PROTECT_SELF);
        assert_int_equal(ask(&ctx, PROTECT_EMPTY, "/etc/kubernetes/pki"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/etc/kubernetes/pki/apiserver.key"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_EDIT, "/etc/kubernetes/pki"), PROTECT_NONE);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/data/k3s"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/data/k3s/server/token"), PROTECT_SELF);
        /* Written: nothing is kept for it. */
        assert_int_equal(backup_kept_uncopied(&ctx, NULL), 0);
        assert_int_equal(backup_kept_unwritten(&ctx, NULL, NULL), 0);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/etc/kubernetes/pki/ca.key"), PROTECT_NONE);
        run_done(&ctx);
}

/* The data directory's rule decides when the run has learnt what it needs; planning keeps nothing. */
static void test_etcd_data(void **state) {
        Context ctx = {};
        NodeEtcdRun *run = node_etcd_run(&ctx);
        cleanup_free char *reason = NULL;
        ProtectWhy why = {};

        assert_non_null(run);
        run->data_dir = strdup("/srv/etcd/data");
        run->facts.observed = true;

        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/srv/etcd/data"), PROTECT_NONE);
        ctx.pass = ENGINE_PASS_EXECUTE;
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(ask(&ctx, every_row[i], "/srv/etcd/data/member/snap/db"), PROTECT_SELF);
        assert_why(
                &ctx, PROTECT_EDIT, "/srv/etcd/data/member/snap/db", PROTECT_SELF, PROTECT_BY_ETCD_DATA, NULL,
                "the etcd data directory /srv/etcd/data: this member is still part of its cluster: kept: not edited");
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_UNLINK }, "/srv/etcd/data", &why), PROTECT_SELF);
        assert_int_equal(why.error, -EBUSY);
        protect_why_done(&why);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/srv/etcd"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_UNLINK, "/srv/etcd"), PROTECT_NONE);
        assert_string_equal(files_protect_etcd_kept(&ctx, &reason), "/srv/etcd/data");
        assert_string_equal(reason, "this member is still part of its cluster: kept");
        /* The member left: its data goes. */
        run->facts.left = true;
        assert_null(files_protect_etcd_kept(&ctx, NULL));
        for (size_t i = 0; i < ELEMENTSOF(every_row); i++)
                assert_int_equal(ask(&ctx, every_row[i], "/srv/etcd/data"), PROTECT_NONE);
        run_done(&ctx);
}

/* The directory a kept runtime watches by inode: a removal empties it, an edit or an unlink leaves
 * it, an empty row is what it should be; only while planning, and never for a walk's entries (a
 * parent's removal takes it, and the runtime is restarted). */
static void test_cni(void **state) {
        CniKeep item = { .conf_dir = (char *) "/etc/cni/net.d",
                         .unit = (char *) "containerd.service",
                         .runtime = (char *) "containerd",
                         .socket = (char *) "/run/containerd/containerd.sock" };
        const CniKeepSet keep = { .items = &item, .n = 1 };
        const Context ctx = {};
        ProtectWhy why = {};

        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_REMOVE, .cni = &keep }, "/etc/cni/net.d", &why),
                         PROTECT_CONTAINS);
        assert_ptr_equal(why.watched, &item);
        assert_int_equal(why.source, PROTECT_BY_CNI);
        protect_why_done(&why);
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_EMPTY, .cni = &keep }, "/etc/cni/net.d", &why),
                         PROTECT_NONE);
        assert_ptr_equal(why.watched, &item);
        protect_why_done(&why);
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_UNLINK, .cni = &keep }, "/etc/cni/net.d", &why),
                         PROTECT_SELF);
        assert_string_equal(why.code, "kept");
        assert_string_equal(why.message, "the kept containerd (containerd.service) watches it by inode");
        protect_why_done(&why);
        assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_EDIT, .cni = &keep },
                                              "/etc/cni/net.d", NULL),
                         PROTECT_SELF);
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_WALK, .cni = &keep }, "/etc/cni/net.d", &why),
                         PROTECT_NONE);
        assert_null(why.watched);
        protect_why_done(&why);
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_REMOVE, .cni = &keep }, "/etc/cni", &why),
                         PROTECT_NONE);
        assert_null(why.watched);
        protect_why_done(&why);
        assert_int_equal(ask(&ctx, PROTECT_REMOVE, "/etc/cni/net.d"), PROTECT_NONE); /* a run: no set */
}

/* Several sources: a path kept by any is kept (a walk never lets a later "self" hide behind an
 * earlier "beneath"); the first that keeps it is named, the manifest's line before the built-in ones;
 * a watched directory is known whatever decided. */
static void test_precedence(void **state) {
        CLEANUP(manifest_freep) Manifest *m = manifest_of("protect /var/lib/etcd/member\nprotect /etc/cni/net.d\n");
        char *keep[] = { (char *) "/var/lib/etcd", (char *) "/var/backups/node-reset/x", NULL };
        EtcdScope scope = { .owner = ETCD_OWNER_FOREIGN, .why = (char *) "out of scope", .keep = keep };
        CniKeep item = { .conf_dir = (char *) "/etc/cni/net.d",
                         .unit = (char *) "crio.service",
                         .runtime = (char *) "cri-o" };
        const CniKeepSet cni = { .items = &item, .n = 1 };
        Context ctx = { .manifest = m };
        ProtectWhy why = {};

        lend_scope(&ctx, &scope);
        assert_why(&ctx, PROTECT_REMOVE, "/var/lib/etcd/member", PROTECT_SELF, PROTECT_BY_MANIFEST, "protected",
                   "protected by t.conf:1");
        assert_why(&ctx, PROTECT_REMOVE, "/var/lib/etcd", PROTECT_SELF, PROTECT_BY_ETCD_SCOPE, "out-of-scope", NULL);
        /* Kept by the scope and the backups both: the scope says why, as it always did. */
        assert_why(&ctx, PROTECT_REMOVE, "/var/backups/node-reset/x", PROTECT_SELF, PROTECT_BY_ETCD_SCOPE,
                   "out-of-scope", NULL);
        /* The backups hold /var, the scope keeps /var/lib/etcd: a walk of /var/lib still keeps it. */
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/lib"), PROTECT_CONTAINS);
        assert_int_equal(ask(&ctx, PROTECT_WALK, "/var/lib/etcd"), PROTECT_SELF);
        assert_int_equal(ask_why(&ctx, &(ProtectRow) { .kind = PROTECT_REMOVE, .cni = &cni }, "/etc/cni/net.d", &why),
                         PROTECT_SELF);
        assert_int_equal(why.source, PROTECT_BY_MANIFEST);
        assert_ptr_equal(why.watched, &item);
        protect_why_done(&why);
        /* Running, the system path is named first: it is a refusal, not a keep. */
        ctx.pass = ENGINE_PASS_EXECUTE;
        assert_why(&ctx, PROTECT_REMOVE, "/var/backups", PROTECT_SELF, PROTECT_BY_SYSTEM_PATH, NULL, NULL);
        assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_REMOVE, .system_path = true },
                                              "/var/backups", NULL),
                         PROTECT_CONTAINS);
        run_done(&ctx);
}

static const ActionOps test_ops = { .kind = "remove" };

static void test_skip(void **state) {
        CLEANUP(manifest_freep) Manifest *m = manifest_of("protect /opt/data\n");
        const Context ctx = { .manifest = m };
        Plan *p = plan_new();
        ProtectWhy why = {};
        Action *a;

        assert_non_null(p);
        a = plan_add(p, &test_ops, "files", "/opt/data/x", NULL, NULL);
        assert_non_null(a);
        assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_REMOVE }, "/opt/data/x", &why),
                         PROTECT_SELF);
        assert_int_equal(files_protect_skip(a, &why), 0);
        assert_string_equal(a->skip_reason, "protected by t.conf:1");
        assert_string_equal(a->code, "protected");
        protect_why_done(&why);
        a = plan_add(p, &test_ops, "files", "/var/backups/node-reset", NULL, NULL);
        assert_non_null(a);
        assert_int_equal(files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_EMPTY }, a->target, &why),
                         PROTECT_SELF);
        assert_int_equal(files_protect_skip(a, &why), 0);
        assert_string_equal(a->skip_reason, "node-reset's backups (/var/backups/node-reset) are never removed");
        assert_null(a->code);
        protect_why_done(&why);
        plan_free(p);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_manifest),  cmocka_unit_test(test_system_path), cmocka_unit_test(test_refusal),
                cmocka_unit_test(test_backups),   cmocka_unit_test(test_etcd_scope),  cmocka_unit_test(test_unsaved),
                cmocka_unit_test(test_etcd_data), cmocka_unit_test(test_cni),         cmocka_unit_test(test_precedence),
                cmocka_unit_test(test_skip),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
