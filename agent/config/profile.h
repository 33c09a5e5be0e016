/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in profiles: each installer's reset as a manifest embedded in the binary, included by name
 * ("include profile:kubeadm"), plus three fragments made at run time from the detection: "runtime"
 * (the runtime's scope: kept, or removed with --with-runtime), "cni-detected" (the detected CNI's
 * own fragment, cni-cilium, cni-calico, ...) and "detected" (a symlinked /var/lib/kubelet, a
 * non-default etcd data directory, this cluster's kubeconfigs in every user's ~/.kube). */
#pragma once

#include <stdbool.h>

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

/* A built-in profile's line, its words (words[0] the directive) rooted at k3s's or rke2's default
 * data dir (/var/lib/rancher/k3s, /var/lib/rancher/rke2) moved in place to the dir detection found
 * configured (rancher-datadir.h): 1 when a word moved, 0 when none did, -ENOMEM. */
int profile_rebase_words(char **words);

/* The names --profile accepts: kubeadm, kubespray, kubekey, k3s, rke2, all. */
bool profile_is_selectable(const char *name);

/* The profile for a detected node, with why: the installer's own, or kubeadm (conservative) when
 * nothing or several were found. Never "all". */
const char *profile_for_detection(const Detection *d, const char **ret_why);
