/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The backups node-reset wrote pile up in BACKUP_DIR, one per run, and a full disk comes sooner: at
 * most --backup-keep of them stay, the newest, the one this run wrote always among them. Only
 * directories named as the backup phase names them (YYYYMMDDTHHMMSSZ, or that and ".N") are
 * counted or removed; anything else an operator put there stays. Removal is the one bounded walk
 * (remove.h): never across a mount, never through a symlink. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/engine/cmdline.h"
#include "agent/node/backup-kept.h"
#include "agent/os/fileio.h"
#include "agent/os/remove.h"
#include "agent/phases/backup/backup-prune.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define BACKUP_KEEP_DEFAULT 5U

/* The option: configuration, set once by the command line before any run. */
static unsigned arg_backup_keep = BACKUP_KEEP_DEFAULT; /* 0: keep every backup */

typedef struct PruneState {
        char *written;   /* the name of the directory this run's backup row wrote */
        bool will_write; /* the plan's backup row was to write one */
} PruneState;

static void prune_state_done(void *p) {
        free(((PruneState *) p)->written);
}

static const ContextStateType prune_state_type = {
        .name = "backup-prune",
        .size = sizeof(PruneState),
        .done = prune_state_done,
};

int backup_prune_written(Context *ctx, const char *name) {
        PruneState *s = context_state(ctx, &prune_state_type);

        if (!s)
                return -ENOMEM;
        free(s->written);
        s->written = strdup(name);
        return s->written ? 0 : -ENOMEM;
}

/* YYYYMMDDTHHMMSSZ, optionally ".N": what make_run_dir() names a run's directory. */
static bool is_backup_name(const char *n) {
        static const char shape[] = "ddddddddTddddddZ";

        for (size_t i = 0; i < sizeof shape - 1; i++)
                if (shape[i] == 'd' ? !(n[i] >= '0' && n[i] <= '9') : n[i] != shape[i])
                        return false;
        n += sizeof shape - 1;
        if (*n == 0)
                return true;
        return *n == '.' && n[1] && strspn(n + 1, "0123456789") == strlen(n + 1);
}

/* Two names of one second order by their ".N" as numbers (".10" after ".9"); else by the time. */
static int compare_backup_names(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        int c = strncmp(x, y, 16);

        if (c != 0)
                return c;
        return (x[16] ? atoi(x + 17) : 0) - (y[16] ? atoi(y + 17) : 0);
}

/* The backups beneath BACKUP_DIR, oldest first. */
static int backups_list(Context *ctx, char ***ret) {
        cleanup_strv char **names = NULL, **l = NULL;
        int r;

        r = fileio_list_beneath(ctx->root_fd, BACKUP_DIR, NULL, &names);
        if (r < 0)
                return r;
        STRV_FOREACH(n, names)
                if (is_backup_name(*n) && strv_extend(&l, *n) < 0)
                        return -ENOMEM;
        if (l)
                qsort(l, strv_length(l), sizeof(char *), compare_backup_names);
        *ret = TAKE_PTR(l);
        return 0;
}

/* The names that go: all but the keep newest (none kept when keep is 0), never "written". */
static int prune_list(char **all, unsigned keep, const char *written, char ***ret) {
        size_t n = strv_length(all);
        cleanup_strv char **l = NULL;

        for (size_t i = 0; i + keep < n; i++)
                if (!streq_ptr(all[i], written) && strv_extend(&l, all[i]) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

static int prune_apply(Action *a, Context *ctx, char **ret_msg) {
        const PruneState *s = context_state_peek(ctx, &prune_state_type);
        cleanup_strv char **all = NULL, **gone = NULL;
        RemoveOptions o = { .deadline_usec = ctx->deadline_usec };
        cleanup_free char *list = NULL;
        int r;

        /* This run's backup was to be written and was not (it failed): the older ones are the newest
         * copies there are, and none of them goes. */
        if (s && s->will_write && !s->written)
                return set_errmsg(ret_msg, 0, "none removed: this run wrote no backup, the older ones are the newest");
        /* Taken again now: the backup row has run, and the directory it wrote counts as the newest. */
        r = backups_list(ctx, &all);
        if (r >= 0)
                r = prune_list(all, arg_backup_keep, s ? s->written : NULL, &gone);
        if (r < 0)
                return r;
        STRV_FOREACH(g, gone) {
                cleanup_free char *path = strprintf("%s/%s", BACKUP_DIR, *g);
                RemoveStats st = {};

                if (!path)
                        return -ENOMEM;
                r = remove_tree(ctx->root_fd, path, &o, &st);
                remove_stats_done(&st);
                if (r < 0)
                        return set_errmsg(ret_msg, r, "cannot remove the older backup %s: %s", path, strerror(-r));
        }
        if (!gone)
                return set_errmsg(ret_msg, 0, "%zu backup%s, at most %u kept: none older to remove", strv_length(all),
                                  strv_length(all) == 1 ? "" : "s", arg_backup_keep);
        list = strv_join(gone, ", ");
        return set_errmsg(ret_msg, 1, "removed %zu older backup%s (%s), kept the %u newest", strv_length(gone),
                          strv_length(gone) == 1 ? "" : "s", strna(list), arg_backup_keep);
}

static int prune_check(Action *a, Context *ctx, char **ret_msg) {
        return 0; /* an older backup left is no residue of the node */
}

static const ActionOps prune_ops = {
        .kind = "backup-prune",
        .apply = prune_apply,
        .check = prune_check,
};

int backup_prune_plan(Context *ctx, Plan *plan, bool will_write) {
        cleanup_strv char **all = NULL, **gone = NULL;
        cleanup_free char *list = NULL;
        PruneState *s;
        Action *a;
        int r;

        if (ctx->pass == ENGINE_PASS_PLAN) {
                s = context_state(ctx, &prune_state_type);
                if (!s)
                        return -ENOMEM;
                s->will_write = will_write;
        }

        a = plan_add(plan, &prune_ops, "backup", BACKUP_DIR, "the older backups beyond --backup-keep", NULL);
        if (!a)
                return -ENOMEM;
        if (arg_backup_keep == 0)
                return action_set_skip(a, "--backup-keep=0: every backup is kept");
        r = backups_list(ctx, &all);
        if (r < 0)
                return r;
        /* The backup this run writes will be the newest: one fewer of the existing ones stays. */
        r = prune_list(all, will_write ? arg_backup_keep - 1 : arg_backup_keep, NULL, &gone);
        if (r < 0)
                return r;
        a->present = gone != NULL;
        if (!gone)
                return action_set_detail(a, "%zu backup%s: at most %u kept%s", strv_length(all),
                                         strv_length(all) == 1 ? "" : "s", arg_backup_keep,
                                         will_write ? ", this run's among them" : "");
        list = strv_join(gone, ", ");
        return action_set_detail(a, "remove %s: at most %u kept, the newest%s", strna(list), arg_backup_keep,
                                 will_write ? ", this run's among them" : "");
}

int backup_prune_parse_keep(const char *arg, char **reterr) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || v > 10000)
                return set_errmsg(reterr, -EINVAL, "expected a number of backups from 0 (keep every one) to 10000");
        arg_backup_keep = (unsigned) v;
        return 0;
}
