/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the etcd module beneath the phases (agent/node/etcd*.c): how this node's member is
 * found in kubeadm's, kubespray's and k3s's files and matched against a cluster's list, what one run
 * keeps of it in its Context (the scope decided once, the other members' URLs learned, the facts),
 * the snapshot the backup takes when the member does not answer, and the data directory's fate
 * (every case of the rule). */

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

#include "agent/config/etcd-owner.h"
#include "agent/node/etcd.h"
#include "agent/os/host-place.h"
#include "etcd/etcd.h"
#include "macro.h"
#include "strv.h"
#include "tests/support/files.h"

/* The tree beneath dir as --root names it (elsewhere), or as forget's tree that runs here. */
static void local_at(const char *dir, bool here, NodeEtcd *l, int want) {
        Context ctx = { .root = dir };

        ctx.root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_true(ctx.root_fd >= 0);
        assert_int_equal(here ? node_etcd_find_here(&ctx, l, NULL) : node_etcd_find(&ctx, l, NULL), want);
        close(ctx.root_fd);
        context_states_done(&ctx);
}

static void local_in(const char *dir, NodeEtcd *l, int want) {
        local_at(dir, false, l, want);
}

/* 198.51.100.0/24 (TEST-NET-2) stands for other machines: skipped on a machine that has one. */
static void require_elsewhere(void) {
        if (host_place("198.51.100.1") != HOST_ELSEWHERE || host_place("198.51.100.7") != HOST_ELSEWHERE)
                skip();
}

static void test_local_kubeadm(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX";
        NodeEtcd l = {};
        EtcdMember same = { .name = (char *) "cp1" }, other = { .name = (char *) "cp1" };
        char *peers[] = { (char *) "https://198.51.100.1:2380", NULL },
             *elsewhere[] = { (char *) "https://198.51.100.9:2380", NULL };

        require_elsewhere();
        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, ETCD_MANIFEST,
                        "spec:\n  containers:\n  - command:\n    - etcd\n"
                        "    - --advertise-client-urls=https://198.51.100.1:2379\n"
                        "    - --cert-file=/etc/kubernetes/pki/etcd/server.crt\n"
                        "    - --initial-advertise-peer-urls=https://198.51.100.1:2380\n"
                        "    - "
                        "\"--initial-cluster=cp1=https://198.51.100.1:2380,cp2=https://198.51.100.2:2380,cp3=https://"
                        "198.51.100.3:2390\"\n"
                        "    - --key-file=/etc/kubernetes/pki/etcd/server.key\n"
                        "    - --listen-client-urls=https://127.0.0.1:2379,https://198.51.100.1:2379\n"
                        "    - --name=cp1\n"
                        "    - --trusted-ca-file=/etc/kubernetes/pki/etcd/ca.crt\n");
        test_write_tree(dir, "/etc/kubernetes/pki/etcd/healthcheck-client.crt", "x");
        test_write_tree(dir, "/etc/kubernetes/pki/etcd/healthcheck-client.key", "x");
        local_in(dir, &l, 1);
        assert_string_equal(l.source, ETCD_MANIFEST);
        assert_string_equal(l.name, "cp1");
        assert_string_equal(l.data_dir, "/var/lib/etcd");
        assert_false(l.external);
        /* Its own URL first, then cp2's guessed from its peer URL (cp3's port says nothing); under
         * --root its loopback URL leads to the running machine: never its own, asked last. */
        assert_true(l.elsewhere);
        assert_int_equal(l.n_own, 1);
        assert_string_equal(l.endpoints[0], "https://198.51.100.1:2379");
        assert_string_equal(l.endpoints[1], "https://198.51.100.2:2379");
        assert_string_equal(l.endpoints[2], "https://127.0.0.1:2379");
        assert_null(l.endpoints[3]);
        assert_string_equal(l.not_own[0], "https://127.0.0.1:2379 (this machine)");
        assert_string_equal(l.initial_cluster[0], "cp2=https://198.51.100.2:2380");
        assert_non_null(strstr(l.cert_file, "/etc/kubernetes/pki/etcd/healthcheck-client.crt"));
        assert_non_null(strstr(l.ca_file, "/etc/kubernetes/pki/etcd/ca.crt"));
        /* Matched by name and peer URLs, never by name alone. */
        same.peer_urls = peers;
        other.peer_urls = elsewhere;
        assert_true(node_etcd_is(&l, &same));
        assert_false(node_etcd_is(&l, &other));
        assert_true(node_etcd_name_clash(&l, &other));
        node_etcd_done(&l);
        /* forget's tree runs here: both its own URLs are its own. */
        local_at(dir, true, &l, 1);
        assert_false(l.elsewhere);
        assert_int_equal(l.n_own, 2);
        assert_string_equal(l.endpoints[1], "https://127.0.0.1:2379");
        assert_null(l.not_own);
        node_etcd_done(&l);

        /* kubeadm-config says external: out of scope, never touched (no member to describe). */
        test_write_tree(dir, KUBEADM_CONFIG, "kind: ClusterConfiguration\netcd:\n  external:\n    endpoints: []\n");
        local_in(dir, &l, 0);
        assert_true(l.external);
        node_etcd_done(&l);
        test_write_tree(dir, KUBEADM_CONFIG,
                        "kind: ClusterConfiguration\netcd:\n  local:\n    dataDir: /var/lib/etcd\nexternal: x\n");
        local_in(dir, &l, 1);
        assert_false(l.external);
        node_etcd_done(&l);
        test_rm_rf(dir);
}

/* k3s's layout (pkg/etcd/etcd.go, pkg/daemons/executor): server/db/etcd/config as etcd's YAML
 * configuration, the member reached through k3s's own client certificate. */
static void test_local_k3s(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX";
        NodeEtcd l = {};

        require_elsewhere();
        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, "/var/lib/rancher/k3s/server/db/etcd/config",
                        "advertise-client-urls: https://198.51.100.7:2379\n"
                        "client-transport-security:\n"
                        "  cert-file: /var/lib/rancher/k3s/server/tls/etcd/server-client.crt\n"
                        "  client-cert-auth: true\n"
                        "  key-file: /var/lib/rancher/k3s/server/tls/etcd/server-client.key\n"
                        "  trusted-ca-file: /var/lib/rancher/k3s/server/tls/etcd/server-ca.crt\n"
                        "data-dir: /var/lib/rancher/k3s/server/db/etcd\n"
                        "election-timeout: 5000\n"
                        "listen-client-urls: https://198.51.100.7:2379,https://127.0.0.1:2379\n"
                        "listen-peer-urls: https://198.51.100.7:2380\n"
                        "log-outputs:\n- stderr\n"
                        "name: srv1-6c2d1a3e\n"
                        "peer-transport-security:\n"
                        "  cert-file: /var/lib/rancher/k3s/server/tls/etcd/peer-server-client.crt\n"
                        "  trusted-ca-file: /var/lib/rancher/k3s/server/tls/etcd/peer-ca.crt\n");
        test_write_tree(dir, "/var/lib/rancher/k3s/server/tls/etcd/client.crt", "x");
        test_write_tree(dir, "/var/lib/rancher/k3s/server/tls/etcd/client.key", "x");
        local_in(dir, &l, 1);
        assert_int_equal(l.owner, ETCD_OWNER_K3S);
        assert_string_equal(l.source, "/var/lib/rancher/k3s/server/db/etcd");
        assert_string_equal(l.name, "srv1-6c2d1a3e");
        assert_string_equal(l.data_dir, "/var/lib/rancher/k3s/server/db/etcd");
        assert_string_equal(l.peer_urls[0], "https://198.51.100.7:2380"); /* its listen URL: no initial-* */
        assert_int_equal(l.n_own, 1); /* k3s's fixed 127.0.0.1:2379 is the running machine's */
        assert_string_equal(l.endpoints[0], "https://198.51.100.7:2379");
        assert_string_equal(l.endpoints[1], "https://127.0.0.1:2379");
        assert_non_null(strstr(l.cert_file, "/var/lib/rancher/k3s/server/tls/etcd/client.crt"));
        assert_non_null(strstr(l.key_file, "/var/lib/rancher/k3s/server/tls/etcd/client.key"));
        assert_non_null(strstr(l.ca_file, "/var/lib/rancher/k3s/server/tls/etcd/server-ca.crt"));
        node_etcd_done(&l);
        /* No config yet: k3s's own endpoint and the name file. */
        test_rm_rf(dir);
        strcpy(dir, "/tmp/test-node-etcd.XXXXXX");
        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, "/var/lib/rancher/rke2/server/db/etcd/name", "cp-1-aaaa");
        local_in(dir, &l, 1);
        assert_int_equal(l.owner, ETCD_OWNER_RKE2);
        assert_string_equal(l.name, "cp-1-aaaa");
        assert_int_equal(l.n_own, 0);
        assert_string_equal(l.endpoints[0], "https://127.0.0.1:2379");
        node_etcd_done(&l);
        test_write_tree(dir, "/var/lib/rancher/rke2/server/db/etcd/config", "name: [\n");
        local_in(dir, &l, -EBADMSG);
        node_etcd_done(&l);
        test_rm_rf(dir);
}

static void test_local_env(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX";
        NodeEtcd l = {};

        assert_non_null(mkdtemp(dir));
        local_in(dir, &l, 0); /* no member files: not an etcd node */
        node_etcd_done(&l);
        test_write_tree(dir, ETCD_ENV,
                        "# Environment file for etcd v3.5\n"
                        "ETCD_DATA_DIR=/var/lib/etcd\n"
                        "ETCD_ADVERTISE_CLIENT_URLS=https://10.0.0.5:2379\n"
                        "ETCD_INITIAL_ADVERTISE_PEER_URLS=https://10.0.0.5:2380\n"
                        "ETCD_NAME=etcd1\n"
                        "ETCD_LISTEN_CLIENT_URLS=https://0.0.0.0:2379\n"
                        "ETCD_TRUSTED_CA_FILE=/etc/ssl/etcd/ssl/ca.pem\n"
                        "ETCD_CERT_FILE=/etc/ssl/etcd/ssl/member-node1.pem\n"
                        "ETCD_KEY_FILE=/etc/ssl/etcd/ssl/member-node1-key.pem\n");
        local_in(dir, &l, 1);
        assert_string_equal(l.source, ETCD_ENV);
        assert_string_equal(l.name, "etcd1");
        assert_string_equal(l.peer_urls[0], "https://10.0.0.5:2380");
        assert_string_equal(l.endpoints[0], "https://10.0.0.5:2379");
        assert_string_equal(l.endpoints[1], "https://127.0.0.1:2379"); /* 0.0.0.0 is reached on loopback */
        assert_non_null(strstr(l.cert_file, "/etc/ssl/etcd/ssl/member-node1.pem"));
        node_etcd_done(&l);
        test_rm_rf(dir);
}

/* Formats, not substrings: a commented-out line, another container's flags, a key in the wrong
 * place are no evidence; quotes are what the shell and YAML make of them; the last assignment wins. */
static void test_local_formats(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX";
        NodeEtcd l = {};

        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, ETCD_ENV,
                        "# moved off the NFS export:\n"
                        "# ETCD_DATA_DIR=/srv/nfs-export\n"
                        "ETCD_DATA_DIR=/var/lib/old-etcd\n"
                        "ETCD_NAME='etcd 1'\n"
                        "ETCD_DATA_DIR=\"/var/lib/etcd\"\n"
                        "ETCD_INITIAL_ADVERTISE_PEER_URLS=https://10.0.0.5:2380 # not a comment in an env file\n");
        local_in(dir, &l, 1);
        assert_string_equal(l.data_dir, "/var/lib/etcd");
        assert_string_equal(l.name, "etcd 1");
        node_etcd_done(&l);
        /* An env file that does not parse says nothing: an error, never a guess. */
        test_write_tree(dir, ETCD_ENV, "ETCD_DATA_DIR=\"/srv/nfs-export\n");
        local_in(dir, &l, -EBADMSG);
        node_etcd_done(&l);

        test_write_tree(dir, ETCD_MANIFEST,
                        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n"
                        "  - name: backup-sidecar\n    command: [/bin/sh, -c, 'etcd --data-dir=/srv/nfs-export']\n"
                        "    args:\n    - --data-dir=/srv/nfs-export\n"
                        "  - name: etcd\n    command:\n    - etcd\n"
                        "    # - --data-dir=/srv/nfs-export\n"
                        "    - --name=cp1\n"
                        "    args: [\"--data-dir=/var/lib/etcd-data\"]\n");
        local_in(dir, &l, 1);
        assert_string_equal(l.source, ETCD_MANIFEST);
        assert_string_equal(l.name, "cp1");
        assert_string_equal(l.data_dir, "/var/lib/etcd-data");
        node_etcd_done(&l);
        test_write_tree(dir, ETCD_MANIFEST,
                        "spec:\n  containers:\n  - name: etcd\n    command: [etcd, \"--data-dir=/x\"\n");
        local_in(dir, &l, -EBADMSG);
        node_etcd_done(&l);
        test_write_tree(dir, ETCD_MANIFEST, "# - --data-dir=/srv/nfs-export\nspec:\n  containers: []\n");
        local_in(dir, &l, -EBADMSG); /* a pod without an etcd container */
        node_etcd_done(&l);
        test_rm_rf(dir);
}

static EtcdMember member(uint64_t id, const char *name, char **peers) {
        return (EtcdMember) { .id = id, .name = (char *) name, .peer_urls = peers };
}

/* Which member is this node's: an answer of its own only with this node's name and peer URLs;
 * under --root those alone; a cluster its --initial-cluster names is recognised by another member. */
static void test_identify(void **state) {
        char *p1[] = { (char *) "https://198.51.100.1:2380", NULL },
             *p2[] = { (char *) "https://198.51.100.2:2380", NULL },
             *p9[] = { (char *) "https://198.51.100.9:2380", NULL }, *own_peers[] = { p1[0], NULL },
             *initial[] = { (char *) "cp2=https://198.51.100.2:2380", NULL };
        EtcdMember ms[] = { member(1, "cp1", p1), member(2, "cp2", p2), member(9, "survivor", p9) };
        EtcdMemberList list = { .cluster_id = 7, .members = ms, .n_members = 3 }, other = list;
        NodeEtcd l = { .name = (char *) "cp1", .peer_urls = own_peers, .initial_cluster = initial };
        const EtcdMember *m;
        char *why = NULL;

        /* The running machine's etcd answers at a loopback URL of the tree's: not the tree's member. */
        assert_int_equal(node_etcd_identify(&l, &list, &(EtcdStatus) { .member_id = 9 }, &m, &why), -EPERM);
        assert_null(m);
        assert_non_null(strstr(why, "survivor"));
        why = mfree(why);
        assert_int_equal(node_etcd_identify(&l, &list, &(EtcdStatus) { .member_id = 1 }, &m, NULL), 1);
        assert_ptr_equal(m, &ms[0]);
        assert_int_equal(node_etcd_identify(&l, &list, &(EtcdStatus) { .member_id = 5 }, &m, NULL), 0);
        /* No answer of its own: live, not known; under --root, by name and peer URLs. */
        assert_int_equal(node_etcd_identify(&l, &list, NULL, &m, NULL), -ENXIO);
        l.elsewhere = true;
        assert_int_equal(node_etcd_identify(&l, &list, NULL, &m, NULL), 1);
        assert_ptr_equal(m, &ms[0]);
        ms[2] = member(9, "cp1", p1);
        assert_int_equal(node_etcd_identify(&l, &list, NULL, &m, &why), -EEXIST);
        why = mfree(why);
        other.n_members = 1;
        other.members = &ms[1];
        assert_int_equal(node_etcd_identify(&l, &other, NULL, &m, NULL), 0);
        assert_true(node_etcd_cluster_is_ours(&l, &other));
        ms[1] = member(2, "cp2", p9);
        assert_false(node_etcd_cluster_is_ours(&l, &other));
}

typedef struct FateCase {
        NodeEtcdFacts f;
        int remove;
        const char *why;
} FateCase;

static void test_data_dir_fate(void **state) {
        static const FateCase cases[] = {
                { { .observed = true, .left = true }, 1, "left" },
                { { .left = true, .last_voter = true }, 1, "left" },
                { { .observed = true, .last_voter = true, .snapshot = true }, 1, "whole cluster" },
                { { .observed = true, .last_voter = true, .db_copied = true }, 0, "no complete snapshot" },
                { { .observed = true, .last_voter = true }, 0, "no complete snapshot" },
                { { .observed = true, .none_answered = true, .db_copied = true }, 1, "member/snap/db" },
                { { .observed = true, .none_answered = true }, 0, "no copy" },
                /* A snapshot is of a member that answered: "none answered" needs its own copy. */
                { { .observed = true, .none_answered = true, .snapshot = true }, 0, "no copy" },
                { { .own_silent = true, .db_copied = true }, 1, "did not run" },
                { { .own_silent = true }, 0, "no copy" },
                { { .snapshot = true }, 0, "did not ask" },
                { { .observed = true }, 0, "still part" },
                { { .observed = true, .snapshot = true, .db_copied = true }, 0, "still part" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                cleanup_free char *why = NULL;

                assert_int_equal(node_etcd_data_dir_fate(&cases[i].f, &why), cases[i].remove);
                if (!strstr(why, cases[i].why))
                        fail_msg("case %zu: '%s' does not say '%s'", i, why, cases[i].why);
        }
}

/* What one run keeps: nothing before a phase asks; the scope decided once, whatever the files say
 * later in the run; the other members' client URLs asked by a later find of the same run only. */
static void test_run_state(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX", path[4096];
        char *urls[] = { (char *) "https://198.51.100.2:2379", NULL };
        EtcdMember ms[] = { { .id = 1, .name = (char *) "etcd1" },
                            { .id = 2, .name = (char *) "etcd2", .client_urls = urls } };
        EtcdMemberList list = { .cluster_id = 7, .members = ms, .n_members = 2 };
        const EtcdScope *scope = NULL;
        const char *data_dir = NULL;
        Context ctx = {}, again = {};
        NodeEtcd l = {};

        require_elsewhere();
        assert_non_null(mkdtemp(dir));
        ctx = (Context) { .root = dir, .root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) };
        again = (Context) { .root = dir, .root_fd = ctx.root_fd };
        assert_true(ctx.root_fd >= 0);
        assert_false(node_etcd_facts(&ctx)->left);
        assert_null(node_etcd_data_dir(&ctx));
        assert_null(node_etcd_scope_decided(&ctx));
        test_write_tree(dir, ETCD_ENV,
                        "ETCD_NAME=etcd1\nETCD_DATA_DIR=/srv/etcd\n"
                        "ETCD_ADVERTISE_CLIENT_URLS=https://198.51.100.1:2379\n");
        assert_int_equal(node_etcd_scope(&ctx, &scope), 0);
        assert_int_equal(scope->owner, ETCD_OWNER_ENV);
        assert_ptr_equal(node_etcd_scope_decided(&ctx), scope);
        assert_int_equal(node_etcd_data_dir_find(&ctx, &data_dir), 0);
        assert_string_equal(data_dir, "/srv/etcd");
        assert_string_equal(node_etcd_data_dir(&ctx), "/srv/etcd");

        assert_int_equal(node_etcd_find(&ctx, &l, NULL), 1);
        assert_int_equal(node_etcd_learn(&ctx, &l, &list, 1), 0);
        assert_true(strv_contains(l.endpoints, urls[0]));
        node_etcd_done(&l);
        assert_int_equal(node_etcd_find(&ctx, &l, NULL), 1);
        assert_string_equal(l.endpoints[0], "https://198.51.100.1:2379");
        assert_string_equal(l.endpoints[1], urls[0]); /* learned: asked once this member no longer answers */
        node_etcd_done(&l);
        assert_int_equal(node_etcd_find(&again, &l, NULL), 1); /* another run learned nothing */
        assert_null(l.endpoints[1]);
        node_etcd_done(&l);

        /* The owner was decided from the files as they were: a run that removed them still follows it. */
        assert_true((size_t) snprintf(path, sizeof path, "%s%s", dir, ETCD_ENV) < sizeof path);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(node_etcd_scope(&ctx, &scope), 0);
        assert_int_equal(scope->owner, ETCD_OWNER_ENV);
        context_states_done(&again); /* a run that asks first now finds none */
        assert_int_equal(node_etcd_scope(&again, &scope), 0);
        assert_int_equal(scope->owner, ETCD_OWNER_NONE);
        close(ctx.root_fd);
        context_states_done(&ctx);
        context_states_done(&again);
        test_rm_rf(dir);
}

/* The running node (root "/") with its files beneath dir: a test fixture's way to have a loopback
 * client URL count as the member's own. */
static Context node_at(const char *dir) {
        Context ctx = { .root = "/", .root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) };

        assert_true(ctx.root_fd >= 0);
        return ctx;
}

static bool exists_at(int dir_fd, const char *name) {
        struct stat st;

        return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) >= 0;
}

/* No member, no snapshot and no file; a member whose own client URLs do not answer (none named, or
 * one that refuses): no snapshot, no file left, and the facts say so for the data directory's rule. */
static void test_snapshot(void **state) {
        char dir[] = "/tmp/test-node-etcd.XXXXXX", out[] = "/tmp/test-node-etcd-out.XXXXXX";
        NodeEtcdSnapshot s;
        Context ctx;
        int out_fd;

        assert_non_null(mkdtemp(dir));
        assert_non_null(mkdtemp(out));
        out_fd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(out_fd >= 0);
        ctx = node_at(dir);
        assert_int_equal(node_etcd_snapshot(&ctx, out_fd, "snap.db", &s), 0);
        assert_null(s.member);
        assert_false(exists_at(out_fd, "snap.db"));
        node_etcd_snapshot_done(&s);
        close(ctx.root_fd);
        context_states_done(&ctx);

        /* rke2 before its first start: a name, no client URL of its own. */
        test_write_tree(dir, "/var/lib/rancher/rke2/server/db/etcd/name", "cp-1-aaaa");
        ctx = node_at(dir);
        assert_int_equal(node_etcd_snapshot(&ctx, out_fd, "snap.db", &s), 0);
        assert_string_equal(s.member, "cp-1-aaaa");
        assert_string_equal(s.data_dir, "/var/lib/rancher/rke2/server/db/etcd");
        assert_true(s.silent);
        assert_non_null(strstr(s.msg, "did not answer"));
        assert_false(exists_at(out_fd, "snap.db"));
        assert_true(node_etcd_facts(&ctx)->own_silent);
        assert_false(node_etcd_facts(&ctx)->snapshot);
        node_etcd_snapshot_done(&s);
        close(ctx.root_fd);
        context_states_done(&ctx);
        test_rm_rf(dir);

        /* kubespray's member, its own client URL refusing. */
        assert_non_null(mkdtemp(strcpy(dir, "/tmp/test-node-etcd.XXXXXX")));
        test_write_tree(dir, ETCD_ENV, "ETCD_NAME=etcd1\nETCD_ADVERTISE_CLIENT_URLS=http://127.0.0.1:1\n");
        ctx = node_at(dir);
        assert_int_equal(node_etcd_snapshot(&ctx, out_fd, "snap.db", &s), 0);
        assert_string_equal(s.member, "etcd1");
        assert_true(s.silent);
        assert_non_null(strstr(s.msg, "member etcd1 did not answer"));
        assert_false(exists_at(out_fd, "snap.db"));
        assert_true(node_etcd_facts(&ctx)->own_silent);
        node_etcd_snapshot_done(&s);
        /* A name already taken in the backup is the disk's failure, never overwritten. */
        test_write_at(out_fd, "snap.db", "earlier");
        assert_int_equal(node_etcd_snapshot(&ctx, out_fd, "snap.db", &s), -EEXIST);
        node_etcd_snapshot_done(&s);
        close(ctx.root_fd);
        context_states_done(&ctx);
        close(out_fd);
        test_rm_rf(dir);
        test_rm_rf(out);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_local_kubeadm), cmocka_unit_test(test_local_env),
                cmocka_unit_test(test_local_k3s),     cmocka_unit_test(test_local_formats),
                cmocka_unit_test(test_identify),      cmocka_unit_test(test_data_dir_fate),
                cmocka_unit_test(test_run_state),     cmocka_unit_test(test_snapshot),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
