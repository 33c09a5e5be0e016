/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pods phase's choice of CNI teardown and of concurrency. A CNI DEL exists to undo what ADD made:
 * when every plugin of the loaded configuration only made state of this node (a veth, an address in a
 * host-local file, a CNI- chain) and this run's network, firewall and files phases remove that state
 * anyway, waiting for the DEL of every pod is waiting for nothing; a plugin that keeps state elsewhere
 * (calico-ipam's blocks in the datastore, cilium's endpoints in its agent) still gets its DEL. */

#include <string.h>

#include "agent/base/json.h"
#include "agent/config/cni-conf.h"
#include "agent/config/cnis.h"
#include "agent/engine/phase.h"
#include "agent/os/fileio.h"
#include "agent/phases/pods/pods-teardown.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define CNI_CONFIG_MAX (1024 * 1024)
#define CNI_STATE_DIR CNI_CACHE_DIR

/* IPAM plugins that take a node-wide lock around every ADD and DEL. */
static const char *const locking_ipams[] = { "host-local", "calico-ipam" };

/* What a plugin type is. Its CNI's row says whether its DEL only undoes node state that this run's
 * later phases remove (the reference plugins, and flannel, which delegates to bridge and keeps its
 * delegate's config under the CNI cache) or talks to an agent running as a host-network pod (cnis.h).
 * Never node-local: dhcp (a lease on a server), host-device (a device moved back), bandwidth (its ifb
 * device on the host, which no phase knows by name), firewall (with its firewalld backend, a zone entry
 * in firewalld) or anything unknown. */
typedef enum TypeIs {
        TYPE_NODE_LOCAL,
        TYPE_AGENT,
        TYPE_LOCKING_IPAM,
} TypeIs;

static bool type_is(const char *type, size_t len, TypeIs what) {
        const CniInfo *c;
        char t[64];

        if (what == TYPE_LOCKING_IPAM) {
                for (size_t i = 0; i < ELEMENTSOF(locking_ipams); i++)
                        if (strlen(locking_ipams[i]) == len && strncmp(locking_ipams[i], type, len) == 0)
                                return true;
                return false;
        }
        if (len >= sizeof t)
                return false;
        memcpy(t, type, len);
        t[len] = '\0';
        c = cni_by_type(t);
        return c && (what == TYPE_NODE_LOCAL ? c->node_local : c->agent);
}

/* The first type of a comma-separated list that is (want) or is not (!want) what. */
static bool any_type(const char *types, TypeIs what, bool want, const char **ret, size_t *ret_len) {
        for (const char *p = types; p && *p;) {
                size_t len = strcspn(p, ",");

                if (len > 0 && type_is(p, len, what) == want) {
                        if (ret)
                                *ret = p;
                        if (ret_len)
                                *ret_len = len;
                        return true;
                }
                p += len + (p[len] == ',');
        }
        return false;
}

bool pods_teardown_node_local(const char *types, const char **ret_first_other, size_t *ret_len) {
        if (!types || !*types)
                return false;
        return !any_type(types, TYPE_NODE_LOCAL, false, ret_first_other, ret_len);
}

static bool path_covers(const char *dir, const char *path) {
        const char *rest = startswith(path, dir);

        return streq(dir, "/") || (rest && (*rest == 0 || *rest == '/'));
}

/* The later phases this run plans remove what the plugins made: links and netns (network), CNI-
 * chains (firewall), the IPAM files (files, with a remove line covering /var/lib/cni). */
static const char *later_phases_missing(const Context *ctx) {
        bool state = false;

        if (!phase_selected(ctx, "network"))
                return "the network phase is not part of this run";
        if (!phase_selected(ctx, "firewall"))
                return "the firewall phase is not part of this run";
        if (!phase_selected(ctx, "files"))
                return "the files phase is not part of this run";
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_FIREWALL)
                if (e->n_args > 0 && streq(e->args[0], "keep"))
                        return "the manifest keeps the firewall (firewall keep)";
        MANIFEST_FOREACH(e, ctx->manifest, DIRECTIVE_REMOVE)
                if (e->n_args > 0 && path_covers(e->args[0], CNI_STATE_DIR))
                        state = true;
        return state ? NULL : "the manifest does not remove " CNI_STATE_DIR;
}

static int set_why(PodsTeardown *t, PodsTeardownKind kind, const char *fmt, ...) _printf_(3, 4);
static int set_why(PodsTeardown *t, PodsTeardownKind kind, const char *fmt, ...) {
        va_list ap;

        t->kind = kind;
        va_start(ap, fmt);
        t->why = vstrprintf(fmt, ap);
        va_end(ap);
        return t->why ? 0 : -ENOMEM;
}

/* host-local keeps its addresses in dataDir (default /var/lib/cni/networks): elsewhere, the files
 * phase does not remove them, and only the DEL does. The first such directory, or NULL. */
static const char *ipam_elsewhere(const JsonValue *plugin) {
        const JsonValue *ipam = json_get(plugin, "ipam", true);
        const char *dir = json_string_of(json_get(ipam, "dataDir", true));

        if (!streq_ptr(json_string_of(json_get(ipam, "type", true)), "host-local") || !dir)
                return NULL;
        return path_covers(CNI_STATE_DIR, dir) ? NULL : dir;
}

static int find_ipam_elsewhere(const char *text, size_t size, char **ret) {
        CLEANUP(json_freep) JsonValue *root = NULL;
        const JsonValue *plugins;
        const char *dir = NULL;

        if (json_parse(text, size, &root) < 0)
                return 0; /* cni_conf_types() said it loads: only -ENOMEM is left, and the DEL is kept */
        plugins = json_get(root, "plugins", false);
        if (plugins && plugins->type == JSON_ARRAY)
                for (size_t i = 0; !dir && i < plugins->n; i++)
                        dir = ipam_elsewhere(plugins->items[i]);
        else
                dir = ipam_elsewhere(root);
        if (dir && !(*ret = strdup(dir)))
                return -ENOMEM;
        return 0;
}

static int read_types(const Context *ctx, PodsTeardown *t, char **ret_elsewhere, const char **ret_why) {
        cleanup_free char *text = NULL;
        size_t size = 0;
        int r;

        r = fileio_read_beneath(ctx->root_fd, t->config, CNI_CONFIG_MAX, &text, &size);
        if (r < 0) {
                *ret_why = "it cannot be read";
                return r == -ENOMEM ? r : 0;
        }
        r = cni_conf_types(strrchr(t->config, '/') + 1, text, size, &t->types, ret_why);
        if (r == -ENOMEM)
                return r;
        return t->types ? find_ipam_elsewhere(text, size, ret_elsewhere) : 0;
}

/* The configuration the runtime loaded: detection's (ctx->cni_config) when it lies in the conf dir
 * the running runtime was started with, else the first file libcni lists there (byte order, the
 * rescue conflist left out), as containerd loads it. NULL when there is none. */
static int loaded_config(const Context *ctx, const RuntimeInfo *info, char **ret) {
        cleanup_strv char **names = NULL;
        const char *slash = ctx->cni_config ? strrchr(ctx->cni_config, '/') : NULL;
        int r;

        *ret = NULL;
        if (slash && info->cni_conf_dir && strlen(info->cni_conf_dir) == (size_t) (slash - ctx->cni_config) &&
            strncmp(info->cni_conf_dir, ctx->cni_config, slash - ctx->cni_config) == 0)
                return (*ret = strdup(ctx->cni_config)) ? 0 : -ENOMEM;
        if (!info->cni_conf_dir)
                return (*ret = ctx->cni_config ? strdup(ctx->cni_config) : NULL) || !ctx->cni_config ? 0 : -ENOMEM;
        r = fileio_list_beneath(ctx->root_fd, info->cni_conf_dir, NULL, &names);
        STRV_FOREACH(n, names)
                if (r >= 0 && cni_conf_name_loaded(*n) && !cni_conf_name_is_rescue(*n))
                        return (*ret = strprintf("%s/%s", info->cni_conf_dir, *n)) ? 0 : -ENOMEM;
        return r;
}

int pods_teardown_decide(const Context *ctx, const RuntimeInfo *info, PodsTeardown *ret) {
        const char *why = NULL, *other = NULL, *missing;
        cleanup_free char *elsewhere = NULL;
        size_t len = 0;
        int r;

        *ret = (PodsTeardown) {};
        r = loaded_config(ctx, info, &ret->config);
        if (r < 0)
                return r;
        if (!ret->config)
                return set_why(ret, TEARDOWN_NONE, "the runtime loaded no CNI configuration: no DEL to run");
        r = read_types(ctx, ret, &elsewhere, &why);
        if (r < 0)
                return r;
        if (!ret->types)
                return set_why(ret, TEARDOWN_FULL, "full DEL: %s %s", ret->config, strna(why));
        ret->ipam_lock = any_type(ret->types, TYPE_LOCKING_IPAM, true, NULL, NULL);
        ret->agent_needed = any_type(ret->types, TYPE_AGENT, true, NULL, NULL);
        if (!pods_teardown_node_local(ret->types, &other, &len))
                return set_why(ret, TEARDOWN_FULL,
                               "full DEL by %s: %.*s may keep state off this node (addresses, endpoints) that "
                               "only its DEL releases",
                               ret->types, (int) len, strna(other));
        if (info->kind != RUNTIME_CONTAINERD)
                return set_why(ret, TEARDOWN_FULL, "full DEL by %s: the stand-in conflist is proven on containerd only",
                               ret->types);
        if (elsewhere)
                return set_why(ret, TEARDOWN_FULL,
                               "full DEL by %s: host-local keeps its addresses in %s, which this run does not remove",
                               ret->types, elsewhere);
        if (!info->cni_conf_dir)
                return set_why(ret, TEARDOWN_FULL, "full DEL by %s: the runtime's CNI conf dir is not known",
                               ret->types);
        missing = later_phases_missing(ctx);
        if (missing)
                return set_why(ret, TEARDOWN_FULL, "full DEL by %s: %s", ret->types, missing);
        return set_why(ret, TEARDOWN_CHEAP,
                       "no DEL by %s: each only made node state (links, netns, CNI- chains, %s) that the network, "
                       "firewall and files phases of this run remove; a loopback-only conflist stands in while the "
                       "pods go",
                       ret->types, CNI_STATE_DIR);
}

void pods_teardown_done(PodsTeardown *t) {
        t->config = mfree(t->config);
        t->types = mfree(t->types);
        t->why = mfree(t->why);
}

unsigned pods_concurrency(const PodsTeardown *t, size_t n, unsigned cores, const char **ret_why) {
        unsigned c;

        cores = cores ?: 1;
        if (t->kind == TEARDOWN_FULL && t->ipam_lock) {
                /* One call holds the IPAM lock, the others do their CPU work meanwhile. */
                c = 2 * cores + 1;
                *ret_why = "the IPAM plugin's node-wide lock serialises every DEL: 2 per core and the lock holder";
        } else {
                c = 4 * cores;
                *ret_why = "no DEL lock: the runtime's work is CPU, 4 calls per core keep every core busy";
        }
        c = c < 256 ? c : 256;
        return n > 0 && n < c ? (unsigned) n : c;
}
