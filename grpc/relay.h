/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A byte relay between libcurl and the runtime's socket that meters what the runtime sends: the relay
 * owns the real connection, libcurl connects to the relay's own listener (an abstract unix socket
 * with a random name that accepts this process only), and the relay counts the HTTP/2 frames and
 * bytes that come in and hands libcurl a bounded amount per turn, so that no peer can keep libcurl
 * busy for longer than one turn, nor make it work without end. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RELAY_CHUNK (16U << 10)

#define RELAY_NAME_MAX 64

typedef struct Relay {
        int peer_fd;               /* connected to the runtime's socket */
        int listen_fd;             /* where libcurl connects, until it has */
        int inner_fd;              /* libcurl's connection, accepted */
        char name[RELAY_NAME_MAX]; /* the listener's abstract name, without the leading NUL */
        uint8_t *up;               /* RELAY_CHUNK from libcurl, not yet written to the peer */
        size_t up_len, up_off;
        uint8_t *down; /* RELAY_CHUNK from the peer, not yet handed to libcurl */
        size_t down_len, down_off;
        uint8_t frame_head[9]; /* the frame header being read */
        size_t frame_head_len;
        size_t frame_left; /* payload bytes of the current frame still to come */
        uint64_t bytes;    /* from the peer, in all */
        uint64_t frames;   /* HTTP/2 frames from the peer, empty ones included */
        uint64_t max_bytes, max_frames;
        bool peer_eof, inner_eof, down_shut;
        bool connecting;   /* a TCP connect in progress: nothing moves until it completes */
        bool opaque;       /* TLS: the bytes are records, not frames; only bytes are metered */
        int connect_error; /* why the peer could not be reached (-ECONNREFUSED, ...) */
} Relay;

void relay_init(Relay *r, uint64_t max_bytes, uint64_t max_frames);
/* Connect to socket_path (never blocking: a full listen backlog is -EAGAIN) and listen for libcurl on
 * r->name (CURLOPT_ABSTRACT_UNIX_SOCKET). */
int relay_open(Relay *r, const char *socket_path);
/* The same for a TCP peer (a numeric address or "localhost"; the connect completes in later turns and
 * a failure to connect is relay_pump()'s error, also kept in r->connect_error). opaque: the peer
 * speaks TLS, so its bytes are counted and handed over a chunk per turn but cannot be parsed as
 * HTTP/2 frames: max_frames does not apply. */
int relay_open_tcp(Relay *r, const char *host, const char *port, bool opaque);
bool relay_is_open(const Relay *r);
/* One turn: what libcurl wrote goes to the peer, and at most RELAY_CHUNK bytes from the peer go to
 * libcurl. -ENOBUFS past max_frames, -EMSGSIZE past max_bytes, -ECONNRESET for a broken connection. */
int relay_pump(Relay *r);
/* The fds and events to wait for until the next turn (up to 2 each, as poll(2) events). */
size_t relay_wait(const Relay *r, int fds[static 2], short events[static 2]);
void relay_close(Relay *r);
