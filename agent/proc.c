/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes as /proc shows them: executables, parents, start times, and the never-signal guard. */

#include <dirent.h>
#include <stdio.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/path.h"
#include "agent/proc.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "alloc-util.h"

int proc_parse_stat(const char *buf, pid_t *ret_ppid, char *ret_state, uint64_t *ret_starttime) {
        const char *p = strrchr(buf, ')');
        unsigned long long start;
        char state;
        int ppid, n = 0;

        if (!p || p[1] != ' ')
                return -EINVAL;
        /* Fields 3 (state) and 4 (ppid), then 17 more up to 22 (starttime). */
        if (sscanf(p + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu%n",
                   &state, &ppid, &start, &n) != 3 || n == 0)
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

int proc_table_read(ProcTable *ret) {
        ProcTable t = {};
        size_t allocated = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        d = opendir("/proc");
        if (!d)
                return negative_errno();
        while (r >= 0 && (de = readdir(d))) {
                ProcInfo p;

                if (!isdigit_str(de->d_name))
                        continue;
                r = proc_read((pid_t) atol(de->d_name), &p);
                if (r == -ENOENT || r == -EINVAL || r == -EACCES) {
                        r = 0;  /* gone meanwhile, or unreadable: nothing to match */
                        continue;
                }
                if (r >= 0 && (r = table_add(&t, &allocated, &p)) < 0)
                        proc_info_done(&p);
        }
        closedir(d);
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

static int pids_add(pid_t **l, size_t *n, pid_t pid) {
        pid_t *nl = reallocarray(*l, *n + 2, sizeof(pid_t));

        if (!nl)
                return -ENOMEM;
        nl[(*n)++] = pid;
        nl[*n] = 0;
        *l = nl;
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
        size_t n = 0;
        int r;

        r = pids_add(&l, &n, 1);
        /* Walk up from self; a cycle cannot happen in /proc, but a bound costs nothing. */
        for (pid_t pid = self; r >= 0 && pid > 1 && n < 4096;) {
                const ProcInfo *p = proc_table_find(t, pid);

                if (!proc_pid_in(l, pid))
                        r = pids_add(&l, &n, pid);
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
        size_t n = 0;
        int r = 0;

        /* Breadth first: l doubles as the queue; i is the process whose children are looked for. */
        for (size_t i = 0;; i++) {
                /* i > 0 only once l holds i entries (the break below). */
                pid_t parent = i == 0 || !l ? pid : l[i - 1];

                for (size_t k = 0; r >= 0 && k < t->n; k++) {
                        const ProcInfo *c = t->procs + k;

                        if (c->ppid != parent || c->pid == pid || proc_pid_in(skip, c->pid) || proc_pid_in(l, c->pid))
                                continue;
                        r = pids_add(&l, &n, c->pid);
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
