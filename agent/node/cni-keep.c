/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which CNI configuration directories a kept runtime watches. containerd (and CRI-O's ocicni) watch
 * the directory by inode: once it is deleted, a configuration written later under the same name is
 * never loaded and the rejoined node's pods fail with "cni plugin not initialized" until the runtime
 * restarts (containerd issues 6490 and 11209). */

#include <sys/stat.h>

#include "agent/engine/phase.h"
#include "agent/node/cni-keep.h"
#include "agent/node/phase-options.h"
#include "agent/os/runtime-info.h"
#include "agent/os/services.h"
#include "cri/cri.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

void cni_keep_set_done(CniKeepSet *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->items[i].conf_dir);
                free(s->items[i].unit);
                free(s->items[i].runtime);
                free(s->items[i].socket);
        }
        free(s->items);
        *s = (CniKeepSet) {};
}

bool cni_keep_manifest_stops(const Manifest *m, const char *unit) {
        return phase_manifest_stops_unit(m, unit);
}

static int socket_list(const Context *ctx, char ***ret) {
        cleanup_strv char **l = NULL;
        int r = 0;

        if (phase_option_cri_endpoint())
                r = strv_extend(&l, phase_option_cri_endpoint());
        else
                MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_CRI_ENDPOINT)
                        if (r >= 0)
                                r = strv_extend(&l, e->args[0]);
        /* Beneath --root the running runtimes are not the node's unless one is named. */
        if (r >= 0 && !l && streq(ctx->root, "/"))
                for (const char *const *s = pods_known_sockets; *s && r >= 0; s++)
                        r = strv_extend(&l, *s);
        if (r < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(l);
        return 0;
}

/* The runtime's view of the directory as a node path: beneath --root, the part below it. */
static char *node_path_of(const Context *ctx, const char *dir) {
        if (streq(ctx->root, "/"))
                return strdup(dir);
        if (!path_startswith_dir(dir, ctx->root))
                return NULL;
        return strdup(dir[strlen(ctx->root)] ? dir + strlen(ctx->root) : "/");
}

static int add_runtime(const Context *ctx, CniKeepSet *s, const RuntimeInfo *info, const char *socket) {
        cleanup_free char *dir = NULL;
        CniKeep *k;

        if (info->pid == 0 || !info->cni_conf_dir || !info->unit || cni_keep_manifest_stops(ctx->manifest, info->unit))
                return 0;
        dir = node_path_of(ctx, info->cni_conf_dir);
        if (!dir || cni_keep_watched(s, dir))
                return 0;
        k = reallocarray(s->items, s->n + 1, sizeof *s->items);
        if (!k)
                return -ENOMEM;
        s->items = k;
        k = s->items + s->n;
        *k = (CniKeep) { .conf_dir = TAKE_PTR(dir),
                         .unit = strdup(info->unit),
                         .runtime = strdup(runtime_kind_to_string(info->kind)),
                         .socket = strdup(socket) };
        s->n++;
        return k->unit && k->runtime && k->socket ? 0 : -ENOMEM;
}

int cni_keep_find(const Context *ctx, CniKeepSet *ret) {
        cleanup_strv char **sockets = NULL;
        CniKeepSet s = {};
        int r;

        r = socket_list(ctx, &sockets);
        STRV_FOREACH(e, sockets) {
                cleanup_free char *path = NULL;
                RuntimeInfo info = {};
                struct stat st;

                if (r < 0)
                        break;
                if (cri_endpoint_to_path(*e, &path) < 0 || stat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
                        continue;
                r = runtime_info_probe(path, NULL, &info);
                if (r >= 0)
                        r = add_runtime(ctx, &s, &info, path);
                runtime_info_done(&info);
        }
        if (r < 0) {
                cni_keep_set_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

const CniKeep *cni_keep_watched(const CniKeepSet *s, const char *node_path) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].conf_dir, node_path))
                        return s->items + i;
        return NULL;
}

const CniKeep *cni_keep_beneath(const CniKeepSet *s, const char *node_path) {
        for (size_t i = 0; i < s->n; i++)
                if (!streq(s->items[i].conf_dir, node_path) && path_startswith_dir(s->items[i].conf_dir, node_path))
                        return s->items + i;
        return NULL;
}
