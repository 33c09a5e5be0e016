/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit files disabled or masked, the manager reloaded, a failed state reset (services-unit-files.c). */
#pragma once

#include <stdint.h>

typedef struct ServiceManager ServiceManager;

/* DisableUnitFiles(runtime=false, and runtime=true for an "-runtime" state): 1 with the changes
 * ("removed /etc/systemd/system/multi-user.target.wants/kubelet.service") in *ret_msg, 0 when
 * nothing was enabled or there is no unit file. */
int services_disable(ServiceManager *m, const char *unit, char **ret_msg);
/* MaskUnitFiles(runtime=false, force=false): 0 when already masked. */
int services_mask(ServiceManager *m, const char *unit, char **ret_msg);
/* Reload(): waits until systemd has reloaded, at most timeout_usec (0: the default). */
int services_reload(ServiceManager *m, uint64_t timeout_usec, char **reterr_msg);
/* ResetFailedUnit() on a failed unit: 1; 0 when it is not loaded or not failed. */
int services_reset_failed(ServiceManager *m, const char *unit, char **ret_msg);
