/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A user's kubeconfig without this cluster's entries: what "kubectl config delete-context",
 * "delete-cluster" and "delete-user" would leave. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "agent/config/kubeconfig-entries.h"

/* kubeconfig_entries() (kubeconfig-entries.h), and with emit, when this cluster's entries are there and others
 * stay, the text without them: written by libyaml's emitter, read back and compared with what was
 * meant before it is given. Returns 1 when something is of these clusters, 0 when nothing is,
 * -EBADMSG when the text is no kubeconfig that can be edited (malformed, two documents, two entries
 * of one name, ...; *reterr says why), -ENOMEM. */
int kubeconfig_prune(const char *path, const char *text, size_t size, int root_fd, const KubeClusterId *ids,
                     size_t n_ids, bool emit, KubeconfigPrune *ret, char **reterr);
