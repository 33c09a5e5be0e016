/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnftnl, loaded on first use: nf_tables objects of the firewall phase. */

#include <sys/uio.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBNFTNL

/* Missing library: NULL, -1 (errno EOPNOTSUPP), false or 0; frees do nothing.
 * .so.11 is the only soname libnftnl has had since 2019 (1.1.x to 1.2.x): a later soname would
 * mean a changed ABI, so it is added here when it exists and has been tried, never guessed. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(struct nftnl_batch *, nftnl_batch_alloc, (uint32_t pg_size, uint32_t pg_overrun_size), (pg_size, pg_overrun_size), NULL) \
        X(void *, nftnl_batch_buffer, (struct nftnl_batch *batch), (batch), NULL) \
        X(struct nlmsghdr *, nftnl_batch_end, (char *buf, uint32_t seq), (buf, seq), NULL) \
        V(void, nftnl_batch_free, (struct nftnl_batch *batch), (batch), ) \
        V(void, nftnl_batch_iovec, (struct nftnl_batch *batch, struct iovec *iov, uint32_t iovlen), (batch, iov, iovlen), ) \
        X(int, nftnl_batch_iovec_len, (struct nftnl_batch *batch), (batch), -1) \
        X(int, nftnl_batch_update, (struct nftnl_batch *batch), (batch), -1) \
        X(struct nftnl_chain *, nftnl_chain_alloc, (void), (), NULL) \
        V(void, nftnl_chain_free, (const struct nftnl_chain *obj), (obj), ) \
        X(const char *, nftnl_chain_get_str, (const struct nftnl_chain *c, uint16_t attr), (c, attr), NULL) \
        X(uint32_t, nftnl_chain_get_u32, (const struct nftnl_chain *c, uint16_t attr), (c, attr), 0) \
        X(bool, nftnl_chain_is_set, (const struct nftnl_chain *c, uint16_t attr), (c, attr), false) \
        X(int, nftnl_chain_nlmsg_parse, (const struct nlmsghdr *nlh, struct nftnl_chain *t), (nlh, t), -1) \
        X(const void *, nftnl_expr_get, (const struct nftnl_expr *expr, uint16_t type, uint32_t *data_len), (expr, type, data_len), NULL) \
        X(const char *, nftnl_expr_get_str, (const struct nftnl_expr *expr, uint16_t type), (expr, type), NULL) \
        X(uint32_t, nftnl_expr_get_u32, (const struct nftnl_expr *expr, uint16_t type), (expr, type), 0) \
        X(bool, nftnl_expr_is_set, (const struct nftnl_expr *expr, uint16_t type), (expr, type), false) \
        X(struct nftnl_expr_iter *, nftnl_expr_iter_create, (const struct nftnl_rule *r), (r), NULL) \
        V(void, nftnl_expr_iter_destroy, (struct nftnl_expr_iter *iter), (iter), ) \
        X(struct nftnl_expr *, nftnl_expr_iter_next, (struct nftnl_expr_iter *iter), (iter), NULL) \
        X(struct nftnl_gen *, nftnl_gen_alloc, (void), (), NULL) \
        V(void, nftnl_gen_free, (const struct nftnl_gen *obj), (obj), ) \
        X(uint32_t, nftnl_gen_get_u32, (const struct nftnl_gen *gen, uint16_t attr), (gen, attr), 0) \
        X(int, nftnl_gen_nlmsg_parse, (const struct nlmsghdr *nlh, struct nftnl_gen *gen), (nlh, gen), -1) \
        X(struct nlmsghdr *, nftnl_nlmsg_build_hdr, (char *buf, uint16_t type, uint16_t family, uint16_t flags, uint32_t seq), (buf, type, family, flags, seq), NULL) \
        X(struct nftnl_rule *, nftnl_rule_alloc, (void), (), NULL) \
        V(void, nftnl_rule_free, (const struct nftnl_rule *obj), (obj), ) \
        X(const void *, nftnl_rule_get_data, (const struct nftnl_rule *r, uint16_t attr, uint32_t *data_len), (r, attr, data_len), NULL) \
        X(const char *, nftnl_rule_get_str, (const struct nftnl_rule *r, uint16_t attr), (r, attr), NULL) \
        X(uint64_t, nftnl_rule_get_u64, (const struct nftnl_rule *r, uint16_t attr), (r, attr), 0) \
        X(bool, nftnl_rule_is_set, (const struct nftnl_rule *r, uint16_t attr), (r, attr), false) \
        X(int, nftnl_rule_nlmsg_parse, (const struct nlmsghdr *nlh, struct nftnl_rule *t), (nlh, t), -1) \
        X(struct nftnl_table *, nftnl_table_alloc, (void), (), NULL) \
        V(void, nftnl_table_free, (const struct nftnl_table *obj), (obj), ) \
        X(const char *, nftnl_table_get_str, (const struct nftnl_table *t, uint16_t attr), (t, attr), NULL) \
        X(int, nftnl_table_nlmsg_parse, (const struct nlmsghdr *nlh, struct nftnl_table *t), (nlh, t), -1) \
        X(void *, nftnl_udata_get, (const struct nftnl_udata *attr), (attr), NULL) \
        X(uint8_t, nftnl_udata_len, (const struct nftnl_udata *attr), (attr), 0) \
        X(int, nftnl_udata_parse, (const void *data, uint32_t data_len, nftnl_udata_cb_t cb, void *cb_data), (data, data_len, cb, cb_data), -1) \
        X(uint8_t, nftnl_udata_type, (const struct nftnl_udata *attr), (attr), 0)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libnftnl, "libnftnl", SYMBOLS, "libnftnl.so.11");
DLIB_FORWARDERS(SYMBOLS)
