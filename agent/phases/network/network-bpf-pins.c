/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's BPF pin rows: the paths "bpf-pin" lines name, removed only on a bpf file system
 * (network-bpf.c). */

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/os/remove.h"
#include "agent/phases/network/network-bpf-pins.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "strv.h"

#define PHASE "network"

/* What is at pfd/name, as remove_tree() must find it again: -EXDEV for a directory of another file
 * system than bpf (nothing of it is a pin), 0 when it is gone. */
static int pin_top(int pfd, const char *name, RemoveTop *ret) {
        cleanup_close int fd = -EBADF;
        MountIdentity parent;
        int k;

        fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        k = mount_identity_at(pfd, "", 0, &parent);
        if (k >= 0)
                k = mount_identity_at(fd, "", 0, &ret->id);
        if (k < 0)
                return k;
        if (S_ISDIR(ret->id.mode)) {
                k = bpf_fd_is_bpffs(fd);
                if (k <= 0)
                        return k < 0 ? k : -EXDEV;
        }
        ret->present = true;
        ret->mount_point = mount_identity_other_mount(&parent, &ret->id);
        return 1;
}

/* A pin, or a directory of pins with everything beneath it, removed by the agent's one remover
 * (bounded in fds, never into another mount, the target taken again by identity): 1 removed, 0
 * already gone, -EXDEV when it is not on a bpf file system or one of another is mounted beneath. */
static int pin_remove(const char *path) {
        cleanup_close int pfd = -EBADF;
        cleanup_free char *node = NULL;
        RemoveStats stats = {};
        RemoveTop top = {};
        const char *base;
        bool other;
        int k;

        k = bpf_pin_open_parent(path, &pfd, &base, &other);
        if (k <= 0)
                return other ? -EXDEV : k;
        k = pin_top(pfd, base, &top);
        if (k <= 0)
                return k;
        if (asprintf(&node, "/%s", base) < 0)
                return -ENOMEM;
        k = remove_tree(pfd, node, &(RemoveOptions) { .expect_top = &top }, &stats);
        /* A mount met beneath is left whole: as before, that is "not on a bpf file system". */
        if (k == -EBUSY && stats.kept_mounts)
                k = -EXDEV;
        remove_stats_done(&stats);
        return k;
}

static int pin_apply(Action *a, Context *ctx, char **ret_msg) {
        int k;

        if (!a->data) {
                *ret_msg = strdup("no pin matches");
                return 0;
        }
        k = pin_remove(a->data);
        if (k == -EXDEV)
                *ret_msg = strdup("not on a bpf file system");
        else if (k >= 0)
                *ret_msg = strdup(k > 0 ? "removed" : "already gone");
        return k;
}

static int pin_check(Action *a, Context *ctx, char **ret_msg) {
        struct stat st;

        if (!a->data)
                return 0;
        if (lstat(a->data, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        *ret_msg = strdup("still present");
        return 1;
}

static const ActionOps pin_ops = {
        .kind = "bpf-pin",
        .apply = pin_apply,
        .check = pin_check,
        .free_data = free,
};

/* 1 on a bpf file system, 0 elsewhere. */
static int pin_on_bpffs(const char *path) {
        cleanup_free char *parent = strdup(path);
        cleanup_close int fd = -EBADF;
        char *slash;

        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = 0;
        fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return bpf_fd_is_bpffs(fd);
}

static int plan_pin(Plan *plan, const char *path, const char *reason) {
        struct stat st;
        Action *a;
        int k;

        if (lstat(path, &st) < 0)
                return 0;
        a = plan_add(plan, &pin_ops, PHASE, path, reason, strdup(path));
        if (!a || !a->data)
                return -ENOMEM;
        k = pin_on_bpffs(path);
        if (k <= 0)
                return action_set_skip(a, "refused: not on a bpf file system");
        return action_set_detail(a, S_ISDIR(st.st_mode) ? "a directory of pins, removed with everything beneath"
                                                        : "a pinned BPF object");
}

int network_bpf_plan_pins(Plan *plan, const Manifest *m) {
        cleanup_strv char **seen = NULL;
        int k = 0;

        MANIFEST_FOREACH(e, m, DIRECTIVE_BPF_PIN) {
                cleanup_free char *reason = manifest_entry_reason(e);
                glob_t g = {};
                size_t matched = 0;

                if (!reason)
                        return -ENOMEM;
                if (glob(e->args[0], GLOB_NOSORT, NULL, &g) == 0)
                        for (size_t i = 0; i < g.gl_pathc && k >= 0; i++) {
                                if (strv_contains(seen, g.gl_pathv[i]))
                                        continue;
                                k = strv_extend(&seen, g.gl_pathv[i]);
                                if (k >= 0)
                                        k = plan_pin(plan, g.gl_pathv[i], reason);
                                matched++;
                        }
                globfree(&g);
                if (k >= 0 && matched == 0) {
                        Action *a = plan_add(plan, &pin_ops, PHASE, e->args[0], reason, NULL);

                        if (!a)
                                return -ENOMEM;
                        a->present = false;
                        k = action_set_detail(a, "no pin matches");
                }
                if (k < 0)
                        return k;
        }
        return 0;
}
