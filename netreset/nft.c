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

struct NftSession {
        NlSocket *socket;
        /* Our own commits, one after the other, took the generation from "from" to "to" (0: no such
         * run), each in a family of "families" (a bit per NFPROTO_*). */
        uint32_t from, to;
        uint32_t families;
};

int nft_session_new(NftSession **ret) {
        NftSession *s = calloc(1, sizeof *s);
        int r;

        if (!s)
                return -ENOMEM;
        r = nft_socket_open(&s->socket);
        if (r < 0) {
                free(s);
                return r;
        }
        *ret = s;
        return 0;
}

NftSession *nft_session_free(NftSession *s) {
        if (!s)
                return NULL;
        nl_free(s->socket);
        return mfree(s);
}

static uint32_t family_bit(int family) {
        return family >= 0 && family < 32 ? 1U << family : 0;
}

/* The generation a transaction from observed is bound to: observed's own, or the one our commits in
 * other families have since moved it on to. */
static uint32_t session_genid(const NftSession *s, const NftRuleset *observed) {
        uint32_t bit = family_bit(observed->family);

        if (s && s->to != 0 && observed->genid == s->from && bit != 0 && !(s->families & bit))
                return s->to;
        return observed->genid;
}

/* After our commit bound to genid: the kernel's generation now says whether ours was the only one. */
static void session_committed(NftSession *s, int family, uint32_t genid) {
        uint32_t next = genid + 1 == 0 ? 1 : genid + 1, now = 0;

        if (nft_generation_read(s->socket, &now) < 0 || now != next || family_bit(family) == 0) {
                s->from = s->to = s->families = 0;
                return;
        }
        if (s->to != genid) {
                /* A run of our own commits starts here. */
                s->from = genid;
                s->families = 0;
        }
        s->to = next;
        s->families |= family_bit(family);
}

/* Build, send and check one transaction from a snapshot, bound to genid. 0: nothing to do, 1:
 * committed. */
static int transact(NlSocket *s, const NftRuleset *rs, uint32_t genid, NftRequest *reqs, size_t n, const FwClass *cls,
                    FwMode mode, char **reterr_msg) {
        CLEANUP(nft_batch_freep) NftBatch *b = NULL;
        BatchError err = {};
        uint32_t seq_last;
        int r;

        r = nft_batch_new(rs->family, genid, &b);
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

int nft_reset(NftSession *session, const NftRuleset *observed, int family, NftRequest *reqs, size_t n,
              const FwClass *cls, FwMode mode, char **reterr_msg) {
        /* Flush mode needs no rule: a table flush takes them all. */
        unsigned flags = mode == FW_MODE_FLUSH ? 0 : NFT_DUMP_RULES;
        CLEANUP(nl_freep) NlSocket *own = NULL;
        NlSocket *s;
        int r;

        if (observed && (observed->family != family || (!observed->rules_dumped && flags)))
                observed = NULL;
        if (session)
                s = session->socket;
        else {
                r = nft_socket_open(&own);
                if (r < 0)
                        return set_errmsg(reterr_msg, r, "cannot open a netfilter netlink socket: %s", strerror(-r));
                s = own;
        }
        for (unsigned attempt = 0;; attempt++) {
                CLEANUP(nft_ruleset_freep) NftRuleset *rs = NULL;
                cleanup_free char *msg = NULL;
                uint32_t genid;

                /* The caller's observation first: the batch carries its generation, so the kernel
                 * refuses it if anything changed since. */
                if (!observed || attempt > 0) {
                        r = nft_ruleset_dump_on(s, family, flags, mode == FW_MODE_OWNED ? cls : NULL, &rs, reterr_msg);
                        if (r < 0)
                                break;
                }
                genid = rs ? rs->genid : session_genid(session, observed);
                r = transact(s, rs ?: observed, genid, reqs, n, cls, mode, &msg);
                if (r > 0 && session)
                        session_committed(session, family, genid);
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
