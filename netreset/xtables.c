/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Legacy x_tables through libip4tc/libip6tc: observe a table, then remove owned state (or
 * everything) with one commit per table, under the xtables lock. */

#include <fcntl.h>
#include <libiptc/libip6tc.h>
#include <libiptc/libiptc.h>
#include <linux/netfilter/xt_comment.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/param.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/xtables.h"
#include "string-util.h"
#include "alloc-util.h"
#include "strv.h"
#include "time-util.h"

#define XT_MAX_COMMENTS 4
#define LOCK_RETRY_USEC 20000ULL

/* libip4tc and libip6tc differ only in their names and entry types: one table of functions each. */
typedef struct XtOps {
        const char *names_file;
        struct xtc_handle *(*init)(const char *table);
        void (*free)(struct xtc_handle *h);
        const char *(*first_chain)(struct xtc_handle *h);
        const char *(*next_chain)(struct xtc_handle *h);
        const void *(*first_rule)(const char *chain, struct xtc_handle *h);
        const void *(*next_rule)(const void *prev, struct xtc_handle *h);
        const char *(*get_target)(const void *e, struct xtc_handle *h);
        size_t (*entry_size)(const void *e);
        int (*is_chain)(const char *chain, struct xtc_handle *const h);
        int (*builtin)(const char *chain, struct xtc_handle *const h);
        const char *(*get_policy)(const char *chain, struct xt_counters *c, struct xtc_handle *h);
        int (*delete_num_entry)(const xt_chainlabel chain, unsigned rulenum, struct xtc_handle *h);
        int (*flush_entries)(const xt_chainlabel chain, struct xtc_handle *h);
        int (*delete_chain)(const xt_chainlabel chain, struct xtc_handle *h);
        int (*set_policy)(const xt_chainlabel chain, const xt_chainlabel policy, struct xt_counters *c,
                          struct xtc_handle *h);
        int (*commit)(struct xtc_handle *h);
        const char *(*strerror)(int err);
} XtOps;

static const void *ip4_first_rule(const char *chain, struct xtc_handle *h) {
        return iptc_first_rule(chain, h);
}
static const void *ip4_next_rule(const void *prev, struct xtc_handle *h) {
        return iptc_next_rule(prev, h);
}
static const char *ip4_get_target(const void *e, struct xtc_handle *h) {
        return iptc_get_target(e, h);
}
static size_t ip4_entry_size(const void *e) {
        return ((const struct ipt_entry *) e)->next_offset;
}
static const void *ip6_first_rule(const char *chain, struct xtc_handle *h) {
        return ip6tc_first_rule(chain, h);
}
static const void *ip6_next_rule(const void *prev, struct xtc_handle *h) {
        return ip6tc_next_rule(prev, h);
}
static const char *ip6_get_target(const void *e, struct xtc_handle *h) {
        return ip6tc_get_target(e, h);
}
static size_t ip6_entry_size(const void *e) {
        return ((const struct ip6t_entry *) e)->next_offset;
}

static const XtOps ip4_ops = {
        "/proc/net/ip_tables_names",
        iptc_init,
        iptc_free,
        iptc_first_chain,
        iptc_next_chain,
        ip4_first_rule,
        ip4_next_rule,
        ip4_get_target,
        ip4_entry_size,
        iptc_is_chain,
        iptc_builtin,
        iptc_get_policy,
        iptc_delete_num_entry,
        iptc_flush_entries,
        iptc_delete_chain,
        iptc_set_policy,
        iptc_commit,
        iptc_strerror,
};

static const XtOps ip6_ops = {
        "/proc/net/ip6_tables_names",
        ip6tc_init,
        ip6tc_free,
        ip6tc_first_chain,
        ip6tc_next_chain,
        ip6_first_rule,
        ip6_next_rule,
        ip6_get_target,
        ip6_entry_size,
        ip6tc_is_chain,
        ip6tc_builtin,
        ip6tc_get_policy,
        ip6tc_delete_num_entry,
        ip6tc_flush_entries,
        ip6tc_delete_chain,
        ip6tc_set_policy,
        ip6tc_commit,
        ip6tc_strerror,
};

static const XtOps *ops_for(int family) {
        return family == AF_INET ? &ip4_ops : family == AF_INET6 ? &ip6_ops : NULL;
}

static const char *family_name(int family) {
        return family == AF_INET6 ? "ip6" : "ip";
}

/* One table name per line. */
static int read_names(FILE *f, char ***ret) {
        cleanup_strv char **l = calloc(1, sizeof(char *));
        cleanup_free char *line = NULL;
        size_t cap = 0;

        if (!l)
                return -ENOMEM;
        while (f && getline(&line, &cap, f) > 0) {
                line[strcspn(line, "\n")] = '\0';
                if (!isempty(line) && strv_extend(&l, line) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int xt_tables_list(int family, char ***ret) {
        const XtOps *ops = ops_for(family);
        cleanup_fclose FILE *f = NULL;

        if (!ops)
                return -EAFNOSUPPORT;
        f = fopen(ops->names_file, "re");
        if (!f && errno != ENOENT)
                return negative_errno();
        /* No file: no legacy x_tables in this kernel, an empty list. */
        return read_names(f, ret);
}

int xt_lock_acquire(const char *path, unsigned wait_sec, int *ret_fd) {
        usec_t deadline = usec_add(now(CLOCK_MONOTONIC), (usec_t) wait_sec * USEC_PER_SEC);
        cleanup_close int fd = -EBADF;
        struct stat st;

        if (!path)
                path = secure_getenv("XTABLES_LOCKFILE") ?: XT_LOCK_PATH;
        /* Read-only, as iptables opens it: flock needs no write access, and nothing is ever written into
         * whatever that name is. O_NONBLOCK: a FIFO there must not hang the run. */
        fd = open(path, O_CREAT | O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        for (;;) {
                usec_t t;

                if (flock(fd, LOCK_EX | LOCK_NB) >= 0) {
                        *ret_fd = TAKE_FD(fd);
                        return 0;
                }
                if (errno != EWOULDBLOCK)
                        return negative_errno();
                if (wait_sec == 0)
                        return -EWOULDBLOCK;
                t = now(CLOCK_MONOTONIC);
                if (t >= deadline)
                        return -ETIMEDOUT;
                (void) usleep((useconds_t) MIN(LOCK_RETRY_USEC, deadline - t));
        }
}

/* Where the matches of an entry start and end (its target's offset), or false for a bad entry. */
static bool entry_matches(int family, const void *entry, size_t size, size_t *ret_start, size_t *ret_end) {
        size_t start, end;

        if (family == AF_INET && size >= sizeof(struct ipt_entry)) {
                start = sizeof(struct ipt_entry);
                end = ((const struct ipt_entry *) entry)->target_offset;
        } else if (family == AF_INET6 && size >= sizeof(struct ip6t_entry)) {
                start = sizeof(struct ip6t_entry);
                end = ((const struct ip6t_entry *) entry)->target_offset;
        } else
                return false;
        if (end < start || end > size)
                return false;
        *ret_start = start;
        *ret_end = end;
        return true;
}

bool xt_entry_owned(int family, const void *entry, size_t size, const char *jump_target, const FwClass *cls) {
        const char *comments[XT_MAX_COMMENTS];
        size_t n = 0, off, end;

        if (jump_target && fwclass_chain_owned(cls, jump_target))
                return true;
        if (!entry_matches(family, entry, size, &off, &end))
                return false;
        while (off + sizeof(struct xt_entry_match) <= end && n < XT_MAX_COMMENTS) {
                const struct xt_entry_match *m = (const void *) ((const char *) entry + off);
                const struct xt_comment_info *ci = (const void *) m->data;

                if (m->u.match_size < sizeof(*m) || off + m->u.match_size > end)
                        break;
                if (strncmp(m->u.user.name, "comment", sizeof(m->u.user.name)) == 0 &&
                    m->u.match_size >= sizeof(*m) + sizeof(*ci) && memchr(ci->comment, '\0', sizeof(ci->comment)))
                        comments[n++] = ci->comment;
                off += m->u.match_size;
        }
        return fwclass_rule_owned(cls, NULL, comments, n);
}

/* ---- one table, observed and classified ---- */

typedef struct XtChain {
        char *name;
        bool builtin;
        bool removed; /* the chain goes (owned, or any user chain in flush mode) */
        bool policy_reset;
        unsigned n_rules;
        unsigned *owned; /* 1-based numbers of rules to delete from a chain that stays */
        size_t n_owned, allocated_owned;
} XtChain;

struct XtTable {
        int family;
        char *name;
        FwMode mode;
        const XtOps *ops;
        struct xtc_handle *h;
        XtChain *chains;
        size_t n_chains, allocated_chains;
        FwCounts counts;
};

static void xt_table_done(XtTable *t) {
        for (size_t i = 0; i < t->n_chains; i++) {
                free(t->chains[i].name);
                free(t->chains[i].owned);
        }
        free(t->chains);
        if (t->h)
                t->ops->free(t->h);
        free(t->name);
        *t = (XtTable) {};
}

XtTable *xt_table_free(XtTable *t) {
        if (t)
                xt_table_done(t);
        return mfree(t);
}

static int chains_collect(XtTable *t) {
        size_t cap = 0;

        /* The chain iterator lives in the handle: copy the names before asking anything else. */
        for (const char *c = t->ops->first_chain(t->h); c; c = t->ops->next_chain(t->h)) {
                if (GREEDY_REALLOC(t->chains, cap, t->n_chains + 1) < 0)
                        return -ENOMEM;
                t->chains[t->n_chains] = (XtChain) { .name = strdup(c) };
                if (!t->chains[t->n_chains++].name)
                        return -ENOMEM;
        }
        return 0;
}

static int chain_owned_rule(XtChain *c, unsigned num) {
        if (GREEDY_REALLOC(c->owned, c->allocated_owned, c->n_owned + 1) < 0)
                return -ENOMEM;
        c->owned[c->n_owned++] = num;
        return 0;
}

static int chain_classify(XtTable *t, int family, XtChain *c, const FwClass *cls, FwMode mode) {
        struct xt_counters counters;
        const char *policy;
        unsigned num = 0;

        c->builtin = t->ops->builtin(c->name, t->h);
        c->removed = !c->builtin && (mode == FW_MODE_FLUSH || fwclass_chain_owned(cls, c->name));
        if (c->builtin && mode == FW_MODE_FLUSH) {
                policy = t->ops->get_policy(c->name, &counters, t->h);
                c->policy_reset = policy && !streq(policy, IPTC_LABEL_ACCEPT);
        }
        for (const void *e = t->ops->first_rule(c->name, t->h); e; e = t->ops->next_rule(e, t->h)) {
                bool gone = c->removed || mode == FW_MODE_FLUSH;

                num++;
                /* Only the rules of a chain that stays need a look (a chain lookup per rule). */
                if (!gone) {
                        const char *target = t->ops->get_target(e, t->h);
                        const char *jump = target && t->ops->is_chain(target, t->h) ? target : NULL;

                        gone = xt_entry_owned(family, e, t->ops->entry_size(e), jump, cls);
                        if (gone && chain_owned_rule(c, num) < 0)
                                return -ENOMEM;
                }
                t->counts.owned_rules += gone;
                t->counts.kept_rules += !gone;
        }
        c->n_rules = num;
        t->counts.rules += num;
        t->counts.chains += !c->builtin;
        t->counts.owned_chains += c->removed;
        t->counts.policies += c->policy_reset;
        return 0;
}

static int xt_table_load(int family, const char *table, const FwClass *cls, FwMode mode, XtTable *t,
                         char **reterr_msg) {
        int r;

        *t = (XtTable) { .family = family, .mode = mode, .ops = ops_for(family), .name = strdup(table) };
        if (!t->ops)
                return -EAFNOSUPPORT;
        if (!t->name)
                return -ENOMEM;
        t->h = t->ops->init(table);
        if (!t->h) {
                r = negative_errno();
                return set_errmsg(reterr_msg, r, "cannot read legacy table %s %s: %s", family_name(family), table,
                                  t->ops->strerror(-r));
        }
        r = chains_collect(t);
        for (size_t i = 0; i < t->n_chains && r >= 0; i++)
                r = chain_classify(t, family, &t->chains[i], cls, mode);
        return r;
}

int xt_table_observe(int family, const char *table, const FwClass *cls, FwMode mode, XtTable **ret, char **reterr_msg) {
        XtTable *t;
        int r;

        t = calloc(1, sizeof(XtTable));
        if (!t)
                return -ENOMEM;
        r = xt_table_load(family, table, cls, mode, t, reterr_msg);
        if (r < 0) {
                xt_table_free(t);
                return r;
        }
        /* Only flush mode commits what it observed (xt_table_reset()); owned mode reads the table
         * again under the lock, and the next table's read reuses this copy's memory. */
        if (mode != FW_MODE_FLUSH) {
                t->ops->free(t->h);
                t->h = NULL;
        }
        *ret = t;
        return 0;
}

void xt_table_get_counts(const XtTable *t, FwCounts *ret) {
        *ret = t->counts;
}

int xt_table_count(int family, const char *table, const FwClass *cls, FwMode mode, FwCounts *ret, char **reterr_msg) {
        XtTable t;
        int r;

        r = xt_table_load(family, table, cls, mode, &t, reterr_msg);
        if (r >= 0)
                *ret = t.counts;
        xt_table_done(&t);
        return r;
}

/* ---- changing it ---- */

static int step_failed(const XtTable *t, int family, const char *table, const char *what, const char *chain,
                       char **reterr_msg) {
        int r = negative_errno();

        return set_errmsg(reterr_msg, r, "%s %s in legacy table %s %s: %s", what, chain, family_name(family), table,
                          t->ops->strerror(-r));
}

static int table_edit_owned(XtTable *t, int family, const char *table, char **reterr_msg) {
        /* From the last rule up, so that the numbers of the rules still to delete stay valid. Then
         * empty every owned chain before deleting any, so no jump between them is left. */
        for (size_t i = 0; i < t->n_chains; i++)
                for (size_t k = t->chains[i].n_owned; k > 0; k--)
                        if (!t->ops->delete_num_entry(t->chains[i].name, t->chains[i].owned[k - 1] - 1, t->h))
                                return step_failed(t, family, table, "deleting a rule of chain", t->chains[i].name,
                                                   reterr_msg);
        for (size_t i = 0; i < t->n_chains; i++)
                if (t->chains[i].removed && !t->ops->flush_entries(t->chains[i].name, t->h))
                        return step_failed(t, family, table, "flushing chain", t->chains[i].name, reterr_msg);
        for (size_t i = 0; i < t->n_chains; i++)
                if (t->chains[i].removed && !t->ops->delete_chain(t->chains[i].name, t->h))
                        return step_failed(t, family, table, "deleting chain", t->chains[i].name, reterr_msg);
        return 0;
}

static int table_edit_flush(XtTable *t, int family, const char *table, char **reterr_msg) {
        for (size_t i = 0; i < t->n_chains; i++)
                if (t->chains[i].policy_reset && !t->ops->set_policy(t->chains[i].name, IPTC_LABEL_ACCEPT, NULL, t->h))
                        return step_failed(t, family, table, "setting policy ACCEPT on chain", t->chains[i].name,
                                           reterr_msg);
        for (size_t i = 0; i < t->n_chains; i++)
                if (!t->ops->flush_entries(t->chains[i].name, t->h))
                        return step_failed(t, family, table, "flushing chain", t->chains[i].name, reterr_msg);
        for (size_t i = 0; i < t->n_chains; i++)
                if (!t->chains[i].builtin && !t->ops->delete_chain(t->chains[i].name, t->h))
                        return step_failed(t, family, table, "deleting chain", t->chains[i].name, reterr_msg);
        return 0;
}

/* Edit the loaded table and commit it. 0: nothing to do, 1: committed. */
static int table_edit_commit(XtTable *t, char **reterr_msg) {
        int r;

        if (!fw_counts_any(&t->counts))
                return 0;
        r = t->mode == FW_MODE_FLUSH ? table_edit_flush(t, t->family, t->name, reterr_msg)
                                     : table_edit_owned(t, t->family, t->name, reterr_msg);
        if (r < 0)
                return r;
        if (!t->ops->commit(t->h)) {
                r = negative_errno();
                /* EAGAIN without a message: the caller may load the table again and retry. */
                if (r == -EAGAIN)
                        return r;
                return set_errmsg(reterr_msg, r, "committing legacy table %s %s: %s", family_name(t->family), t->name,
                                  t->ops->strerror(-r));
        }
        return 1;
}

int xt_table_reset(int family, const char *table, const FwClass *cls, FwMode mode, XtTable **observed,
                   FwCounts *ret_done, char **reterr_msg) {
        XtTable *obs = observed ? TAKE_PTR(*observed) : NULL;
        XtTable t = {};
        int r = -EAGAIN;

        if (ret_done)
                *ret_done = (FwCounts) {};
        /* Flush mode's result does not depend on what the table holds: the observation is reused.
         * Its commit carries the rule count it saw; the kernel refuses it (EAGAIN) if the table has
         * changed size since, and the table is then read again. Owned mode reads under the lock. */
        if (obs && mode == FW_MODE_FLUSH && obs->mode == FW_MODE_FLUSH && obs->family == family &&
            streq(obs->name, table)) {
                r = table_edit_commit(obs, reterr_msg);
                if (r >= 0 && ret_done)
                        *ret_done = obs->counts;
        }
        xt_table_free(obs);
        if (r != -EAGAIN)
                return r;
        r = xt_table_load(family, table, cls, mode, &t, reterr_msg);
        if (r >= 0)
                r = table_edit_commit(&t, reterr_msg);
        if (r == -EAGAIN)
                r = set_errmsg(reterr_msg, r, "legacy table %s %s changed while it was committed, try again",
                               family_name(family), table);
        if (r > 0 && ret_done)
                *ret_done = t.counts;
        xt_table_done(&t);
        return r;
}
