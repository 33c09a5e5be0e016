/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in profiles: each installer's reset as a manifest embedded in the binary, included by name
 * ("include profile:kubeadm"), "detected" (the profile detection chose for this node, whole: a site
 * manifest that includes it extends it), plus three fragments made at run time from the detection:
 * "runtime" (the runtime's scope: kept, or removed with --with-runtime), "cni-detected" (the
 * detected CNI's own fragment, cni-cilium, cni-calico, ...) and "node" (a symlinked
 * /var/lib/kubelet, a non-default etcd data directory, this cluster's kubeconfigs in every user's
 * ~/.kube), which every profile includes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/config/detect.h"

#define PROFILE_PREFIX "profile:"

typedef struct ProfileText {
        const char *name;
        const char *text;
} ProfileText;

/* The embedded fragments, NULL-name terminated (profile-data.c). */
extern const ProfileText profile_texts[];

typedef struct ProfileSettings {
        const Detection *detection; /* NULL: nothing was looked at ("manifest check") */
        bool with_runtime;
        const char *runtime; /* --with-runtime=NAME; NULL: the detected runtime */
} ProfileSettings;

/* What the run-time fragments are made from; s must outlive every parse. NULL resets. */
void profile_configure(const ProfileSettings *s);

/* The text of profile or fragment "name" (without "profile:"), malloc'd, and the name it resolved to
 * ("runtime" becomes "runtime-keep", "runtime-containerd", ...). -ENOENT for an unknown name, -EINVAL
 * when "runtime" cannot be resolved (--with-runtime without a known runtime); *reterr says why. */
int profile_text(const char *name, const char **ret_name, char **ret, char **reterr);

/* A built-in profile's line (words[0] the directive) whose paths lie beneath an installer's default
 * data dir (/var/lib/rancher/k3s, /var/lib/rancher/rke2) that detection found configured elsewhere or
 * reached through a symlink (installers.h, rancher-datadir.h): 0 when nothing moves (the caller
 * applies the line as it is); 1 when it moved, fn having been called with each line it became: the
 * paths rebased onto the data dir found, and the data dir itself replaced by one line per entry its
 * installer creates there (a moved data dir may be shared: "data-dir: /data" must never become
 * "remove /data"), plus the default dir itself when it is a symlink. <0: fn's error or -ENOMEM. The
 * words may be changed. */
typedef int (*profile_line_fn)(char **words, void *userdata);
int profile_rebase_line(char **words, profile_line_fn fn, void *userdata);

/* Does a word of this line lie beneath a moved data dir, whose default dir is no symlink to it? A
 * protect line then keeps protecting the default too (a line elsewhere may still name it); beneath a
 * default dir that is the link, nothing lies but what the rebased line protects. */
bool profile_rebase_keeps_default(char *const *words);

/* The names --profile accepts, from the installers' profiles and "all": the i-th, NULL past the last. */
const char *profile_selectable_nth(size_t i);
bool profile_is_selectable(const char *name);
/* The runtimes --with-runtime=RUNTIME names (each has its fragment): the i-th, NULL past the last. */
const char *profile_runtime_nth(size_t i);
bool profile_runtime_is_known(const char *name);

/* The profile for a detected node, with why: the installer's own, or kubeadm (conservative) when
 * nothing or several were found. Never "all". */
const char *profile_for_detection(const Detection *d, const char **ret_why);
