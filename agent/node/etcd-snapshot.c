/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The snapshot of this node's etcd member the backup takes: asked of its own client URLs only, written
 * whole or not at all, and what it establishes for the data directory's rule. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include "agent/node/etcd.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

#define SNAPSHOT_MAX (8ULL << 30) /* etcd's largest backend quota */
#define SNAPSHOT_TIMEOUT_USEC (120ULL * 1000000ULL)

void node_etcd_snapshot_done(NodeEtcdSnapshot *s) {
        free(s->member);
        free(s->data_dir);
        free(s->msg);
        *s = (NodeEtcdSnapshot) {};
}

/* One snapshot from one endpoint into fd; deadline bounds every endpoint's call together. */
static int snapshot_from(const NodeEtcd *l, const char *endpoint, uint64_t budget, uint64_t deadline, int fd,
                         uint64_t *size, char **msg) {
        EtcdClient *c = NULL;
        int r;

        if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        r = node_etcd_client(l, endpoint, deadline, &c);
        if (r >= 0) {
                etcd_client_set_timeout(c, budget);
                r = etcd_snapshot(c, fd, SNAPSHOT_MAX, size, msg);
        }
        etcd_client_free(c);
        return r;
}

/* Each of the member's own client URLs in turn until one gives a whole snapshot, then synced; a
 * failure leaves no file. 0 and the words of the snapshot in *ret_msg, or the last failure. */
static int snapshot_write(const NodeEtcd *l, uint64_t budget, uint64_t deadline, int dir_fd, const char *name, int fd,
                          char **ret_msg) {
        cleanup_free char *msg = NULL;
        uint64_t size = 0;
        int r = -ENOENT;

        for (size_t i = 0; i < l->n_own && r < 0 && r != -ENOSPC && r != -ETIME; i++) {
                msg = mfree(msg);
                r = snapshot_from(l, l->endpoints[i], budget, deadline, fd, &size, &msg);
                if (r >= 0)
                        *ret_msg = strprintf("etcd snapshot of member %s from %s, %" PRIu64 " bytes", l->name,
                                             l->endpoints[i], size);
        }
        if (r >= 0 && fsync(fd) < 0)
                r = negative_errno();
        if (r < 0) {
                (void) unlinkat(dir_fd, name, 0);
                *ret_msg = mfree(*ret_msg);
                *ret_msg = TAKE_PTR(msg);
        }
        return r;
}

/* A write that failed is the disk's fault; any other failure is the member's, which did not answer. */
static bool disk_failure(int r) {
        return r == -ENOSPC || r == -EDQUOT || r == -EIO || r == -EFBIG;
}

static int snapshot_of(Context *ctx, NodeEtcdRun *run, const NodeEtcd *l, int dir_fd, const char *name,
                       NodeEtcdSnapshot *ret) {
        cleanup_free char *msg = NULL;
        cleanup_close int fd = -EBADF;
        /* Bounded like every etcd call (--etcd-timeout); without it, time for a large backend. */
        uint64_t budget = node_etcd_timeout() ?: SNAPSHOT_TIMEOUT_USEC;
        uint64_t deadline = now(CLOCK_MONOTONIC) + budget;
        int r;

        if (ctx->deadline_usec > 0 && ctx->deadline_usec < deadline)
                deadline = ctx->deadline_usec;
        fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        r = snapshot_write(l, budget, deadline, dir_fd, name, fd, &msg);
        run->facts.snapshot = r >= 0;
        if (r >= 0) {
                ret->msg = TAKE_PTR(msg);
                return 0;
        }
        if (disk_failure(r))
                return set_errmsg(&ret->msg, r, "etcd snapshot could not be written: %s", msg ?: strerror(-r));
        run->facts.own_silent = true;
        ret->silent = true;
        return set_errmsg(&ret->msg, 0, "no etcd snapshot: member %s did not answer: %s", l->name,
                          msg
                                  ?: l->n_own == 0 ? "its files name no client URL of its own"
                                                   : strerror(-r));
}

int node_etcd_snapshot(Context *ctx, int dir_fd, const char *name, NodeEtcdSnapshot *ret) {
        NodeEtcdRun *run = node_etcd_run(ctx);
        NodeEtcd l = {};
        int r;

        *ret = (NodeEtcdSnapshot) {};
        if (!run)
                return -ENOMEM;
        r = node_etcd_find(ctx, &l, NULL);
        if (r <= 0 || l.external) {
                node_etcd_done(&l);
                return 0;
        }
        r = snapshot_of(ctx, run, &l, dir_fd, name, ret);
        ret->member = TAKE_PTR(l.name);
        ret->data_dir = TAKE_PTR(l.data_dir);
        node_etcd_done(&l);
        return r;
}
