/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One run at a time on a node: the lock of agent/engine/lock.c, and the refusal an operator reads. */

#include <errno.h>
#include <string.h>

#include "agent/base/log.h"
#include "agent/engine/lock.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/node-lock.h"
#include "string-util.h"

int node_lock_take(const Setup *s, int *ret_fd) {
        const char *root = streq(s->root, "/") ? "" : s->root;
        cleanup_free char *err = NULL;
        pid_t holder;
        int fd;

        fd = lock_acquire(s->ctx.root_fd, &holder, &err);
        if (fd == -EWOULDBLOCK) {
                if (holder > 0)
                        log_error("Another node-reset (PID %d) holds %s/run/node-reset.lock; refusing to run.",
                                  (int) holder, root);
                else
                        log_error("Another process holds %s/run/node-reset.lock; refusing to run.", root);
                return EXIT_REFUSED;
        }
        if (fd < 0) {
                log_error("Cannot take the lock %s/run/node-reset.lock: %s", root, err ?: strerror(-fd));
                return EXIT_REFUSED;
        }
        *ret_fd = fd;
        return 0;
}
