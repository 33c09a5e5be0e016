/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The network phase's links (links.c). */
#pragma once

#include "agent/config/manifest.h"
#include "agent/phases/network/network-observation.h"

/* The first link or link-master line that selects l, or NULL. */
const ManifestEntry *network_link_selected_by(const Manifest *m, const LinkTable *t, const LinkInfo *l);

/* A tunnel driver's fallback device (tunl0, sit0), which cannot be deleted: 1 when it is up or has
 * addresses (not yet reset), 0 when down with none; *ret_n_addrs its address count. -errno. */
int network_fallback_state(NlSocket *rtnl, const LinkInfo *l, int *ret_n_addrs);

/* The rows of the link and link-master lines: one batch, deleted after the routes. */
int network_plan_links(Plan *plan, const NetworkObservation *o, const Manifest *m);
