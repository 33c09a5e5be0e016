/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes as /proc shows them: executables, command lines, parents, start times, open fds, the
 * never-signal guard, and a process pinned by a pidfd before it is signalled. Every walk over /proc in
 * the agent is proc_each(). */

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/os/fileio.h"
#include "agent/base/path.h"
#include "agent/os/proc.h"
#include "alloc-util.h"
#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* A command line larger than this is not one to parse. */
#define PROC_CMDLINE_MAX (1U << 20)
/* __SO_ACCEPTCON in /proc/net/unix's Flags column: a listening socket. */
#define UNIX_FLAG_LISTENING 0x10000UL

/* The PID a /proc entry names; 0 for everything that is not a process. */
static pid_t proc_entry_pid(const struct dirent *de) {
        return isdigit_str(de->d_name) ? (pid_t) atol(de->d_name) : 0;
}

int proc_parse_stat(const char *buf, pid_t *ret_ppid, char *ret_state, uint64_t *ret_starttime) {
        const char *p = strrchr(buf, ')');
        unsigned long long start;
        char state;
        int ppid, n = 0;

        if (!p || p[1] != ' ')
                return -EINVAL;
        /* Fields 3 (state) and 4 (ppid), then 17 more up to 22 (starttime). */
        if (sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu%n", &state,
                   &ppid, &start, &n) != 3 ||
            n == 0)
                return -EINVAL;
        if (ppid < 0)
                return -EINVAL;
        *ret_ppid = ppid;
        *ret_state = state;
        *ret_starttime = start;
        return 0;
}

void proc_exe_normalise(char *exe, bool *ret_deleted) {
        static const char suffix[] = " (deleted)";
        size_t l = strlen(exe), s = sizeof suffix - 1;

        *ret_deleted = l > s && streq(exe + l - s, suffix);
        if (*ret_deleted)
                exe[l - s] = 0;
}

bool proc_exe_matches(const char *pattern, const char *exe) {
        return exe && exe[0] == '/' && path_pattern_match(pattern, exe);
}

bool proc_view_is_ours(void) {
        char buf[32];
        ssize_t l;

        l = readlink("/proc/self", buf, sizeof buf - 1);
        if (l <= 0)
                return false;
        buf[l] = 0;
        return isdigit_str(buf) && atol(buf) == (long) getpid();
}

static int read_small(const char *path, char *buf, size_t size) {
        int fd;
        ssize_t l;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        l = read(fd, buf, size - 1);
        l = l < 0 ? negative_errno() : l;
        (void) close_nointr(fd);
        if (l < 0)
                return (int) l;
        buf[l] = 0;
        return 0;
}

int proc_read(pid_t pid, ProcInfo *ret) {
        char path[64], buf[1024], exe[PATH_MAX + 1];
        ProcInfo p = { .pid = pid };
        struct stat st;
        ssize_t l;
        int r;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        r = read_small(path, buf, sizeof buf);
        if (r < 0)
                return r == -ESRCH ? -ENOENT : r;
        r = proc_parse_stat(buf, &p.ppid, &p.state, &p.starttime);
        if (r < 0)
                return r;
        snprintf(path, sizeof path, "/proc/%d/root", (int) pid);
        if (stat(path, &st) >= 0) {
                p.root_known = true;
                p.root_dev = st.st_dev;
                p.root_ino = st.st_ino;
        }
        snprintf(path, sizeof path, "/proc/%d/ns/net", (int) pid);
        if (stat(path, &st) >= 0) {
                p.netns_known = true;
                p.netns_dev = st.st_dev;
                p.netns_ino = st.st_ino;
        }
        /* Kernel threads and zombies have no executable: they match nothing. */
        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        l = readlink(path, exe, sizeof exe - 1);
        if (l > 0) {
                exe[l] = 0;
                proc_exe_normalise(exe, &p.exe_deleted);
                p.exe = strdup(exe);
                if (!p.exe)
                        return -ENOMEM;
        }
        *ret = p;
        return 0;
}

void proc_info_done(ProcInfo *p) {
        p->exe = mfree(p->exe);
}

static int cmp_pid(const void *a, const void *b) {
        const ProcInfo *x = a, *y = b;

        return (x->pid > y->pid) - (x->pid < y->pid);
}

static int table_add(ProcTable *t, size_t *allocated, const ProcInfo *p) {
        if (GREEDY_REALLOC(t->procs, *allocated, t->n + 1) < 0)
                return -ENOMEM;
        t->procs[t->n++] = *p;
        return 0;
}

int proc_each(int (*fn)(pid_t pid, void *userdata), void *userdata) {
        cleanup_closedir DIR *d = opendir("/proc");

        if (!d)
                return negative_errno();
        FOREACH_DIRENT(de, d) {
                pid_t pid = proc_entry_pid(de);
                int r;

                if (pid <= 0)
                        continue;
                r = fn(pid, userdata);
                if (r != 0)
                        return r;
        }
        return 0;
}

typedef struct TableFill {
        ProcTable *table;
        size_t allocated;
} TableFill;

static int table_fill(pid_t pid, void *userdata) {
        TableFill *f = userdata;
        ProcInfo p;
        int r;

        r = proc_read(pid, &p);
        if (r == -ENOENT || r == -EINVAL || r == -EACCES)
                return 0; /* gone meanwhile, or unreadable: nothing to match */
        if (r >= 0 && (r = table_add(f->table, &f->allocated, &p)) < 0)
                proc_info_done(&p);
        return r < 0 ? r : 0;
}

int proc_table_read(ProcTable *ret) {
        ProcTable t = {};
        int r;

        r = proc_each(table_fill, &(TableFill) { .table = &t });
        if (r < 0) {
                proc_table_done(&t);
                return r;
        }
        if (t.n > 0)
                qsort(t.procs, t.n, sizeof(ProcInfo), cmp_pid);
        *ret = t;
        return 0;
}

void proc_table_done(ProcTable *t) {
        for (size_t i = 0; i < t->n; i++)
                proc_info_done(t->procs + i);
        t->procs = mfree(t->procs);
        t->n = 0;
}

const ProcInfo *proc_table_find(const ProcTable *t, pid_t pid) {
        ProcInfo key = { .pid = pid };

        return t->n ? bsearch(&key, t->procs, t->n, sizeof(ProcInfo), cmp_pid) : NULL;
}

int pid_list_add(pid_t **l, size_t *n, size_t *allocated, pid_t pid) {
        if (GREEDY_REALLOC(*l, *allocated, *n + 2) < 0)
                return -ENOMEM;
        (*l)[(*n)++] = pid;
        (*l)[*n] = 0;
        return 0;
}

bool proc_pid_in(const pid_t *list, pid_t pid) {
        for (; list && *list; list++)
                if (*list == pid)
                        return true;
        return false;
}

int proc_untouchable(const ProcTable *t, pid_t self, pid_t **ret) {
        pid_t *l = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = pid_list_add(&l, &n, &allocated, 1);
        /* Walk up from self; a cycle cannot happen in /proc, but a bound costs nothing. */
        for (pid_t pid = self; r >= 0 && pid > 1 && n < 4096;) {
                const ProcInfo *p = proc_table_find(t, pid);

                if (!proc_pid_in(l, pid))
                        r = pid_list_add(&l, &n, &allocated, pid);
                if (!p)
                        break;
                pid = p->ppid;
        }
        if (r < 0) {
                free(l);
                return r;
        }
        *ret = l;
        return 0;
}

int proc_descendants(const ProcTable *t, pid_t pid, const pid_t *skip, pid_t **ret, size_t *ret_n) {
        pid_t *l = NULL;
        size_t n = 0, allocated = 0;
        int r = 0;

        /* Breadth first: l doubles as the queue; i is the process whose children are looked for. */
        for (size_t i = 0;; i++) {
                /* i > 0 only once l holds i entries (the break below). */
                pid_t parent = i == 0 || !l ? pid : l[i - 1];

                for (size_t k = 0; r >= 0 && k < t->n; k++) {
                        const ProcInfo *c = t->procs + k;

                        if (c->ppid != parent || c->pid == pid || proc_pid_in(skip, c->pid) || proc_pid_in(l, c->pid))
                                continue;
                        r = pid_list_add(&l, &n, &allocated, c->pid);
                }
                if (r < 0 || i >= n)
                        break;
        }
        if (r < 0) {
                free(l);
                return r;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

bool proc_is(pid_t pid, uint64_t starttime) {
        ProcInfo p;
        bool same;

        if (proc_read(pid, &p) < 0)
                return false;
        same = p.starttime == starttime && p.state != 'Z' && p.state != 'X';
        proc_info_done(&p);
        return same;
}

int proc_pin(pid_t pid, uint64_t starttime, int *ret_pidfd) {
        int fd;

        *ret_pidfd = -EBADF;
        fd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (fd < 0 && errno == ESRCH)
                return 0;
        /* Opened first, checked after: the PID may name another process by now, the pidfd cannot. */
        if (!proc_is(pid, starttime)) {
                if (fd >= 0)
                        (void) close_nointr(fd);
                return 0;
        }
        *ret_pidfd = fd < 0 ? -EBADF : fd; /* no pidfds (kernel < 5.3): the PID alone, right after the check */
        return 1;
}

int proc_signal(int pidfd, pid_t pid, int sig) {
        if (pidfd >= 0)
                return RET_NERRNO((int) syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0));
        return RET_NERRNO(kill(pid, sig));
}

int proc_cmdline_read(pid_t pid, char **ret, size_t *ret_len) {
        char path[64];

        snprintf(path, sizeof path, "/proc/%d/cmdline", (int) pid);
        return fileio_read_file(path, PROC_CMDLINE_MAX, ret, ret_len);
}

const char *proc_cmdline_option(const char *cmdline, size_t len, const char *name, const char *short_name) {
        size_t nl = strlen(name);

        for (const char *p = cmdline; p < cmdline + len; p += strlen(p) + 1) {
                const char *next = p + strlen(p) + 1;

                if (strncmp(p, name, nl) == 0 && p[nl] == '=')
                        return p + nl + 1;
                if ((streq(p, name) || (short_name && streq(p, short_name))) && next < cmdline + len)
                        return next;
        }
        return NULL;
}

char *proc_exe_name(pid_t pid) {
        char path[64], target[PATH_MAX];
        const char *base;
        bool deleted;
        ssize_t l;

        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        l = readlink(path, target, sizeof target - 1);
        if (l <= 0)
                return NULL;
        target[l] = '\0';
        proc_exe_normalise(target, &deleted);
        base = strrchr(target, '/');
        return strdup(base ? base + 1 : target);
}

const ProcInfo *proc_table_find_exe_name(const ProcTable *t, const char *name) {
        for (size_t i = 0; i < t->n; i++) {
                const char *exe = t->procs[i].exe, *base = exe ? strrchr(exe, '/') : NULL;

                if (exe && streq(base ? base + 1 : exe, name))
                        return &t->procs[i];
        }
        return NULL;
}

typedef struct ExeQuery {
        const char *name;
        pid_t pid;
} ExeQuery;

static int exe_is(pid_t pid, void *userdata) {
        cleanup_free char *exe = proc_exe_name(pid);
        ExeQuery *q = userdata;

        if (!exe || !streq(exe, q->name))
                return 0;
        q->pid = pid;
        return 1;
}

int proc_find_exe_name(const char *name, pid_t *ret) {
        ExeQuery q = { .name = name };
        int r;

        r = proc_each(exe_is, &q);
        if (r > 0)
                *ret = q.pid;
        return r;
}

char *proc_cgroup_unit(pid_t pid) {
        cleanup_free char *text = NULL;
        char path[64], *unit = NULL;

        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        if (fileio_read_file(path, 64 * 1024, &text, NULL) < 0)
                return NULL;
        for (char *line = text, *save = NULL; (line = strtok_r(line, "\n", &save)); line = NULL) {
                char *p = strchr(line, ':');

                /* "ID:CONTROLLERS:PATH" */
                p = p ? strchr(p + 1, ':') : NULL;
                if (!p)
                        continue;
                for (char *c = p + 1, *cs = NULL; (c = strtok_r(c, "/", &cs)); c = NULL) {
                        size_t l = strlen(c);

                        if (l > 8 && streq(c + l - 8, ".service")) {
                                free(unit);
                                unit = strdup(c);
                        }
                }
        }
        return unit;
}

static bool pid_has_fd(pid_t pid, bool (*match)(const char *target, const void *userdata), const void *userdata) {
        char dir[64], lpath[64 + NAME_MAX + 2], target[PATH_MAX + 1];
        cleanup_closedir DIR *d = NULL;

        snprintf(dir, sizeof dir, "/proc/%d/fd", (int) pid);
        d = opendir(dir);
        if (!d)
                return false;
        FOREACH_DIRENT(de, d) {
                ssize_t l;

                snprintf(lpath, sizeof lpath, "%s/%s", dir, de->d_name);
                l = readlink(lpath, target, sizeof target - 1);
                if (l <= 0)
                        continue;
                target[l] = '\0';
                if (match(target, userdata))
                        return true;
        }
        return false;
}

typedef struct FdQuery {
        bool (*match)(const char *target, const void *userdata);
        const void *userdata;
        pid_t *pids;
        size_t n, max;
} FdQuery;

static int fd_holder(pid_t pid, void *userdata) {
        FdQuery *q = userdata;

        if (q->n >= q->max)
                return 1;
        if (pid_has_fd(pid, q->match, q->userdata))
                q->pids[q->n++] = pid;
        return 0;
}

int proc_fd_holders(bool (*match)(const char *target, const void *userdata), const void *userdata, pid_t *pids,
                    size_t max) {
        FdQuery q = { .match = match, .userdata = userdata, .pids = pids, .max = max };
        int r;

        r = proc_each(fd_holder, &q);
        return r < 0 ? r : (int) q.n; /* max is a handful */
}

/* The inode of the listening socket bound to path, from /proc/net/unix; 0 when there is none. */
static int listening_inode(const char *path, unsigned long *ret) {
        cleanup_fclose FILE *f = fopen("/proc/net/unix", "re");
        char line[PATH_MAX + 128];

        if (!f)
                return negative_errno();
        *ret = 0;
        /* Num RefCount Protocol Flags Type St Inode Path */
        while (fgets(line, sizeof line, f)) {
                unsigned long flags, inode;
                int off = 0;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %n", &flags, &inode, &off) < 2 || off == 0)
                        continue;
                if ((flags & UNIX_FLAG_LISTENING) && streq(line + off, path)) {
                        *ret = inode;
                        return 1;
                }
        }
        return 0;
}

static bool target_is(const char *target, const void *want) {
        return streq(target, want);
}

int proc_socket_listener(const char *path, pid_t *ret) {
        unsigned long inode;
        char want[48];
        int r;

        *ret = 0;
        r = listening_inode(path, &inode);
        if (r <= 0)
                return r;
        snprintf(want, sizeof want, "socket:[%lu]", inode);
        r = proc_fd_holders(target_is, want, ret, 1);
        return r < 0 ? r : r > 0;
}

static bool link_beneath(int dfd, const char *name, const char *abs_path) {
        char link[PATH_MAX + 1];
        ssize_t l;

        l = readlinkat(dfd, name, link, sizeof link - 1);
        if (l <= 0)
                return false;
        link[l] = '\0';
        return path_startswith_dir(link, abs_path);
}

static bool fd_beneath(pid_t pid, const char *abs_path) {
        char fddir[64];
        struct dirent *fe;
        bool found = false;
        DIR *fds;

        (void) snprintf(fddir, sizeof fddir, "/proc/%d/fd", (int) pid);
        fds = opendir(fddir);
        if (!fds)
                return false;
        /* "." and ".." are no links: readlinkat() fails on them. */
        while (!found && (fe = readdir(fds)))
                found = link_beneath(dirfd(fds), fe->d_name, abs_path);
        closedir(fds);
        return found;
}

/* A line of /proc/PID/maps is "start-end perms offset dev inode   path": the path is the sixth
 * field, possibly with spaces, possibly ending in " (deleted)" (still a holder). */
static bool map_beneath(pid_t pid, const char *abs_path) {
        cleanup_free char *line = NULL;
        char path[64];
        size_t size = 0;
        bool found = false;
        FILE *f;

        (void) snprintf(path, sizeof path, "/proc/%d/maps", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return false;
        while (!found && getline(&line, &size, f) > 0) {
                int n = -1;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "%*s %*s %*s %*s %*s %n", &n) < 0 || n < 0 || line[n] != '/')
                        continue;
                found = path_startswith_dir(line + n, abs_path);
        }
        fclose(f);
        return found;
}

const char *proc_holds_path(pid_t pid, const char *abs_path) {
        char lpath[64];

        if (fd_beneath(pid, abs_path))
                return "fd";
        (void) snprintf(lpath, sizeof lpath, "/proc/%d/cwd", (int) pid);
        if (link_beneath(AT_FDCWD, lpath, abs_path))
                return "cwd";
        (void) snprintf(lpath, sizeof lpath, "/proc/%d/root", (int) pid);
        if (link_beneath(AT_FDCWD, lpath, abs_path))
                return "root";
        return map_beneath(pid, abs_path) ? "map" : NULL;
}

typedef struct PathQuery {
        const char *abs_path;
        char *list;
        unsigned n, max;
} PathQuery;

static int path_holder(pid_t pid, void *userdata) {
        PathQuery *q = userdata;
        const char *how;
        char *t;

        if (q->n >= q->max)
                return 1;
        if (pid == getpid() || !(how = proc_holds_path(pid, q->abs_path)))
                return 0;
        t = strprintf("%s%s%d (%s)", strempty(q->list), q->list ? ", " : "", (int) pid, how);
        if (!t)
                return -ENOMEM;
        free(q->list);
        q->list = t;
        q->n++;
        return 0;
}

char *proc_path_holders(const char *abs_path, unsigned max) {
        PathQuery q = { .abs_path = abs_path, .max = max };

        (void) proc_each(path_holder, &q); /* what was found before a failure is still the answer */
        return q.list;
}
