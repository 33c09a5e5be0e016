/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A hostile gRPC server on a unix socket, for the CRI client's tests: just enough HTTP/2 (raw frames,
 * literal HPACK) to answer each call in a chosen broken way.
 *
 *   grpc-hostile SOCKET MODE [OK_FIRST]
 *
 * The first OK_FIRST calls (connections) get a valid VersionResponse; the rest get MODE:
 *   ok          a valid VersionResponse
 *   huge        a length prefix of 4 GiB - 1, then data, never the end
 *   truncated   a prefix of 100 bytes, 10 bytes, then grpc-status 0
 *   garbage     a well-framed message that is not protobuf
 *   content-type  HTTP 200 with text/html and no grpc-status
 *   status      trailers-only: grpc-status 2 and a percent-encoded grpc-message
 *   two         two messages in a unary response
 *   nostatus    a valid message, then the stream ends without trailers
 *   compressed  a message flagged compressed
 *   unimplemented  trailers-only grpc-status 12 (UNIMPLEMENTED)
 *   unimplemented-first  UNIMPLEMENTED for the first call, valid answers after (the v1alpha2 fallback)
 *   hang        accept, never read, never answer
 *   flood       HEADERS, then zero-length DATA frames as fast as the socket takes them, never the end
 *               (no flow-control window is spent on them, so nothing in HTTP/2 stops the sender)
 *   unknown     HEADERS, then frames of an unknown type with 16 KiB payloads, which HTTP/2 says to
 *               ignore: the client sees no byte of them, only the traffic
 *   big         a valid VersionResponse of 1 MiB (runtime_version is 1 MiB of 'x'), in many DATA frames
 *   trickle     HEADERS, then 64 empty DATA frames every 10 ms, never the end: below any bound on
 *               frames within a call's deadline, so only the deadline ends the call
 *   close       accept and close at once
 *
 * tests/unit/test-cri-grpc.c includes this file (with HOSTILE_NO_MAIN) to run the same server. */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define H2_DATA 0x0
#define H2_HEADERS 0x1
#define H2_SETTINGS 0x4
#define H2_PING 0x6
#define H2_GOAWAY 0x7
#define H2_END_STREAM 0x1
#define H2_ACK 0x1
#define H2_END_HEADERS 0x4
#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* VersionResponse{version "0.1.0", runtime_name "hostile", runtime_version "1", runtime_api_version "v1"} */
static const uint8_t hostile_version_response[] = {
        0x0a, 0x05, '0', '.', '1', '.', '0', 0x12, 0x07, 'h', 'o', 's', 't', 'i', 'l', 'e',
        0x1a, 0x01, '1', 0x22, 0x02, 'v', '1',
};

static int hostile_write_all(int fd, const void *p, size_t n) {
        const uint8_t *b = p;

        while (n > 0) {
                ssize_t k = write(fd, b, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                b += k;
                n -= (size_t) k;
        }
        return 0;
}

static int hostile_read_all(int fd, void *p, size_t n) {
        uint8_t *b = p;

        while (n > 0) {
                ssize_t k = read(fd, b, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                b += k;
                n -= (size_t) k;
        }
        return 0;
}

static int hostile_frame(int fd, uint8_t type, uint8_t flags, uint32_t stream, const void *payload, size_t n) {
        uint8_t h[9] = {
                (uint8_t) (n >> 16), (uint8_t) (n >> 8), (uint8_t) n, type, flags,
                (uint8_t) (stream >> 24), (uint8_t) (stream >> 16), (uint8_t) (stream >> 8), (uint8_t) stream,
        };

        if (hostile_write_all(fd, h, sizeof h) < 0)
                return -1;
        return n ? hostile_write_all(fd, payload, n) : 0;
}

/* HPACK integer with an N-bit prefix (RFC 7541 5.1). */
static size_t hpack_int(uint8_t *out, uint8_t first, unsigned bits, size_t v) {
        size_t max = (1U << bits) - 1, n = 0;

        if (v < max) {
                out[n++] = (uint8_t) (first | v);
                return n;
        }
        out[n++] = (uint8_t) (first | max);
        for (v -= max; v >= 128; v >>= 7)
                out[n++] = (uint8_t) ((v & 0x7f) | 0x80);
        out[n++] = (uint8_t) v;
        return n;
}

/* A literal header field without indexing, new name (RFC 7541 6.2.2), no Huffman. */
static size_t hpack_literal(uint8_t *out, const char *name, const char *value) {
        size_t n = 0, nl = strlen(name), vl = strlen(value);

        out[n++] = 0x00;
        n += hpack_int(out + n, 0, 7, nl);
        memcpy(out + n, name, nl);
        n += nl;
        n += hpack_int(out + n, 0, 7, vl);
        memcpy(out + n, value, vl);
        return n + vl;
}

static int hostile_headers(int fd, uint32_t stream, int status, const char *content_type, const char *grpc_status,
                           const char *grpc_message, uint8_t flags) {
        uint8_t b[1024];
        size_t n = 0;

        if (status == 200)
                b[n++] = 0x88;          /* static table 8: :status 200 */
        else if (status == 500)
                b[n++] = 0x8e;          /* static table 14: :status 500 */
        if (content_type)
                n += hpack_literal(b + n, "content-type", content_type);
        if (grpc_status)
                n += hpack_literal(b + n, "grpc-status", grpc_status);
        if (grpc_message)
                n += hpack_literal(b + n, "grpc-message", grpc_message);
        return hostile_frame(fd, H2_HEADERS, (uint8_t) (H2_END_HEADERS | flags), stream, b, n);
}

static int hostile_data_frame(int fd, uint32_t stream, uint8_t flag, uint32_t declared, const void *p, size_t n,
                              uint8_t flags) {
        uint8_t b[16384];

        if (n + 5 > sizeof b)
                n = sizeof b - 5;
        b[0] = flag;
        b[1] = (uint8_t) (declared >> 24);
        b[2] = (uint8_t) (declared >> 16);
        b[3] = (uint8_t) (declared >> 8);
        b[4] = (uint8_t) declared;
        if (n > 0)
                memcpy(b + 5, p, n);
        return hostile_frame(fd, H2_DATA, flags, stream, b, n + 5);
}

static int hostile_trailers_ok(int fd, uint32_t stream) {
        return hostile_headers(fd, stream, 0, NULL, "0", NULL, H2_END_STREAM);
}

/* Empty DATA frames in batches of 16384 until the client goes: libcurl gets no body byte and no
 * callback from them, only work. */
static int hostile_flood(int fd, uint32_t stream, size_t batch, useconds_t pause_usec) {
        static uint8_t frames[16384 * 9];

        for (size_t i = 0; i < sizeof frames; i += 9) {
                uint8_t *f = frames + i;

                memset(f, 0, 9);
                f[3] = H2_DATA;
                f[5] = (uint8_t) (stream >> 24);
                f[6] = (uint8_t) (stream >> 16);
                f[7] = (uint8_t) (stream >> 8);
                f[8] = (uint8_t) stream;
        }
        for (;;) {
                if (hostile_write_all(fd, frames, batch * 9) < 0)
                        return -1;
                if (pause_usec > 0)
                        (void) usleep(pause_usec);
        }
}

/* A valid message far larger than one frame: the client must put it together from 64 DATA frames. */
static int hostile_big(int fd, uint32_t stream) {
        static uint8_t msg[5 + 4 + (1U << 20)];
        const size_t len = 1U << 20, n = sizeof msg;

        msg[0] = 0;
        msg[1] = (uint8_t) ((n - 5) >> 24);
        msg[2] = (uint8_t) ((n - 5) >> 16);
        msg[3] = (uint8_t) ((n - 5) >> 8);
        msg[4] = (uint8_t) (n - 5);
        /* field 3 (runtime_version), length-delimited: tag 0x1a, varint 1 MiB = 80 80 40 */
        msg[5] = 0x1a;
        msg[6] = 0x80;
        msg[7] = 0x80;
        msg[8] = 0x40;
        memset(msg + 9, 'x', len);
        for (size_t off = 0; off < n; off += 16384)
                if (hostile_frame(fd, H2_DATA, 0, stream, msg + off, n - off < 16384 ? n - off : 16384) < 0)
                        return -1;
        return hostile_trailers_ok(fd, stream);
}

static int hostile_respond(int fd, uint32_t stream, const char *mode) {
        static uint8_t filler[16379];
        const char *ct = "application/grpc";

        memset(filler, 0xff, sizeof filler);
        if (strcmp(mode, "status") == 0)
                return hostile_headers(fd, stream, 200, ct, "2",
                                       "failed%20to%20destroy%20network%3A%20connection%20is%20unauthorized", H2_END_STREAM);
        if (strcmp(mode, "unimplemented") == 0)
                return hostile_headers(fd, stream, 200, ct, "12", NULL, H2_END_STREAM);
        if (strcmp(mode, "content-type") == 0) {
                if (hostile_headers(fd, stream, 200, "text/html", NULL, NULL, 0) < 0)
                        return -1;
                return hostile_frame(fd, H2_DATA, H2_END_STREAM, stream, "<html>no</html>", 15);
        }
        if (hostile_headers(fd, stream, 200, ct, NULL, NULL, 0) < 0)
                return -1;
        if (strcmp(mode, "big") == 0)
                return hostile_big(fd, stream);
        if (strcmp(mode, "unknown") == 0) {
                static uint8_t junk[16384];

                for (;;)
                        if (hostile_frame(fd, 0xfa, 0, stream, junk, sizeof junk) < 0)
                                return -1;
        }
        if (strcmp(mode, "flood") == 0)
                return hostile_flood(fd, stream, 16384, 0);
        if (strcmp(mode, "trickle") == 0)
                return hostile_flood(fd, stream, 64, 10000);
        if (strcmp(mode, "huge") == 0)
                return hostile_data_frame(fd, stream, 0, UINT32_MAX, filler, sizeof filler, 0);
        if (strcmp(mode, "truncated") == 0) {
                if (hostile_data_frame(fd, stream, 0, 100, filler, 10, 0) < 0)
                        return -1;
        } else if (strcmp(mode, "garbage") == 0) {
                if (hostile_data_frame(fd, stream, 0, 16, filler, 16, 0) < 0)
                        return -1;
        } else if (strcmp(mode, "two") == 0) {
                if (hostile_data_frame(fd, stream, 0, 0, NULL, 0, 0) < 0 || hostile_data_frame(fd, stream, 0, 0, NULL, 0, 0) < 0)
                        return -1;
        } else if (strcmp(mode, "compressed") == 0) {
                if (hostile_data_frame(fd, stream, 1, 3, "abc", 3, 0) < 0)
                        return -1;
        } else if (strcmp(mode, "nostatus") == 0)
                return hostile_data_frame(fd, stream, 0, sizeof hostile_version_response, hostile_version_response,
                                          sizeof hostile_version_response, H2_END_STREAM);
        else if (hostile_data_frame(fd, stream, 0, sizeof hostile_version_response, hostile_version_response,
                                    sizeof hostile_version_response, 0) < 0)
                return -1;
        return hostile_trailers_ok(fd, stream);
}

/* One connection: settings, the request, the answer, then wait for the client to go. */
static void hostile_connection(int fd, const char *mode) {
        char preface[sizeof H2_PREFACE - 1];
        uint8_t h[9], payload[65536];

        if (strcmp(mode, "hang") == 0)
                for (;;)
                        pause();
        if (strcmp(mode, "close") == 0 || hostile_read_all(fd, preface, sizeof preface) < 0 ||
            memcmp(preface, H2_PREFACE, sizeof preface) != 0 || hostile_frame(fd, H2_SETTINGS, 0, 0, NULL, 0) < 0)
                return;
        while (hostile_read_all(fd, h, sizeof h) >= 0) {
                size_t n = (size_t) h[0] << 16 | (size_t) h[1] << 8 | h[2];
                uint32_t stream = ((uint32_t) h[5] << 24 | (uint32_t) h[6] << 16 | (uint32_t) h[7] << 8 | h[8]) & 0x7fffffff;

                if (n > sizeof payload || hostile_read_all(fd, payload, n) < 0)
                        return;
                if (h[3] == H2_SETTINGS && !(h[4] & H2_ACK))
                        (void) hostile_frame(fd, H2_SETTINGS, H2_ACK, 0, NULL, 0);
                else if (h[3] == H2_PING && !(h[4] & H2_ACK))
                        (void) hostile_frame(fd, H2_PING, H2_ACK, 0, payload, n);
                else if (h[3] == H2_GOAWAY)
                        return;
                else if ((h[3] == H2_HEADERS || h[3] == H2_DATA) && (h[4] & H2_END_STREAM) &&
                         hostile_respond(fd, stream, mode) < 0)
                        return;
        }
}

/* Serve until killed: each connection in a child that dies with the server. */
static void hostile_serve(int listen_fd, const char *mode, unsigned ok_first) {
        unsigned served = 0;

        (void) signal(SIGCHLD, SIG_IGN);
        (void) signal(SIGPIPE, SIG_IGN);
        for (;;) {
                int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                pid_t pid;

                if (fd < 0)
                        continue;
                pid = fork();
                if (pid == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        close(listen_fd);
                        if (strcmp(mode, "unimplemented-first") == 0)
                                hostile_connection(fd, served == 0 ? "unimplemented" : "ok");
                        else
                                hostile_connection(fd, served < ok_first ? "ok" : mode);
                        /* Let the client read what was sent before the connection goes. */
                        (void) shutdown(fd, SHUT_WR);
                        while (read(fd, (char[64]) {}, 64) > 0)
                                ;
                        _exit(0);
                }
                served++;
                close(fd);
        }
}

static int hostile_listen(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        if (strlen(path) >= sizeof sa.sun_path)
                return -1;
        strcpy(sa.sun_path, path);
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 64) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

#ifndef HOSTILE_NO_MAIN
int main(int argc, char *argv[]) {
        int fd;

        if (argc < 3) {
                fprintf(stderr, "usage: grpc-hostile SOCKET MODE [OK_FIRST]\n");
                return 2;
        }
        fd = hostile_listen(argv[1]);
        if (fd < 0) {
                perror("grpc-hostile: listen");
                return 1;
        }
        hostile_serve(fd, argv[2], argc > 3 ? (unsigned) strtoul(argv[3], NULL, 10) : 0);
        return 0;
}
#endif
