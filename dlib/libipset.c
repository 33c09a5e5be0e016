/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libipset, loaded on first use: the ipsets of the firewall phase. */

#include <libipset/ipset.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBIPSET

/* Missing library: NULL or -1 (errno EOPNOTSUPP); the report message is "".
 * .so.13 is the soname of every ipset 7.x release; see dlib/libnftnl.c on later ones. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, ipset_cmd, (struct ipset_session *session, enum ipset_cmd cmd, uint32_t lineno), (session, cmd, lineno), -1) \
        X(int, ipset_commit, (struct ipset_session *session), (session), -1) \
        X(int, ipset_data_set, (struct ipset_data *data, enum ipset_opt opt, const void *value), (data, opt, value), -1) \
        V(void, ipset_envopt_set, (struct ipset_session *session, enum ipset_envopt env), (session, env), ) \
        V(void, ipset_load_types, (void), (), ) \
        X(struct ipset_data *, ipset_session_data, (const struct ipset_session *session), (session), NULL) \
        X(int, ipset_session_fini, (struct ipset_session *session), (session), -1) \
        X(struct ipset_session *, ipset_session_init, (ipset_print_outfn outfn, void *p), (outfn, p), NULL) \
        X(int, ipset_session_output, (struct ipset_session *session, enum ipset_output_mode mode), (session, mode), -1) \
        X(const char *, ipset_session_report_msg, (const struct ipset_session *session), (session), "")
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libipset, "libipset", SYMBOLS, "libipset.so.13");
DLIB_FORWARDERS(SYMBOLS)
