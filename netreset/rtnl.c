/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small rtnetlink client on libmnl: requests that keep the kernel's extack text, dumps, batches. */

#include <errno.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/rtnl.h"

/* Large enough for the biggest dump skb the kernel builds (32 KiB) with room to spare. */
#define RTNL_RECV_BUFFER (64U * 1024U)
/* A batch datagram: small enough that its acks and errors can never overrun the receive buffer. */
#define RTNL_BATCH_BYTES (32U * 1024U)
#define RTNL_BATCH_MAX 128U

struct Rtnl {
        struct mnl_socket *nl;
        unsigned portid;
        uint32_t seq;
        void *buf;
};

Rtnl *rtnl_free(Rtnl *r) {
        if (!r)
                return NULL;
        if (r->nl)
                (void) mnl_socket_close(r->nl);
        free(r->buf);
        return mfree(r);
}

int rtnl_open(Rtnl **ret) {
        int one = 1, r;
        Rtnl *rtnl;

        rtnl = calloc(1, sizeof *rtnl);
        if (!rtnl)
                return -ENOMEM;
        rtnl->buf = malloc(RTNL_RECV_BUFFER);
        if (!rtnl->buf) {
                r = -ENOMEM;
                goto fail;
        }
        rtnl->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
        if (!rtnl->nl) {
                r = negative_errno();
                goto fail;
        }
        /* Both are optional: an older kernel just gives plain acks. */
        (void) mnl_socket_setsockopt(rtnl->nl, NETLINK_EXT_ACK, &one, sizeof one);
        (void) mnl_socket_setsockopt(rtnl->nl, NETLINK_CAP_ACK, &one, sizeof one);
        if (mnl_socket_bind(rtnl->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                r = negative_errno();
                goto fail;
        }
        rtnl->portid = mnl_socket_get_portid(rtnl->nl);
        *ret = rtnl;
        return 0;
fail:
        rtnl_free(rtnl);
        return r;
}

/* The extack message that may follow an error (or a dump's DONE) at payload offset "offset". */
static void parse_extack(const struct nlmsghdr *nlh, size_t offset, char **reterr_msg) {
        const struct nlattr *attr;

        if (!reterr_msg || *reterr_msg || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
                return;
        if (MNL_ALIGN(offset) >= mnl_nlmsg_get_payload_len(nlh))
                return;
        mnl_attr_for_each(attr, nlh, offset) {
                if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG ||
                    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
                        continue;
                *reterr_msg = strdup(mnl_attr_get_str(attr));
                return;
        }
}

int rtnl_parse_error(const struct nlmsghdr *nlh, char **reterr_msg) {
        const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
        size_t offset = sizeof *e;

        if (mnl_nlmsg_get_payload_len(nlh) < sizeof *e)
                return -EBADMSG;
        if (e->error >= 0)
                return 0;
        /* Without NLM_F_CAPPED the request itself is echoed before the TLVs. */
        if (!(nlh->nlmsg_flags & NLM_F_CAPPED) && e->msg.nlmsg_len >= sizeof(struct nlmsghdr))
                offset += e->msg.nlmsg_len - sizeof(struct nlmsghdr);
        parse_extack(nlh, offset, reterr_msg);
        return e->error;
}

static int parse_done(const struct nlmsghdr *nlh, char **reterr_msg) {
        int error;

        if (mnl_nlmsg_get_payload_len(nlh) < sizeof error)
                return 0;
        memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof error);
        if (error >= 0)
                return 0;
        parse_extack(nlh, sizeof error, reterr_msg);
        return error;
}

static int receive(Rtnl *r, uint32_t seq, int (*cb)(const struct nlmsghdr *nlh, void *userdata),
                   void *userdata, char **reterr_msg) {
        bool interrupted = false;

        for (;;) {
                ssize_t n = mnl_socket_recvfrom(r->nl, r->buf, RTNL_RECV_BUFFER);
                int left;

                if (n < 0)
                        return negative_errno();
                left = (int) n;
                for (const struct nlmsghdr *nlh = r->buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
                        int k;

                        /* Replies to an earlier, abandoned request are not ours to read. */
                        if (nlh->nlmsg_seq != seq || nlh->nlmsg_pid != r->portid)
                                continue;
                        if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
                                interrupted = true;
                        if (nlh->nlmsg_type == NLMSG_ERROR)
                                return rtnl_parse_error(nlh, reterr_msg);
                        if (nlh->nlmsg_type == NLMSG_DONE) {
                                k = parse_done(nlh, reterr_msg);
                                return k < 0 ? k : interrupted ? -EAGAIN : 0;
                        }
                        if (nlh->nlmsg_type < NLMSG_MIN_TYPE || !cb)
                                continue;
                        k = cb(nlh, userdata);
                        if (k < 0)
                                return k;
                }
        }
}

int rtnl_call(Rtnl *r, struct nlmsghdr *req, int (*cb)(const struct nlmsghdr *nlh, void *userdata),
              void *userdata, char **reterr_msg) {
        req->nlmsg_seq = ++r->seq;
        if ((req->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
                req->nlmsg_flags |= NLM_F_ACK;
        if (mnl_socket_sendto(r->nl, req, req->nlmsg_len) < 0)
                return negative_errno();
        return receive(r, req->nlmsg_seq, cb, userdata, reterr_msg);
}

int rtnl_dump(Rtnl *r, struct nlmsghdr *req, int (*cb)(const struct nlmsghdr *nlh, void *userdata),
              void *userdata, void (*clear)(void *userdata), char **reterr_msg) {
        int k = -EAGAIN;

        for (unsigned attempt = 0; attempt < RTNL_DUMP_ATTEMPTS && k == -EAGAIN; attempt++) {
                if (attempt > 0)
                        clear(userdata);
                k = rtnl_call(r, req, cb, userdata, reterr_msg);
        }
        return k;
}

/* Read the failures of a datagram's requests [first_seq, last_seq] until the ack of the last. */
static int receive_many(Rtnl *r, uint32_t first_seq, uint32_t last_seq, int *ret_errors) {
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(r->nl, r->buf, RTNL_RECV_BUFFER);
                int left;

                if (n < 0)
                        return negative_errno();
                left = (int) n;
                for (const struct nlmsghdr *nlh = r->buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
                        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_pid != r->portid ||
                            nlh->nlmsg_seq < first_seq || nlh->nlmsg_seq > last_seq)
                                continue;
                        ret_errors[nlh->nlmsg_seq - first_seq] = rtnl_parse_error(nlh, NULL);
                        if (nlh->nlmsg_seq == last_seq)
                                return 0;
                }
        }
}

int rtnl_call_many(Rtnl *r, void *buf, size_t len, size_t n, int *ret_errors) {
        uint8_t *p = buf, *end = p + len;
        size_t i = 0;

        for (size_t k = 0; k < n; k++)
                ret_errors[k] = -ECANCELED;
        while (p < end) {
                uint8_t *chunk = p;
                struct nlmsghdr *last = NULL;
                uint32_t first_seq = r->seq + 1;
                size_t count = 0;
                int k;

                while (p < end && count < RTNL_BATCH_MAX) {
                        struct nlmsghdr *nlh = (struct nlmsghdr *) p;

                        if ((size_t) (end - p) < sizeof *nlh || nlh->nlmsg_len < sizeof *nlh ||
                            nlh->nlmsg_len > (size_t) (end - p) || i + count >= n)
                                return -EINVAL;
                        if (count > 0 && (size_t) (p - chunk) + nlh->nlmsg_len > RTNL_BATCH_BYTES)
                                break;
                        nlh->nlmsg_seq = ++r->seq;
                        nlh->nlmsg_flags &= ~NLM_F_ACK;
                        last = nlh;
                        p += MNL_ALIGN(nlh->nlmsg_len);
                        count++;
                }
                if (!last)
                        return -EINVAL;
                last->nlmsg_flags |= NLM_F_ACK;
                if (mnl_socket_sendto(r->nl, chunk, (size_t) (p - chunk)) < 0)
                        return negative_errno();
                for (size_t j = 0; j < count; j++)
                        ret_errors[i + j] = 0;
                k = receive_many(r, first_seq, last->nlmsg_seq, ret_errors + i);
                if (k < 0)
                        return k;
                i += count;
        }
        return 0;
}
