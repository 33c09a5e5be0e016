/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's edits: cut a marked block (kubespray's "# Ansible entries BEGIN".."END") out of a file
 * the host owns, never following a symlink, never writing into the inode, never crossing a mount
 * (files-rewrite.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/base/path.h"
#include "agent/phases/files/files-edit.h"
#include "agent/phases/files/files-protect.h"
#include "agent/phases/files/files-rewrite.h"
#include "agent/config/textblock.h"
#include "agent/base/log.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* resolv.conf and dhclient.conf are a few hundred bytes; a file this large is not what the line meant. */
#define EDIT_SIZE_MAX (1024U * 1024U)

/* One block to cut: a manifest entry's words (the manifest outlives the plan). */
typedef struct EditBlock {
        const char *begin, *end;
} EditBlock;

/* Every remove-block line naming one file is one action (a profile and a site manifest may both name
 * it): its blocks are cut in the order of the lines, from one read of the file, in one replacement. */
typedef struct EditData {
        char *path; /* node path */
        EditBlock *blocks;
        size_t n_blocks;
        bool seen;        /* a file was there when planned: dev/ino are the inode to edit */
        bool system_path; /* allow-system-path let this line reach a system path */
        dev_t dev;
        ino_t ino;
} EditData;

/* One read-only look at the file. */
typedef struct Look {
        RewriteFile f;
        TextBlockCut *cuts; /* one per block, each cut from what the ones before left */
        size_t n_cuts;
        const char *result; /* the text once every block is cut */
        size_t result_size;
        int cut_r; /* -EBADMSG a block's markers do not pair up, 0 nothing to cut, 1 something cut */
} Look;

static void edit_data_free(void *p) {
        EditData *d = p;

        free(d->path);
        free(d->blocks);
        free(d);
}

static void look_done(Look *l) {
        rewrite_file_done(&l->f);
        for (size_t i = 0; i < l->n_cuts; i++)
                text_block_cut_done(&l->cuts[i]);
        free(l->cuts);
}

/* Cut each block in turn from what the ones before left. */
static int cut_blocks(const EditData *d, Look *l, char **ret_msg) {
        cleanup_free char *why = NULL;

        l->cuts = calloc(d->n_blocks, sizeof *l->cuts);
        if (!l->cuts)
                return -ENOMEM;
        l->n_cuts = d->n_blocks;
        l->result = l->f.text;
        l->result_size = l->f.size;
        l->cut_r = 0;
        for (size_t i = 0; i < d->n_blocks; i++) {
                int r = text_block_cut(l->result, l->result_size, d->blocks[i].begin, d->blocks[i].end, &l->cuts[i],
                                       &why);

                if (r == -EBADMSG) {
                        l->cut_r = r;
                        return set_errmsg(ret_msg, r, "block '%s'..'%s': %s: refused, file untouched",
                                          d->blocks[i].begin, d->blocks[i].end, why);
                }
                if (r < 0)
                        return r;
                if (r > 0) {
                        l->result = l->cuts[i].text;
                        l->result_size = l->cuts[i].size;
                        l->cut_r = 1;
                }
        }
        return 0;
}

/* 1 with l filled (l->cut_r says what the text holds), 0 when there is no file, or a refusal: -ELOOP for a
 * symlink (the path's or one above it), -EPERM/-EXDEV/-EFBIG for a file not to edit. */
static int look_at(const Context *ctx, const EditData *d, Look *l, char **ret_msg) {
        int r;

        r = rewrite_file_open(ctx->root_fd, d->path, EDIT_SIZE_MAX, false, &l->f, ret_msg);
        if (r <= 0)
                return r;
        r = cut_blocks(d, l, ret_msg);
        return r < 0 && r != -EBADMSG ? r : 1;
}

/* "remove block 'B'..'E' (N lines from line L)", one such part per block that has something to cut
 * (a later block's line counts in the text the earlier ones left); "no block ..." when none has. */
static char *describe_blocks(const EditData *d, const Look *l, bool done) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < l->n_cuts; i++) {
                const TextBlockCut *c = &l->cuts[i];

                if (!c->text)
                        continue;
                fprintf(f, "%s%s block '%s'..'%s' (%u line%s from line %u%s)", ftell(f) > 0 ? "; " : "",
                        done ? "removed" : "remove", d->blocks[i].begin, d->blocks[i].end, c->lines,
                        c->lines == 1 ? "" : "s", c->first_line, c->blocks > 1 ? ", several blocks" : "");
        }
        for (size_t i = 0; l->cut_r == 0 && i < d->n_blocks; i++)
                fprintf(f, "%sno block '%s'..'%s'", i > 0 ? ", " : "", d->blocks[i].begin, d->blocks[i].end);
        if (l->cut_r == 0)
                fputs(": already clean", f);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}

/* A resolv.conf left without a "nameserver" line resolves nothing until DHCP or the network manager
 * rewrites it (kubespray's preinstall dropped the host's own lines when it wrote its block): said in
 * the result and logged, so that an operator on a static address knows to put one back. */
static bool resolv_conf_without_nameserver(const char *path, const char *text) {
        if (!streq(strrchr(path, '/') + 1, "resolv.conf"))
                return false;
        for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (startswith(p + strspn(p, " \t"), "nameserver"))
                        return false;
        return true;
}

static char *edited_message(const EditData *d, const Look *l) {
        cleanup_free char *done = describe_blocks(d, l, true);

        if (!done || !resolv_conf_without_nameserver(d->path, l->result))
                return TAKE_PTR(done);
        log_warning("%s has no nameserver line left: the host resolves nothing until DHCP or its network manager "
                    "rewrites it",
                    d->path);
        return strprintf("%s; no nameserver line is left in it", done);
}

/* What to do with the file looked at: the very inode planned, a block to cut, then the swap. */
static int edit_looked(const EditData *d, const Look *l, char **ret_msg) {
        int r;

        if (d->seen && (l->f.st.st_dev != d->dev || l->f.st.st_ino != d->ino))
                return set_errmsg(ret_msg, -ESTALE,
                                  "it is another file (inode %ju) than the plan saw (inode %ju): not edited",
                                  (uintmax_t) l->f.st.st_ino, (uintmax_t) d->ino);
        if (l->cut_r < 0)
                return l->cut_r;
        if (l->cut_r == 0) {
                *ret_msg = describe_blocks(d, l, false);
                return 0;
        }
        r = rewrite_file_replace(&l->f, d->path, l->result, l->result_size, ret_msg);
        if (r < 0)
                return r;
        *ret_msg = edited_message(d, l);
        return 1;
}

static int edit_apply(Action *a, Context *ctx, char **ret_msg) {
        const EditData *d = a->data;
        Look l = { .f = REWRITE_FILE_INIT };
        int r;
        CLEANUP(protect_why_done) ProtectWhy why = {};

        /* Asked again where the file is written: the manifest's guard, and what only a run keeps. */
        if (files_protect_decide(ctx, &(ProtectRow) { .kind = PROTECT_EDIT, .system_path = d->system_path }, d->path,
                                 &why) == PROTECT_SELF)
                return files_protect_refuse(&why, ret_msg);
        r = look_at(ctx, d, &l, ret_msg);
        if (r > 0)
                r = edit_looked(d, &l, ret_msg);
        else if (r == 0)
                (void) set_errmsg(ret_msg, 0, "not present");
        look_done(&l);
        return r;
}

/* Residue: the block is still there (or still cannot be cut out). */
static int edit_check(Action *a, Context *ctx, char **ret_msg) {
        const EditData *d = a->data;
        Look l = { .f = REWRITE_FILE_INIT };
        int r;

        r = look_at(ctx, d, &l, ret_msg);
        if (r > 0 && l.cut_r != 0) {
                if (l.cut_r > 0)
                        *ret_msg = describe_blocks(d, &l, false);
                r = 1;
        } else if (r > 0)
                r = 0;
        /* A symlink is kept on purpose: nothing of it is residue. */
        if (r == -ELOOP)
                r = 0;
        look_done(&l);
        return r;
}

static const ActionOps edit_ops = {
        .kind = "edit",
        .apply = edit_apply,
        .check = edit_check,
        .free_data = edit_data_free,
};

/* The plan's row: what the run will cut, or why the file is left as it is. */
static int edit_observe(Context *ctx, Action *a, EditData *d) {
        Look l = { .f = REWRITE_FILE_INIT };
        cleanup_free char *msg = NULL;
        int r;

        r = look_at(ctx, d, &l, &msg);
        if (r > 0) {
                d->seen = true;
                d->dev = l.f.st.st_dev;
                d->ino = l.f.st.st_ino;
                if (l.cut_r >= 0)
                        msg = describe_blocks(d, &l, false);
        } else if (r == 0)
                msg = strdup("not present");
        look_done(&l);
        /* Present: something to do, or a refusal that will fail the run (the block stays). */
        a->present = (r > 0 && l.cut_r != 0) || (r < 0 && r != -ELOOP);
        a->detail = TAKE_PTR(msg);
        if (r == -ELOOP)
                return action_set_skip_code(a, "symlink", "%s", strna(a->detail));
        return a->detail ? 0 : -ENOMEM;
}

/* Another line for a file already planned: its block joins the action (the same markers once), its
 * line the reason, and the file is looked at again with every block. */
static int edit_join(Context *ctx, Action *a, const ManifestEntry *e) {
        EditData *d = a->data;
        EditBlock *blocks;
        int r;

        r = rewrite_action_join(a, e, &d->system_path);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d->n_blocks; i++)
                if (streq(d->blocks[i].begin, e->args[1]) && streq(d->blocks[i].end, e->args[2]))
                        return 0;
        blocks = reallocarray(d->blocks, d->n_blocks + 1, sizeof *blocks);
        if (!blocks)
                return -ENOMEM;
        d->blocks = blocks;
        d->blocks[d->n_blocks++] = (EditBlock) { e->args[1], e->args[2] };
        if (a->skip_reason)
                return 0;
        a->detail = mfree(a->detail);
        return edit_observe(ctx, a, d);
}

int files_edit_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep) {
        CLEANUP(protect_why_done) ProtectWhy why = {};
        cleanup_free char *reason = NULL;
        EditData *d;
        Action *a;

        a = rewrite_action_of(plan, &edit_ops, e->args[0]);
        if (a)
                return edit_join(ctx, a, e);
        reason = manifest_entry_reason(e);
        d = calloc(1, sizeof *d);
        if (!d || !reason || !(d->path = strdup(e->args[0])) || !(d->blocks = calloc(1, sizeof *d->blocks))) {
                if (d)
                        edit_data_free(d);
                return -ENOMEM;
        }
        d->blocks[0] = (EditBlock) { e->args[1], e->args[2] };
        d->n_blocks = 1;
        d->system_path = e->system_path;
        a = plan_add(plan, &edit_ops, "files", d->path, reason, d);
        if (!a)
                return -ENOMEM;
        if (files_protect_decide(ctx,
                                 &(ProtectRow) { .kind = PROTECT_EDIT, .system_path = d->system_path, .cni = keep },
                                 d->path, &why) == PROTECT_SELF)
                return files_protect_skip(a, &why);
        return edit_observe(ctx, a, d);
}
