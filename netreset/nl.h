/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small netlink client on libmnl for any bus: requests that keep the kernel's extack text, dumps,
 * batches of requests, and generic netlink family lookup. */
#pragma once

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "macro.h"

typedef struct NlSocket NlSocket;

/* Called with each message of a reply (not the acks, errors and DONE). Return 0 to read on, > 0
 * to stop reading with success (the rest of a dump is then left unread: close that socket), or a
 * negative errno to stop with that error. */
typedef int (*nl_message_cb)(const struct nlmsghdr *nlh, void *userdata);

/* Called with each NLMSG_ERROR report (ack or error) of a batch; same returns as nl_message_cb. */
typedef int (*nl_report_cb)(const struct nlmsghdr *nlh, void *userdata);

/* Start a request in buf, zeroing its size bytes first: a header of type and flags followed by a
 * fixed header of extra_len bytes (ifinfomsg, rtmsg, genlmsghdr...), which is returned. The
 * request's struct nlmsghdr is buf. */
void *nl_message_start(void *buf, size_t size, uint16_t type, uint16_t flags, size_t extra_len);

/* A socket on bus (NETLINK_ROUTE, NETLINK_NETFILTER, NETLINK_GENERIC...), SOCK_CLOEXEC, with
 * extended and capped acks. */
int nl_open(int bus, NlSocket **ret);
NlSocket *nl_free(NlSocket *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(NlSocket *, nl_free);

/* Give up a receive after sec seconds (then -ETIMEDOUT); by default a receive waits for ever. */
int nl_set_receive_timeout(NlSocket *s, unsigned sec);

int nl_fd(const NlSocket *s);

/* Take n consecutive sequence numbers for requests the caller numbers itself; returns the first. */
uint32_t nl_seq_take(NlSocket *s, uint32_t n);

/* Send one request (its sequence number is set here) and read until its ack (or, for NLM_F_DUMP,
 * until NLMSG_DONE), passing every other message of the reply to cb (may be NULL). NLM_F_ACK is
 * added to non-dump requests. Returns 0 or the kernel's -errno (-EAGAIN when a dump was
 * interrupted by a change, -ETIMEDOUT past the receive timeout); the extack text, when the kernel
 * gave one, goes to *reterr_msg (malloc'd). A non-zero return of cb stops reading (see above). */
int nl_call(NlSocket *s, struct nlmsghdr *req, nl_message_cb cb, void *userdata, char **reterr_msg);

/* A dump through nl_call(), read again from scratch while the kernel marks it interrupted (the
 * objects changed while they were read), at most NL_DUMP_ATTEMPTS times in all; clear(userdata)
 * drops what an interrupted attempt collected. Returns as nl_call(); -EAGAIN when every attempt
 * was interrupted. */
#define NL_DUMP_ATTEMPTS 5
int nl_dump(NlSocket *s, struct nlmsghdr *req, nl_message_cb cb, void *userdata, void (*clear)(void *userdata),
            char **reterr_msg);

/* Send the n requests laid out back to back in buf, in as few datagrams as fit, with one ack per
 * datagram (the kernel reports failures on its own), and store each request's result (0 or
 * -errno) in ret_errors[i]. Sequence numbers and ack flags are set here. Returns 0, or -errno
 * when the exchange itself failed (then ret_errors of unsent requests are -ECANCELED). */
int nl_call_many(NlSocket *s, void *buf, size_t len, size_t n, int *ret_errors);

/* Send one datagram gathered from iov (the caller numbered its messages with nl_seq_take()). */
int nl_sendv(NlSocket *s, const struct iovec *iov, size_t n_iov);

/* Read the NLMSG_ERROR reports addressed to this socket with a sequence number in
 * [first_seq, last_seq], passing each to cb, until the report of last_seq or a non-zero return of
 * cb (returned when negative). */
int nl_receive_reports(NlSocket *s, uint32_t first_seq, uint32_t last_seq, nl_report_cb cb, void *userdata);

/* Parse an NLMSG_ERROR message: its error (0 for an ack) and the extack text into *reterr_msg. */
int nl_parse_error(const struct nlmsghdr *nlh, char **reterr_msg);

/* The id of generic netlink family name (CTRL_CMD_GETFAMILY); -ENOENT when the kernel has none. */
int nl_genl_family_id(NlSocket *s, const char *name, uint16_t *ret, char **reterr_msg);
