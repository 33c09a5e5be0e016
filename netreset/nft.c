/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* nf_tables through libmnl + libnftnl: the reset transaction of one family. It observes
 * (nft-observe.c), builds one batch (nft-batch.c), sends it and reads the kernel's verdict. */

#include <errno.h>
#include <libmnl/libmnl.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <sys/socket.h>

#include "errno-util.h"
#include "macro.h"
#include "netreset/nft-batch.h"
#include "netreset/nft-ruleset.h"
#include "netreset/nft.h"
#include "netreset/nl.h"
#include "string-util.h"

/* How often a transaction is retried when the ruleset changed underneath. */
#define GENERATION_RETRIES 5

static void raise_buffer(int fd, int opt, int opt_force, size_t want) {
        socklen_t l = sizeof(int);
        int cur = 0, v;

        if (getsockopt(fd, SOL_SOCKET, opt, &cur, &l) >= 0 && cur > 0 && (size_t) cur >= want)
                return;
        v = want > INT_MAX / 2 ? INT_MAX / 2 : (int) want;
        /* The forced variant ignores net.core.[wr]mem_max; without CAP_NET_ADMIN, try the plain one. */
        if (setsockopt(fd, SOL_SOCKET, opt_force, &v, sizeof(v)) < 0)
                (void) setsockopt(fd, SOL_SOCKET, opt, &v, sizeof(v));
}

/* The whole batch goes in one datagram: the kernel only runs a transaction that one skb holds. */
static int batch_send(NlSocket *s, const NftBatch *b) {
        cleanup_free struct iovec *iov = NULL;
        size_t n_iov, len;
        int r;

        r = nft_batch_iovec(b, &iov, &n_iov, &len);
        if (r < 0)
                return r;
        raise_buffer(nl_fd(s), SO_SNDBUF, SO_SNDBUFFORCE, len + 4096);
        /* Room for the error reports of a batch gone wrong, one per failed message. */
        raise_buffer(nl_fd(s), SO_RCVBUF, SO_RCVBUFFORCE, MIN(len * 4, (size_t) 64 << 20));
        return nl_sendv(s, iov, n_iov);
}

typedef struct BatchError {
        uint32_t seq_begin;
        int error;
        uint32_t seq;
        char *text;
} BatchError;

/* Keep the first failure; an error on the batch itself (a refused generation or a failed commit)
 * ends it. */
static int batch_report(const struct nlmsghdr *nlh, void *userdata) {
        BatchError *e = userdata;
        char *text = NULL;
        int error;

        error = nl_parse_error(nlh, e->error == 0 ? &text : NULL);
        if (error < 0 && e->error == 0) {
                e->error = error;
                e->seq = nlh->nlmsg_seq;
                e->text = text;
        }
        return nlh->nlmsg_seq == e->seq_begin && error < 0 ? 1 : 0;
}

/* Build, send and check one transaction from a snapshot. 0: nothing to do, 1: committed. */
static int transact(NlSocket *s, const NftRuleset *rs, NftRequest *reqs, size_t n, const FwClass *cls,
                    FwMode mode, char **reterr_msg) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        BatchError err = {};
        uint32_t seq_last;
        int r;

        r = nft_batch_new(rs->family, rs->genid, &b);
        if (r >= 0)
                r = nft_batch_fill(b, rs, reqs, n, cls, mode);
        if (r < 0 || nft_batch_n_changes(b) == 0)
                return r;
        /* The begin message, the changes, the end message. */
        err.seq_begin = nl_seq_take(s, (uint32_t) nft_batch_n_changes(b) + 2);
        r = nft_batch_finish(b, err.seq_begin, &seq_last);
        if (r >= 0)
                r = batch_send(s, b);
        if (r >= 0)
                r = nl_receive_reports(s, err.seq_begin, seq_last, batch_report, &err);
        /* Once the kernel has spoken, its verdict wins over a later receive failure. */
        if (err.error < 0)
                r = err.error;
        if (r < 0 && err.error < 0 && reterr_msg) {
                cleanup_free char *what = nft_batch_describe(b, err.seq);

                *reterr_msg = strprintf("%s: %s%s%s", strna(what), strerror(-err.error), err.text ? ": " : "",
                                     strempty(err.text));
        }
        free(err.text);
        return r < 0 ? r : 1;
}

int nft_reset(const NftRuleset *observed, int family, NftRequest *reqs, size_t n, const FwClass *cls,
              FwMode mode, char **reterr_msg) {
        /* Flush mode needs no rule: a table flush takes them all. */
        unsigned flags = mode == FW_MODE_FLUSH ? 0 : NFT_DUMP_RULES;
        CLEANUP(nl_freep) NlSocket *s = NULL;
        int r;

        if (observed && (observed->family != family || (!observed->rules_dumped && flags)))
                observed = NULL;
        r = nft_socket_open(&s);
        if (r < 0)
                return set_errmsg(reterr_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
        for (unsigned attempt = 0;; attempt++) {
                CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
                cleanup_free char *msg = NULL;

                /* The caller's observation first: the batch carries its generation, so the kernel
                 * refuses it if anything changed since. */
                if (!observed || attempt > 0) {
                        r = nft_ruleset_dump_on(s, family, flags, &rs, reterr_msg);
                        if (r < 0)
                                break;
                }
                r = transact(s, rs ?: observed, reqs, n, cls, mode, &msg);
                /* ERESTART: the ruleset changed since it was read; read it again and retry. */
                if (r == -ERESTART && attempt + 1 < GENERATION_RETRIES)
                        continue;
                if (r < 0)
                        (void) set_errmsg(reterr_msg, r, "%s", msg ?: strerror(-r));
                break;
        }
        if (r < 0)
                for (size_t i = 0; i < n; i++) {
                        reqs[i].done = (FwCounts) {};
                        reqs[i].changed = false;
                }
        return r;
}
