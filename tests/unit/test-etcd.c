/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the etcd client's codec (golden bytes from rpc.proto's field numbers, bounds,
 * malformed answers), the gRPC frame parser's streaming mode, how the agent reads etcd's YAML
 * configuration, decides who owns the etcd (an external or site-managed one is out of scope) and
 * what that keeps, and remembers a departure. This node's member itself is test-node-etcd.c's. */

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

#include "agent/config/etcd-flags.h"
#include "agent/config/etcd-owner.h"
#include "agent/config/unit-file.h"
#include "agent/node/etcd.h"
#include "agent/phases/etcd/etcd-state.h"
#include "agent/phases/files/files-protect.h"
#include "etcd/etcd.h"
#include "grpc/grpc.h"
#include "grpc/proto.h"
#include "macro.h"
#include "strv.h"
#include "tests/support/files.h"

#define BYTES(...) ((const uint8_t[]) { __VA_ARGS__ }), sizeof((const uint8_t[]) { __VA_ARGS__ })

static void test_encode_requests(void **state) {
        ProtoWriter w;

        proto_writer_init(&w);
        assert_int_equal(etcd_encode_member_list_request(true, &w), 0);
        assert_int_equal(w.len, 2);
        assert_memory_equal(w.buf, ((const uint8_t[]) { 0x08, 0x01 }), 2); /* linearizable = 1 */
        proto_writer_done(&w);

        proto_writer_init(&w);
        assert_int_equal(etcd_encode_member_remove_request(0x8e9e05c52164694dULL, &w), 0);
        /* ID = 1, varint */
        assert_int_equal(w.len, 11);
        assert_memory_equal(
                w.buf, ((const uint8_t[]) { 0x08, 0xcd, 0xd2, 0x91, 0x8b, 0xd2, 0xb8, 0x81, 0xcf, 0x8e, 0x01 }), 11);
        proto_writer_done(&w);

        proto_writer_init(&w);
        assert_int_equal(etcd_encode_member_remove_request(0, &w), -EINVAL);
        proto_writer_done(&w);
}

/* MemberListResponse{header{cluster_id 7, member_id 9}, members [{ID 5, name "m1", peerURLs
 * ["https://a:2380"], clientURLs ["https://a:2379"]}, {ID 6, isLearner}]} */
static const uint8_t member_list[] = {
        0x0a, 0x04, 0x08, 0x07, 0x10, 0x09, 0x12, 0x26, 0x08, 0x05, 0x12, 0x02, 'm',  '1',  0x1a, 0x0e, 'h', 't',
        't',  'p',  's',  ':',  '/',  '/',  'a',  ':',  '2',  '3',  '8',  '0',  0x22, 0x0e, 'h',  't',  't', 'p',
        's',  ':',  '/',  '/',  'a',  ':',  '2',  '3',  '7',  '9',  0x12, 0x04, 0x08, 0x06, 0x28, 0x01,
};

static void test_decode_member_list(void **state) {
        EtcdMemberList l = {};

        assert_int_equal(etcd_decode_member_list(member_list, sizeof member_list, &l), 0);
        assert_int_equal(l.cluster_id, 7);
        assert_int_equal(l.member_id, 9);
        assert_int_equal(l.n_members, 2);
        assert_int_equal(l.members[0].id, 5);
        assert_string_equal(l.members[0].name, "m1");
        assert_string_equal(l.members[0].peer_urls[0], "https://a:2380");
        assert_null(l.members[0].peer_urls[1]);
        assert_string_equal(l.members[0].client_urls[0], "https://a:2379");
        assert_false(l.members[0].is_learner);
        /* A learner that never started: no name, no client URLs. */
        assert_int_equal(l.members[1].id, 6);
        assert_string_equal(l.members[1].name, "");
        assert_null(l.members[1].client_urls);
        assert_true(l.members[1].is_learner);
        assert_ptr_equal(etcd_member_list_find(&l, 6), &l.members[1]);
        assert_null(etcd_member_list_find(&l, 4));
        etcd_member_list_done(&l);
}

static void test_decode_member_list_malformed(void **state) {
        EtcdMemberList l = {};
        ProtoWriter w, m;

        for (size_t n = 1; n < sizeof member_list; n++)
                if (etcd_decode_member_list(member_list, n, &l) >= 0)
                        etcd_member_list_done(&l); /* some prefixes are whole messages */
        assert_int_equal(etcd_decode_member_list(member_list, sizeof member_list - 1, &l), -EBADMSG);
        /* An embedded NUL in a name. */
        assert_int_equal(etcd_decode_member_list(BYTES(0x12, 0x06, 0x08, 0x01, 0x12, 0x02, 'm', 0x00), &l), -EBADMSG);
        /* More URLs than a member has. */
        proto_writer_init(&w);
        proto_writer_init(&m);
        for (unsigned i = 0; i <= ETCD_URLS_MAX; i++)
                proto_put_string(&m, 3, "https://a:2380");
        proto_put_message(&w, 2, &m);
        assert_int_equal(etcd_decode_member_list(w.buf, w.len, &l), -E2BIG);
        proto_writer_done(&m);
        proto_writer_done(&w);
        /* A known field with another wire type is skipped like an unknown one. */
        assert_int_equal(etcd_decode_member_list(BYTES(0x10, 0x07, 0x0a, 0x00), &l), 0);
        assert_int_equal(l.n_members, 0);
        etcd_member_list_done(&l);
}

static void test_decode_snapshot_chunk(void **state) {
        EtcdSnapshotChunk c;

        assert_int_equal(etcd_decode_snapshot_chunk(BYTES(0x0a, 0x00, 0x10, 0x05, 0x1a, 0x03, 'a', 'b', 'c'), &c), 0);
        assert_int_equal(c.remaining_bytes, 5);
        assert_int_equal(c.blob_len, 3);
        assert_memory_equal(c.blob, "abc", 3);
        assert_int_equal(etcd_decode_snapshot_chunk(BYTES(0x1a, 0x05, 'a'), &c), -EBADMSG);
}

static int count_message(const uint8_t *msg, size_t n, void *userdata) {
        size_t *total = userdata;

        *total += n;
        return n == 3 && memcmp(msg, "bad", 3) == 0 ? -EIO : 0;
}

static void test_frame_parser_stream(void **state) {
        static const uint8_t stream[] = { 0, 0, 0, 0, 2, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 'c', 'd', 'e' };
        GrpcFrameParser p;
        size_t total = 0, n = 7;
        uint8_t *m = (uint8_t *) &n;

        /* Byte by byte: each message is handed over whole, an empty one too. */
        grpc_frame_parser_init(&p, 16);
        grpc_frame_parser_set_stream(&p, count_message, &total, 100);
        for (size_t i = 0; i < sizeof stream; i++)
                assert_int_equal(grpc_frame_parser_feed(&p, stream + i, 1), 0);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), 0);
        assert_null(m);
        assert_int_equal(p.messages, 3);
        assert_int_equal(total, 5);
        grpc_frame_parser_done(&p);

        /* Ended inside a message. */
        grpc_frame_parser_init(&p, 16);
        grpc_frame_parser_set_stream(&p, count_message, &total, 100);
        assert_int_equal(grpc_frame_parser_feed(&p, stream, 9), 0);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), -EBADMSG);
        grpc_frame_parser_done(&p);

        /* The stream's bound, judged on the length prefixes before any allocation. */
        grpc_frame_parser_init(&p, 16);
        grpc_frame_parser_set_stream(&p, count_message, &total, 4);
        assert_int_equal(grpc_frame_parser_feed(&p, stream, sizeof stream), -EFBIG);
        grpc_frame_parser_done(&p);

        /* The reader's error stops the stream. */
        grpc_frame_parser_init(&p, 16);
        grpc_frame_parser_set_stream(&p, count_message, &total, 100);
        assert_int_equal(grpc_frame_parser_feed(&p, BYTES(0, 0, 0, 0, 3, 'b', 'a', 'd')), -EIO);
        grpc_frame_parser_done(&p);
}

static void test_channel_url(void **state) {
        GrpcChannel *ch = NULL;

        assert_int_equal(grpc_channel_new_url("https://127.0.0.1:2379", NULL, &ch), 0);
        assert_string_equal(grpc_channel_url(ch), "https://127.0.0.1:2379");
        assert_null(grpc_channel_socket_path(ch));
        grpc_channel_free(ch);
        assert_int_equal(grpc_channel_new_url("https://[::1]:2379", NULL, &ch), 0);
        grpc_channel_free(ch);
        assert_int_equal(grpc_channel_new_url("https://127.0.0.1:2379/v3", NULL, &ch), -EINVAL);
        assert_int_equal(grpc_channel_new_url("unix:///run/etcd.sock", NULL, &ch), -EINVAL);
        assert_int_equal(grpc_channel_new_url("https://user@host:1", NULL, &ch), -EINVAL);
        assert_int_equal(grpc_channel_new_url("https://", NULL, &ch), -EINVAL);
}

/* A connection refused ends the call at once, with the reason and the URL. */
static void test_refused(void **state) {
        cleanup_free char *msg = NULL;
        EtcdMemberList l = {};
        EtcdClient *c = NULL;

        assert_int_equal(etcd_client_new("http://127.0.0.1:1/", NULL, &c), 0);
        assert_string_equal(etcd_client_endpoint(c), "http://127.0.0.1:1");
        assert_int_equal(etcd_member_list(c, &l, &msg), -ECONNREFUSED);
        assert_non_null(strstr(msg, "http://127.0.0.1:1"));
        etcd_client_free(c);
}

/* What the files phase keeps for this scope alone (files/files-protect.h). */
static ProtectState scope_protects(const EtcdScope *s, const char *path) {
        Context ctx = {};
        NodeEtcdRun *run = node_etcd_run(&ctx);
        ProtectState p;

        assert_non_null(run);
        run->scope = (EtcdScope *) s;
        p = files_protect_decide(&ctx, &(ProtectRow) { .kind = PROTECT_WALK }, path, NULL);
        run->scope = NULL; /* the test's */
        context_states_done(&ctx);
        return p;
}

static void scope_as(const char *dir, Installer installer, EtcdScope *s) {
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(etcd_scope_decide(fd, installer, s), 0);
        close(fd);
}

/* Who owns the etcd: kubeadm only through its static pod, kubespray through etcd.env (also beside
 * the etcd.external it writes into kubeadm-config.yaml), nobody for a site unit or an external one. */
static void scope_in(const char *dir, EtcdScope *s) {
        scope_as(dir, INSTALLER_NONE, s);
}

static void test_scope(void **state) {
        char dir[] = "/tmp/test-etcd.XXXXXX";
        EtcdScope s = {};

        assert_non_null(mkdtemp(dir));
        scope_in(dir, &s);
        assert_int_equal(s.owner, ETCD_OWNER_NONE);
        etcd_scope_done(&s);
        /* etcd.external in the second document, the first an InitConfiguration. */
        test_write_tree(dir, KUBEADM_CONFIG,
                        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: InitConfiguration\n---\n"
                        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                        "etcd:\n  external:\n    endpoints:\n    - https://10.0.0.1:2379\n");
        scope_in(dir, &s);
        assert_int_equal(s.owner, ETCD_OWNER_FOREIGN);
        assert_string_equal(s.source, KUBEADM_CONFIG);
        assert_int_equal(scope_protects(&s, "/var/lib/etcd"), PROTECT_SELF);
        assert_int_equal(scope_protects(&s, "/var/lib/etcd/member"), PROTECT_SELF);
        assert_int_equal(scope_protects(&s, "/var/lib"), PROTECT_CONTAINS);
        assert_int_equal(scope_protects(&s, "/etc/kubernetes"), PROTECT_CONTAINS); /* the config stays */
        assert_int_equal(scope_protects(&s, "/etc/kubernetes/pki"), PROTECT_NONE);
        assert_non_null(strstr(s.why, "out of scope"));
        etcd_scope_done(&s);
        /* kubespray: its etcd.env wins over the external it names. */
        test_write_tree(dir, ETCD_ENV, "ETCD_NAME=etcd1\n");
        scope_in(dir, &s);
        assert_int_equal(s.owner, ETCD_OWNER_ENV);
        assert_int_equal(scope_protects(&s, "/var/lib/etcd"), PROTECT_NONE);
        etcd_scope_done(&s);
        test_rm_rf(dir);
        strcpy(dir, "/tmp/test-etcd.XXXXXX");

        /* A site's unit (Debian's, with its /etc/default file), no static pod: out of scope. */
        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, "/lib/systemd/system/etcd.service",
                        "[Unit]\nDescription=etcd\n[Service]\nEnvironment=DAEMON_ARGS=\n"
                        "Environment=ETCD_DATA_DIR=/var/lib/etcd/default\nEnvironmentFile=-/etc/default/%p\n"
                        "# ExecStart=/usr/bin/etcd --data-dir=/srv/commented\n"
                        "ExecStart=/usr/bin/etcd $DAEMON_ARGS \\\n  --cert-file=${CERTS}/server.crt\n");
        test_write_tree(dir, "/etc/default/etcd",
                        "DAEMON_ARGS=\"--data-dir=/srv/etcd --name=e1\"\nCERTS=/etc/etcd/pki\n");
        test_write_tree(dir, KUBE_APISERVER_MANIFEST, "kind: Pod\n");
        scope_in(dir, &s);
        assert_int_equal(s.owner, ETCD_OWNER_FOREIGN);
        assert_string_equal(s.source, "/lib/systemd/system/etcd.service");
        assert_string_equal(s.unit, "etcd.service");
        assert_true(etcd_scope_keeps_unit(&s, "etcd.service"));
        assert_false(etcd_scope_keeps_unit(&s, "etcd-events.service"));
        assert_true(strv_contains(s.keep, "/srv/etcd"));
        assert_false(strv_contains(s.keep, "/srv/commented"));
        assert_false(strv_contains(s.keep, "/var/lib/etcd/default")); /* the command line wins */
        assert_true(strv_contains(s.keep, "/etc/etcd/pki/server.crt"));
        assert_true(strv_contains(s.keep, "/etc/default/etcd"));
        assert_true(strv_contains(s.keep, "/lib/systemd/system/etcd.service"));
        assert_true(strv_contains(s.keep, "/var/lib/etcd"));
        etcd_scope_done(&s);
        /* The static pod makes it kubeadm's again. */
        test_write_tree(dir, ETCD_MANIFEST, "spec:\n  containers:\n  - name: etcd\n    command: [etcd, --name=cp1]\n");
        scope_in(dir, &s);
        assert_int_equal(s.owner, ETCD_OWNER_KUBEADM);
        assert_string_equal(s.argv[1], "--name=cp1");
        etcd_scope_done(&s);
        test_rm_rf(dir);
}

/* The detected installer says which reading applies (issue: a site's etcd on a kubeadm node was
 * taken for kubespray's): etcd.external on a kubeadm node is out of scope whatever sits beside it,
 * the static pod kubeadm wrote for it included; on a kubespray node etcd.env is kubespray's. */
static void test_scope_installer(void **state) {
        char dir[] = "/tmp/test-etcd.XXXXXX";
        EtcdScope s = {};

        assert_non_null(mkdtemp(dir));
        test_write_tree(
                dir, KUBEADM_CONFIG,
                "kind: ClusterConfiguration\netcd:\n  external:\n    endpoints: [https://198.51.100.5:2379]\n"
                "    caFile: /etc/site-etcd/ca.crt\n    certFile: /etc/kubernetes/pki/apiserver-etcd-client.crt\n");
        test_write_tree(dir, ETCD_ENV, "ETCD_NAME=site\nETCD_DATA_DIR=/srv/etcd\n");
        test_write_tree(dir, "/etc/systemd/system/etcd.service",
                        "[Service]\nEnvironmentFile=/etc/etcd.env\nExecStart=/usr/local/bin/etcd\n");
        scope_as(dir, INSTALLER_KUBEADM, &s);
        assert_int_equal(s.owner, ETCD_OWNER_FOREIGN);
        assert_string_equal(s.source, KUBEADM_CONFIG);
        assert_true(strv_contains(s.keep, "/srv/etcd"));
        assert_true(strv_contains(s.keep, ETCD_ENV));
        assert_true(strv_contains(s.keep, "/etc/systemd/system/etcd.service"));
        assert_true(strv_contains(s.keep, "/etc/site-etcd/ca.crt"));
        assert_true(strv_contains(s.keep, "/etc/kubernetes/pki/apiserver-etcd-client.crt"));
        etcd_scope_done(&s);
        scope_as(dir, INSTALLER_KUBESPRAY, &s);
        assert_int_equal(s.owner, ETCD_OWNER_ENV);
        etcd_scope_done(&s);
        scope_in(dir, &s); /* no installer detected: the files in turn */
        assert_int_equal(s.owner, ETCD_OWNER_ENV);
        etcd_scope_done(&s);
        /* A kubeadm node without external: the etcd.env and its unit are the site's. */
        test_write_tree(dir, KUBEADM_CONFIG, "kind: ClusterConfiguration\n");
        scope_as(dir, INSTALLER_KUBEADM, &s);
        assert_int_equal(s.owner, ETCD_OWNER_FOREIGN);
        assert_string_equal(s.source, "/etc/systemd/system/etcd.service");
        etcd_scope_done(&s);
        test_rm_rf(dir);

        /* etcd.external beside kubeadm's own static pod: the pod, its PKI and its data stay. */
        strcpy(dir, "/tmp/test-etcd.XXXXXX");
        assert_non_null(mkdtemp(dir));
        test_write_tree(dir, KUBEADM_CONFIG, "kind: ClusterConfiguration\netcd:\n  external:\n    endpoints: []\n");
        test_write_tree(
                dir, ETCD_MANIFEST,
                "spec:\n  containers:\n  - name: etcd\n    command: [etcd, --name=cp1, --data-dir=/var/lib/etcd2, "
                "--cert-file=/etc/kubernetes/pki/etcd/server.crt]\n");
        scope_as(dir, INSTALLER_KUBEADM, &s);
        assert_int_equal(s.owner, ETCD_OWNER_FOREIGN);
        assert_non_null(strstr(s.why, "beside an etcd static pod"));
        assert_int_equal(scope_protects(&s, ETCD_MANIFEST), PROTECT_SELF);
        assert_int_equal(scope_protects(&s, "/etc/kubernetes/manifests"), PROTECT_CONTAINS);
        assert_int_equal(scope_protects(&s, "/etc/kubernetes/pki/etcd/ca.key"), PROTECT_SELF);
        assert_int_equal(scope_protects(&s, "/var/lib/etcd2/member"), PROTECT_SELF);
        assert_int_equal(scope_protects(&s, "/etc/kubernetes/manifests/kube-apiserver.yaml"), PROTECT_NONE);
        etcd_scope_done(&s);
        test_rm_rf(dir);
}

static void test_config_argv(void **state) {
        static const char text[] = "name: a\nlog-outputs: [stderr, /var/log/e]\n"
                                   "client-transport-security: {cert-file: /c, client-cert-auth: true}\n"
                                   "peer-transport-security: {key-file: /k}\nauto-tls: {x: 1}\n";
        cleanup_strv char **argv = NULL;

        assert_int_equal(etcd_config_argv(text, strlen(text), &argv), 0);
        assert_string_equal(argv[0], "etcd");
        assert_string_equal(argv[1], "--name=a");
        assert_string_equal(argv[2], "--log-outputs=stderr,/var/log/e");
        assert_string_equal(argv[3], "--cert-file=/c");
        assert_string_equal(argv[4], "--client-cert-auth=true");
        assert_string_equal(argv[5], "--peer-key-file=/k");
        assert_null(argv[6]);
        assert_int_equal(etcd_config_argv("- a\n", 4, &argv), -EBADMSG);
}

/* StatusResponse{header{cluster_id 7, member_id 0x8e9e05c52164694d}, version "3.4.23", isLearner} */
static void test_decode_status(void **state) {
        EtcdStatus st;

        assert_int_equal(
                etcd_decode_status(BYTES(0x0a, 0x0d, 0x08, 0x07, 0x10, 0xcd, 0xd2, 0x91, 0x8b, 0xd2, 0xb8, 0x81, 0xcf,
                                         0x8e, 0x01, 0x12, 0x06, '3', '.', '4', '.', '2', '3', 0x50, 0x01),
                                   &st),
                0);
        assert_int_equal(st.cluster_id, 7);
        assert_int_equal(st.member_id, 0x8e9e05c52164694dULL);
        assert_true(st.is_learner);
        /* A version string is not a member, and an unknown field is left alone. */
        assert_int_equal(etcd_decode_status(BYTES(0x12, 0x01, 'x', 0x58, 0x05), &st), 0);
        assert_int_equal(st.member_id, 0);
        assert_false(st.is_learner);
        assert_int_equal(etcd_decode_status(BYTES(0x0a, 0x05, 0x08), &st), -EBADMSG);
}

static void test_state_left(void **state) {
        char dir[] = "/tmp/test-etcd.XXXXXX";
        Context ctx = { .root = dir };
        NodeEtcdLeft e;

        assert_non_null(mkdtemp(dir));
        ctx.root_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        assert_int_equal(node_etcd_state_find_left(&ctx, 0, "m1", &e), 0);
        assert_int_equal(node_etcd_state_record_left(&ctx, 0xc1, 0x8e9e05c52164694dULL, "m1"), 0);
        assert_int_equal(node_etcd_state_record_left(&ctx, 0xc2, 0x22, "m1"), 0);
        assert_int_equal(node_etcd_state_record_left(&ctx, 0xc1, 0x33, "other"), 0);
        assert_int_equal(node_etcd_state_find_left(&ctx, 0xc1, "m1", &e), 1);
        assert_int_equal(e.member_id, 0x8e9e05c52164694dULL);
        assert_int_equal(node_etcd_state_find_left(&ctx, 0, "m1", &e), 1); /* the newest */
        assert_int_equal(e.cluster_id, 0xc2);
        assert_int_equal(node_etcd_state_find_left(&ctx, 0xc3, "m1", &e), 0);
        assert_int_equal(node_etcd_state_record_left(&ctx, 0xc1, 0x1, "two\nlines"), -EINVAL);
        /* A line that does not parse is evidence of nothing; the file stays bounded. */
        test_write_tree(dir, ETCD_STATE_DIR "/" ETCD_STATE_NAME,
                        "# left 00000000000000c9 0000000000000009 m9\nleft zz m9\n");
        assert_int_equal(node_etcd_state_find_left(&ctx, 0, "m9", &e), 0);
        for (unsigned i = 0; i < 100; i++)
                assert_int_equal(node_etcd_state_record_left(&ctx, i + 1, i + 1, "m1"), 0);
        assert_int_equal(node_etcd_state_find_left(&ctx, 100, "m1", &e), 1);
        assert_int_equal(node_etcd_state_find_left(&ctx, 1, "m1", &e), 0); /* dropped */
        close(ctx.root_fd);
        test_rm_rf(dir);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_encode_requests),
                cmocka_unit_test(test_decode_member_list),
                cmocka_unit_test(test_decode_member_list_malformed),
                cmocka_unit_test(test_decode_snapshot_chunk),
                cmocka_unit_test(test_frame_parser_stream),
                cmocka_unit_test(test_channel_url),
                cmocka_unit_test(test_refused),
                cmocka_unit_test(test_scope),
                cmocka_unit_test(test_scope_installer),
                cmocka_unit_test(test_config_argv),
                cmocka_unit_test(test_decode_status),
                cmocka_unit_test(test_state_left),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
