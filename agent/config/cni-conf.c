/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* CNI configuration files read as libcni reads them: JSON parsed strictly (agent/base/json.c), then
 * libcni's rules for a list and for one plugin, so that a file the runtime refuses is never taken as
 * the node's CNI. */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/base/json.h"
#include "agent/config/cni-conf.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

/* A struct field of Go type string: absent, null or a string. */
static bool field_string_ok(const JsonValue *v) {
        return !v || v->type == JSON_NULL || v->type == JSON_STRING;
}

/* One plugin's configuration, as libcni's PluginConf: its type (and its IPAM's) appended to types. */
static int plugin_types(const JsonValue *plugin, char ***types, const char **why) {
        const JsonValue *type = json_get(plugin, "type", true), *ipam = json_get(plugin, "ipam", true);
        const JsonValue *ipam_type = NULL;
        int r;

        if (plugin->type != JSON_OBJECT)
                return *why = "a plugin's configuration is not a JSON object", -EINVAL;
        if (!field_string_ok(json_get(plugin, "name", true)) || !field_string_ok(json_get(plugin, "cniVersion", true)))
                return *why = "a plugin's name or cniVersion is not a string", -EINVAL;
        if (ipam && ipam->type != JSON_NULL && ipam->type != JSON_OBJECT)
                return *why = "a plugin's ipam is not an object", -EINVAL;
        ipam_type = json_get(ipam, "type", true);
        if (!field_string_ok(type) || !field_string_ok(ipam_type))
                return *why = "a plugin's type is not a string", -EINVAL;
        if (!json_string_of(type))
                return *why = type && type->len > 0 ? "a plugin's type holds a NUL byte" : "a plugin has no type",
                       -EINVAL;
        r = strv_extend_unique(types, type->str);
        if (r >= 0 && json_string_of(ipam_type))
                r = strv_extend_unique(types, ipam_type->str);
        return r < 0 ? r : 0;
}

/* A .conflist, as libcni's NetworkConfFromBytes: a name, and a non-empty list of plugins. */
static int list_types(const JsonValue *list, char ***types, const char **why) {
        const JsonValue *name = json_get(list, "name", false), *version = json_get(list, "cniVersion", false);
        const JsonValue *plugins = json_get(list, "plugins", false);
        int r = 0;

        if (list->type != JSON_OBJECT)
                return *why = "not a JSON object", -EINVAL;
        if (!name || name->type != JSON_STRING)
                return *why = "the list has no name (a string)", -EINVAL;
        if (version && version->type != JSON_STRING)
                return *why = "the list's cniVersion is not a string", -EINVAL;
        if (!plugins || plugins->type != JSON_ARRAY || plugins->n == 0)
                return *why = "the list has no plugins", -EINVAL;
        for (size_t i = 0; r >= 0 && i < plugins->n; i++)
                r = plugin_types(plugins->items[i], types, why);
        return r;
}

bool cni_conf_name_is_rescue(const char *name) {
        size_t n = strlen(name), k = strlen(CNI_RESCUE_SUFFIX);

        return n >= k && streq(name + n - k, CNI_RESCUE_SUFFIX);
}

bool cni_conf_name_loaded(const char *name) {
        const char *ext = strrchr(name, '.');

        return ext && (streq(ext, ".conf") || streq(ext, ".conflist") || streq(ext, ".json"));
}

static char *types_join(char **types) {
        char *joined = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&joined, &size);

        if (!f)
                return NULL;
        STRV_FOREACH(t, types)
                fprintf(f, "%s%s", t == types ? "" : ",", *t);
        if (fclose(f) != 0)
                return mfree(joined);
        return joined;
}

int cni_conf_types(const char *name, const char *text, size_t size, char **ret_types, const char **ret_why) {
        CLEANUP(json_freep) JsonValue *v = NULL;
        cleanup_strv char **types = NULL;
        const char *ext = strrchr(name, '.');
        int r;

        *ret_types = NULL;
        *ret_why = NULL;
        r = json_parse(text, size, &v);
        if (r == -EINVAL)
                *ret_why = "not valid JSON";
        if (r < 0)
                return r;
        if (ext && streq(ext, ".conflist"))
                r = list_types(v, &types, ret_why);
        else
                r = plugin_types(v, &types, ret_why);
        if (r < 0)
                return r;
        *ret_types = types_join(types);
        return *ret_types ? 0 : -ENOMEM;
}
