/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The files phase's kubeconfig rows: this cluster's contexts, clusters and users out of a user's
 * kubeconfig that holds others (files-kubeconfig-prune.h), the file whole when nothing else is in it. The
 * file is the user's: it is rewritten as remove-block's files are (files-rewrite.h: a new inode
 * swapped in, never through a symlink, the same owner and mode), only while it is byte for byte what
 * the plan read, and every look at it is made where a home on a dead mount cannot hang the run
 * (remote-fs.h). The backup phase saves it first. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/home-kubeconfigs.h"
#include "agent/phases/files/files-kubeconfig-prune.h"
#include "agent/os/remote-fs.h"
#include "agent/phases/files/files-kubeconfig.h"
#include "agent/phases/files/files-protect.h"
#include "agent/phases/files/files-rewrite.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* kubectl's own files are a few KiB; a larger one is not what detection meant. */
#define KUBECONFIG_SIZE_MAX (1024U * 1024U)

/* This cluster as the first plan of the run read it, kept in the run's Context: by the time verify
 * plans again, the run has removed the kubeconfigs that named it. */
typedef struct ClusterIds {
        KubeClusterId *ids;
        size_t n;
        bool read;
} ClusterIds;

static void cluster_ids_done(void *p) {
        ClusterIds *c = p;

        home_cluster_ids_free(c->ids, c->n);
}

static const ContextStateType cluster_ids_type = {
        .name = "files-kubeconfig",
        .size = sizeof(ClusterIds),
        .done = cluster_ids_done,
};

static int this_cluster(Context *ctx, const ClusterIds **ret) {
        ClusterIds *c = context_state(ctx, &cluster_ids_type);
        int r;

        if (!c)
                return -ENOMEM;
        if (!c->read) {
                r = home_cluster_ids(ctx->root_fd, &c->ids, &c->n);
                c->read = r >= 0;
                if (r < 0)
                        return r;
        }
        *ret = c;
        return 0;
}

typedef struct KubeconfigData {
        char *path; /* node path */
        bool system_path;
        bool seen; /* a file was there when planned: the run edits only that inode with that text */
        dev_t dev;
        ino_t ino;
        char *text;
        size_t size;
} KubeconfigData;

static void kubeconfig_data_free(void *p) {
        KubeconfigData *d = p;

        free(d->path);
        free(d->text);
        free(d);
}

/* What one look (or the run's edit) found, as it comes back from where it was made: this header, the
 * file's text (a look's), the words. */
typedef struct LookHeader {
        int32_t open_r;  /* rewrite_file_open(): 1 read, 0 absent, < 0 refused */
        int32_t prune_r; /* kubeconfig_prune(): 1 this cluster's entries are in it, 0 none, < 0 not editable */
        int32_t done_r;  /* the edit: 0 nothing done, 1 done, < 0 failed */
        uint32_t whole;
        uint64_t dev, ino, size;
} LookHeader;

typedef struct Look {
        LookHeader h;
        const char *text; /* h.size bytes */
        const char *msg;
} Look;

typedef struct Job {
        int root_fd;
        const KubeconfigData *d;
        const ClusterIds *cluster; /* NULL: none read */
        bool apply;
} Job;

/* 'remove context "c", cluster "k"; keep context "d", cluster "o"; unset current-context "c"', or
 * what was done. */
static char *describe(const KubeconfigPrune *p, bool done) {
        cleanup_free char *gone = kubeconfig_prune_describe(p, false), *kept = kubeconfig_prune_describe(p, true);

        if (!gone || !kept)
                return NULL;
        if (p->whole)
                return strprintf("%s the file: it hold%s only this cluster (%s)", done ? "removed" : "remove",
                                 done ? "" : "s", gone);
        return strprintf("%s %s (this cluster's); %s %s%s%s%s", done ? "removed" : "remove", gone,
                         done ? "kept" : "keep", kept, p->current ? "; " : "",
                         p->current ? (done ? "current-context unset, it named " : "unset current-context, it names ")
                                    : "",
                         strempty(p->current));
}

/* The run's edit of the file read in f: only the text the plan read, in the inode it saw. */
static int edit(const Job *j, const RewriteFile *f, const KubeconfigPrune *p, char **ret_msg) {
        RewriteFile back = REWRITE_FILE_INIT;
        int r;

        if (p->whole)
                r = rewrite_file_unlink(f, j->d->path, ret_msg);
        else
                r = rewrite_file_replace(f, j->d->path, p->text, p->size, ret_msg);
        if (r < 0 || p->whole)
                return r < 0 ? r : 1;
        /* What is under the name now is what was written. */
        r = rewrite_file_open(j->root_fd, j->d->path, KUBECONFIG_SIZE_MAX, true, &back, ret_msg);
        if (r == 0 || (r > 0 && (back.size != p->size || memcmp(back.text, p->text, p->size) != 0)))
                r = set_errmsg(ret_msg, -EIO, "it does not read back as written");
        rewrite_file_done(&back);
        return r < 0 ? r : 1;
}

static int look_file(const Job *j, const RewriteFile *f, LookHeader *h, char **msg) {
        const KubeconfigData *d = j->d;
        KubeconfigPrune p = {};

        /* What the plan saw is a claim: the run edits that inode holding that text, or nothing. */
        if (j->apply && (f->st.st_dev != d->dev || f->st.st_ino != d->ino)) {
                h->prune_r = 1;
                h->done_r = set_errmsg(msg, -ESTALE,
                                       "it is another file (inode %ju) than the plan saw (inode %ju): not edited",
                                       (uintmax_t) f->st.st_ino, (uintmax_t) d->ino);
                return *msg ? 0 : -ENOMEM;
        }
        if (j->apply && (f->size != d->size || memcmp(f->text, d->text, d->size) != 0)) {
                h->prune_r = 1;
                h->done_r = set_errmsg(msg, -ESTALE, "it changed since the plan read it: not edited");
                return *msg ? 0 : -ENOMEM;
        }
        h->prune_r = kubeconfig_prune(d->path, f->text, f->size, j->root_fd, j->cluster ? j->cluster->ids : NULL,
                                      j->cluster ? j->cluster->n : 0, j->apply, &p, msg);
        h->whole = p.whole;
        if (h->prune_r == 0)
                *msg = strdup("nothing of this cluster in it: already clean");
        else if (h->prune_r > 0)
                *msg = describe(&p, false);
        if (h->prune_r > 0 && j->apply) {
                cleanup_free char *done = describe(&p, true);

                *msg = mfree(*msg);
                h->done_r = edit(j, f, &p, msg);
                if (h->done_r > 0)
                        *msg = TAKE_PTR(done);
        }
        kubeconfig_prune_done(&p);
        return h->prune_r == -ENOMEM || !*msg ? -ENOMEM : 0;
}

/* remote_fs_each()'s work: one look at the file, or the run's edit of it. */
static int job_work(size_t i, void *userdata, FILE *out) {
        const Job *j = userdata;
        RewriteFile f = REWRITE_FILE_INIT;
        cleanup_free char *msg = NULL;
        LookHeader h = {};
        int r = 0;

        h.open_r = rewrite_file_open(j->root_fd, j->d->path, KUBECONFIG_SIZE_MAX, true, &f, &msg);
        if (h.open_r == 0)
                msg = strdup("not present");
        if (h.open_r > 0) {
                h.dev = f.st.st_dev;
                h.ino = f.st.st_ino;
                h.size = j->apply ? 0 : f.size;
                r = look_file(j, &f, &h, &msg);
        }
        if (r >= 0 && (fwrite(&h, sizeof h, 1, out) != 1 || (h.size > 0 && fwrite(f.text, 1, h.size, out) != h.size) ||
                       fputs(strempty(msg), out) < 0))
                r = -ENOMEM;
        rewrite_file_done(&f);
        return r;
}

/* One job beneath the file's home: 0 with *ret (pointing into *ret_buf), or the job did not end (a
 * dead mount: -ETIME, -EHOSTDOWN, -EIO) with why in *ret_why. */
static int run_job(Context *ctx, const KubeconfigData *d, bool apply, Look *ret, char **ret_buf, char **ret_why) {
        RemoteFsItem item = { .path = d->path };
        Job j = {
                .root_fd = ctx->root_fd, .d = d, .cluster = context_state_peek(ctx, &cluster_ids_type), .apply = apply
        };
        int r;

        r = remote_fs_each(ctx->root_fd, &item, 1, job_work, &j);
        if (r >= 0 && item.result < 0) {
                r = item.result;
                *ret_why = TAKE_PTR(item.why);
        } else if (r >= 0 && item.size < sizeof(LookHeader))
                r = -ENOMEM; /* only a failed write leaves no header */
        if (r >= 0) {
                memcpy(&ret->h, item.out, sizeof ret->h);
                ret->text = item.out + sizeof ret->h;
                ret->msg = ret->text + ret->h.size;
                *ret_buf = TAKE_PTR(item.out);
        }
        remote_fs_items_done(&item, 1);
        return r;
}

static bool unanswered(int r) {
        return r == -ETIME || r == -EHOSTDOWN || r == -EIO;
}

static int kubeconfig_apply(Action *a, Context *ctx, char **ret_msg) {
        const KubeconfigData *d = a->data;
        cleanup_free char *buf = NULL, *why = NULL;
        CLEANUP(protect_why_done) ProtectWhy pw = {};
        Look l;
        int r;

        /* Asked again where the file is written: the manifest's guard, and what only a run keeps. */
        if (files_protect_decide(ctx, &(ProtectRow) { .kind = PROTECT_EDIT, .system_path = d->system_path }, d->path,
                                 &pw) == PROTECT_SELF)
                return files_protect_refuse(&pw, ret_msg);
        if (!d->seen)
                return set_errmsg(ret_msg, 0, "not present when planned: not touched");
        r = run_job(ctx, d, true, &l, &buf, &why);
        if (r < 0)
                return unanswered(r) ? set_errmsg(ret_msg, r, "%s", strna(why)) : r;
        *ret_msg = strdup(l.msg);
        if (!*ret_msg)
                return -ENOMEM;
        if (l.h.open_r <= 0)
                return l.h.open_r;
        return l.h.prune_r <= 0 ? l.h.prune_r : l.h.done_r;
}

/* Residue: this cluster's entries are still in it (or it cannot be read to tell). */
static int kubeconfig_check(Action *a, Context *ctx, char **ret_msg) {
        cleanup_free char *buf = NULL, *why = NULL;
        Look l;
        int r;

        r = run_job(ctx, a->data, false, &l, &buf, &why);
        if (r < 0)
                return r;
        if (l.h.open_r == 0 || l.h.open_r == -ELOOP) /* a symlink is kept on purpose */
                return 0;
        if (l.h.open_r < 0 || l.h.prune_r < 0)
                return l.h.open_r < 0 ? l.h.open_r : l.h.prune_r;
        if (l.h.prune_r > 0 && !(*ret_msg = strprintf("still to do: %s", l.msg)))
                return -ENOMEM;
        return l.h.prune_r;
}

static const ActionOps kubeconfig_ops = {
        .kind = "kubeconfig",
        .apply = kubeconfig_apply,
        .check = kubeconfig_check,
        .free_data = kubeconfig_data_free,
};

/* The plan's row: what the run will take out of the file, or why it is left as it is. */
static int kubeconfig_observe(Context *ctx, Action *a, KubeconfigData *d) {
        cleanup_free char *buf = NULL, *why = NULL;
        Look l;
        int r;

        r = run_job(ctx, d, false, &l, &buf, &why);
        if (unanswered(r)) {
                /* Not known to be clean: verify counts it as unobserved. */
                a->unobserved = true;
                return action_set_skip_code(a, "unanswered", "%s", strna(why));
        }
        if (r < 0)
                return r;
        if (l.h.open_r > 0) {
                d->seen = true;
                d->dev = (dev_t) l.h.dev;
                d->ino = (ino_t) l.h.ino;
                d->text = malloc(l.h.size + 1);
                if (!d->text)
                        return -ENOMEM;
                memcpy(d->text, l.text, l.h.size);
                d->size = l.h.size;
        }
        /* Present: something to do, or a refusal that will fail the run (the entries stay). */
        a->present = l.h.open_r < 0 ? l.h.open_r != -ELOOP : l.h.open_r > 0 && l.h.prune_r != 0;
        if (action_set_detail(a, "%s", l.msg) < 0)
                return -ENOMEM;
        if (l.h.open_r == -ELOOP)
                return action_set_skip_code(a, "symlink", "%s", l.msg);
        return 0;
}

int files_kubeconfig_plan(Context *ctx, Plan *plan, const ManifestEntry *e, const CniKeepSet *keep) {
        CLEANUP(protect_why_done) ProtectWhy why = {};
        cleanup_free char *reason = NULL;
        const ClusterIds *cluster;
        KubeconfigData *d;
        Action *a;
        int r;

        /* Another line for a file already planned: its line joins the reason. */
        a = rewrite_action_of(plan, &kubeconfig_ops, e->args[0]);
        if (a)
                return rewrite_action_join(a, e, &((KubeconfigData *) a->data)->system_path);
        reason = manifest_entry_reason(e);
        d = calloc(1, sizeof *d);
        if (!d || !reason || !(d->path = strdup(e->args[0]))) {
                if (d)
                        kubeconfig_data_free(d);
                return -ENOMEM;
        }
        d->system_path = e->system_path;
        a = plan_add(plan, &kubeconfig_ops, "files", d->path, reason, d);
        if (!a)
                return -ENOMEM;
        if (files_protect_decide(ctx,
                                 &(ProtectRow) { .kind = PROTECT_EDIT, .system_path = d->system_path, .cni = keep },
                                 d->path, &why) == PROTECT_SELF)
                return files_protect_skip(a, &why);
        r = this_cluster(ctx, &cluster);
        if (r < 0)
                return r;
        if (cluster->n == 0)
                return action_set_skip_code(a, "kept",
                                            "this node's own kubeconfigs (kubelet.conf, admin.conf, k3s.yaml, "
                                            "rke2.yaml) name no cluster to tell its entries by: kept");
        return kubeconfig_observe(ctx, a, d);
}
