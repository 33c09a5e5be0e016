/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the pods phase lends the others: --cri-endpoint, the runtime the files phase and the rejoin
 * verdict ask about the CNI configuration it keeps (cni-keep.h). */
#pragma once

/* --cri-endpoint (unix:///PATH or /PATH), or NULL when it was not given. */
const char *phase_pods_cri_endpoint(void);
