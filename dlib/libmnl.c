/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libmnl, loaded on first use: the netlink sockets and attribute helpers of netreset/. */

#include <libmnl/libmnl.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBMNL

/* Missing library: -1 (errno EOPNOTSUPP), NULL, false or 0, as libmnl
 * itself fails; the put helpers do nothing. */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(void *, mnl_attr_get_payload, (const struct nlattr *attr), (attr), NULL) \
        X(uint16_t, mnl_attr_get_payload_len, (const struct nlattr *attr), (attr), 0) \
        X(const char *, mnl_attr_get_str, (const struct nlattr *attr), (attr), NULL) \
        X(uint16_t, mnl_attr_get_type, (const struct nlattr *attr), (attr), 0) \
        X(uint16_t, mnl_attr_get_u16, (const struct nlattr *attr), (attr), 0) \
        X(uint32_t, mnl_attr_get_u32, (const struct nlattr *attr), (attr), 0) \
        X(struct nlattr *, mnl_attr_next, (const struct nlattr *attr), (attr), NULL) \
        X(bool, mnl_attr_ok, (const struct nlattr *attr, int len), (attr, len), false) \
        X(struct nlattr *, mnl_attr_nest_start, (struct nlmsghdr *nlh, uint16_t type), (nlh, type), NULL) \
        V(void, mnl_attr_nest_end, (struct nlmsghdr *nlh, struct nlattr *start), (nlh, start), ) \
        V(void, mnl_attr_put, (struct nlmsghdr *nlh, uint16_t type, size_t len, const void *data), (nlh, type, len, data), ) \
        V(void, mnl_attr_put_strz, (struct nlmsghdr *nlh, uint16_t type, const char *data), (nlh, type, data), ) \
        V(void, mnl_attr_put_u32, (struct nlmsghdr *nlh, uint16_t type, uint32_t data), (nlh, type, data), ) \
        V(void, mnl_attr_put_u64, (struct nlmsghdr *nlh, uint16_t type, uint64_t data), (nlh, type, data), ) \
        X(int, mnl_attr_validate, (const struct nlattr *attr, enum mnl_attr_data_type type), (attr, type), -1) \
        X(void *, mnl_nlmsg_get_payload, (const struct nlmsghdr *nlh), (nlh), NULL) \
        X(size_t, mnl_nlmsg_get_payload_len, (const struct nlmsghdr *nlh), (nlh), 0) \
        X(void *, mnl_nlmsg_get_payload_offset, (const struct nlmsghdr *nlh, size_t offset), (nlh, offset), NULL) \
        X(void *, mnl_nlmsg_get_payload_tail, (const struct nlmsghdr *nlh), (nlh), NULL) \
        X(struct nlmsghdr *, mnl_nlmsg_next, (const struct nlmsghdr *nlh, int *len), (nlh, len), NULL) \
        X(bool, mnl_nlmsg_ok, (const struct nlmsghdr *nlh, int len), (nlh, len), false) \
        X(void *, mnl_nlmsg_put_extra_header, (struct nlmsghdr *nlh, size_t size), (nlh, size), NULL) \
        X(struct nlmsghdr *, mnl_nlmsg_put_header, (void *buf), (buf), NULL) \
        X(int, mnl_socket_bind, (struct mnl_socket *nl, unsigned int groups, pid_t pid), (nl, groups, pid), -1) \
        X(int, mnl_socket_close, (struct mnl_socket *nl), (nl), -1) \
        X(int, mnl_socket_get_fd, (const struct mnl_socket *nl), (nl), -1) \
        X(unsigned int, mnl_socket_get_portid, (const struct mnl_socket *nl), (nl), 0) \
        X(struct mnl_socket *, mnl_socket_open2, (int bus, int flags), (bus, flags), NULL) \
        X(ssize_t, mnl_socket_recvfrom, (const struct mnl_socket *nl, void *buf, size_t siz), (nl, buf, siz), -1) \
        X(ssize_t, mnl_socket_sendto, (const struct mnl_socket *nl, const void *req, size_t siz), (nl, req, siz), -1) \
        X(int, mnl_socket_setsockopt, (const struct mnl_socket *nl, int type, void *buf, socklen_t len), (nl, type, buf, len), -1)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libmnl, "libmnl", SYMBOLS, "libmnl.so.0");
DLIB_FORWARDERS(SYMBOLS)
