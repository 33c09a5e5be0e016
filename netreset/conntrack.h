/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Connection tracking entries over nfnetlink_conntrack: count and delete those that touch a set of
 * prefixes (an address of either direction's tuple inside one of them). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netreset/nl.h"

typedef struct CtPrefix {
        int family; /* AF_INET or AF_INET6 */
        uint8_t addr[16];
        uint8_t len; /* prefix length in bits */
} CtPrefix;

/* "10.96.0.0/12", "fd00::/108" or a bare address (a host prefix). -EINVAL otherwise. */
int ct_prefix_parse(const char *s, CtPrefix *ret);
/* Is the address of family (4 or 16 bytes) inside p? */
bool ct_prefix_contains(const CtPrefix *p, int family, const uint8_t *addr);

/* Per-prefix counts are kept for at most this many prefixes. */
#define CT_COUNT_MAX 64

/* One dump of every family's table; with delete, each matching entry is then deleted by its
 * original tuple, zone and id (an entry gone meanwhile is not counted). *ret_n: how many matched
 * (dry run) or were deleted; ret_counts (NULL, or n_p of them, n_p at most CT_COUNT_MAX: -E2BIG):
 * the same per prefix (an entry touching two prefixes counts for both). Returns 0 or -errno with the
 * kernel's extack text in *reterr_msg; the first failed delete is returned after the others were
 * tried. */
int conntrack_flush(NlSocket *nf, const CtPrefix *p, size_t n_p, bool delete, unsigned *ret_n, unsigned *ret_counts,
                    char **reterr_msg);
