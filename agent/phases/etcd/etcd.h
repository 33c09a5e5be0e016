/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the etcd phase lends the other phases: --etcd-timeout, which the backup's snapshot obeys too. */
#pragma once

#include "time-util.h"

/* --etcd-timeout, or 0 when it was not given (each caller has its own default). */
usec_t phase_etcd_timeout(void);
