/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one answer to "may this files row act on this path?", for every row kind that removes or writes. */
#pragma once

#include <stdbool.h>

#include "agent/engine/context.h"
#include "agent/engine/plan.h"
#include "agent/os/remove.h"
#include "agent/node/cni-keep.h"

typedef enum ProtectKind {
        PROTECT_REMOVE, /* "remove": the path and everything beneath it */
        PROTECT_EMPTY,  /* "empty": everything beneath the path, which stays */
        PROTECT_EDIT,   /* "remove-block": the file itself, replaced by an edited copy */
        PROTECT_UNLINK, /* "remove-symlink-to": the symlink itself */
        PROTECT_WALK,   /* an entry the walk of a remove or empty row reaches, its target included */
} ProtectKind;

/* Where a protection comes from, in the order the first one that keeps the path is named. */
typedef enum ProtectSource {
        PROTECT_BY_NOTHING,
        PROTECT_BY_SYSTEM_PATH, /* agent/base/path.c's list, and no allow-system-path (when run) */
        PROTECT_BY_MANIFEST,    /* a "protect" line */
        PROTECT_BY_ETCD_SCOPE,  /* what an etcd no installer of this node made holds (etcd-owner.h) */
        PROTECT_BY_BACKUPS,     /* node-reset's own backups (BACKUP_DIR) */
        PROTECT_BY_UNSAVED,     /* a row with no other copy, the backup not written (when run) */
        PROTECT_BY_ETCD_DATA,   /* the etcd data directory while its rule keeps it (when run) */
        PROTECT_BY_CNI,         /* the CNI directory a kept runtime watches by inode (cni-keep.h) */
} ProtectSource;

/* The row that asks. */
typedef struct ProtectRow {
        ProtectKind kind;
        bool system_path;      /* its line opted in with allow-system-path */
        const CniKeepSet *cni; /* while planning: the kept runtimes' watched directories; else NULL */
} ProtectRow;

/* Why, for the report. */
typedef struct ProtectWhy {
        ProtectSource source;       /* the source that decided (NOTHING when the path is free) */
        const ManifestEntry *entry; /* PROTECT_BY_MANIFEST: the protect line that covers the path */
        const CniKeep *watched;     /* the kept runtime that watches this very path, whatever decided */
        const char *code;           /* the report's skip code ("protected", "out-of-scope", "kept") or NULL */
        int error;                  /* what a run that refuses the row reports: -EPERM or -EBUSY */
        char *message;              /* PROTECT_SELF: the report's words for the row */
} ProtectWhy;

void protect_why_done(ProtectWhy *why);

/* PROTECT_SELF: the row must leave the path alone (a plan skips it, a run refuses it, a walk keeps it
 * with all beneath). PROTECT_CONTAINS, for remove, empty and walk only: something beneath is kept, so
 * the directory stays and the walk goes in (a remove of a directory a kept runtime watches becomes an
 * empty). PROTECT_NONE: free. ret_why may be NULL (a walk asks for every entry). */
ProtectState files_protect_decide(const Context *ctx, const ProtectRow *row, const char *path, ProtectWhy *ret_why);

/* A plan's row for a path the row leaves (PROTECT_SELF): skipped, with why's code and words. -ENOMEM. */
int files_protect_skip(Action *a, const ProtectWhy *why);

/* A run's refusal: why->error with why's words in *ret_msg. -ENOMEM. */
int files_protect_refuse(const ProtectWhy *why, char **ret_msg);

/* The etcd data directory (node path) when its rule keeps it by what the run has learnt so far, with
 * the rule's reason (malloc'd, when ret_reason is given); NULL when it goes, or there is none. Before
 * the backup and etcd phases have run it is kept: files_protect_decide() asks it only when run. */
const char *files_protect_etcd_kept(const Context *ctx, char **ret_reason);
