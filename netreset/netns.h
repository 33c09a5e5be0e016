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

/* What "ip netns del" does: lazily unmount the nsfs bind mount at path, then unlink it. 1 when
 * something was removed, 0 when nothing was there, -errno. */
int netns_delete(const char *path);

/* Every process's network namespace, read once from proc_dir ("/proc") for lookups. */
typedef struct NetnsProcs NetnsProcs;
int netns_procs_scan(const char *proc_dir, NetnsProcs **ret);
NetnsProcs *netns_procs_free(NetnsProcs *p);

/* How many processes are inside the namespace bound at path; the first up to n_pids of them go to
 * pids. -errno when path cannot be stat'ed. */
int netns_procs_inside(const NetnsProcs *p, const char *path, pid_t *pids, size_t n_pids);

/* Is path an nsfs bind mount (a live name) rather than a stale file? 1, 0, or -errno. */
int netns_is_bound(const char *path);
