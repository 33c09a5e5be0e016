/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libip6tc, loaded on first use: the legacy ip6tables tables of the firewall phase. */

#include <libiptc/libip6tc.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBIP6TC

/* Missing library: 0 (libiptc's failure, errno EOPNOTSUPP) or NULL;
 * ip6tc_strerror() names the missing library. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, ip6tc_builtin, (const char *chain, struct xtc_handle *const handle), (chain, handle), 0) \
        X(int, ip6tc_commit, (struct xtc_handle *handle), (handle), 0) \
        X(int, ip6tc_delete_chain, (const xt_chainlabel chain, struct xtc_handle *handle), (chain, handle), 0) \
        X(int, ip6tc_delete_num_entry, (const xt_chainlabel chain, unsigned int rulenum, struct xtc_handle *handle), (chain, rulenum, handle), 0) \
        X(const char *, ip6tc_first_chain, (struct xtc_handle *handle), (handle), NULL) \
        X(const struct ip6t_entry *, ip6tc_first_rule, (const char *chain, struct xtc_handle *handle), (chain, handle), NULL) \
        X(int, ip6tc_flush_entries, (const xt_chainlabel chain, struct xtc_handle *handle), (chain, handle), 0) \
        V(void, ip6tc_free, (struct xtc_handle *h), (h), ) \
        X(const char *, ip6tc_get_policy, (const char *chain, struct xt_counters *counters, struct xtc_handle *handle), (chain, counters, handle), NULL) \
        X(const char *, ip6tc_get_target, (const struct ip6t_entry *e, struct xtc_handle *handle), (e, handle), NULL) \
        X(struct xtc_handle *, ip6tc_init, (const char *tablename), (tablename), NULL) \
        X(int, ip6tc_is_chain, (const char *chain, struct xtc_handle *const handle), (chain, handle), 0) \
        X(const char *, ip6tc_next_chain, (struct xtc_handle *handle), (handle), NULL) \
        X(const struct ip6t_entry *, ip6tc_next_rule, (const struct ip6t_entry *prev, struct xtc_handle *handle), (prev, handle), NULL) \
        X(int, ip6tc_set_policy, (const xt_chainlabel chain, const xt_chainlabel policy, struct xt_counters *counters, struct xtc_handle *handle), (chain, policy, counters, handle), 0) \
        X(const char *, ip6tc_strerror, (int err), (err), "libip6tc is not loaded")
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libip6tc, "libip6tc", SYMBOLS, "libip6tc.so.2");
DLIB_FORWARDERS(SYMBOLS)
