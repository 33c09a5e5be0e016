/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Legacy x_tables through libip4tc/libip6tc: observe a table, then remove owned state (or
 * everything) with one commit per table, under the xtables lock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "macro.h"
#include "netreset/fwclass.h"

/* The lock iptables-legacy takes, unless $XTABLES_LOCKFILE names another (as it does for iptables). */
#define XT_LOCK_PATH "/run/xtables.lock"

/* Tables of the legacy backend that exist in this network namespace, read from
 * /proc/net/ip_tables_names (AF_INET) or ip6_tables_names (AF_INET6). Only these may be opened:
 * opening another creates it. An empty list when the file is absent (no legacy x_tables). */
int xt_tables_list(int family, char ***ret);

/* Take the xtables lock with flock(2), retrying for up to wait_sec seconds. Returns 0 with the
 * locked fd (close it to unlock), -EWOULDBLOCK when wait_sec is 0 and another process holds it,
 * -ETIMEDOUT when it is still held after wait_sec, or another -errno. path NULL: the default. */
int xt_lock_acquire(const char *path, unsigned wait_sec, int *ret_fd);

/* One legacy table as observed: libiptc's handle and its classification. */
typedef struct XtTable XtTable;

/* Read and classify table (no lock needed: the kernel hands out a consistent snapshot). */
int xt_table_observe(int family, const char *table, const FwClass *cls, FwMode mode, XtTable **ret, char **reterr_msg);
XtTable *xt_table_free(XtTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(XtTable *, xt_table_free);

/* What resetting the observed table would remove and keep (see FwCounts). */
void xt_table_get_counts(const XtTable *t, FwCounts *ret);

/* xt_table_observe() + xt_table_get_counts(), for a one-off look. */
int xt_table_count(int family, const char *table, const FwClass *cls, FwMode mode, FwCounts *ret, char **reterr_msg);

/* Remove owned state (owned mode: rules that jump or go to an owned chain or carry an owned
 * comment, deleted by number from the end; then owned chains flushed and deleted) or everything
 * (flush mode: built-in chain policies ACCEPT, every chain flushed, every user chain deleted), and
 * commit once. The caller holds the xtables lock. Owned mode reads the table again under it. Flush
 * mode may use *observed (taken and freed; NULL to read now): the outcome does not depend on what
 * the table holds, and a table changed in size meanwhile is read again. Returns 0 when there was
 * nothing to do, 1 when committed (*ret_done says what went), -errno otherwise (nothing committed). */
int xt_table_reset(int family, const char *table, const FwClass *cls, FwMode mode, XtTable **observed,
                   FwCounts *ret_done, char **reterr_msg);

/* Classify one rule outside an owned chain: entry is a struct ipt_entry (AF_INET) or ip6t_entry
 * (AF_INET6) of size bytes; jump_target is the user chain it jumps or goes to (IPT_F_GOTO only
 * changes how it returns, not where it goes), or NULL. Owned when that chain is owned or a
 * "comment" match carries an owned marker. */
bool xt_entry_owned(int family, const void *entry, size_t size, const char *jump_target, const FwClass *cls);
