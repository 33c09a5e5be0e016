/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The optional shared libraries, loaded by soname on first use instead of linked: only libc is a
 * hard dependency of the binary, and a missing library costs only the phases that need it. */
#pragma once

#include <stdbool.h>

/* One row per library in shim/dlopen.c; shim/lib<name>.c defines its used symbols as forwarders. */
typedef enum ShimLib {
        SHIM_LIBSYSTEMD, /* sd-bus (services, reload), sd-journal (logging) */
        SHIM_LIBMNL,     /* every netlink socket: network and firewall phases */
        SHIM_LIBNFTNL,   /* nf_tables rules of the firewall phase */
        SHIM_LIBIP4TC,   /* legacy iptables tables */
        SHIM_LIBIP6TC,   /* legacy ip6tables tables */
        SHIM_LIBIPSET,   /* ipsets */
        SHIM_LIBCURL,    /* CRI over gRPC (pods phase), report POSTs, orphan check */
        SHIM_LIBCRYPTO,  /* orphan check: kubeconfig certificates */
        SHIM_LIBYAML,    /* orphan check: kubeconfigs */
        SHIM_LIBBPF,     /* network phase: CNI BPF programs (tc, XDP, cgroup) */
        _SHIM_LIB_MAX,
        _SHIM_LIB_INVALID = -1,
} ShimLib;

/* Load the library (once; thread-safe) and resolve every symbol the program uses from it.
 * Returns 0, or -EOPNOTSUPP when no known soname loads or one lacks a symbol: shim_why() says
 * which. Never logs: the caller says what is skipped for it. */
int shim_load(ShimLib lib);

/* Is lib on this node? Its sonames are looked up where the loader would look (LD_LIBRARY_PATH,
 * /etc/ld.so.cache, the system directories) without loading anything: no dependency closure is
 * mapped. 0 and the soname found (the loaded one after shim_load()), or -EOPNOTSUPP and why
 * ("libipset.so.13 not found", or the reason an earlier shim_load() failed). A library found can
 * still fail to load (a missing dependency or symbol): its first call says so. Thread-safe. */
int shim_find(ShimLib lib, const char **ret_soname, const char **ret_why);

/* The loaded soname ("libnftnl.so.11") after a successful shim_load(), else NULL. */
const char *shim_soname(ShimLib lib);

/* Why the last shim_load() failed ("libipset.so.13 not found", or the loader's own words), else NULL. */
const char *shim_why(ShimLib lib);

/* The library's name ("libipset") and the sonames tried, in order ("libipset.so.13"). */
const char *shim_lib_name(ShimLib lib);
const char *const *shim_lib_sonames(ShimLib lib);

/* "libcurl" -> SHIM_LIBCURL, or _SHIM_LIB_INVALID. */
ShimLib shim_lib_from_name(const char *name);
