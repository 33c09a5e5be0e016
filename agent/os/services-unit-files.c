/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What a unit leaves in systemd's configuration and state, undone over D-Bus: its unit files disabled or
 * masked, the manager reloaded, a failed state reset. */

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>

#include "agent/os/services-internal.h"
#include "agent/os/services-unit-files.h"
#include "agent/os/services.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "time-util.h"

/* The a(sss) changes list of an install method, as "removed X; created Y -> Z". */
static int changes_describe(sd_bus_message *reply, char **ret, unsigned *ret_n) {
        cleanup_free char *buf = NULL;
        const char *type, *path, *source;
        unsigned n = 0;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "(sss)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sss)", &type, &path, &source)) > 0) {
                char *t;

                if (streq(type, "unlink"))
                        r = asprintf(&t, "%s%sremoved %s", strempty(buf), buf ? "; " : "", path);
                else if (streq(type, "symlink"))
                        r = asprintf(&t, "%s%screated %s -> %s", strempty(buf), buf ? "; " : "", path, source);
                else
                        continue;
                if (r < 0)
                        return -ENOMEM;
                free(buf);
                buf = t;
                n++;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        *ret_n = n;
        return 0;
}

/* Call DisableUnitFiles or MaskUnitFiles on one unit; 1 and the changes when there were any. */
static int unit_files_call(ServiceManager *m, const char *method, const char *unit, bool runtime, char **ret_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *req = NULL, *reply = NULL;
        cleanup_free char *changes = NULL;
        unsigned n = 0;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &req, SD_DESTINATION, SD_PATH, SD_MANAGER, method);
        if (r >= 0)
                r = sd_bus_message_append_strv(req, (char *[]) { (char *) unit, NULL });
        if (r >= 0)
                r = sd_bus_message_append(req, "b", (int) runtime);
        if (r >= 0 && streq(method, "MaskUnitFiles"))
                r = sd_bus_message_append(req, "b", 0); /* force: never replace a real unit file */
        if (r >= 0)
                r = sd_bus_call(m->bus, req, 0, &e, &reply);
        if (r < 0 && services_bus_error_is_absent(&e))
                return set_errmsg(ret_msg, 0, "no unit file");
        if (r < 0)
                return services_bus_fail(ret_msg, r, &e, method);
        r = changes_describe(reply, &changes, &n);
        if (r < 0)
                return set_errmsg(ret_msg, r, "%s: cannot read the changes: %s", method, strerror(-r));
        if (n == 0)
                return 0;
        *ret_msg = TAKE_PTR(changes);
        return 1;
}

int services_disable(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_free char *state = NULL, *more = NULL;
        int r, k;

        r = services_unit_file_state(m, unit, &state);
        if (r == -ENOENT)
                return set_errmsg(ret_msg, 0, "no unit file");
        if (r < 0)
                return set_errmsg(ret_msg, r, "GetUnitFileState: %s", strerror(-r));
        r = unit_files_call(m, "DisableUnitFiles", unit, false, ret_msg);
        if (r < 0 || !strstr(state, "-runtime"))
                goto finish;
        k = unit_files_call(m, "DisableUnitFiles", unit, true, &more);
        if (k < 0)
                r = k;
        if (k != 0 && more) {
                char *t;

                if (asprintf(&t, "%s%s%s", strempty(*ret_msg), *ret_msg ? "; " : "", more) < 0)
                        return -ENOMEM;
                free(*ret_msg);
                *ret_msg = t;
        }
        if (r >= 0 && k > 0)
                r = 1;
finish:
        if (r == 0 && !*ret_msg)
                (void) set_errmsg(ret_msg, 0, "not enabled (%s)", state);
        return r;
}

int services_mask(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_free char *state = NULL;
        int r;

        r = services_unit_file_state(m, unit, &state);
        if (r < 0 && r != -ENOENT)
                return set_errmsg(ret_msg, r, "GetUnitFileState: %s", strerror(-r));
        if (r >= 0 && startswith(state, "masked"))
                return set_errmsg(ret_msg, 0, "already %s", state);
        r = unit_files_call(m, "MaskUnitFiles", unit, false, ret_msg);
        if (r == 0 && !*ret_msg)
                (void) set_errmsg(ret_msg, 0, "nothing to change");
        return r;
}

int services_reload(ServiceManager *m, uint64_t timeout_usec, char **reterr_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        cleanup_bus_message sd_bus_message *req = NULL;
        int r;

        r = sd_bus_message_new_method_call(m->bus, &req, SD_DESTINATION, SD_PATH, SD_MANAGER, "Reload");
        if (r >= 0)
                r = sd_bus_call(m->bus, req, timeout_usec ?: SERVICES_STOP_TIMEOUT_USEC, &e, NULL);
        if (r < 0)
                return services_bus_fail(reterr_msg, r, &e, "Reload");
        return 1;
}

int services_reset_failed(ServiceManager *m, const char *unit, char **ret_msg) {
        cleanup_bus_error sd_bus_error e = SD_BUS_ERROR_NULL;
        UnitStatus s;
        int r;

        r = services_unit_status(m, unit, &s);
        if (r == -ENOENT)
                return set_errmsg(ret_msg, 0, "not loaded");
        if (r < 0)
                return set_errmsg(ret_msg, r, "cannot read its state: %s", strerror(-r));
        if (!streq(s.active_state, "failed"))
                return set_errmsg(ret_msg, 0, "not failed (%s)", s.active_state);
        r = sd_bus_call_method(m->bus, SD_DESTINATION, SD_PATH, SD_MANAGER, "ResetFailedUnit", &e, NULL, "s", unit);
        if (r < 0 && services_bus_error_is_absent(&e))
                return set_errmsg(ret_msg, 0, "not loaded");
        if (r < 0)
                return services_bus_fail(ret_msg, r, &e, "ResetFailedUnit");
        return set_errmsg(ret_msg, 1, "failed state reset");
}
