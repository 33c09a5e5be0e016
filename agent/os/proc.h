/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Processes as /proc shows them: who runs which executable with which command line, their children,
 * who holds which file or socket open, and the processes that must never be signalled (PID 1, this
 * program and its ancestors), and a process pinned by a pidfd before it is signalled. The one module of
 * the agent that walks /proc. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ProcInfo {
        pid_t pid;
        pid_t ppid;
        uint64_t starttime; /* clock ticks after boot: with pid, identifies the process */
        char state;         /* 'R', 'S', 'D', 'Z', ... */
        char *exe;          /* /proc/PID/exe without " (deleted)"; NULL for kernel threads */
        bool exe_deleted;   /* the binary was removed or replaced since it started */
        bool root_known;    /* root_dev/root_ino: its root directory (/proc/PID/root) */
        dev_t root_dev;
        ino_t root_ino;
        bool netns_known; /* netns_dev/netns_ino: its network namespace (/proc/PID/ns/net) */
        dev_t netns_dev;
        ino_t netns_ino;
} ProcInfo;

typedef struct ProcTable {
        ProcInfo *procs;
        size_t n;
} ProcTable;

/* Parse the contents of /proc/PID/stat. The command name may hold spaces and parentheses: the
 * fields after it are found from the last ')'. */
int proc_parse_stat(const char *buf, pid_t *ret_ppid, char *ret_state, uint64_t *ret_starttime);

/* The target of /proc/PID/exe as matched: " (deleted)" is cut off and reported in *ret_deleted. */
void proc_exe_normalise(char *exe, bool *ret_deleted);

/* An executable's path against a "process" pattern: component-wise fnmatch, '*' never matches '/',
 * so "/usr/bin/containerd-shim*" matches "/usr/bin/containerd-shim-runc-v2" but neither
 * "/opt/x/containerd-shim" nor "/usr/bin/my-containerd-shim". */
bool proc_exe_matches(const char *pattern, const char *exe);

/* Does /proc belong to this process's PID namespace? Only then are the PIDs it shows ours to signal. */
bool proc_view_is_ours(void);

/* The one walk over /proc: fn for each process it shows (its PID), in /proc's order, until fn returns
 * non-zero: that result; 0 after the last; -errno when /proc cannot be opened. */
int proc_each(int (*fn)(pid_t pid, void *userdata), void *userdata);

/* Read one process; -ENOENT when it is gone. */
int proc_read(pid_t pid, ProcInfo *ret);
void proc_info_done(ProcInfo *p);

/* Every process /proc shows, sorted by PID. */
int proc_table_read(ProcTable *ret);
void proc_table_done(ProcTable *t);
const ProcInfo *proc_table_find(const ProcTable *t, pid_t pid);
/* The first process in the table whose executable's file name is name, or NULL. */
const ProcInfo *proc_table_find_exe_name(const ProcTable *t, const char *name);

/* The PIDs a reset never signals: 1 (and 0), self, and every ancestor of self as the table shows
 * them. ret is a 0-terminated array. */
int proc_untouchable(const ProcTable *t, pid_t self, pid_t **ret);
bool proc_pid_in(const pid_t *list, pid_t pid);
/* Append pid to a 0-terminated list of n PIDs with room for *allocated. */
int pid_list_add(pid_t **l, size_t *n, size_t *allocated, pid_t pid);

/* The descendants of pid in the table, breadth first, not descending below a PID in `skip`.
 * *ret is malloc'd (n may be 0). */
int proc_descendants(const ProcTable *t, pid_t pid, const pid_t *skip, pid_t **ret, size_t *ret_n);

/* Is the process seen as pid, started at starttime, still there and no zombie (not a reused PID)? */
bool proc_is(pid_t pid, uint64_t starttime);

/* Before a process is acted on: pin the one seen as pid with starttime. A pidfd is opened first and
 * the process checked after, since a PID can be reused between the scan and now and a pidfd cannot.
 * 1 and *ret_pidfd (-EBADF when the kernel has no pidfds, before 5.3: then only the PID names it, right
 * after this check); 0 when it is gone or the PID names another process now. */
int proc_pin(pid_t pid, uint64_t starttime, int *ret_pidfd);
/* Send sig to a pinned process: through its pidfd, or by PID without one. 0, -ESRCH when gone, -errno. */
int proc_signal(int pidfd, pid_t pid, int sig);

/* The NUL-separated command line of pid (at most 1 MiB), NUL-terminated once more. */
int proc_cmdline_read(pid_t pid, char **ret, size_t *ret_len);
/* The value of an option in a NUL-separated command line: "NAME V", "NAME=V", or "SHORT V" when
 * short_name is not NULL. NAME is spelled as the program takes it: "--config", "-namespace". */
const char *proc_cmdline_option(const char *cmdline, size_t len, const char *name, const char *short_name);

/* The file name of pid's executable (" (deleted)" cut off); NULL when it has none or is gone. */
char *proc_exe_name(pid_t pid);
/* The first process whose executable's file name is name: 1 and its PID, or 0. */
int proc_find_exe_name(const char *name, pid_t *ret);

/* The systemd unit pid runs in: the last "*.service" component of its cgroup path; NULL if none. */
char *proc_cgroup_unit(pid_t pid);

/* The processes (up to max, in /proc order) holding an fd whose target ("/var/lib/x",
 * "socket:[123]") match() accepts: how many were put in pids, or -errno when /proc cannot be read. */
int proc_fd_holders(bool (*match)(const char *target, const void *userdata), const void *userdata, pid_t *pids,
                    size_t max);
/* The PID of the process that listens on a unix socket path (its listening socket in this network
 * namespace's /proc/net/unix, then an fd pointing at it): 1 and the PID; 0 (and 0) when none;
 * -errno when it cannot tell. */
int proc_socket_listener(const char *path, pid_t *ret);
/* How process pid keeps the tree at abs_path (an absolute path as this process sees it) busy: a
 * static word, "fd" (an open file), "cwd" (its working directory), "root" (its root directory) or
 * "map" (a memory-mapped file, a library or an executable), or NULL when it does not (or is gone).
 * A mount held only by a working directory or a mapping is as busy as one with an open file. */
const char *proc_holds_path(pid_t pid, const char *abs_path);
/* The processes other than this one that hold abs_path, at most max of them, as a list for a
 * message ("1234 (cwd), 5678 (fd)"), or NULL when none does (or out of memory). */
char *proc_path_holders(const char *abs_path, unsigned max);
