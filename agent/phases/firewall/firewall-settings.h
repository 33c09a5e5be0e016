/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall phase's settings (firewall-settings.c). */
#pragma once

#include <stdbool.h>

#include "agent/config/manifest.h"
#include "netreset/fwclass.h"

/* What the manifest says for the whole phase. */
typedef struct FirewallSettings {
        const ManifestEntry *mode_entry; /* NULL: the built-in default */
        bool keep;
        FwMode mode;
        FwClass *cls;
        char *mode_reason;
} FirewallSettings;

/* Read the "firewall" and "chain-prefix" lines: -EINVAL for a mode that is none, -ENOMEM. */
int firewall_settings_read(const Manifest *m, FirewallSettings *ret);
void firewall_settings_done(FirewallSettings *s);
