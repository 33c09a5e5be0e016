/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the services phases tell the other phases: which actions change unit files (for reload), and
 * --unit-timeout, which every phase that waits for a systemd job obeys (reload, files' restarts). */
#pragma once

#include <stdbool.h>

#include "agent/engine/plan.h"
#include "time-util.h"

/* Does this action change a unit file (a disable, a mask, a file removed beneath a unit directory)? */
bool services_action_changes_unit_files(const Action *a);

/* --unit-timeout, or 0 when it was not given (services.h's default then). */
usec_t phase_services_unit_timeout(void);
