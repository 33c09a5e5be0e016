/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The front half of the pipeline: detection, then the profile it selects, then the manifest made of
 * that profile and the operator's files. Every verb that observes a node starts here. */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/config/node-config.h"
#include "macro.h"
#include "string-util.h"

#define SYSTEM_MANIFEST "/etc/node-reset/manifest.conf"

/* What the manifest is made of, in order: a built-in profile (--profile, else the detected one
 * unless a manifest is given), the --manifest files (or /etc/node-reset/manifest.conf when there is
 * neither), and with --with-runtime the runtime's fragment when nothing included it yet. */
static void profile_decide(NodeConfig *c, const NodeConfigOptions *o) {
        c->profile = c->profile_why = NULL;
        if (o->profile) {
                c->profile = o->profile;
                c->profile_why = "--profile";
        } else if (o->n_manifests == 0 && access(SYSTEM_MANIFEST, F_OK) < 0)
                c->profile = profile_for_detection(&c->detection, &c->profile_why);
}

static bool runtime_included(const Manifest *m) {
        for (size_t i = 0; i < m->n_files; i++)
                if (startswith(m->files[i], PROFILE_PREFIX "runtime-"))
                        return true;
        return false;
}

static int parse_include(Manifest *m, const char *source, const char *profile, char **err) {
        cleanup_free char *line = strprintf("include " PROFILE_PREFIX "%s\n", profile);

        if (!line)
                return -ENOMEM;
        return manifest_parse_string(m, source, line, NULL, err);
}

static int manifest_load(const NodeConfig *c, const NodeConfigOptions *o, Manifest **ret) {
        Manifest *m = manifest_new();
        cleanup_free char *err = NULL;
        int r = 0;

        if (!m)
                return log_oom();
        if (c->profile)
                r = parse_include(m, streq_ptr(c->profile_why, "--profile") ? "--profile" : "detection", c->profile,
                                  &err);
        for (size_t i = 0; r >= 0 && i < o->n_manifests; i++)
                r = manifest_parse_file(m, o->manifests[i], &err);
        if (r >= 0 && !c->profile && o->n_manifests == 0)
                r = manifest_parse_file(m, SYSTEM_MANIFEST, &err);
        if (r >= 0 && o->with_runtime && !runtime_included(m) && !streq_ptr(c->profile, "all"))
                r = parse_include(m, "--with-runtime", "runtime", &err);
        if (r < 0) {
                manifest_free(m);
                log_error("%s", err ?: strerror(-r));
                return r;
        }
        *ret = m;
        return 0;
}

/* Detection first: the profile and the run-time fragments depend on it. */
int node_config_load(NodeConfig *c, int root_fd, bool live, const NodeConfigOptions *o) {
        if (detect_node(root_fd, live, &c->detection) < 0)
                return log_oom();
        /* Its installer's paths cannot follow a data directory no line can name: nothing is planned on
         * a guess (the default is not where the state is). */
        if (c->detection.data_dir_refused)
                return log_error_errno(-EINVAL, "%s: refusing to go on (set an absolute data directory)",
                                       c->detection.data_dir_refused);
        c->profile_settings = (ProfileSettings) {
                .detection = &c->detection,
                .with_runtime = o->with_runtime,
                .runtime = o->runtime,
        };
        profile_configure(&c->profile_settings);
        profile_decide(c, o);
        return manifest_load(c, o, &c->manifest);
}

void node_config_done(NodeConfig *c) {
        manifest_free(c->manifest);
        c->manifest = NULL;
        profile_configure(NULL);
        detection_done(&c->detection);
}
