/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the gRPC transport: the frame parser split at every byte, headers and trailers,
 * grpc-message decoding, deadlines, and real calls over HTTP/2 against the
 * hostile test server (forked in-process) in each of its broken modes. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "cri/cri.h"
#include "grpc/grpc.h"
#include "macro.h"

#define HOSTILE_NO_MAIN
#include "tests/integration/grpc-hostile.c"

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000ULL;
}

static void test_frame_encode(void **state) {
        uint8_t *b = NULL;
        size_t n = 0;

        assert_int_equal(grpc_frame_encode("abc", 3, &b, &n), 0);
        assert_int_equal(n, 8);
        assert_memory_equal(b,
                            "\x00\x00\x00\x00\x03"
                            "abc",
                            8);
        free(b);
        assert_int_equal(grpc_frame_encode(NULL, 0, &b, &n), 0);
        assert_int_equal(n, 5);
        assert_memory_equal(b, "\x00\x00\x00\x00\x00", 5);
        free(b);
}

/* Feed a body in two pieces split at every position: the same outcome each time. */
static void test_frame_parser_splits(void **state) {
        static const uint8_t body[] = { 0x00, 0x00, 0x00, 0x00, 0x04, 'a', 'b', 'c', 'd' };

        for (size_t split = 0; split <= sizeof body; split++) {
                GrpcFrameParser p;
                uint8_t *m = NULL;
                size_t n = 0;

                grpc_frame_parser_init(&p, 16);
                assert_int_equal(grpc_frame_parser_feed(&p, body, split), 0);
                assert_int_equal(grpc_frame_parser_feed(&p, body + split, sizeof body - split), 0);
                assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), 0);
                assert_int_equal(n, 4);
                assert_memory_equal(m, "abcd", 4);
                free(m);
                grpc_frame_parser_done(&p);
        }
}

static void test_frame_parser_byte_by_byte(void **state) {
        static const uint8_t body[] = { 0x00, 0x00, 0x00, 0x00, 0x02, 'h', 'i' };
        GrpcFrameParser p;
        uint8_t *m = NULL;
        size_t n = 0;

        grpc_frame_parser_init(&p, 16);
        for (size_t i = 0; i < sizeof body; i++) {
                /* Not done until the last byte. */
                assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), i == 0 ? -ENODATA : -EBADMSG);
                assert_int_equal(grpc_frame_parser_feed(&p, body + i, 1), 0);
        }
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), 0);
        assert_memory_equal(m, "hi", 2);
        free(m);
        grpc_frame_parser_done(&p);
}

static int feed_one(const uint8_t *b, size_t n, size_t max, GrpcFrameParser *p) {
        grpc_frame_parser_init(p, max);
        return grpc_frame_parser_feed(p, b, n);
}

static void test_frame_parser_hostile(void **state) {
        GrpcFrameParser p;
        uint8_t *m = NULL;
        size_t n = 0;

        /* 4 GiB - 1 announced: refused from the prefix alone, nothing allocated. */
        assert_int_equal(feed_one((const uint8_t *) "\x00\xff\xff\xff\xff", 5, GRPC_RESPONSE_MAX_DEFAULT, &p),
                         -EMSGSIZE);
        assert_null(p.message);
        assert_true(p.declared == UINT32_MAX);
        grpc_frame_parser_done(&p);
        /* One over the bound, exactly the bound. */
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00\x00\x11", 5, 16, &p), -EMSGSIZE);
        grpc_frame_parser_done(&p);
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00\x00\x10", 5, 16, &p), 0);
        grpc_frame_parser_done(&p);
        /* Compressed, a flag that does not exist. */
        assert_int_equal(feed_one((const uint8_t *) "\x01\x00\x00\x00\x01x", 6, 16, &p), -EPROTONOSUPPORT);
        grpc_frame_parser_done(&p);
        assert_int_equal(feed_one((const uint8_t *) "\x80\x00\x00\x00\x01x", 6, 16, &p), -EBADMSG);
        grpc_frame_parser_done(&p);
        /* A second message, even an empty one. */
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00\x00\x00\x00", 6, 16, &p), -EBADMSG);
        grpc_frame_parser_done(&p);
        /* Truncated prefix, truncated message, nothing at all. */
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00", 3, 16, &p), 0);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), -EBADMSG);
        grpc_frame_parser_done(&p);
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00\x00\x04zz", 7, 16, &p), 0);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), -EBADMSG);
        grpc_frame_parser_done(&p);
        grpc_frame_parser_init(&p, 16);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), -ENODATA);
        /* An empty message is a message. */
        assert_int_equal(feed_one((const uint8_t *) "\x00\x00\x00\x00\x00", 5, 16, &p), 0);
        assert_int_equal(grpc_frame_parser_finish(&p, &m, &n), 0);
        assert_int_equal(n, 0);
        free(m);
        grpc_frame_parser_done(&p);
}

static void parse_lines(GrpcResponseHead *h, const char *const *lines) {
        for (; *lines; lines++)
                assert_int_equal(grpc_response_head_parse(h, *lines, strlen(*lines)), 0);
}

static void test_headers_and_trailers(void **state) {
        GrpcResponseHead h = { .grpc_status = -1 };

        /* The header block, the body in between, then the trailers. */
        parse_lines(&h, (const char *const[]) { "HTTP/2 200\r\n", "content-type: application/grpc\r\n", "\r\n", NULL });
        assert_int_equal(h.http_status, 200);
        assert_int_equal(h.grpc_status, -1);
        assert_string_equal(h.content_type, "application/grpc");
        parse_lines(&h, (const char *const[]) { "grpc-status: 0\r\n", "grpc-message: \r\n", "\r\n", NULL });
        assert_int_equal(h.grpc_status, 0);
        assert_string_equal(h.grpc_message, "");
        assert_false(h.bad_status);
        grpc_response_head_done(&h);

        /* Trailers-only, names in any case, blanks around values, a line without a colon. */
        parse_lines(&h, (const char *const[]) { "HTTP/2 200\r\n", "Grpc-Status:   14 \r\n",
                                                "GRPC-MESSAGE: connection%20refused%3A%20%E2%9C%93\r\n", "junk\r\n",
                                                ": empty name\r\n", NULL });
        assert_int_equal(h.grpc_status, 14);
        assert_string_equal(h.grpc_message, "connection refused: \xe2\x9c\x93");
        grpc_response_head_done(&h);

        parse_lines(&h, (const char *const[]) { "grpc-status: x1\r\n", NULL });
        assert_true(h.bad_status);
        grpc_response_head_done(&h);
        parse_lines(&h, (const char *const[]) { "grpc-status: 123\r\n", NULL });
        assert_true(h.bad_status);
        grpc_response_head_done(&h);
        parse_lines(&h, (const char *const[]) { "grpc-status:\r\n", NULL });
        assert_true(h.bad_status);
        grpc_response_head_done(&h);
}

static void test_percent_decode(void **state) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "", "" },         { "plain", "plain" },           { "a%20b", "a b" },
                { "%41%62", "Ab" }, { "bad%zz", "bad%zz" },         { "cut%4", "cut%4" },
                { "cut%", "cut%" }, { "nul%00kept", "nul%00kept" }, { "%25", "%" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *s = NULL;

                assert_int_equal(grpc_percent_decode(cases[i].in, strlen(cases[i].in), &s), 0);
                assert_string_equal(s, cases[i].out);
                free(s);
        }
}

static void test_content_type(void **state) {
        assert_true(grpc_content_type_ok("application/grpc"));
        assert_true(grpc_content_type_ok("application/grpc+proto"));
        assert_true(grpc_content_type_ok("Application/GRPC; charset=utf-8"));
        assert_false(grpc_content_type_ok("application/grpcx"));
        assert_false(grpc_content_type_ok("application/json"));
        assert_false(grpc_content_type_ok("text/html"));
        assert_false(grpc_content_type_ok(""));
}

static void test_timeout_format(void **state) {
        char b[16];

        grpc_timeout_format(0, b);
        assert_string_equal(b, "1u");
        grpc_timeout_format(1500000, b);
        assert_string_equal(b, "1500000u");
        grpc_timeout_format(99999999, b);
        assert_string_equal(b, "99999999u");
        grpc_timeout_format(100000000, b);
        assert_string_equal(b, "100000m");
        grpc_timeout_format(99999999000000ULL, b);
        assert_string_equal(b, "99999999S");
        grpc_timeout_format(UINT64_MAX, b);
        assert_string_equal(b, "99999999S");
}

static void test_status_mapping(void **state) {
        assert_int_equal(grpc_status_to_errno(GRPC_OK), 0);
        assert_int_equal(grpc_status_to_errno(GRPC_NOT_FOUND), -ENOENT);
        assert_int_equal(grpc_status_to_errno(GRPC_DEADLINE_EXCEEDED), -ETIMEDOUT);
        assert_int_equal(grpc_status_to_errno(GRPC_UNIMPLEMENTED), -EOPNOTSUPP);
        assert_int_equal(grpc_status_to_errno(GRPC_UNKNOWN), -EIO);
        assert_int_equal(grpc_status_to_errno(99), -EIO);
        assert_int_equal(grpc_status_to_errno(-1), -EIO);
        assert_string_equal(grpc_status_to_string(GRPC_UNAVAILABLE), "UNAVAILABLE");
        assert_string_equal(grpc_status_to_string(42), "UNKNOWN");
}

static void test_endpoints(void **state) {
        char *p = NULL;

        assert_int_equal(cri_endpoint_to_path("unix:///run/containerd/containerd.sock", &p), 0);
        assert_string_equal(p, "/run/containerd/containerd.sock");
        free(p);
        assert_int_equal(cri_endpoint_to_path("/var/run/crio/crio.sock", &p), 0);
        assert_string_equal(p, "/var/run/crio/crio.sock");
        free(p);
        assert_int_equal(cri_endpoint_to_path("tcp://127.0.0.1:1234", &p), -EINVAL);
        assert_int_equal(cri_endpoint_to_path("unix://relative.sock", &p), -EINVAL);
        assert_int_equal(cri_endpoint_to_path("relative.sock", &p), -EINVAL);
        assert_int_equal(cri_endpoint_to_path(NULL, &p), -EINVAL);
}

/* --- Real calls against the hostile server -------------------------------------------------- */

typedef struct Server {
        char dir[64];
        char path[96];
        pid_t pid;
} Server;

static void server_start(Server *s, const char *mode, unsigned ok_first) {
        int fd;

        snprintf(s->dir, sizeof s->dir, "/tmp/test-cri-grpc.XXXXXX");
        assert_non_null(mkdtemp(s->dir));
        snprintf(s->path, sizeof s->path, "%s/cri.sock", s->dir);
        fd = hostile_listen(s->path);
        assert_true(fd >= 0);
        s->pid = fork();
        assert_true(s->pid >= 0);
        if (s->pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                hostile_serve(fd, mode, ok_first);
                _exit(0);
        }
        close(fd);
}

static void server_stop(Server *s) {
        (void) kill(s->pid, SIGKILL);
        (void) waitpid(s->pid, NULL, 0);
        (void) unlink(s->path);
        (void) rmdir(s->dir);
}

/* One Version call against a server in mode; returns the result and the message. */
static int version_against(const char *mode, unsigned ok_first, uint64_t timeout_usec, CriVersion *v, char **msg) {
        CriClient *c = NULL;
        Server s;
        int r;

        server_start(&s, mode, ok_first);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        if (timeout_usec)
                cri_client_set_timeout(c, timeout_usec);
        r = cri_version(c, 0, v, msg);
        cri_client_free(c);
        server_stop(&s);
        return r;
}

static void test_call_ok(void **state) {
        CriVersion v = {};
        char *msg = NULL;

        assert_int_equal(version_against("ok", 0, 0, &v, &msg), 0);
        assert_null(msg);
        assert_string_equal(v.runtime_name, "hostile");
        assert_string_equal(v.runtime_api_version, "v1");
        cri_version_done(&v);
}

static void test_call_hostile_modes(void **state) {
        static const struct {
                const char *mode;
                int error;
                const char *message;
        } cases[] = {
                { "huge", -EMSGSIZE, "4294967295 bytes is over the limit" },
                { "truncated", -EBADMSG, "ended inside a message: 10 of 100 bytes" },
                { "garbage", -EBADMSG, "malformed Version response" },
                { "content-type", -EPROTO, "content-type 'text/html'" },
                { "status", -EIO, "failed to destroy network: connection is unauthorized" },
                { "two", -EBADMSG, "more than one message" },
                { "nostatus", -EPROTO, "without grpc-status" },
                { "compressed", -EPROTONOSUPPORT, "compressed" },
                { "close", -ECONNRESET, "connection lost" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CriVersion v = {};
                char *msg = NULL;

                assert_int_equal(version_against(cases[i].mode, 0, 2000000, &v, &msg), cases[i].error);
                assert_non_null(msg);
                if (!strstr(msg, cases[i].message))
                        fail_msg("%s: '%s' does not contain '%s'", cases[i].mode, msg, cases[i].message);
                assert_null(v.runtime_name);
                free(msg);
        }
}

static void test_call_deadline(void **state) {
        CriVersion v = {};
        char *msg = NULL;
        uint64_t t0 = mono_usec();

        assert_int_equal(version_against("hang", 0, 300000, &v, &msg), -ETIMEDOUT);
        assert_true(mono_usec() - t0 < 2000000);
        assert_non_null(strstr(msg, "no answer within 300 ms"));
        free(msg);
}

static uint64_t cpu_usec(void) {
        struct rusage ru;

        assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
        return (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ULL +
               (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* A peer that answers HEADERS and then streams empty DATA frames as fast as it can: the call ends
 * within its deadline (2x as the bound on a loaded machine, where it overran by up to 15x) and the
 * client burns little CPU on it (it used most of a core for the whole deadline). The server is a
 * child process: RUSAGE_SELF counts the client alone. */
static void test_call_flood(void **state) {
        const uint64_t deadline = 2000000;
        CriVersion v = {};
        char *msg = NULL;
        uint64_t t0 = mono_usec(), c0 = cpu_usec(), wall, cpu;
        int r;

        r = version_against("flood", 0, deadline, &v, &msg);
        wall = mono_usec() - t0;
        cpu = cpu_usec() - c0;
        print_message("flood: %d (%s) after %" PRIu64 " ms, %" PRIu64 " ms of CPU\n", r, msg, wall / 1000, cpu / 1000);
        assert_true(r == -EPROTO || r == -ETIMEDOUT);
        assert_true(wall < 2 * deadline);
        assert_true(cpu < deadline / 10);
        assert_null(v.runtime_name);
        free(msg);
}

/* Empty frames at a rate below any bound on their number: the channel's own deadline ends the call. */
static void test_call_trickle(void **state) {
        const uint64_t deadline = 1000000;
        CriVersion v = {};
        char *msg = NULL;
        uint64_t t0 = mono_usec();

        assert_int_equal(version_against("trickle", 0, deadline, &v, &msg), -ETIMEDOUT);
        assert_true(mono_usec() - t0 < 2 * deadline);
        assert_non_null(strstr(msg, "no answer within 1000 ms"));
        free(msg);
}

/* Frames HTTP/2 says to ignore reach no callback: only the relay's count of bytes stops them. */
static void test_call_unknown_frames(void **state) {
        CriVersion v = {};
        char *msg = NULL;
        uint64_t t0 = mono_usec();

        assert_int_equal(version_against("unknown", 0, 10000000, &v, &msg), -EMSGSIZE);
        assert_true(mono_usec() - t0 < 10000000);
        assert_non_null(strstr(msg, "bytes for one call"));
        free(msg);
}

/* A message of 1 MiB in 64 DATA frames comes through the relay whole, turn by turn. */
static void test_call_big(void **state) {
        CriVersion v = {};
        char *msg = NULL;

        assert_int_equal(version_against("big", 0, 5000000, &v, &msg), 0);
        assert_null(msg);
        assert_non_null(v.runtime_version);
        assert_int_equal(strlen(v.runtime_version), 1U << 20);
        assert_int_equal(strspn(v.runtime_version, "x"), 1U << 20);
        cri_version_done(&v);
}

static void test_call_v1alpha2_fallback(void **state) {
        CriVersion v = {};
        CriClient *c = NULL;
        char *msg = NULL;
        Server s;

        server_start(&s, "unimplemented-first", 0);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        assert_int_equal(cri_version(c, 0, &v, &msg), 0);
        assert_string_equal(cri_client_service(c), "runtime.v1alpha2.RuntimeService");
        cri_version_done(&v);
        cri_client_free(c);
        server_stop(&s);

        /* Neither service: the error stands and the client stays on v1. */
        server_start(&s, "unimplemented", 0);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        assert_int_equal(cri_version(c, 0, &v, &msg), -EOPNOTSUPP);
        assert_string_equal(cri_client_service(c), "runtime.v1.RuntimeService");
        free(msg);
        cri_client_free(c);
        server_stop(&s);
}

static void test_call_no_socket(void **state) {
        char dir[] = "/tmp/test-cri-grpc.XXXXXX", path[64];
        CriClient *c = NULL;
        CriVersion v = {};
        char *msg = NULL;
        int fd;

        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof path, "%s/none.sock", dir);
        assert_int_equal(cri_client_new(path, &c), 0);
        assert_int_equal(cri_version(c, 0, &v, &msg), -ENOENT);
        free(msg);
        msg = NULL;
        /* A socket file nobody listens on any more. */
        fd = hostile_listen(path);
        assert_true(fd >= 0);
        close(fd);
        assert_int_equal(cri_version(c, 0, &v, &msg), -ECONNREFUSED);
        free(msg);
        cri_client_free(c);
        (void) unlink(path);
        (void) rmdir(dir);
}

static void test_ops_concurrent(void **state) {
        CriOp ops[24];
        CriClient *c = NULL;
        Server s;

        /* Stop/Remove answers are VersionResponses here: a well-formed message, fields unknown. */
        server_start(&s, "ok", 0);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                ops[i] = (CriOp) { .kind = (CriOpKind) (i % 4), .id = "x" };
        assert_int_equal(cri_run_ops(c, 0, ops, ELEMENTSOF(ops), 8), 0);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++) {
                assert_int_equal(ops[i].result, 0);
                assert_int_equal(ops[i].grpc_status, 0);
                cri_op_done(&ops[i]);
        }
        cri_client_free(c);
        server_stop(&s);
}

/* A deadline bounds a round with more calls than the concurrency: the calls in flight are cut to
 * what is left of it, the ones after them never start. */
static void test_ops_deadline(void **state) {
        CriOp ops[6];
        CriClient *c = NULL;
        uint64_t t0;
        Server s;

        server_start(&s, "hang", 0);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        cri_client_set_timeout(c, 10 * 1000000ULL);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                ops[i] = (CriOp) { .kind = CRI_OP_STOP_SANDBOX, .id = "x" };
        t0 = mono_usec();
        assert_int_equal(cri_run_ops(c, t0 + 400000, ops, ELEMENTSOF(ops), 2), 0);
        assert_true(mono_usec() - t0 < 2000000);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++) {
                if (i < 2) {
                        assert_int_equal(ops[i].result, -ETIMEDOUT);
                        /* The deadline cut the 10 s timeout to what was left of it. */
                        assert_null(strstr(ops[i].message, "10000 ms"));
                } else {
                        assert_int_equal(ops[i].result, -ETIME);
                        assert_string_equal(ops[i].message, "not started: the deadline has passed");
                }
                cri_op_done(&ops[i]);
        }
        /* Without a deadline, a call has its whole timeout. */
        cri_client_set_timeout(c, 300000);
        ops[0] = (CriOp) { .kind = CRI_OP_STOP_SANDBOX, .id = "x" };
        assert_int_equal(cri_run_ops(c, 0, ops, 1, 1), 0);
        assert_int_equal(ops[0].result, -ETIMEDOUT);
        assert_non_null(strstr(ops[0].message, "no answer within 300 ms"));
        cri_op_done(&ops[0]);
        cri_client_free(c);
        server_stop(&s);
}

static void test_ops_mixed_failures(void **state) {
        CriOp ops[6];
        CriClient *c = NULL;
        Server s;

        /* The first two calls get answers, the rest the trailers-only CNI error. */
        server_start(&s, "status", 2);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                ops[i] = (CriOp) { .kind = CRI_OP_STOP_SANDBOX, .id = "sandbox" };
        assert_int_equal(cri_run_ops(c, 0, ops, ELEMENTSOF(ops), 1), 0);
        for (size_t i = 0; i < ELEMENTSOF(ops); i++) {
                assert_int_equal(ops[i].result, i < 2 ? 0 : -EIO);
                assert_int_equal(ops[i].grpc_status, i < 2 ? 0 : GRPC_UNKNOWN);
                if (i >= 2)
                        assert_string_equal(ops[i].message, "failed to destroy network: connection is unauthorized");
                cri_op_done(&ops[i]);
        }
        cri_client_free(c);
        server_stop(&s);
}

static void test_max_response(void **state) {
        CriClient *c = NULL;
        CriVersion v = {};
        char *msg = NULL;
        Server s;

        /* The VersionResponse is 23 bytes: a bound of 22 refuses it. */
        server_start(&s, "ok", 0);
        assert_int_equal(cri_client_new(s.path, &c), 0);
        cri_client_set_max_response(c, 22);
        assert_int_equal(cri_version(c, 0, &v, &msg), -EMSGSIZE);
        free(msg);
        msg = NULL;
        cri_client_set_max_response(c, 23);
        assert_int_equal(cri_version(c, 0, &v, &msg), 0);
        cri_version_done(&v);
        cri_client_free(c);
        server_stop(&s);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_frame_encode),
                cmocka_unit_test(test_frame_parser_splits),
                cmocka_unit_test(test_frame_parser_byte_by_byte),
                cmocka_unit_test(test_frame_parser_hostile),
                cmocka_unit_test(test_headers_and_trailers),
                cmocka_unit_test(test_percent_decode),
                cmocka_unit_test(test_content_type),
                cmocka_unit_test(test_timeout_format),
                cmocka_unit_test(test_status_mapping),
                cmocka_unit_test(test_endpoints),
                cmocka_unit_test(test_call_ok),
                cmocka_unit_test(test_call_hostile_modes),
                cmocka_unit_test(test_call_deadline),
                cmocka_unit_test(test_call_flood),
                cmocka_unit_test(test_call_big),
                cmocka_unit_test(test_call_unknown_frames),
                cmocka_unit_test(test_call_trickle),
                cmocka_unit_test(test_call_v1alpha2_fallback),
                cmocka_unit_test(test_call_no_socket),
                cmocka_unit_test(test_ops_concurrent),
                cmocka_unit_test(test_ops_deadline),
                cmocka_unit_test(test_ops_mixed_failures),
                cmocka_unit_test(test_max_response),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
