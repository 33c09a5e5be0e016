/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small rtnetlink client on libmnl: requests that keep the kernel's extack text, dumps, batches. */
#pragma once

#include <libmnl/libmnl.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef struct Rtnl Rtnl;

/* A NETLINK_ROUTE socket (SOCK_CLOEXEC) with extended and capped acks. */
int rtnl_open(Rtnl **ret);
Rtnl *rtnl_free(Rtnl *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Rtnl *, rtnl_free);

/* Send one request (its sequence number is set here) and read until its ack (or, for NLM_F_DUMP, until NLMSG_DONE), passing every
 * other message of the reply to cb (may be NULL). NLM_F_ACK is added to non-dump requests.
 * Returns 0 or the kernel's -errno (-EAGAIN when a dump was interrupted by a change); the
 * extack text, when the kernel gave one, goes to *reterr_msg (malloc'd). A negative return of
 * cb stops reading and is returned. */
int rtnl_call(Rtnl *r, struct nlmsghdr *req, int (*cb)(const struct nlmsghdr *nlh, void *userdata),
              void *userdata, char **reterr_msg);

/* A dump through rtnl_call(), read again from scratch while the kernel marks it interrupted (the
 * objects changed while they were read), at most RTNL_DUMP_ATTEMPTS times in all; clear(userdata)
 * drops what an interrupted attempt collected. Returns as rtnl_call(); -EAGAIN when every attempt
 * was interrupted. */
#define RTNL_DUMP_ATTEMPTS 5
int rtnl_dump(Rtnl *r, struct nlmsghdr *req, int (*cb)(const struct nlmsghdr *nlh, void *userdata),
              void *userdata, void (*clear)(void *userdata), char **reterr_msg);

/* Send the n requests laid out back to back in buf, in as few datagrams as fit, with one ack per
 * datagram (the kernel reports failures on its own), and store each request's result (0 or
 * -errno) in ret_errors[i]. Sequence numbers and ack flags are set here. Returns 0, or -errno
 * when the exchange itself failed (then ret_errors of unsent requests are -ECANCELED). */
int rtnl_call_many(Rtnl *r, void *buf, size_t len, size_t n, int *ret_errors);

/* Parse an NLMSG_ERROR message: its error (0 for an ack) and the extack text into *reterr_msg. */
int rtnl_parse_error(const struct nlmsghdr *nlh, char **reterr_msg);
