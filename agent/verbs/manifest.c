/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest verb: check parses each file given on its own; print shows the manifest plan would
 * use on this node (or --root tree), detection and profile included. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/config/node-config.h"
#include "agent/os/remote-fs.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/manifest.h"
#include "agent/verbs/root.h"
#include "agent/verbs/usage.h"
#include "errno-util.h"
#include "escape.h"
#include "string-util.h"

static int manifest_check(char **files, int n) {
        int ret = EXIT_CLEAN;

        if (n == 0)
                return usage_error("'manifest check' needs at least one FILE"), EXIT_USAGE;
        for (int i = 0; i < n; i++) {
                Manifest *m = manifest_new();
                cleanup_free char *err = NULL;

                if (!m)
                        return log_oom(), EXIT_RESIDUE;
                if (manifest_parse_file(m, files[i], &err) < 0) {
                        fputs_escaped(err ?: files[i], stderr);
                        fputc('\n', stderr);
                        ret = EXIT_USAGE;
                } else {
                        fputs_escaped(files[i], stdout);
                        printf(": ok, %zu directives\n", m->n_entries);
                }
                manifest_free(m);
        }
        return ret;
}

/* The manifest "plan" would use on this node (or --root tree): detection included. */
static int manifest_print_effective(const ProgramOptions *o) {
        cleanup_free char *root = NULL;
        cleanup_close int root_fd = -EBADF;
        NodeConfig c = {};
        int r = EXIT_USAGE;

        if (root_open(o->root, &root, &root_fd) >= 0 && remote_fs_setup(root, root_fd, program_deadline_usec(o)) >= 0 &&
            node_config_load(&c, root_fd, streq(root, "/"), &o->config) >= 0) {
                (void) manifest_print(c.manifest, stdout);
                r = EXIT_CLEAN;
        }
        node_config_done(&c);
        remote_fs_forget();
        return r;
}

int verb_manifest(const ProgramOptions *o, int argc, char *argv[]) {
        if (argc < 2)
                return usage_error("'manifest' needs a subcommand: check or print"), EXIT_USAGE;
        if (streq(argv[1], "check"))
                return manifest_check(argv + 2, argc - 2);
        if (!streq(argv[1], "print"))
                return usage_error("unknown 'manifest' subcommand '%s'", argv[1]), EXIT_USAGE;
        if (argc > 2)
                return usage_error("'manifest print' takes no arguments; use --manifest FILE"), EXIT_USAGE;
        return manifest_print_effective(o);
}
