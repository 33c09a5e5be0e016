/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The metering relay between libcurl and a runtime's unix socket (see relay.h). It never blocks:
 * every fd is non-blocking and each turn moves at most one chunk each way. */

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "grpc/relay.h"
#include "errno-util.h"
#include "macro.h"

#define H2_FRAME_HEADER 9

void relay_init(Relay *r, uint64_t max_bytes, uint64_t max_frames) {
        *r = (Relay) { .peer_fd = -EBADF,
                       .listen_fd = -EBADF,
                       .inner_fd = -EBADF,
                       .max_bytes = max_bytes,
                       .max_frames = max_frames };
}

bool relay_is_open(const Relay *r) {
        return r->peer_fd >= 0;
}

/* An abstract name: no file to leave behind, and 64 random bits that nobody guesses to squat. */
static int listen_abstract(Relay *r) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        cleanup_close int fd = -EBADF;
        uint64_t rnd;
        size_t n;

        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
                return -EIO;
        n = (size_t) snprintf(r->name, sizeof r->name, "node-reset-grpc-%d-%016" PRIx64, (int) getpid(), rnd);
        memcpy(sa.sun_path + 1, r->name, n);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        /* The length libcurl connects with: the leading NUL and the name, no terminator. */
        if (bind(fd, (struct sockaddr *) &sa, (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
            listen(fd, 1) < 0)
                return negative_errno();
        r->listen_fd = TAKE_FD(fd);
        return 0;
}

static int relay_buffers(Relay *r) {
        /* Only while open: a round of many calls holds a relay per call, few of them open at once. */
        r->up = malloc(RELAY_CHUNK);
        r->down = malloc(RELAY_CHUNK);
        return r->up && r->down ? 0 : -ENOMEM;
}

int relay_open_tcp(Relay *r, const char *host, const char *port, bool opaque) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *ai = NULL;
        cleanup_close int peer = -EBADF;
        int k;

        if (relay_is_open(r))
                return -EBUSY;
        /* No name lookup: it would block past any deadline. etcd's URLs are addresses; "localhost"
         * is the one name kubeadm writes. */
        if (strcmp(host, "localhost") == 0)
                host = "127.0.0.1";
        k = getaddrinfo(host, port, &hints, &ai);
        if (k != 0)
                return k == EAI_MEMORY ? -ENOMEM : -EADDRNOTAVAIL;
        peer = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (peer < 0 || (connect(peer, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)) {
                k = negative_errno();
                freeaddrinfo(ai);
                return k;
        }
        freeaddrinfo(ai);
        r->connecting = true;
        r->opaque = opaque;
        r->peer_fd = TAKE_FD(peer);
        if (relay_buffers(r) < 0)
                return -ENOMEM;
        return listen_abstract(r);
}

/* A TCP connect in progress: 1 done, 0 not yet, or why it failed. */
static int finish_connect(Relay *r) {
        struct pollfd p = { .fd = r->peer_fd, .events = POLLOUT };
        socklen_t l = sizeof(int);
        int err = 0;

        if (poll(&p, 1, 0) <= 0)
                return 0;
        if (getsockopt(r->peer_fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
                err = errno;
        if (err != 0)
                return (r->connect_error = -err);
        r->connecting = false;
        return 1;
}

int relay_open(Relay *r, const char *socket_path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        cleanup_close int peer = -EBADF;

        if (relay_is_open(r))
                return -EBUSY;
        if (strlen(socket_path) >= sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, socket_path);
        peer = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (peer < 0)
                return negative_errno();
        /* A unix stream connect completes at once or fails at once (EAGAIN: the backlog is full). */
        if (connect(peer, (struct sockaddr *) &sa, sizeof sa) < 0)
                return negative_errno();
        r->peer_fd = TAKE_FD(peer);
        if (relay_buffers(r) < 0)
                return -ENOMEM;
        return listen_abstract(r);
}

void relay_close(Relay *r) {
        (void) close_nointr(r->peer_fd);
        (void) close_nointr(r->listen_fd);
        (void) close_nointr(r->inner_fd);
        free(r->up);
        free(r->down);
        relay_init(r, r->max_bytes, r->max_frames);
}

/* libcurl's connection, once it came: anything else that reaches the name (another process) is
 * closed unheard, for it would talk to the runtime with our privileges. */
static int accept_inner(Relay *r) {
        for (;;) {
                struct ucred cred = {};
                socklen_t l = sizeof cred;
                int fd = accept4(r->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (fd < 0)
                        return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : negative_errno();
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 || cred.pid != getpid()) {
                        (void) close(fd);
                        continue;
                }
                r->inner_fd = fd;
                r->listen_fd = close_nointr(r->listen_fd);
                return 1;
        }
}

/* Count what came from the peer: its bytes, and its frames by their 9-byte headers. */
static int meter(Relay *r, const uint8_t *p, size_t n) {
        r->bytes += n;
        if (r->bytes > r->max_bytes)
                return -EMSGSIZE;
        while (n > 0 && !r->opaque) {
                size_t k;

                if (r->frame_left > 0) {
                        k = size_min(r->frame_left, n);
                        r->frame_left -= k;
                } else {
                        k = size_min(H2_FRAME_HEADER - r->frame_head_len, n);
                        memcpy(r->frame_head + r->frame_head_len, p, k);
                        r->frame_head_len += k;
                        if (r->frame_head_len == H2_FRAME_HEADER) {
                                const uint8_t *h = r->frame_head;

                                r->frame_left = (size_t) h[0] << 16 | (size_t) h[1] << 8 | h[2];
                                r->frame_head_len = 0;
                                if (++r->frames > r->max_frames)
                                        return -ENOBUFS;
                        }
                }
                p += k;
                n -= k;
        }
        return 0;
}

/* Write what is pending in buf[*off, len) to fd; 1 when all of it went, 0 when some is left. */
static int flush(int fd, const uint8_t *buf, size_t *off, size_t *len) {
        while (*off < *len) {
                ssize_t k = send(fd, buf + *off, *len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return 0;
                if (k < 0)
                        return -ECONNRESET;
                *off += (size_t) k;
        }
        *off = *len = 0;
        return 1;
}

/* Read one chunk from fd: its length, 0 at the end (or a broken connection), -EAGAIN for nothing now. */
static ssize_t read_chunk(int fd, uint8_t *buf, size_t size) {
        for (;;) {
                ssize_t k = recv(fd, buf, size, MSG_DONTWAIT);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        return -EAGAIN;
                return k < 0 ? 0 : k;
        }
}

/* libcurl's request (and its SETTINGS, acks, window updates) to the peer. */
static int pump_up(Relay *r) {
        ssize_t k;
        int q;

        q = flush(r->peer_fd, r->up, &r->up_off, &r->up_len);
        if (q <= 0 || r->inner_eof)
                return q;
        k = read_chunk(r->inner_fd, r->up, RELAY_CHUNK);
        if (k == -EAGAIN)
                return 0;
        if (k == 0) {
                r->inner_eof = true;
                (void) shutdown(r->peer_fd, SHUT_WR);
                return 0;
        }
        r->up_len = (size_t) k;
        q = flush(r->peer_fd, r->up, &r->up_off, &r->up_len);
        return q < 0 ? q : 0;
}

/* The peer's answer to libcurl: one chunk a turn, metered before libcurl sees a byte of it. An end or
 * a reset of the peer's connection is passed on as an end, for libcurl to judge. */
static int pump_down(Relay *r) {
        ssize_t k;
        int q;

        q = flush(r->inner_fd, r->down, &r->down_off, &r->down_len);
        if (q <= 0)
                return q;
        if (r->peer_eof) {
                if (!r->down_shut)
                        (void) shutdown(r->inner_fd, SHUT_WR);
                r->down_shut = true;
                return 0;
        }
        k = read_chunk(r->peer_fd, r->down, RELAY_CHUNK);
        if (k == -EAGAIN)
                return 0;
        if (k == 0) {
                r->peer_eof = true;
                return pump_down(r);
        }
        q = meter(r, r->down, (size_t) k);
        if (q < 0)
                return q;
        r->down_len = (size_t) k;
        q = flush(r->inner_fd, r->down, &r->down_off, &r->down_len);
        return q < 0 ? q : 0;
}

int relay_pump(Relay *r) {
        int q;

        if (!relay_is_open(r))
                return 0;
        if (r->inner_fd < 0) {
                q = accept_inner(r);
                if (q <= 0)
                        return q;
        }
        if (r->connecting) {
                q = finish_connect(r);
                if (q <= 0)
                        return q;
        }
        q = pump_up(r);
        if (q < 0)
                return q;
        return pump_down(r);
}

size_t relay_wait(const Relay *r, int fds[static 2], short events[static 2]) {
        short peer = 0, inner = 0;
        size_t n = 0;

        if (!relay_is_open(r))
                return 0;
        if (r->inner_fd < 0) {
                fds[0] = r->listen_fd;
                events[0] = POLLIN;
                return 1;
        }
        if (r->connecting) {
                fds[0] = r->peer_fd;
                events[0] = POLLOUT;
                return 1;
        }
        if (r->up_len > 0)
                peer |= POLLOUT;
        else if (!r->inner_eof)
                inner |= POLLIN;
        if (r->down_len > 0)
                inner |= POLLOUT;
        else if (!r->peer_eof)
                peer |= POLLIN;
        if (peer) {
                fds[n] = r->peer_fd;
                events[n++] = peer;
        }
        if (inner) {
                fds[n] = r->inner_fd;
                events[n++] = inner;
        }
        return n;
}
