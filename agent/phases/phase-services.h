/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the services phases tell the reload phase. */
#pragma once

#include <stdbool.h>

#include "agent/engine/plan.h"

/* Does this action change a unit file (a disable, a mask, a file removed beneath a unit directory)? */
bool services_action_changes_unit_files(const Action *a);
