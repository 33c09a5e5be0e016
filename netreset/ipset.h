/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ipsets through libipset: list them, and remove named ones without forcing a set still in use. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct IpsetInfo {
        char *name;
        char *type;          /* "hash:ip", "list:set", ... */
        uint32_t references; /* rules (iptables -m set, SET target) and list:sets that hold it */
        uint32_t entries;
} IpsetInfo;

/* Every set of this network namespace, with its header. */
int ipset_list_sets(IpsetInfo **ret, size_t *ret_n, char **reterr_msg);
IpsetInfo *ipset_infos_free(IpsetInfo *l, size_t n);

/* The header of one set. -ENOENT when there is no such set. */
int ipset_get_set(const char *name, IpsetInfo *ret, char **reterr_msg);
void ipset_info_done(IpsetInfo *i);

/* Flush, then destroy, one set; only when nothing references it (a referenced set is left as it
 * is, not even flushed). 0: no such set, 1: destroyed, -EBUSY: in use by a kernel component (a
 * rule or a list:set that stays), other -errno with libipset's text in *reterr_msg. */
int ipset_remove_set(const char *name, char **reterr_msg);

/* Remove the n named sets in the order that lets them go: list:sets first (their members hold a
 * reference from them), then the others. results[i] and msgs[i] (malloc'd or NULL; msgs may be
 * NULL) get each set's ipset_remove_set() outcome. Returns the first failure, or 0. */
int ipset_remove_sets(char *const *names, size_t n, int *results, char **msgs);
