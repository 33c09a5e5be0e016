/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest's directives: their types, and the table the parser (manifest.c) reads each line's
 * directive from. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef enum DirectiveType {
        DIRECTIVE_REMOVE,  /* remove PATH: a file or a whole tree */
        DIRECTIVE_EMPTY,   /* empty PATH: a directory's contents, the directory stays */
        DIRECTIVE_UNMOUNT, /* unmount PATH: every mount at or beneath PATH, deepest first */
        DIRECTIVE_PROTECT, /* protect PATH: never removed, never descended into */
        /* network phase */
        DIRECTIVE_LINK,        /* link NAME|GLOB */
        DIRECTIVE_LINK_MASTER, /* link-master BRIDGE: every link enslaved to BRIDGE */
        DIRECTIVE_NETNS,       /* netns GLOB: named network namespaces */
        DIRECTIVE_ROUTE_PROTO, /* route-proto NAME|NUMBER */
        DIRECTIVE_RULE_TABLE,  /* rule-table TABLE [[!]MARK/MASK [PREF]]: a CNI's policy rules and its table */
        DIRECTIVE_BPF_PROG,    /* bpf-prog PREFIX: tc, XDP and cgroup programs named so are a CNI's */
        DIRECTIVE_BPF_CGROUP,  /* bpf-cgroup PATH: the cgroup2 mount a CNI attached its programs beneath */
        DIRECTIVE_BPF_PIN,     /* bpf-pin PATH|GLOB: pins (or directories of pins) on a bpf file system */
        DIRECTIVE_BPF_MOUNT,   /* bpf-mount PATH: a CNI's own bpffs, mounted exactly at PATH */
        /* firewall phase */
        DIRECTIVE_FIREWALL,     /* firewall owned|flush|keep */
        DIRECTIVE_CHAIN_PREFIX, /* chain-prefix PREFIX: another owned chain prefix */
        DIRECTIVE_NFT_TABLE,    /* nft-table FAMILY NAME: a whole nf_tables table to delete */
        DIRECTIVE_IPSET,        /* ipset GLOB */
        DIRECTIVE_IPVS,         /* ipvs clear */
        /* services and processes phases */
        DIRECTIVE_UNIT,    /* unit NAME|GLOB ACTIONS WHEN: ACTIONS of stop,disable,mask; WHEN early|late */
        DIRECTIVE_PROCESS, /* process PATH-GLOB: kill what runs this executable, with its children */
        DIRECTIVE_CGROUP,  /* cgroup NAME: that cgroup tree at the top of every hierarchy, once it is empty */
        /* pods phase */
        DIRECTIVE_CRI_ENDPOINT, /* cri-endpoint URI: unix:///PATH or /PATH, instead of probing the known sockets */
        /* files, mounts */
        DIRECTIVE_ALLOW_SYSTEM_PATH, /* allow-system-path PATH [DIRECTIVE]: a later line that writes or deletes
                                      * exactly PATH (remove/empty/unmount/bpf-pin/remove-block/..., or only
                                      * DIRECTIVE's) may reach that system path */
        /* files phase */
        DIRECTIVE_REMOVE_BLOCK, /* remove-block PATH BEGIN END: the lines BEGIN..END inside a file, nothing else */
        /* network phase */
        DIRECTIVE_KUBE_VIP, /* kube-vip PATH: the VIP that kube-vip's static pod manifest at PATH put on its
                             * interface */
        /* files phase */
        DIRECTIVE_REMOVE_SYMLINK_TO, /* remove-symlink-to PATH TARGET: the symlink PATH, only while it leads to TARGET
                                      * and TARGET is gone or removed by this run */
        DIRECTIVE_CONNTRACK,         /* conntrack cluster|ADDRESS[/LEN]: connection tracking entries to or from the
                                      * cluster's pod and service ranges, or this range */
        /* pods phase */
        DIRECTIVE_DOCKER_ENDPOINT, /* docker-endpoint URI: Docker's Engine API socket (unix:///PATH or /PATH,
                                    * a node path) whose Kubernetes containers the pods phase removes */
        /* files phase */
        DIRECTIVE_PRUNE_KUBECONFIG, /* prune-kubeconfig PATH: this cluster's contexts, clusters and users out of
                                     * the kubeconfig PATH; the file goes when nothing else is in it */
        _DIRECTIVE_MAX,
        _DIRECTIVE_INVALID = -1,
} DirectiveType;

/* What separates words, and what a quoted word may hold that a name never may. */
#define MANIFEST_WHITESPACE " \t\n"

/* Checks (and may normalise in place) the arguments of a directive. On failure returns -EINVAL
 * and a verb phrase in *ret_reason that reads after the quoted directive name. */
typedef int (*directive_validate_t)(char **args, char **ret_reason);

typedef struct DirectiveRow {
        const char *name;
        size_t min_args;
        size_t max_args;
        directive_validate_t validate;
        bool writes; /* writes to or deletes its path argument: under the system-path guard */
} DirectiveRow;

/* A new directive is one enum value above plus one row (manifest-directives.c); the unit test
 * checks that every enum value has its row. */
extern const DirectiveRow directive_table[_DIRECTIVE_MAX];

const char *directive_type_to_string(DirectiveType t);
DirectiveType directive_type_from_string(const char *s);
