/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manifest verbs: "manifest check" parses each file given on its own; "manifest print" shows the
 * manifest plan would use on this node (or --root tree), detection and profile included. Both print
 * text, or JSON with -o json. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/base/log.h"
#include "agent/config/manifest-directives.h"
#include "agent/config/node-config.h"
#include "agent/os/remote-fs.h"
#include "agent/verbs/exit-status.h"
#include "agent/verbs/root.h"
#include "agent/verbs/usage.h"
#include "agent/verbs/verb.h"
#include "errno-util.h"
#include "escape.h"
#include "string-util.h"

/* One file: "FILE: ok, N directives" (text), or its error on stderr; a member of "files" (JSON). */
static int check_one(Emitter *e, const char *file) {
        cleanup_free char *err = NULL;
        Manifest *m = manifest_new();
        int r;

        if (!m)
                return log_oom();
        r = manifest_parse_file(m, file, &err);
        if (r < 0) {
                fputs_escaped(err ?: file, stderr);
                fputc('\n', stderr);
        }
        emit_open_object(e, NULL);
        emit_string(e, COLOR_NONE, "file", r >= 0 ? "%s" : NULL, file);
        emit_bool(e, "ok", NULL, r >= 0);
        if (r >= 0) {
                emit_uint(e, COLOR_NONE, "directives", ": ok, %llu directives\n", m->n_entries);
                emit_null(e, "error");
        } else {
                emit_null(e, "directives");
                emit_string(e, COLOR_NONE, "error", NULL, err ?: strerror(-r));
        }
        emit_close_object(e);
        manifest_free(m);
        return r < 0 && r != -ENOMEM ? -EINVAL : r;
}

static int run_check(const ProgramOptions *o, int argc, char *argv[]) {
        int ret = EXIT_CLEAN;
        Emitter e;

        if (argc < 3)
                return usage_error("'manifest check' needs at least one FILE"), EXIT_USAGE;
        emitter_init(&e, stdout, o->output, color_wanted(stdout));
        emit_open_object(&e, NULL);
        emit_open_array(&e, "files");
        for (int i = 2; i < argc; i++) {
                int r = check_one(&e, argv[i]);

                if (r == -ENOMEM)
                        return EXIT_RESIDUE;
                if (r < 0)
                        ret = EXIT_USAGE;
        }
        emit_close_array(&e);
        emit_close_object(&e);
        return ret;
}

/* The manifest as JSON: the files read, then each entry with its directive, words, file and line. */
static void manifest_json(const Manifest *m, FILE *f) {
        Emitter e;

        emitter_init(&e, f, OUTPUT_JSON, false);
        emit_open_object(&e, NULL);
        emit_open_array(&e, "files");
        for (size_t i = 0; i < m->n_files; i++)
                emit_string(&e, COLOR_NONE, NULL, NULL, m->files[i]);
        emit_close_array(&e);
        emit_open_array(&e, "entries");
        for (size_t i = 0; i < m->n_entries; i++) {
                const ManifestEntry *x = m->entries + i;

                emit_open_object(&e, NULL);
                emit_string(&e, COLOR_NONE, "directive", NULL, directive_type_to_string(x->type));
                emit_open_array(&e, "args");
                for (size_t j = 0; j < x->n_args; j++)
                        emit_string(&e, COLOR_NONE, NULL, NULL, x->args[j]);
                emit_close_array(&e);
                emit_string(&e, COLOR_NONE, "file", NULL, x->file);
                emit_uint(&e, COLOR_NONE, "line", NULL, x->line);
                emit_bool(&e, "system_path", NULL, x->system_path);
                emit_close_object(&e);
        }
        emit_close_array(&e);
        emit_close_object(&e);
}

/* The manifest "plan" would use on this node (or --root tree): detection included. */
static int run_print(const ProgramOptions *o, int argc, char *argv[]) {
        cleanup_free char *root = NULL;
        cleanup_close int root_fd = -EBADF;
        NodeConfig c = {};
        int r = EXIT_USAGE;

        if (root_open(o->root, &root, &root_fd) >= 0 && remote_fs_setup(root, root_fd, program_deadline_usec(o)) >= 0 &&
            node_config_load(&c, root_fd, streq(root, "/"), &o->config) >= 0) {
                if (o->output == OUTPUT_JSON)
                        manifest_json(c.manifest, stdout);
                else if (o->output == OUTPUT_TEXT)
                        (void) manifest_print(c.manifest, stdout);
                r = EXIT_CLEAN;
        }
        node_config_done(&c);
        remote_fs_forget();
        return r;
}

static const CmdlineOption *const check_options[] = { OPTIONS_COMMON, &option_output, NULL };

const Verb manifest_check_verb = {
        .name = "manifest check",
        .operands = "FILE...",
        .summary = "Validate manifest files",
        .options = check_options,
        .operand_complete = CMDLINE_COMPLETE_FILE,
        .run = run_check,
};

static const CmdlineOption *const print_options[] = {
        OPTIONS_COMMON,  &option_output,       &option_root,    &option_manifest,
        &option_profile, &option_with_runtime, &option_timeout, NULL,
};

const Verb manifest_print_verb = {
        .name = "manifest print",
        .summary = "Show the effective manifest, detection and profile included",
        .options = print_options,
        .run = run_print,
};
