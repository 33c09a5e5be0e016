/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The front half of the pipeline in one call: detect the node, pick its profile, load its manifest. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/config/detect.h"
#include "agent/config/manifest.h"
#include "agent/config/profile.h"

/* What the operator chose instead of detecting (--profile, --manifest, --with-runtime). */
typedef struct NodeConfigOptions {
        const char *profile; /* --profile; NULL: the detected one, unless a manifest is given */
        char **manifests;    /* --manifest files, in order */
        size_t n_manifests;
        bool with_runtime;
        const char *runtime; /* --with-runtime=RUNTIME; NULL: the detected runtime */
} NodeConfigOptions;

typedef struct NodeConfig {
        Detection detection;
        /* profile_configure() keeps a pointer to this: a loaded NodeConfig does not move. */
        ProfileSettings profile_settings;
        const char *profile;     /* the built-in profile included; NULL when a manifest replaces it */
        const char *profile_why; /* "--profile", or why detection chose it */
        Manifest *manifest;
} NodeConfig;

/* Fill *c (zeroed by the caller) for the tree at root_fd (live: the running node's own "/"). A
 * manifest error is logged; returns -errno, *c then to be freed all the same. */
int node_config_load(NodeConfig *c, int root_fd, bool live, const NodeConfigOptions *o);
/* Free what node_config_load() filled in, and forget the profile's settings. */
void node_config_done(NodeConfig *c);
