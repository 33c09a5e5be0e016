/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Pinned BPF objects: the ids of what a bpf file system holds, and where a pin's directory is. */

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "dirent-util.h"
#include "errno-util.h"
#include "macro.h"
#include "netreset/bpf.h"
#include "string-util.h"

/* ---- pinned objects ---- */

static const char *const obj_kind_names[_BPF_OBJ_KIND_MAX] = {
        [BPF_OBJ_MAP] = "map",
        [BPF_OBJ_PROG] = "prog",
        [BPF_OBJ_LINK] = "link",
};

/* A bpf fd's kind and id, from its fdinfo: the first "*_type:" line names the kind ("map_type",
 * "prog_type", "link_type"), "KIND_id:" then gives the id (a link's fdinfo names its program's id
 * too, after its own). */
static int obj_fdinfo(int fd, BpfObjKind *ret_kind, uint32_t *ret_id) {
        cleanup_fclose FILE *f = NULL;
        char path[64], line[256], key[32];
        int kind = -1;

        snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof line, f)) {
                unsigned v;
                char want[40];

                /* A link's type is a word ("link_type:\txdp"), a map's or program's a number. */
                if (sscanf(line, "%31[^:]:", key) != 1)
                        continue;
                for (int i = 0; kind < 0 && i < _BPF_OBJ_KIND_MAX; i++) {
                        snprintf(want, sizeof want, "%s_type", obj_kind_names[i]);
                        if (streq(key, want))
                                kind = i;
                }
                if (kind < 0)
                        continue;
                snprintf(want, sizeof want, "%s_id", obj_kind_names[kind]);
                if (streq(key, want) && sscanf(line, "%*[^:]:\t%u", &v) == 1) {
                        *ret_kind = (BpfObjKind) kind;
                        *ret_id = v;
                        return 0;
                }
        }
        return -ENOENT;
}

static int pinned_ids_add(BpfPinnedIds *ids, BpfObjKind kind, uint32_t id) {
        uint32_t *v;

        if (bpf_pinned_ids_contain(ids, kind, id))
                return 0;
        v = reallocarray(ids->ids[kind], ids->n[kind] + 1, sizeof *v);
        if (!v)
                return -ENOMEM;
        ids->ids[kind] = v;
        v[ids->n[kind]++] = id;
        return 0;
}

/* The pin name in dfd, a regular file on a bpf file system. BPF_OBJ_GET takes a path only: the
 * directory is named through its fd, so the walk stays where it was. libbpf 0.x has no
 * bpf_obj_get_opts and the kernel hands a BPF link out read-write only: the fd is used for its
 * fdinfo and nothing else. */
static int pinned_read(BpfPinnedIds *ids, int dfd, const char *name) {
        cleanup_close int fd = -EBADF;
        char path[64 + NAME_MAX];
        BpfObjKind kind = BPF_OBJ_MAP;
        uint32_t id = 0;

        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dfd, name);
        fd = bpf_obj_get(path);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (obj_fdinfo(fd, &kind, &id) < 0)
                return 0;
        return pinned_ids_add(ids, kind, id);
}

static int pinned_walk(BpfPinnedIds *ids, int dfd, const char *name, unsigned depth) {
        cleanup_closedir DIR *d = NULL;
        cleanup_close int fd = -EBADF;
        struct stat st;
        int r = 0, k;

        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (S_ISREG(st.st_mode))
                return pinned_read(ids, dfd, name);
        if (!S_ISDIR(st.st_mode) || depth >= 32)
                return 0;
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        /* Another file system mounted beneath holds no pins. */
        k = bpf_fd_is_bpffs(fd);
        if (k <= 0)
                return k;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        FOREACH_DIRENT(de, d) {
                k = pinned_walk(ids, dirfd(d), de->d_name, depth + 1);
                if (k < 0 && r >= 0)
                        r = k;
        }
        return r;
}

int bpf_pin_open_parent(const char *path, int *ret_fd, const char **ret_base, bool *ret_other) {
        cleanup_free char *parent = NULL;
        cleanup_close int pfd = -EBADF;
        const char *base;
        int k;

        *ret_other = false;
        base = strrchr(path, '/');
        if (!base || base[1] == 0 || path[0] != '/')
                return -EINVAL;
        parent = strndup(path, (size_t) (base - path) ?: 1);
        if (!parent)
                return -ENOMEM;
        pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOENT ? 0 : -errno;
        k = bpf_fd_is_bpffs(pfd);
        if (k <= 0) {
                *ret_other = k == 0;
                return k;
        }
        *ret_fd = TAKE_FD(pfd);
        *ret_base = base + 1;
        return 1;
}

int bpf_pinned_ids_collect(BpfPinnedIds *ids, const char *path) {
        cleanup_close int pfd = -EBADF;
        const char *base;
        bool other;
        int k;

        k = bpf_pin_open_parent(path, &pfd, &base, &other);
        if (k <= 0)
                return k;
        return pinned_walk(ids, pfd, base, 0);
}

bool bpf_pinned_ids_contain(const BpfPinnedIds *ids, BpfObjKind kind, uint32_t id) {
        for (size_t i = 0; id > 0 && i < ids->n[kind]; i++)
                if (ids->ids[kind][i] == id)
                        return true;
        return false;
}

void bpf_pinned_ids_done(BpfPinnedIds *ids) {
        for (size_t i = 0; i < _BPF_OBJ_KIND_MAX; i++) {
                ids->ids[i] = mfree(ids->ids[i]);
                ids->n[i] = 0;
        }
}

/* ---- pins ---- */

int bpf_fd_is_bpffs(int fd) {
        struct statfs s;

        if (fstatfs(fd, &s) < 0)
                return -errno;
        return s.f_type == (typeof(s.f_type)) BPF_FS_MAGIC;
}
