/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ipsets through libipset: list them, and remove named ones without forcing a set still in use.
 *
 * libipset reports errors as text only, so outcomes are decided by looking again: after a failed
 * destroy, a set that is gone was removed by someone else, one with references is in use. */

#include <libipset/ipset.h>
#include <libipset/session.h>
#include <libipset/types.h>
#include <stdarg.h>

#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/ipset.h"
#include "string-util.h"

/* What libipset prints for a LIST, gathered in memory. */
typedef struct OutBuf {
        char *data;
        size_t len, allocated;
        int error;
} OutBuf;

_printf_(3, 4) static int outbuf_print(struct ipset_session *session, void *p, const char *fmt, ...) {
        OutBuf *o = p;
        va_list ap;
        char *s;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0) {
                o->error = -ENOMEM;
                return -1;
        }
        if (GREEDY_REALLOC(o->data, o->allocated, o->len + (size_t) k + 1) < 0) {
                free(s);
                o->error = -ENOMEM;
                return -1;
        }
        memcpy(o->data + o->len, s, (size_t) k + 1);
        o->len += (size_t) k;
        free(s);
        return k;
}

static void load_types_once(void) {
        static bool loaded = false;

        if (!loaded) {
                ipset_load_types();
                loaded = true;
        }
}

static void session_finip(struct ipset_session **s) {
        if (*s)
                (void) ipset_session_fini(*s);
}

static int session_new(OutBuf *o, struct ipset_session **ret) {
        load_types_once();
        *ret = ipset_session_init(outbuf_print, o);
        return *ret ? 0 : -ENOMEM;
}

static int session_failed(struct ipset_session *s, int r, char **reterr_msg) {
        const char *m = ipset_session_report_msg(s);

        return set_errmsg(reterr_msg, r, "%s", isempty(m) ? strerror(-r) : m);
}

void ipset_info_done(IpsetInfo *i) {
        free(i->name);
        free(i->type);
        *i = (IpsetInfo) {};
}

IpsetInfo *ipset_infos_free(IpsetInfo *l, size_t n) {
        for (size_t i = 0; l && i < n; i++)
                ipset_info_done(&l[i]);
        return mfree(l);
}

static int parse_u32(const char *s, uint32_t *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || end == s || v > UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

/* One "Key: value" line of the plain header listing into the current set. */
static int header_line(const char *line, IpsetInfo **l, size_t *n) {
        const char *v;

        if ((v = startswith(line, "Name: "))) {
                IpsetInfo *m = reallocarray(*l, *n + 1, sizeof(IpsetInfo));

                if (!m)
                        return -ENOMEM;
                *l = m;
                m[*n] = (IpsetInfo) { .name = strdup(v) };
                if (!m[(*n)++].name)
                        return -ENOMEM;
                return 0;
        }
        if (*n == 0)
                return 0;
        if ((v = startswith(line, "Type: "))) {
                free((*l)[*n - 1].type);
                (*l)[*n - 1].type = strdup(v);
                return (*l)[*n - 1].type ? 0 : -ENOMEM;
        }
        if ((v = startswith(line, "References: ")))
                return parse_u32(v, &(*l)[*n - 1].references);
        if ((v = startswith(line, "Number of entries: ")))
                return parse_u32(v, &(*l)[*n - 1].entries);
        return 0;
}

static int parse_listing(char *text, IpsetInfo **ret, size_t *ret_n) {
        IpsetInfo *l = NULL;
        size_t n = 0;
        char *saveptr = NULL;
        int r = 0;

        for (char *line = strtok_r(text, "\n", &saveptr); line && r >= 0; line = strtok_r(NULL, "\n", &saveptr))
                r = header_line(line, &l, &n);
        if (r < 0) {
                ipset_infos_free(l, n);
                return r;
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

/* LIST with headers only (ipset list -t), of one set or (name NULL) all. */
static int list_headers(const char *name, IpsetInfo **ret, size_t *ret_n, char **reterr_msg) {
        CLEANUP(session_finip) struct ipset_session *s = NULL;
        OutBuf o = {};
        int r;

        r = session_new(&o, &s);
        if (r < 0)
                return r;
        ipset_envopt_set(s, IPSET_ENV_LIST_HEADER);
        r = ipset_session_output(s, IPSET_LIST_PLAIN);
        if (r >= 0 && name)
                r = ipset_session_data_set(s, IPSET_SETNAME, name);
        if (r >= 0)
                r = ipset_cmd(s, IPSET_CMD_LIST, 0);
        if (r >= 0)
                r = ipset_commit(s);
        if (r < 0 || o.error < 0) {
                free(o.data);
                return o.error < 0 ? o.error : session_failed(s, -EIO, reterr_msg);
        }
        r = parse_listing(o.data ?: (char[]) { "" }, ret, ret_n);
        free(o.data);
        return r;
}

int ipset_list_sets(IpsetInfo **ret, size_t *ret_n, char **reterr_msg) {
        return list_headers(NULL, ret, ret_n, reterr_msg);
}

int ipset_get_set(const char *name, IpsetInfo *ret, char **reterr_msg) {
        IpsetInfo *l = NULL;
        size_t n = 0;
        int r;

        /* Listing a missing set is an error too: tell it apart by listing all. */
        r = list_headers(NULL, &l, &n, reterr_msg);
        if (r < 0)
                return r;
        r = -ENOENT;
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].name, name)) {
                        *ret = l[i];
                        l[i] = (IpsetInfo) {};
                        r = 0;
                        break;
                }
        ipset_infos_free(l, n);
        return r;
}

static int set_cmd(const char *name, enum ipset_cmd cmd, char **reterr_msg) {
        CLEANUP(session_finip) struct ipset_session *s = NULL;
        OutBuf o = {};
        int r;

        r = session_new(&o, &s);
        if (r < 0)
                return r;
        r = ipset_session_data_set(s, IPSET_SETNAME, name);
        if (r >= 0)
                r = ipset_cmd(s, cmd, 0);
        free(o.data);
        return r < 0 ? session_failed(s, -EIO, reterr_msg) : 0;
}

static int busy(const IpsetInfo *i, char **reterr_msg) {
        return set_errmsg(reterr_msg, -EBUSY,
                          "in use by a kernel component (%u reference%s: a rule or a list:set still "
                          "refers to it), left as it is, not flushed",
                          i->references, i->references == 1 ? "" : "s");
}

int ipset_remove_set(const char *name, char **reterr_msg) {
        IpsetInfo info = {};
        cleanup_free char *msg = NULL;
        int r;

        r = ipset_get_set(name, &info, reterr_msg);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (info.references > 0) {
                r = busy(&info, reterr_msg);
                goto finish;
        }
        r = set_cmd(name, IPSET_CMD_FLUSH, &msg);
        if (r >= 0)
                r = set_cmd(name, IPSET_CMD_DESTROY, &msg);
        if (r >= 0) {
                r = 1;
                goto finish;
        }
        /* Look again to say why: gone meanwhile, or taken by a rule in between. */
        ipset_info_done(&info);
        if (ipset_get_set(name, &info, NULL) == -ENOENT)
                r = 0;
        else if (info.references > 0)
                r = busy(&info, reterr_msg);
        else
                r = set_errmsg(reterr_msg, r, "%s", strna(msg));
finish:
        ipset_info_done(&info);
        return r;
}

static bool is_list_set(const IpsetInfo *l, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].name, name))
                        return streq_ptr(l[i].type, "list:set");
        return false;
}

int ipset_remove_sets(char *const *names, size_t n, int *results, char **msgs) {
        IpsetInfo *l = NULL;
        size_t n_sets = 0;
        int first = 0;

        (void) ipset_list_sets(&l, &n_sets, NULL);
        /* Two passes: the list:sets, whose members each hold a reference from them, then the rest. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < n; i++) {
                        if (is_list_set(l, n_sets, names[i]) != (pass == 0))
                                continue;
                        if (msgs)
                                msgs[i] = NULL;
                        results[i] = ipset_remove_set(names[i], msgs ? &msgs[i] : NULL);
                        if (results[i] < 0 && first == 0)
                                first = results[i];
                }
        ipset_infos_free(l, n_sets);
        return first;
}
