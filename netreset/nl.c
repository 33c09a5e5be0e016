/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A small netlink client on libmnl for any bus: requests that keep the kernel's extack text, dumps,
 * batches of requests, and generic netlink family lookup.
 *
 * One library for netlink, libmnl, and not libnl as well: rtnetlink and nf_tables (through
 * libnftnl, itself built on libmnl) need libmnl anyway, and IPVS needs two generic netlink
 * requests (resolve the family, dump or flush the services), a few dozen lines here. libnl would
 * bring two more shared libraries to the rescue image, its own error codes (NLE_*) to map back to
 * errno, its own receive loop without the kernel's extack text, and a second set of netlink
 * habits to learn for that one module. */

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/nl.h"

/* Large enough for the biggest dump skb the kernel builds (32 KiB) with room to spare. */
#define NL_RECV_BUFFER (64U * 1024U)
/* A datagram of nl_call_many(): small enough that its acks and errors can never overrun the
 * receive buffer. */
#define NL_MANY_BYTES (32U * 1024U)
#define NL_MANY_MAX 128U

struct NlSocket {
        struct mnl_socket *nl;
        unsigned portid;
        uint32_t seq;
        void *buf;
};

NlSocket *nl_free(NlSocket *s) {
        if (!s)
                return NULL;
        if (s->nl)
                (void) mnl_socket_close(s->nl);
        free(s->buf);
        return mfree(s);
}

int nl_open(int bus, NlSocket **ret) {
        NlSocket *s;
        int one = 1, r;

        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->buf = malloc(NL_RECV_BUFFER);
        if (!s->buf) {
                r = -ENOMEM;
                goto fail;
        }
        s->nl = mnl_socket_open2(bus, SOCK_CLOEXEC);
        if (!s->nl) {
                r = negative_errno();
                goto fail;
        }
        /* Both are optional: an older kernel just gives plain acks, which echo the request. */
        (void) mnl_socket_setsockopt(s->nl, NETLINK_EXT_ACK, &one, sizeof one);
        (void) mnl_socket_setsockopt(s->nl, NETLINK_CAP_ACK, &one, sizeof one);
        if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                r = negative_errno();
                goto fail;
        }
        s->portid = mnl_socket_get_portid(s->nl);
        *ret = s;
        return 0;
fail:
        nl_free(s);
        return r;
}

int nl_set_receive_timeout(NlSocket *s, unsigned sec) {
        struct timeval tv = { .tv_sec = sec };

        return RET_NERRNO(setsockopt(nl_fd(s), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv));
}

int nl_fd(const NlSocket *s) {
        return mnl_socket_get_fd(s->nl);
}

uint32_t nl_seq_take(NlSocket *s, uint32_t n) {
        uint32_t first = s->seq + 1;

        s->seq += n;
        return first;
}

void *nl_message_start(void *buf, size_t size, uint16_t type, uint16_t flags, size_t extra_len) {
        struct nlmsghdr *nlh;

        memset(buf, 0, size);
        nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = type;
        nlh->nlmsg_flags = flags;
        return mnl_nlmsg_put_extra_header(nlh, extra_len);
}

/* The extack message that may follow an error (or a dump's DONE) at payload offset "offset". */
static void parse_extack(const struct nlmsghdr *nlh, size_t offset, char **reterr_msg) {
        const struct nlattr *attr;

        if (!reterr_msg || *reterr_msg || !(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
                return;
        if (MNL_ALIGN(offset) >= mnl_nlmsg_get_payload_len(nlh))
                return;
        mnl_attr_for_each(attr, nlh, offset) {
                if (mnl_attr_get_type(attr) != NLMSGERR_ATTR_MSG || mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) < 0)
                        continue;
                *reterr_msg = strdup(mnl_attr_get_str(attr));
                return;
        }
}

int nl_parse_error(const struct nlmsghdr *nlh, char **reterr_msg) {
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

/* One datagram into s->buf; its length in *ret_len. */
static int receive_datagram(NlSocket *s, int *ret_len) {
        ssize_t n = mnl_socket_recvfrom(s->nl, s->buf, NL_RECV_BUFFER);

        if (n < 0)
                /* SO_RCVTIMEO ran out: a kernel that never answers must not hang a reset. */
                return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : negative_errno();
        *ret_len = (int) n;
        return 0;
}

/* Pass every message of every datagram to handle until it returns non-zero: < 0 is an error, > 0
 * the end of the exchange (then 0 is returned). */
static int receive_loop(NlSocket *s, int (*handle)(NlSocket *s, const struct nlmsghdr *nlh, void *ctx), void *ctx) {
        for (;;) {
                int left, k;

                k = receive_datagram(s, &left);
                if (k < 0)
                        return k;
                for (const struct nlmsghdr *nlh = s->buf; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
                        k = handle(s, nlh, ctx);
                        if (k != 0)
                                return MIN(k, 0);
                }
        }
}

typedef struct Reply {
        uint32_t seq;
        nl_message_cb cb;
        void *userdata;
        char **reterr_msg;
        bool interrupted;
} Reply;

static int reply_message(NlSocket *s, const struct nlmsghdr *nlh, void *ctx) {
        Reply *r = ctx;
        int k;

        /* Replies to an earlier, abandoned request are not ours to read. */
        if (nlh->nlmsg_seq != r->seq || nlh->nlmsg_pid != s->portid)
                return 0;
        if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
                r->interrupted = true;
        if (nlh->nlmsg_type == NLMSG_ERROR) {
                k = nl_parse_error(nlh, r->reterr_msg);
                return k < 0 ? k : 1;
        }
        if (nlh->nlmsg_type == NLMSG_DONE) {
                k = parse_done(nlh, r->reterr_msg);
                return k < 0 ? k : r->interrupted ? -EAGAIN : 1;
        }
        if (nlh->nlmsg_type < NLMSG_MIN_TYPE || !r->cb)
                return 0;
        return r->cb(nlh, r->userdata);
}

int nl_call(NlSocket *s, struct nlmsghdr *req, nl_message_cb cb, void *userdata, char **reterr_msg) {
        req->nlmsg_seq = nl_seq_take(s, 1);
        if ((req->nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
                req->nlmsg_flags |= NLM_F_ACK;
        if (mnl_socket_sendto(s->nl, req, req->nlmsg_len) < 0)
                return negative_errno();
        return receive_loop(
                s, reply_message,
                &(Reply) { .seq = req->nlmsg_seq, .cb = cb, .userdata = userdata, .reterr_msg = reterr_msg });
}

int nl_dump(NlSocket *s, struct nlmsghdr *req, nl_message_cb cb, void *userdata, void (*clear)(void *userdata),
            char **reterr_msg) {
        int k = -EAGAIN;

        for (unsigned attempt = 0; attempt < NL_DUMP_ATTEMPTS && k == -EAGAIN; attempt++) {
                if (attempt > 0)
                        clear(userdata);
                k = nl_call(s, req, cb, userdata, reterr_msg);
        }
        return k;
}

int nl_sendv(NlSocket *s, const struct iovec *iov, size_t n_iov) {
        struct sockaddr_nl snl = { .nl_family = AF_NETLINK };
        struct msghdr msg = {
                .msg_name = &snl,
                .msg_namelen = sizeof snl,
                .msg_iov = (struct iovec *) iov,
                .msg_iovlen = n_iov,
        };

        if (sendmsg(nl_fd(s), &msg, 0) < 0)
                return negative_errno();
        return 0;
}

typedef struct Reports {
        uint32_t first_seq, last_seq;
        nl_report_cb cb;
        void *userdata;
} Reports;

static int report_message(NlSocket *s, const struct nlmsghdr *nlh, void *ctx) {
        Reports *r = ctx;
        int k;

        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_pid != s->portid || nlh->nlmsg_seq < r->first_seq ||
            nlh->nlmsg_seq > r->last_seq)
                return 0;
        k = r->cb(nlh, r->userdata);
        if (k != 0)
                return k;
        return nlh->nlmsg_seq == r->last_seq;
}

int nl_receive_reports(NlSocket *s, uint32_t first_seq, uint32_t last_seq, nl_report_cb cb, void *userdata) {
        return receive_loop(
                s, report_message,
                &(Reports) { .first_seq = first_seq, .last_seq = last_seq, .cb = cb, .userdata = userdata });
}

typedef struct ManyReports {
        uint32_t first_seq;
        int *errors;
} ManyReports;

static int many_report(const struct nlmsghdr *nlh, void *userdata) {
        ManyReports *m = userdata;

        m->errors[nlh->nlmsg_seq - m->first_seq] = nl_parse_error(nlh, NULL);
        return 0;
}

/* Number the requests of one datagram from buf (at most NL_MANY_BYTES, NL_MANY_MAX and max
 * requests), ack only the last, and return its length; 0 when buf holds no whole request. */
static size_t many_chunk(NlSocket *s, uint8_t *buf, size_t len, size_t max, size_t *ret_count) {
        struct nlmsghdr *last = NULL;
        size_t off = 0, count = 0;

        while (off < len && count < NL_MANY_MAX) {
                struct nlmsghdr *nlh = (struct nlmsghdr *) (buf + off);

                if (len - off < sizeof *nlh || nlh->nlmsg_len < sizeof *nlh || nlh->nlmsg_len > len - off ||
                    count >= max)
                        return 0;
                if (count > 0 && off + nlh->nlmsg_len > NL_MANY_BYTES)
                        break;
                nlh->nlmsg_seq = nl_seq_take(s, 1);
                nlh->nlmsg_flags &= ~NLM_F_ACK;
                last = nlh;
                off += MNL_ALIGN(nlh->nlmsg_len);
                count++;
        }
        if (!last)
                return 0;
        last->nlmsg_flags |= NLM_F_ACK;
        *ret_count = count;
        return off;
}

int nl_call_many(NlSocket *s, void *buf, size_t len, size_t n, int *ret_errors) {
        uint8_t *p = buf;
        size_t i = 0, off = 0;

        for (size_t k = 0; k < n; k++)
                ret_errors[k] = -ECANCELED;
        while (off < len) {
                ManyReports m = { .first_seq = s->seq + 1, .errors = ret_errors + i };
                size_t count = 0, chunk;
                int k;

                chunk = many_chunk(s, p + off, len - off, n - i, &count);
                if (chunk == 0)
                        return -EINVAL;
                if (mnl_socket_sendto(s->nl, p + off, chunk) < 0)
                        return negative_errno();
                for (size_t j = 0; j < count; j++)
                        ret_errors[i + j] = 0;
                k = nl_receive_reports(s, m.first_seq, s->seq, many_report, &m);
                if (k < 0)
                        return k;
                i += count;
                off += chunk;
        }
        return 0;
}

static int family_id_cb(const struct nlmsghdr *nlh, void *userdata) {
        const struct nlattr *attr;

        mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) if (mnl_attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
                                                                    mnl_attr_validate(attr, MNL_TYPE_U16) >= 0) {
                *(uint16_t *) userdata = mnl_attr_get_u16(attr);
                return 0;
        }
        return 0;
}

int nl_genl_family_id(NlSocket *s, const char *name, uint16_t *ret, char **reterr_msg) {
        uint8_t buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(GENL_HDRLEN) + MNL_ATTR_HDRLEN + GENL_NAMSIZ + 8];
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        struct genlmsghdr *g;
        uint16_t id = 0;
        int r;

        if (strlen(name) >= GENL_NAMSIZ)
                return -EINVAL;
        g = nl_message_start(buf, sizeof buf, GENL_ID_CTRL, NLM_F_REQUEST, sizeof *g);
        g->cmd = CTRL_CMD_GETFAMILY;
        g->version = 1;
        mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
        r = nl_call(s, nlh, family_id_cb, &id, reterr_msg);
        if (r < 0)
                return r;
        if (id == 0)
                return -EBADMSG;
        *ret = id;
        return 0;
}
