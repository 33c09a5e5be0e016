/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libip4tc, loaded on first use: the legacy iptables tables of the firewall phase. */

#include <libiptc/libiptc.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBIP4TC

/* Missing library: 0 (libiptc's failure, errno EOPNOTSUPP) or NULL;
 * iptc_strerror() names the missing library. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, iptc_builtin, (const char *chain, struct xtc_handle *const handle), (chain, handle), 0) \
        X(int, iptc_commit, (struct xtc_handle *handle), (handle), 0) \
        X(int, iptc_delete_chain, (const xt_chainlabel chain, struct xtc_handle *handle), (chain, handle), 0) \
        X(int, iptc_delete_num_entry, (const xt_chainlabel chain, unsigned int rulenum, struct xtc_handle *handle), (chain, rulenum, handle), 0) \
        X(const char *, iptc_first_chain, (struct xtc_handle *handle), (handle), NULL) \
        X(const struct ipt_entry *, iptc_first_rule, (const char *chain, struct xtc_handle *handle), (chain, handle), NULL) \
        X(int, iptc_flush_entries, (const xt_chainlabel chain, struct xtc_handle *handle), (chain, handle), 0) \
        V(void, iptc_free, (struct xtc_handle *h), (h), ) \
        X(const char *, iptc_get_policy, (const char *chain, struct xt_counters *counter, struct xtc_handle *handle), (chain, counter, handle), NULL) \
        X(const char *, iptc_get_target, (const struct ipt_entry *e, struct xtc_handle *handle), (e, handle), NULL) \
        X(struct xtc_handle *, iptc_init, (const char *tablename), (tablename), NULL) \
        X(int, iptc_is_chain, (const char *chain, struct xtc_handle *const handle), (chain, handle), 0) \
        X(const char *, iptc_next_chain, (struct xtc_handle *handle), (handle), NULL) \
        X(const struct ipt_entry *, iptc_next_rule, (const struct ipt_entry *prev, struct xtc_handle *handle), (prev, handle), NULL) \
        X(int, iptc_set_policy, (const xt_chainlabel chain, const xt_chainlabel policy, struct xt_counters *counters, struct xtc_handle *handle), (chain, policy, counters, handle), 0) \
        X(const char *, iptc_strerror, (int err), (err), "libip4tc is not loaded")
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libip4tc, "libip4tc", SYMBOLS, "libip4tc.so.2");
DLIB_FORWARDERS(SYMBOLS)
