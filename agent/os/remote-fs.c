/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* File systems that may never answer. A read on a dead NFS server or on a FUSE mount whose daemon
 * stopped reading waits in the kernel for as long as the mount lives: no signal but a fatal one ends
 * it, and no thread can be cancelled out of it. So a thread is no way to bound it: the thread would
 * stay, and whatever must stop every thread (a core dump, LeakSanitizer at exit) would wait with it.
 * A child process can be killed (those waits are killable) and takes nothing of ours with it.
 *
 * mountinfo says which mounts are such file systems (systemd's fstype_is_network() list, FUSE and
 * autofs): a read beneath one is preceded by a statfs() of its mount point in a child, given up at
 * the wait; a mount that does not answer is named and nothing beneath it is read for the rest of the
 * run. That check goes by the path as named: the files phase, the backup and the removal walk follow
 * no symlink, so for them it is exact. Work that follows symlinks the users made (their homes) runs
 * itself in a child (remote_fs_each()), so that a symlink into a dead mount costs one wait too. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/os/mountinfo.h"
#include "agent/os/remote-fs.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

typedef enum Answer {
        ANSWER_UNKNOWN,
        ANSWER_ASKED, /* a probe is out */
        ANSWER_YES,
        ANSWER_NO,
} Answer;

typedef struct RemoteMount {
        char *node_path; /* in the tree; "/" when the tree itself lies on it */
        char *host_path; /* its mount point, as this process reaches it */
        char *fstype;
        char *source;
        Answer answer;
} RemoteMount;

static struct {
        bool set;
        dev_t dev; /* the tree's root directory */
        ino_t ino;
        uint64_t deadline;
        bool in_child; /* in remote_fs_each()'s child: bounded by its parent, it asks no mount itself */
        RemoteMount *mounts;
        size_t n_mounts;
        RemoteFsUnanswered *dead;
        size_t n_dead;
} remote;

/* systemd src/basic/mountpoint-util.c fstype_is_network(), and the two kinds of mount whose reads
 * wait on a daemon: FUSE (any subtype) and autofs (a lookup mounts, maybe a network file system). */
static const char *const remote_types[] = {
        "afs",       "ceph",  "cifs", "smb3",     "smbfs", "sshfs",   "ncpfs",  "ncp",
        "nfs",       "nfs4",  "gfs",  "gfs2",     "gpfs",  "pvfs2",   "ocfs2",  "lustre",
        "glusterfs", "davfs", "9p",   "virtiofs", "fuse",  "fuseblk", "autofs",
};

bool remote_fs_type(const char *fstype) {
        if (!fstype)
                return false;
        if (startswith(fstype, "fuse."))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(remote_types); i++)
                if (streq(fstype, remote_types[i]))
                        return true;
        return false;
}

static void remote_mount_done(RemoteMount *m) {
        free(m->node_path);
        free(m->host_path);
        free(m->fstype);
        free(m->source);
}

void remote_fs_forget(void) {
        for (size_t i = 0; i < remote.n_mounts; i++)
                remote_mount_done(&remote.mounts[i]);
        free(remote.mounts);
        for (size_t i = 0; i < remote.n_dead; i++) {
                free(remote.dead[i].path);
                free(remote.dead[i].why);
        }
        free(remote.dead);
        remote = (typeof(remote)) {};
}

/* The mount a path reaches: the last one at its mount point, and not hidden beneath another. */
static bool mount_on_top(const MountTable *t, size_t i) {
        for (size_t j = i + 1; j < t->n_entries; j++)
                if (streq(t->entries[j].mount_point, t->entries[i].mount_point))
                        return false;
        return !mount_table_covering(t, &t->entries[i]);
}

static int remote_add(const MountEntry *e, const char *node_path) {
        RemoteMount *m = reallocarray(remote.mounts, remote.n_mounts + 1, sizeof *m);

        if (!m)
                return -ENOMEM;
        remote.mounts = m;
        m = &remote.mounts[remote.n_mounts];
        *m = (RemoteMount) {
                .node_path = strdup(node_path),
                .host_path = strdup(e->mount_point),
                .fstype = strdup(e->fstype),
                .source = strdup(strempty(e->source)),
        };
        if (!m->node_path || !m->host_path || !m->fstype || !m->source) {
                remote_mount_done(m);
                return -ENOMEM;
        }
        remote.n_mounts++;
        return 0;
}

/* The remote mounts in the tree, and the one the tree itself lies on when that is one. */
static int remote_collect(const MountTable *t, const char *root) {
        const MountEntry *under = NULL;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < t->n_entries; i++) {
                const MountEntry *e = &t->entries[i];
                const char *rest;

                if (!mount_on_top(t, i))
                        continue;
                if (path_startswith_dir(root, e->mount_point) &&
                    (!under || strlen(e->mount_point) > strlen(under->mount_point)))
                        under = e;
                if (!remote_fs_type(e->fstype) || streq(e->mount_point, root) ||
                    !path_startswith_dir(e->mount_point, root))
                        continue;
                rest = streq(root, "/") ? e->mount_point : e->mount_point + strlen(root);
                /* The kernel's own automount points (systemd's binfmt_misc in /proc/sys/fs): nothing
                 * is read beneath /proc or /sys, and the probe's statfs() would mount them, a change
                 * that a plan never makes. */
                if (path_startswith_dir(rest, "/proc") || path_startswith_dir(rest, "/sys"))
                        continue;
                r = remote_add(e, rest);
        }
        if (r >= 0 && under && remote_fs_type(under->fstype))
                r = remote_add(under, "/");
        return r;
}

int remote_fs_setup_table(const char *root, int root_fd, uint64_t deadline_usec, const MountTable *t) {
        struct stat st;
        int r;

        remote_fs_forget();
        if (fstat(root_fd, &st) < 0)
                return negative_errno();
        r = remote_collect(t, root);
        if (r < 0) {
                remote_fs_forget();
                return r;
        }
        remote.set = true;
        remote.dev = st.st_dev;
        remote.ino = st.st_ino;
        remote.deadline = deadline_usec;
        return 0;
}

int remote_fs_setup(const char *root, int root_fd, uint64_t deadline_usec) {
        MountTable *t = NULL;
        int r;

        r = mount_table_read(&t);
        if (r >= 0)
                r = remote_fs_setup_table(root, root_fd, deadline_usec, t);
        mount_table_free(t);
        return r;
}

static bool same_tree(int root_fd) {
        struct stat st;

        if (!remote.set || (remote.n_mounts == 0 && remote.n_dead == 0))
                return false;
        return fstat(root_fd, &st) >= 0 && st.st_dev == remote.dev && st.st_ino == remote.ino;
}

bool remote_fs_present(int root_fd) {
        return remote.n_mounts > 0 && same_tree(root_fd);
}

/* Is node path "path" (its leading slashes optional) at or beneath "dir"? */
static bool at_or_beneath(const char *path, const char *dir) {
        path += strspn(path, "/");
        dir += strspn(dir, "/");
        if (isempty(dir))
                return true;
        return strncmp(path, dir, strlen(dir)) == 0 && (path[strlen(dir)] == '/' || path[strlen(dir)] == '\0');
}

bool remote_fs_on(int root_fd, const char *path) {
        if (!remote_fs_present(root_fd))
                return false;
        for (size_t i = 0; i < remote.n_mounts; i++)
                if (at_or_beneath(path, remote.mounts[i].node_path))
                        return true;
        return false;
}

/* When a wait started now must end: the wait, never past the deadline (but never nothing either). */
static uint64_t wait_until(uint64_t start) {
        uint64_t until = start + REMOTE_FS_WAIT_USEC;

        if (remote.deadline > 0 && remote.deadline < until)
                until = remote.deadline > start + REMOTE_FS_WAIT_MIN_USEC ? remote.deadline
                                                                          : start + REMOTE_FS_WAIT_MIN_USEC;
        return until;
}

static int unanswered_add(const char *path, char *why) {
        RemoteFsUnanswered *d;

        for (size_t i = 0; i < remote.n_dead; i++)
                if (streq(remote.dead[i].path, path)) {
                        free(why);
                        return 0;
                }
        d = reallocarray(remote.dead, remote.n_dead + 1, sizeof *d);
        if (!d) {
                free(why);
                return -ENOMEM;
        }
        remote.dead = d;
        d[remote.n_dead] = (RemoteFsUnanswered) { .path = strdup(path), .why = why };
        if (!d[remote.n_dead].path || !why) {
                free(d[remote.n_dead].path);
                free(why);
                return -ENOMEM;
        }
        remote.n_dead++;
        return 0;
}

/* SIGKILL, and reap it if it died at once: a process stuck in an uninterruptible wait stays a
 * zombie-to-be, which is not worth waiting for. */
static void kill_child(pid_t pid) {
        (void) kill(pid, SIGKILL);
        for (unsigned i = 0; i < 50; i++) {
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        return;
                (void) usleep(2000);
        }
}

static void reap_child(pid_t pid) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

static int poll_ms(uint64_t until) {
        uint64_t t = now(CLOCK_MONOTONIC);

        return t >= until ? 0 : (int) u64_min((until - t + 999) / 1000, INT32_MAX);
}

/* Fork a child that asks the file system at host_path, then exits: *ret_fd, the read end of a pipe
 * whose other end only the child holds, says when (POLLHUP). */
static pid_t fork_probe(const char *host_path, int *ret_fd) {
        int p[2];
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                (void) close(p[0]);
                (void) close(p[1]);
                return r;
        }
        if (pid == 0) {
                struct statfs sf;

                /* Nothing of ours (the run's lock above all) stays open in a child that may outlive us
                 * in a wait SIGKILL cannot end. */
                (void) close_range(3, (unsigned) p[1] - 1, 0);
                (void) close_range((unsigned) p[1] + 1, ~0U, 0);
                /* An error (ENOTCONN of an aborted FUSE connection, ESTALE) is an answer too. */
                (void) statfs(host_path, &sf);
                _exit(0);
        }
        (void) close(p[1]);
        *ret_fd = p[0];
        return pid;
}

static double seconds(uint64_t usec) {
        return (double) (usec / 100000) / 10.0;
}

/* One window of probes: at most this many children at a time (a node may have hundreds of NFS
 * volumes mounted; those that answer free their place at once). */
#define PROBES_MAX 64U

typedef struct Probes {
        size_t n;
        size_t mount[PROBES_MAX]; /* index in remote.mounts */
        pid_t pid[PROBES_MAX];
        struct pollfd pfd[PROBES_MAX];
} Probes;

/* Start a probe of each mount not asked yet, up to PROBES_MAX. */
static void probes_start(Probes *p) {
        p->n = 0;
        for (size_t i = 0; i < remote.n_mounts && p->n < PROBES_MAX; i++) {
                RemoteMount *m = &remote.mounts[i];
                size_t j = p->n;

                if (m->answer != ANSWER_UNKNOWN)
                        continue;
                p->pid[j] = fork_probe(m->host_path, &p->pfd[j].fd);
                /* No child to ask with: read unbounded, as before this check existed. */
                m->answer = p->pid[j] < 0 ? ANSWER_YES : ANSWER_ASKED;
                if (p->pid[j] < 0)
                        continue;
                p->mount[j] = i;
                p->pfd[j].events = POLLIN;
                p->n++;
        }
}

/* Wait for the window's probes together until each answered or the wait is over; the others are
 * killed and their mounts named. */
static int probes_wait(Probes *p) {
        uint64_t start = now(CLOCK_MONOTONIC), until = wait_until(start);
        int r = 0;

        for (size_t pending = p->n; pending > 0;) {
                int k = poll(p->pfd, p->n, poll_ms(until));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                for (size_t j = 0; j < p->n; j++)
                        if (p->pfd[j].fd >= 0 && p->pfd[j].revents != 0) {
                                remote.mounts[p->mount[j]].answer = ANSWER_YES;
                                (void) close(p->pfd[j].fd);
                                p->pfd[j].fd = -1; /* poll() skips it */
                                reap_child(p->pid[j]);
                                pending--;
                        }
        }
        for (size_t j = 0; j < p->n; j++) {
                RemoteMount *m = &remote.mounts[p->mount[j]];

                if (p->pfd[j].fd < 0)
                        continue;
                (void) close(p->pfd[j].fd);
                kill_child(p->pid[j]);
                m->answer = ANSWER_NO;
                if (r >= 0)
                        r = unanswered_add(m->node_path,
                                           strprintf("the %s file system %s mounted at %s does not answer (asked for "
                                                     "%.1f s): nothing beneath it is read",
                                                     m->fstype, m->source, m->node_path, seconds(until - start)));
        }
        return r;
}

/* Ask every mount not asked yet, a window at a time, the window's together: the run waits for all the
 * mounts of the tree about as long as for one, wherever it reads later. */
static int probe_mounts(void) {
        Probes p;
        int r = 0;

        for (probes_start(&p); p.n > 0 && r >= 0; probes_start(&p))
                r = probes_wait(&p);
        return r;
}

int remote_fs_check(int root_fd, const char *path, char **ret_why) {
        int r;

        if (!same_tree(root_fd))
                return 0;
        r = remote.in_child ? 0 : probe_mounts();
        if (r < 0)
                return r;
        for (size_t i = 0; i < remote.n_dead; i++)
                if (at_or_beneath(path, remote.dead[i].path)) {
                        if (ret_why && !(*ret_why = strdup(remote.dead[i].why)))
                                return -ENOMEM;
                        return -EHOSTDOWN;
                }
        return 0;
}

const RemoteFsUnanswered *remote_fs_unanswered(size_t *ret_n) {
        *ret_n = remote.n_dead;
        return remote.dead;
}

/* ---- work in a child ---- */

typedef struct Frame {
        uint64_t index;
        int64_t result;
        uint64_t size;
} Frame;

static int write_all(int fd, const void *p, size_t n) {
        for (const char *c = p; n > 0;) {
                ssize_t k = write(fd, c, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                c += k;
                n -= (size_t) k;
        }
        return 0;
}

/* The work of one item into a buffer. */
static int run_one(size_t i, remote_fs_work_t fn, void *userdata, char **ret, size_t *ret_size, int *ret_result) {
        FILE *f = open_memstream(ret, ret_size);

        if (!f)
                return -ENOMEM;
        *ret_result = fn(i, userdata, f);
        if (fclose(f) != 0) {
                *ret = mfree(*ret);
                return -ENOMEM;
        }
        return 0;
}

/* The child: each item from first on that is still to do, one frame each, then exit. */
_Noreturn static void child_loop(int fd, RemoteFsItem *items, const bool *todo, size_t first, size_t n,
                                 remote_fs_work_t fn, void *userdata) {
        for (size_t i = first; i < n; i++) {
                char *out = NULL;
                size_t size = 0;
                int result;
                Frame f = { .index = i };

                if (!todo[i])
                        continue;
                if (run_one(i, fn, userdata, &out, &size, &result) < 0)
                        result = -ENOMEM;
                f.result = result;
                f.size = out ? size : 0;
                if (write_all(fd, &f, sizeof f) < 0 || write_all(fd, out, f.size) < 0)
                        _exit(1);
                free(out);
        }
        _exit(0);
}

static size_t next_todo(const bool *todo, size_t from, size_t n) {
        while (from < n && !todo[from])
                from++;
        return from;
}

typedef struct Round {
        RemoteFsItem *items;
        bool *todo;
        size_t n;
        char *buf; /* what the pipe gave that is no whole frame yet */
        size_t size;
} Round;

/* Take the whole frames out of the buffer: the items they finish. -EBADMSG for a frame that is not
 * the one expected (current). */
static int take_frames(Round *w, size_t *current) {
        while (w->size >= sizeof(Frame)) {
                Frame f;

                memcpy(&f, w->buf, sizeof f);
                if (f.index != *current || f.size > w->size - sizeof f)
                        return f.index != *current ? -EBADMSG : 0;
                RemoteFsItem *it = &w->items[f.index];

                it->result = (int) f.result;
                it->out = malloc((size_t) f.size + 1);
                if (!it->out)
                        return -ENOMEM;
                memcpy(it->out, w->buf + sizeof f, (size_t) f.size);
                it->out[f.size] = '\0';
                it->size = (size_t) f.size;
                w->todo[f.index] = false;
                memmove(w->buf, w->buf + sizeof f + f.size, w->size - sizeof f - (size_t) f.size);
                w->size -= sizeof f + (size_t) f.size;
                *current = next_todo(w->todo, f.index + 1, w->n);
        }
        return 0;
}

static int read_some(int fd, Round *w) {
        char chunk[16384];
        ssize_t k = read(fd, chunk, sizeof chunk);
        char *b;

        if (k < 0)
                return errno == EINTR || errno == EAGAIN ? 1 : -errno;
        if (k == 0)
                return 0;
        b = realloc(w->buf, w->size + (size_t) k);
        if (!b)
                return -ENOMEM;
        memcpy(b + w->size, chunk, (size_t) k);
        w->buf = b;
        w->size += (size_t) k;
        return 1;
}

/* The item the child was at when it hung or died: given up, its path remembered. */
static int give_up(Round *w, size_t i, int error, uint64_t waited) {
        RemoteFsItem *it = &w->items[i];

        w->todo[i] = false;
        it->result = error;
        if (error == -EIO)
                it->why = strprintf("the process reading %s ended without an answer", it->path);
        else
                it->why = strprintf("reading %s did not finish within %.1f s: a network or FUSE file system there does "
                                    "not answer; nothing beneath it is read",
                                    it->path, seconds(waited));
        if (!it->why)
                return -ENOMEM;
        return error == -EIO ? 0 : unanswered_add(it->path, strdup(it->why));
}

/* One child for the items from first on; returns when all are done or one was given up. */
static int run_round(Round *w, size_t first, remote_fs_work_t fn, void *userdata) {
        size_t current = next_todo(w->todo, first, w->n);
        uint64_t start = now(CLOCK_MONOTONIC);
        int p[2], r = 0;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void) close(p[0]);
                (void) close(p[1]);
                return r;
        }
        if (pid == 0) {
                (void) close(p[0]);
                remote.in_child = true;
                child_loop(p[1], w->items, w->todo, first, w->n, fn, userdata);
        }
        (void) close(p[1]);
        while (current < w->n && r >= 0) {
                struct pollfd pfd = { .fd = p[0], .events = POLLIN };
                size_t before = current;
                int k = poll(&pfd, 1, poll_ms(wait_until(start)));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k == 0) {
                        r = give_up(w, current, -ETIME, now(CLOCK_MONOTONIC) - start);
                        break;
                }
                r = k < 0 ? -errno : read_some(p[0], w);
                if (r > 0)
                        r = take_frames(w, &current);
                else if (r == 0 || r == -EBADMSG) {
                        r = give_up(w, current, -EIO, 0); /* the child died, or wrote nonsense */
                        break;
                }
                if (current != before)
                        start = now(CLOCK_MONOTONIC); /* each item has its own wait */
        }
        (void) close(p[0]);
        /* Given up, or we could not go on reading it: it must not go on either. */
        if (current < w->n)
                kill_child(pid);
        else
                reap_child(pid);
        w->buf = mfree(w->buf);
        w->size = 0;
        return r;
}

/* Items whose path lies on a mount that does not answer, or beneath work given up: not started. */
static int skip_unanswered(int root_fd, Round *w) {
        for (size_t i = 0; i < w->n; i++) {
                int r;

                if (!w->todo[i])
                        continue;
                r = remote_fs_check(root_fd, w->items[i].path, &w->items[i].why);
                if (r == -EHOSTDOWN) {
                        w->items[i].result = r;
                        w->todo[i] = false;
                } else if (r < 0)
                        return r;
        }
        return 0;
}

static int run_children(int root_fd, Round *w, remote_fs_work_t fn, void *userdata) {
        for (size_t first = 0;;) {
                int r = skip_unanswered(root_fd, w);

                first = next_todo(w->todo, first, w->n);
                if (r < 0 || first >= w->n)
                        return r;
                r = run_round(w, first, fn, userdata);
                if (r < 0)
                        return r;
        }
}

int remote_fs_each(int root_fd, RemoteFsItem *items, size_t n, remote_fs_work_t fn, void *userdata) {
        cleanup_free bool *todo = calloc(n ?: 1, sizeof *todo);
        Round w = { .items = items, .todo = todo, .n = n };
        int r = 0;

        if (!todo)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                items[i] = (RemoteFsItem) { .path = items[i].path };
                todo[i] = true;
        }
        if (remote_fs_present(root_fd) && !remote.in_child)
                r = run_children(root_fd, &w, fn, userdata);
        if (r < 0 && r != -ENOMEM)
                r = 0; /* no pipe or no child: the rest is done here, unbounded, as before */
        /* Here: the tree has no such mount, or no child could be made. */
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (todo[i])
                        r = run_one(i, fn, userdata, &items[i].out, &items[i].size, &items[i].result);
        free(w.buf);
        return r == -ENOMEM ? r : 0;
}

void remote_fs_items_done(RemoteFsItem *items, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(items[i].out);
                free(items[i].why);
                items[i] = (RemoteFsItem) { .path = items[i].path };
        }
}
