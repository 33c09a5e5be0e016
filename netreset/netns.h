/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Named network namespaces (ip netns): listing, deleting the name, finding processes still inside. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The directories named namespaces live in: /run/netns, plus /var/run/netns when it resolves to a
 * different directory. Returns a NULL-terminated vector (at least /run/netns). */
int netns_dirs(char ***ret);

/* The names in dir matching an fnmatch(3) glob, sorted; an empty vector when dir is missing. */
int netns_list(const char *dir, const char *pattern, char ***ret);

/* What "ip netns del" does: lazily unmount the nsfs bind mount(s) at path, then unlink it; but
 * never through a symlink: the directory is opened with O_NOFOLLOW, the name checked through it,
 * only an nsfs mount detached, through a handle on what was checked, and the name unlinked relative
 * to the directory. 1 when something was removed, 0 when nothing was there, -errno (with the reason
 * in *reterr_msg when given: -ELOOP a symlink, -EMEDIUMTYPE another file system mounted there). */
int netns_delete(const char *path, char **reterr_msg);

/* Every process's network namespace, read once from proc_dir ("/proc") for lookups. */
typedef struct NetnsProcs NetnsProcs;
int netns_procs_scan(const char *proc_dir, NetnsProcs **ret);
/* The same from a /proc the caller has read: an empty set, each process's namespace added, then
 * sorted once by netns_procs_seal() before any lookup. */
NetnsProcs *netns_procs_new(void);
int netns_procs_add(NetnsProcs *p, dev_t dev, ino_t ino, pid_t pid);
void netns_procs_seal(NetnsProcs *p);
NetnsProcs *netns_procs_free(NetnsProcs *p);

/* How many processes are inside the namespace bound at path (not following a symlink); the first up
 * to n_pids of them go to pids. -errno when path cannot be opened. */
int netns_procs_inside(const NetnsProcs *p, const char *path, pid_t *pids, size_t n_pids);

/* Is path an nsfs bind mount (a live name) rather than a stale file? 1, 0, or -errno. A symlink is
 * not followed (and so is no live name). */
int netns_is_bound(const char *path);
