/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each CNI (cilium, calico, flannel, kube-router, weave, and the plugins they run) leaves on a
 * node, and how it is recognised: one static const row per CNI, read by the CNI detector, the choice of
 * the CNI's profile fragment and the pods phase; its chain prefixes agree with netreset/fwclass.c (a
 * unit test says so). No other file of agent/ spells a CNI's path or link name
 * (tests/integration/test-tables.sh). Adding a CNI is one row here plus its manifests/profiles/cni-NAME.conf. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The CNI specification's default configuration directory and libcni's cache of what each ADD
 * returned (containernetworking/cni libcni/api.go CacheDir), which kubelet's runtimes use unless
 * configured otherwise. */
#define CNI_CONF_DIR "/etc/cni/net.d"
#define CNI_CACHE_DIR "/var/lib/cni"

/* Something the CNI leaves that names it: a link (dir NULL, glob its name), the entries of a directory
 * matching glob (its BPF pins), or a directory itself (glob NULL). */
typedef struct CniMark {
        const char *what;
        const char *dir;
        const char *glob;
} CniMark;

typedef struct CniInfo {
        const char *name;     /* its name; its profile fragment is "cni-" name, when it has one */
        bool fragment;        /* manifests/profiles/cni-NAME.conf exists */
        const char *types[8]; /* the plugin "type"s its CNI configuration names */
        /* Parts of a configuration file's name that name it when the plugins it configures are
         * another's (kube-router runs the plain bridge plugin; canal is calico's plugin on flannel). */
        const char *file_names[2];
        const CniMark marks[8];
        const char *chain_prefixes[2]; /* the netfilter chains it makes (netreset/fwclass.c) */
        /* Its DEL only undoes node state this run's later phases remove anyway (links, netns,
         * chains, files): the pods phase may run it without the CNI's agent. */
        bool node_local;
        /* Its DEL talks to its agent, a host-network pod: gone with the pods, it cannot answer. */
        bool agent;
} CniInfo;

extern const CniInfo cni_table[];
extern const size_t cni_table_n;

#define CNI_FOREACH(var) for (const CniInfo *var = cni_table; var < cni_table + cni_table_n; var++)
#define CNI_LIST_FOREACH(var, list) \
        for (const char *const *var = (list); var < (list) + ELEMENTSOF(list) && *var; var++)

/* The row whose configuration names plugin type, or NULL. */
const CniInfo *cni_by_type(const char *type);

/* The row with that name, or NULL. */
const CniInfo *cni_by_name(const char *name);
