/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reset manifest: a line-oriented list of directives saying what a reset removes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
                                      * exactly PATH (remove/empty/unmount/bpf-pin/remove-block, or only
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
        _DIRECTIVE_MAX,
        _DIRECTIVE_INVALID = -1,
} DirectiveType;

typedef struct ManifestEntry {
        DirectiveType type;
        char **args; /* NULL-terminated, the words after the directive, unquoted */
        size_t n_args;
        char *file; /* the file (or embedded name) the line came from */
        unsigned line;
        bool system_path; /* a line that writes a system path, let through by allow-system-path */
} ManifestEntry;

typedef struct Manifest {
        ManifestEntry *entries;
        size_t n_entries, allocated_entries;
        char **files; /* every file read, in order, includes too */
        size_t n_files;
} Manifest;

Manifest *manifest_new(void);
Manifest *manifest_free(Manifest *m);

/* Parse a file, following "include" lines (relative to the including file's directory). A
 * symlink is followed; what it leads to must be a regular file (a FIFO or a device is refused
 * before any read, so it cannot hang the parse) of at most 4 MiB.
 * On error returns -EINVAL (or -errno of a failed read) and sets *reterr to "FILE:LINE: reason". */
int manifest_parse_file(Manifest *m, const char *path, char **reterr);

/* Parse text held in memory (the embedded default), "name" is used in messages.
 * "include" is refused in such text unless base_dir is non-NULL. */
int manifest_parse_string(Manifest *m, const char *name, const char *text, const char *base_dir, char **reterr);

/* Print the effective manifest: a comment naming the files read, then one directive per line,
 * quoted where needed. Parsing the output gives the same entries. */
int manifest_print(const Manifest *m, FILE *f);

/* "FILE:LINE: directive arg...": why a planned action exists, as every phase names it, plus a loud
 * note when the line reaches a system path through allow-system-path. NULL when out of memory. */
char *manifest_entry_reason(const ManifestEntry *e);

/* The first line of type t whose pattern covers node path (path_pattern_covers(): it matches the path
 * or one of its ancestors), or NULL. */
const ManifestEntry *manifest_find_covering(const Manifest *m, DirectiveType t, const char *path);

const char *directive_type_to_string(DirectiveType t);
DirectiveType directive_type_from_string(const char *s);

/* Iterate the entries of one type. "e &&": an empty manifest has no array, and NULL + 0 is
 * undefined behaviour (UBSan stops the fuzzer on it). */
#define MANIFEST_FOREACH(e, m, t)                                                                \
        for (const ManifestEntry *e = (m)->entries; e && e < (m)->entries + (m)->n_entries; e++) \
                if (e->type == (t))
