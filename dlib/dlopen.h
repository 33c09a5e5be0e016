/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The optional shared libraries, loaded by soname on first use instead of linked: only libc is a
 * hard dependency of the binary, and a missing library costs only the phases that need it. */
#pragma once

#include <stdbool.h>

/* One row per library in dlib/dlopen.c; dlib/lib<name>.c defines its used symbols as forwarders. */
typedef enum DlibLib {
        DLIB_LIBSYSTEMD, /* sd-bus (services, reload), sd-journal (logging) */
        DLIB_LIBMNL,     /* every netlink socket: network and firewall phases */
        DLIB_LIBNFTNL,   /* nf_tables rules of the firewall phase */
        DLIB_LIBIP4TC,   /* legacy iptables tables */
        DLIB_LIBIP6TC,   /* legacy ip6tables tables */
        DLIB_LIBIPSET,   /* ipsets */
        DLIB_LIBCURL,    /* CRI over gRPC (pods phase), report POSTs, orphan check */
        DLIB_LIBCRYPTO,  /* orphan check: kubeconfig certificates */
        DLIB_LIBYAML,    /* orphan check: kubeconfigs */
        DLIB_LIBBPF,     /* network phase: CNI BPF programs (tc, XDP, cgroup) */
        DLIB_LIBSQLITE3, /* backup: k3s's SQLite datastore, copied online */
        _DLIB_LIB_MAX,
        _DLIB_LIB_INVALID = -1,
} DlibLib;

/* Load the library (once; thread-safe) and resolve every symbol the program uses from it.
 * Returns 0, or -EOPNOTSUPP when no known soname loads or one lacks a symbol: dlib_why() says
 * which. Never logs: the caller says what is skipped for it. */
int dlib_load(DlibLib lib);

/* Is lib on this node? Its sonames are looked up where the loader would look (LD_LIBRARY_PATH,
 * /etc/ld.so.cache, the system directories) without loading anything: no dependency closure is
 * mapped. 0 and the soname found (the loaded one after dlib_load()), or -EOPNOTSUPP and why
 * ("libipset.so.13 not found", or the reason an earlier dlib_load() failed). A library found can
 * still fail to load (a missing dependency or symbol): its first call says so. Thread-safe. */
int dlib_find(DlibLib lib, const char **ret_soname, const char **ret_why);

/* The loaded soname ("libnftnl.so.11") after a successful dlib_load(), else NULL. */
const char *dlib_soname(DlibLib lib);

/* Why the last dlib_load() failed ("libipset.so.13 not found", or the loader's own words), else NULL. */
const char *dlib_why(DlibLib lib);

/* The library's name ("libipset") and the sonames tried, in order ("libipset.so.13"). */
const char *dlib_lib_name(DlibLib lib);
const char *const *dlib_lib_sonames(DlibLib lib);

/* "libcurl" -> DLIB_LIBCURL, or _DLIB_LIB_INVALID. */
DlibLib dlib_lib_from_name(const char *name);
