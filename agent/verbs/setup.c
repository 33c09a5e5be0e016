/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The common start of plan, run and status: refuse without privileges, select the phases, open the
 * root, load the node's configuration and hand the context what the phases read. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/node-name.h"
#include "agent/os/remote-fs.h"
#include "agent/phases/phases.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/root.h"
#include "agent/verbs/setup.h"
#include "agent/verbs/usage.h"
#include "errno-util.h"
#include "string-util.h"

const CmdlineOption *const setup_options[] = { SETUP_OPTIONS, NULL };

void setup_done(Setup *s) {
        mount_table_free(s->ctx.mounts);
        phase_table_done(&s->ctx);
        (void) close_nointr(s->ctx.root_fd);
        free(s->root);
        free(s->hostname);
        node_config_done(&s->config);
        remote_fs_forget();
}

/* "backup, mounts, files": the phases whose row says they act on the tree (Phase.tree). */
static void tree_phase_list(char *buf, size_t size) {
        size_t n, len = 0;
        const Phase *table = phase_table(&n);

        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++)
                if (table[i].tree)
                        len += snprintf(buf + len, size - len, "%s%s", len > 0 ? ", " : "", table[i].name);
}

int setup_node(Setup *s, const ProgramOptions *o) {
        cleanup_free char *err = NULL;
        char tree_phases[256];
        int r;

        *s = (Setup) { .ctx.root_fd = -EBADF };
        if (geteuid() != 0 && !o->root) {
                log_error("Refusing to act on this node without root privileges (use --root DIR for a tree).");
                return EXIT_REFUSED;
        }
        if (phase_selection_parse(&s->sel, o->phases, o->skip_phases, o->root && !o->phases, &err) < 0)
                return usage_error("%s", err), EXIT_USAGE;
        if (o->root && !o->phases) {
                tree_phase_list(tree_phases, sizeof tree_phases);
                log_info("--root: only the phases that act on the tree (%s) run; name others with --phases to act on "
                         "the running system.",
                         tree_phases);
        }
        if (root_open(o->root, &s->root, &s->ctx.root_fd) < 0)
                return EXIT_USAGE;
        /* Before the first read beneath the tree: a home or a data directory on a file system that does
         * not answer must not hang detection. Without mountinfo, reads are not bounded. */
        r = remote_fs_setup(s->root, s->ctx.root_fd, program_deadline_usec(o));
        if (r < 0)
                log_warning_errno(
                        r, "Cannot tell which mounts are network or FUSE file systems, reading them unbounded: %m");
        if (node_config_load(&s->config, s->ctx.root_fd, streq(s->root, "/"), &o->config) < 0)
                return EXIT_USAGE;
        if (node_host_name(s->ctx.root_fd, streq(s->root, "/"), &s->hostname) < 0)
                return log_oom(), EXIT_USAGE;
        s->ctx.root = s->root;
        s->ctx.manifest = s->config.manifest;
        s->ctx.cni_config = s->config.detection.cni_loaded;
        s->ctx.installer = s->config.detection.installer;
        s->ctx.lazy_unmount = o->lazy_unmount;
        s->ctx.kubeconfig = o->kubeconfig;
        s->ctx.node_name = o->node_name;
        s->ctx.deadline_usec = program_deadline_usec(o);
        return 0;
}
