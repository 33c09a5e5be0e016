/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each CNI (cilium, calico, flannel, kube-router, weave) leaves on a node: one static const row per
 * CNI, read by the CNI detector, the profile's fragment choice and the pods phase. No other file of
 * agent/ spells a CNI's path or link name (tests/integration/test-tables.sh). */
#pragma once

/* The CNI specification's default configuration directory (containernetworking/cni libcni), which
 * kubelet's runtimes read unless configured otherwise. */
#define CNI_CONF_DIR "/etc/cni/net.d"
