/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the manifest says for the whole firewall phase: its mode ("firewall" lines, the last wins) and
 * the chain prefixes it owns. */

#include <errno.h>
#include <stdlib.h>

#include "agent/phases/firewall/firewall-settings.h"
#include "macro.h"
#include "netreset/fwclass.h"
#include "string-util.h"

void firewall_settings_done(FirewallSettings *s) {
        fwclass_free(s->cls);
        free(s->mode_reason);
}

int firewall_settings_read(const Manifest *m, FirewallSettings *ret) {
        *ret = (FirewallSettings) { .mode = FW_MODE_OWNED };
        MANIFEST_FOREACH(e, m, DIRECTIVE_FIREWALL)
                ret->mode_entry = e;
        if (ret->mode_entry) {
                ret->keep = streq(ret->mode_entry->args[0], "keep");
                if (!ret->keep)
                        ret->mode = fw_mode_from_string(ret->mode_entry->args[0]);
                if (ret->mode < 0)
                        return -EINVAL;
        }
        ret->cls = fwclass_new();
        if (!ret->cls)
                return -ENOMEM;
        MANIFEST_FOREACH(e, m, DIRECTIVE_CHAIN_PREFIX)
                if (fwclass_add_prefix(ret->cls, e->args[0]) < 0)
                        return -ENOMEM;
        ret->mode_reason =
                ret->mode_entry ? manifest_entry_reason(ret->mode_entry) : strdup("built-in default: firewall owned");
        return ret->mode_reason ? 0 : -ENOMEM;
}
