/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's kill pass: the processes of the pods' containers, found beneath containerd's shims,
 * pinned by pidfds and SIGKILLed in one pass; the time until none is alive is measured, not guessed. */

#include <poll.h>
#include <signal.h>

#include "agent/phases/pods/pods-kill.h"
#include "agent/phases/pods/pods-ladder.h"
#include "agent/os/proc.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"
#include "time-util.h"

typedef struct Victim {
        pid_t pid;
        uint64_t starttime; /* with pid, the process the scan saw */
        int pidfd;
        bool gone;
} Victim;

typedef struct Victims {
        Victim *v;
        size_t n, allocated;
        unsigned pods;
} Victims;

static void victims_done(Victims *vs) {
        for (size_t i = 0; i < vs->n; i++)
                if (vs->v[i].pidfd >= 0)
                        (void) close_nointr(vs->v[i].pidfd);
        vs->v = mfree(vs->v);
        vs->n = vs->allocated = 0;
}

static int victims_add(Victims *vs, const ProcInfo *p) {
        if (GREEDY_REALLOC(vs->v, vs->allocated, vs->n + 1) < 0)
                return -ENOMEM;
        vs->v[vs->n++] = (Victim) { .pid = p->pid, .starttime = p->starttime, .pidfd = -EBADF };
        return 0;
}

/* The descendants of one shim, never an untouchable process (PID 1, this program, its ancestors) nor
 * a shim (a "start" invocation's child is the shim it daemonises), nor beneath one. Returns how many
 * were added. */
static int add_shim_tree(Victims *vs, const ProcTable *t, pid_t shim, const pid_t *skip) {
        cleanup_free pid_t *l = NULL;
        size_t n = 0, before = vs->n;
        int r;

        r = proc_descendants(t, shim, skip, &l, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const ProcInfo *p = proc_table_find(t, l[i]);

                if (p && p->state != 'Z' && p->state != 'X')
                        r = victims_add(vs, p);
        }
        return r < 0 ? r : (int) (vs->n - before);
}

typedef struct Shim {
        pid_t pid;
        char *id;
} Shim;

static void shims_free(Shim *l, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(l[i].id);
        free(l);
}

/* The runtime's shims, and the PIDs never to signal or descend into: the untouchable ones and the
 * shims themselves. */
static int shims_find(const ProcTable *t, const char *socket_path, Shim **ret, size_t *ret_n, pid_t **skip) {
        size_t n = 0, allocated = 0, n_skip = 0, skip_allocated = 0;
        Shim *l = NULL;
        int r;

        r = proc_untouchable(t, getpid(), skip);
        while (r >= 0 && (*skip)[n_skip])
                n_skip++;
        skip_allocated = n_skip + 1;
        for (size_t i = 0; r >= 0 && i < t->n; i++) {
                char *id = NULL;

                if (!ladder_is_shim(t->procs[i].pid, socket_path, &id))
                        continue;
                if (GREEDY_REALLOC(l, allocated, n + 1) < 0) {
                        free(id);
                        r = -ENOMEM;
                        break;
                }
                l[n++] = (Shim) { .pid = t->procs[i].pid, .id = id };
                r = pid_list_add(skip, &n_skip, &skip_allocated, t->procs[i].pid);
        }
        if (r < 0) {
                shims_free(l, n);
                return r;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static int victims_scan(const char *socket_path, const RuntimeInfo *info, char *const *keep_ids, Victims *ret) {
        cleanup_free pid_t *skip = NULL;
        ProcTable t = {};
        Shim *shims = NULL;
        size_t n = 0;
        int r;

        *ret = (Victims) {};
        if (info->kind != RUNTIME_CONTAINERD)
                return -EOPNOTSUPP;
        if (!proc_view_is_ours())
                return -EPERM; /* PIDs of another PID namespace are not ours to signal */
        r = proc_table_read(&t);
        if (r >= 0)
                r = shims_find(&t, socket_path, &shims, &n, &skip);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (shims[i].id && strv_contains(keep_ids, shims[i].id))
                        continue;
                r = add_shim_tree(ret, &t, shims[i].pid, skip);
                if (r > 0)
                        ret->pods++;
        }
        shims_free(shims, n);
        proc_table_done(&t);
        if (r < 0)
                victims_done(ret);
        return r < 0 ? r : 0;
}

int pods_kill_count(const char *socket_path, const RuntimeInfo *info, char *const *keep_ids, unsigned *ret_pods,
                    unsigned *ret_processes) {
        Victims vs;
        int r;

        *ret_pods = *ret_processes = 0;
        r = victims_scan(socket_path, info, keep_ids, &vs);
        if (r < 0)
                return r;
        *ret_pods = vs.pods;
        *ret_processes = (unsigned) vs.n;
        victims_done(&vs);
        return 0;
}

/* Pin the process the scan saw (proc_pin()). Its end is waited for on the pidfd: without pidfds
 * (kernel < 5.3) nothing is signalled. */
static void victim_pin(Victim *v) {
        v->gone = proc_pin(v->pid, v->starttime, &v->pidfd) <= 0 || v->pidfd < 0;
}

/* Wait for every pidfd to poll readable (its process has exited); returns how many are left. */
static size_t victims_wait(Victims *vs, uint64_t until, uint64_t *ret_last) {
        cleanup_free struct pollfd *fds = calloc(vs->n ?: 1, sizeof(struct pollfd));
        size_t left;

        if (!fds)
                return vs->n;
        for (;;) {
                usec_t t = now(CLOCK_MONOTONIC);

                left = 0;
                for (size_t i = 0; i < vs->n; i++) {
                        fds[i] = (struct pollfd) { .fd = vs->v[i].gone ? -1 : vs->v[i].pidfd, .events = POLLIN };
                        left += !vs->v[i].gone;
                }
                if (left == 0 || t >= until)
                        return left;
                if (poll(fds, vs->n, (int) ((until - t) / USEC_PER_MSEC) + 1) <= 0)
                        continue;
                for (size_t i = 0; i < vs->n; i++)
                        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
                                vs->v[i].gone = true;
                                *ret_last = now(CLOCK_MONOTONIC);
                        }
        }
}

int pods_kill(const char *socket_path, const RuntimeInfo *info, char *const *keep_ids, uint64_t wait_usec,
              PodsKill *ret) {
        uint64_t start, last;
        Victims vs;
        int r;

        *ret = (PodsKill) {};
        r = victims_scan(socket_path, info, keep_ids, &vs);
        if (r < 0)
                return r;
        /* Pin every one first, then signal in one tight loop: a pod's processes go at the same moment. */
        for (size_t i = 0; i < vs.n; i++)
                victim_pin(&vs.v[i]);
        start = last = now(CLOCK_MONOTONIC);
        for (size_t i = 0; i < vs.n; i++) {
                if (vs.v[i].gone)
                        continue;
                r = proc_signal(vs.v[i].pidfd, vs.v[i].pid, SIGKILL);
                if (r < 0) {
                        vs.v[i].gone = r == -ESRCH;
                        continue;
                }
                ret->processes++;
        }
        ret->pods = vs.pods;
        ret->survivors = (unsigned) victims_wait(&vs, start + wait_usec, &last);
        ret->gone_usec = ret->survivors ? now(CLOCK_MONOTONIC) - start : last - start;
        victims_done(&vs);
        if (ret->survivors > 0)
                return -EBUSY;
        return ret->processes > 0;
}
