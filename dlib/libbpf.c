/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libbpf, loaded on first use: the network phase reads and detaches CNI BPF programs with it. */

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "dlib/forward.h"

#define DLIB_THIS DLIB_LIBBPF

/* Missing library: -1 (errno EOPNOTSUPP) or NULL, as libbpf fails; btf__free does nothing. The
 * network phase skips its BPF lines before any of these is called (libraries_plan_missing). */
/* clang-format off */
#define SYMBOLS(X, V, R) \
        X(int, bpf_link_detach, (int link_fd), (link_fd), -1) \
        X(int, bpf_link_get_fd_by_id, (__u32 id), (id), -1) \
        X(int, bpf_link_get_next_id, (__u32 start_id, __u32 *next_id), (start_id, next_id), -1) \
        X(int, bpf_obj_get, (const char *pathname), (pathname), -1) \
        X(int, bpf_obj_get_info_by_fd, (int bpf_fd, void *info, __u32 *info_len), (bpf_fd, info, info_len), -1) \
        X(int, bpf_prog_detach2, (int prog_fd, int attachable_fd, enum bpf_attach_type type), (prog_fd, attachable_fd, type), -1) \
        X(int, bpf_prog_get_fd_by_id, (__u32 id), (id), -1) \
        X(int, bpf_prog_get_next_id, (__u32 start_id, __u32 *next_id), (start_id, next_id), -1) \
        X(int, bpf_prog_query, (int target_fd, enum bpf_attach_type type, __u32 query_flags, __u32 *attach_flags, __u32 *prog_ids, __u32 *prog_cnt), (target_fd, type, query_flags, attach_flags, prog_ids, prog_cnt), -1) \
        V(void, btf__free, (struct btf *btf), (btf), ) \
        X(struct btf *, btf__load_from_kernel_by_id, (__u32 id), (id), NULL) \
        X(const char *, btf__name_by_offset, (const struct btf *btf, __u32 offset), (btf, offset), NULL) \
        X(const struct btf_type *, btf__type_by_id, (const struct btf *btf, __u32 id), (btf, id), NULL)
/* clang-format on */

DLIB_POINTERS(SYMBOLS)
DLIB_LIBRARY(dlib_library_libbpf, "libbpf", SYMBOLS, "libbpf.so.1", "libbpf.so.0");
DLIB_FORWARDERS(SYMBOLS)
