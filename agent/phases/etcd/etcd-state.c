/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The etcd phase's memory between runs: one "left CLUSTER-ID MEMBER-ID NAME" line per departure, the
 * IDs in hex as etcdctl prints them, newest last, the oldest dropped past a bound. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/phases/etcd/etcd-state.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"

#define STATE_PATH ETCD_STATE_DIR "/" ETCD_STATE_NAME
#define STATE_MAX (64U << 10)
#define STATE_LINES_MAX 32

static int parse_line(const char *line, NodeEtcdLeft *ret) {
        NodeEtcdLeft e = {};
        int n = 0;

        if (sscanf(line, "left %16" SCNx64 " %16" SCNx64 " %n", &e.cluster_id, &e.member_id, &n) != 2 || n == 0)
                return -EBADMSG;
        if (strlen(line + n) >= sizeof e.name || !line[n])
                return -EBADMSG;
        strcpy(e.name, line + n);
        *ret = e;
        return 0;
}

int node_etcd_state_find_left(const Context *ctx, uint64_t cluster_id, const char *name, NodeEtcdLeft *ret) {
        cleanup_free char *text = NULL;
        char *save = NULL;
        int found = 0, r;

        r = fileio_read_beneath(ctx->root_fd, STATE_PATH, STATE_MAX, &text, NULL);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                NodeEtcdLeft e;

                /* A line that does not parse is evidence of nothing. */
                if (parse_line(line, &e) < 0 || !streq(e.name, name))
                        continue;
                if (cluster_id != 0 && e.cluster_id != cluster_id)
                        continue;
                *ret = e;
                found = 1;
        }
        return found;
}

/* The lines kept from the old file: the newest STATE_LINES_MAX - 1 that parse. */
static char *kept_lines(char *text) {
        const char *lines[STATE_LINES_MAX];
        size_t n = 0, len = 0;
        char *save = NULL, *out, *p;

        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                NodeEtcdLeft e;

                if (parse_line(line, &e) < 0)
                        continue;
                if (n == STATE_LINES_MAX - 1)
                        memmove(lines, lines + 1, --n * sizeof lines[0]);
                lines[n++] = line;
        }
        for (size_t i = 0; i < n; i++)
                len += strlen(lines[i]) + 1;
        out = p = malloc(len + 1);
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++)
                p = stpcpy(stpcpy(p, lines[i]), "\n");
        *p = '\0';
        return out;
}

int node_etcd_state_record_left(const Context *ctx, uint64_t cluster_id, uint64_t member_id, const char *name) {
        cleanup_free char *old = NULL, *kept = NULL, *text = NULL;
        cleanup_close int dfd = -EBADF;
        int r;

        if (strchr(name, '\n') || strlen(name) >= sizeof(((NodeEtcdLeft *) NULL)->name))
                return -EINVAL;
        r = fileio_read_beneath(ctx->root_fd, STATE_PATH, STATE_MAX, &old, NULL);
        if (r < 0 && r != -ENOENT)
                return r;
        char empty[1] = "";

        kept = kept_lines(old ?: empty);
        text = kept ? strprintf("%sleft %016" PRIx64 " %016" PRIx64 " %s\n", kept, cluster_id, member_id, name) : NULL;
        if (!text)
                return -ENOMEM;
        dfd = fileio_mkdir_beneath(ctx->root_fd, ETCD_STATE_DIR, 0755);
        if (dfd < 0)
                return dfd;
        return fileio_write_atomic(dfd, ETCD_STATE_NAME, text, strlen(text), 0644);
}
