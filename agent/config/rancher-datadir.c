/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where k3s or rke2 keeps its state: the data directory read from the node's files in the order and
 * with the precedence k3s itself resolves it. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "agent/base/path.h"
#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "agent/config/rancher-datadir.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define RANCHER_FILE_MAX (1024U * 1024U)

/* What each program's install leaves: its units (install.sh create_systemd_service_file: FILE_K3S_SERVICE
 * /etc/systemd/system/$SYSTEM_NAME.service, rke2's in $INSTALL_RKE2_ROOT/lib/systemd/system) and the env
 * files they read (k3s: $FILE_K3S_ENV beside the unit, EnvironmentFile=-/etc/default/%N and
 * -/etc/sysconfig/%N; rke2-server.service the same with $INSTALL_RKE2_ROOT/lib/systemd/system/%N.env). */
typedef struct RancherFiles {
        const char *program, *env_key, *config_env_key, *config, *default_dir;
        const char *units[8];
        const char *env_files[12];
} RancherFiles;

static const RancherFiles rancher_files[] = {
        {
                .program = "k3s",
                .env_key = "K3S_DATA_DIR",
                .config_env_key = "K3S_CONFIG_FILE",
                .config = "/etc/rancher/k3s/config.yaml",
                .default_dir = K3S_DEFAULT_DATA_DIR,
                .units = { "/etc/systemd/system/k3s.service", "/etc/systemd/system/k3s-agent.service" },
                .env_files = { "/etc/systemd/system/k3s.service.env", "/etc/systemd/system/k3s-agent.service.env",
                               "/etc/default/k3s", "/etc/default/k3s-agent", "/etc/sysconfig/k3s",
                               "/etc/sysconfig/k3s-agent" },
        },
        {
                .program = "rke2",
                .env_key = "RKE2_DATA_DIR",
                .config_env_key = "RKE2_CONFIG_FILE",
                .config = "/etc/rancher/rke2/config.yaml",
                .default_dir = RKE2_DEFAULT_DATA_DIR,
                .units = { "/etc/systemd/system/rke2-server.service", "/etc/systemd/system/rke2-agent.service",
                           "/usr/local/lib/systemd/system/rke2-server.service",
                           "/usr/local/lib/systemd/system/rke2-agent.service",
                           "/usr/lib/systemd/system/rke2-server.service", "/usr/lib/systemd/system/rke2-agent.service",
                           "/opt/rke2/lib/systemd/system/rke2-server.service",
                           "/opt/rke2/lib/systemd/system/rke2-agent.service" },
                .env_files = { "/usr/local/lib/systemd/system/rke2-server.env",
                               "/usr/local/lib/systemd/system/rke2-agent.env",
                               "/usr/lib/systemd/system/rke2-server.env", "/usr/lib/systemd/system/rke2-agent.env",
                               "/opt/rke2/lib/systemd/system/rke2-server.env",
                               "/opt/rke2/lib/systemd/system/rke2-agent.env", "/etc/default/rke2-server",
                               "/etc/default/rke2-agent", "/etc/sysconfig/rke2-server", "/etc/sysconfig/rke2-agent" },
        },
};

typedef struct Found {
        const char *config_key;           /* "data-dir", "node-name" */
        char *dir;                        /* the value said (the data directory), NULL when nothing said one */
        char *evidence;                   /* "PATH: what said it" */
        char *config;                     /* the config file named by --config/-c or *_CONFIG_FILE, when one is */
        char *config_value, *config_from; /* the config files' value so far, and the file that set it */
        bool with_node_id;                /* --with-node-id on the command line */
} Found;

static void found_done(Found *f) {
        free(f->dir);
        free(f->evidence);
        free(f->config);
        free(f->config_value);
        free(f->config_from);
}

static int found_set(Found *f, const char *dir, const char *path, const char *what) {
        if (f->dir)
                return 0; /* the first one wins: the sources are read in precedence order */
        f->dir = strdup(dir);
        f->evidence = strprintf("%s: %s %s", path, what, dir);
        return f->dir && f->evidence ? 0 : -ENOMEM;
}

typedef int (*file_reader_t)(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f);

/* Each of paths that can be read, handed to fn in order; a file missing or unreadable says nothing. */
static int read_each(int root_fd, const RancherFiles *rf, const char *const *paths, size_t n, file_reader_t fn,
                     Found *f) {
        for (size_t i = 0; i < n && paths[i]; i++) {
                cleanup_free char *text = NULL;
                size_t size;
                int r;

                if (fileio_read_beneath(root_fd, paths[i], RANCHER_FILE_MAX, &text, &size) < 0)
                        continue;
                r = fn(rf, paths[i], text, size, f);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* An env file systemd hands the unit: one that is no environment file says nothing. */
static int from_env_file(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f) {
        cleanup_strv char **pairs = NULL;
        const char *v;
        int r;

        r = env_file_parse(text, size, &pairs, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if (!f->config && !isempty(v = env_get(pairs, rf->config_env_key)) && !(f->config = strdup(v)))
                return -ENOMEM;
        v = env_get(pairs, rf->env_key);
        return isempty(v) ? 0 : found_set(f, v, path, rf->env_key);
}

/* The unit's ExecStart= as the program's flags: --data-dir/-d, and --config/-c naming the file. */
static int from_unit(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f) {
        cleanup_strv char **argv = NULL;
        const char *v;
        int r;

        r = unit_exec_start_argv(text, size, &argv);
        if (r <= 0)
                return r == -ENOMEM ? r : 0;
        if (!f->config && !isempty(v = argv_flag(argv, "config") ?: argv_flag(argv, "c")) && !(f->config = strdup(v)))
                return -ENOMEM;
        v = argv_flag(argv, "data-dir") ?: argv_flag(argv, "d");
        return isempty(v) ? 0 : found_set(f, v, path, "ExecStart= --data-dir");
}

/* One config file's top-level key (or "key+", which appends: k3s joins with a comma). */
static int config_value(const char *text, size_t size, const char *key, char **value) {
        yaml_parser_t parser;
        yaml_document_t doc;
        yaml_node_t *root;
        int r = 0;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, size);
        if (!yaml_parser_load(&parser, &doc)) {
                yaml_parser_delete(&parser);
                return -EBADMSG;
        }
        root = yaml_document_get_root_node(&doc);
        for (yaml_node_pair_t *i = root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
             i && i < root->data.mapping.pairs.top && r >= 0; i++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(&doc, i->key));
                const char *v = yaml_scalar_of(yaml_document_get_node(&doc, i->value)), *plus;
                char *n;

                if (!k || !v || !startswith(k, key))
                        continue;
                plus = k + strlen(key);
                if (!streq(plus, "") && !streq(plus, "+"))
                        continue;
                n = streq(plus, "+") ? strprintf("%s,%s", strempty(*value), v) : strdup(v);
                if (!n)
                        r = -ENOMEM;
                free(*value);
                *value = n;
        }
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        return r;
}

static bool is_yaml_name(const char *name) {
        size_t n = strlen(name);

        return (n > 5 && strcasecmp(name + n - 5, ".yaml") == 0) || (n > 4 && strcasecmp(name + n - 4, ".yml") == 0);
}

/* One config file: its value, when it says one, replaces (or, "data-dir+", extends) what the files
 * before it said. A file that is no YAML stops k3s; here it says nothing. */
static int from_config_file(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f) {
        cleanup_free char *before = f->config_value ? strdup(f->config_value) : NULL;
        int r;

        if (f->config_value && !before)
                return -ENOMEM;
        r = config_value(text, size, f->config_key, &f->config_value);
        if (r < 0)
                return r == -EBADMSG ? 0 : r;
        if (streq_ptr(before, f->config_value))
                return 0;
        free(f->config_from);
        f->config_from = strdup(path);
        return f->config_from ? 0 : -ENOMEM;
}

/* The config file, then its .d drop-ins in lexical order, only .yaml and .yml files that are no
 * directories (pkg/configfilearg parser.go dotDFiles, FindString): a later file's value wins. */
static int from_config(int root_fd, const RancherFiles *rf, Found *f) {
        const char *config = f->config ?: rf->config;
        cleanup_free char *dropins = strprintf("%s.d", config);
        cleanup_strv char **names = NULL, **files = NULL;
        int r;

        if (!dropins || strv_extend(&files, config) < 0)
                return -ENOMEM;
        r = fileio_list_beneath(root_fd, dropins, "*", &names);
        STRV_FOREACH(n, names)
                if (r >= 0 && is_yaml_name(*n))
                        r = strv_consume(&files, strprintf("%s/%s", dropins, *n));
        if (r >= 0)
                r = read_each(root_fd, rf, (const char *const *) files, strv_length(files), from_config_file, f);
        if (r < 0 || isempty(f->config_value))
                return r;
        return found_set(f, f->config_value, f->config_from, f->config_key);
}

static const RancherFiles *rancher_files_of(const char *program) {
        for (size_t i = 0; i < ELEMENTSOF(rancher_files); i++)
                if (streq(rancher_files[i].program, program))
                        return rancher_files + i;
        return NULL;
}

/* cmd/k3s/main.go findDataDir: $K3S_DATA_DIR first, then --data-dir/-d on the command line, then the
 * config file with its drop-ins (configfilearg.MustFindString), else the default. */
int rancher_data_dir(int root_fd, const char *program, char **ret_dir, char **ret_evidence) {
        const RancherFiles *rf = rancher_files_of(program);
        cleanup_free char *simplified = NULL;
        Found f = { .config_key = "data-dir" };
        int r;

        if (!rf)
                return -EINVAL;
        r = read_each(root_fd, rf, rf->env_files, ELEMENTSOF(rf->env_files), from_env_file, &f);
        if (r >= 0)
                r = read_each(root_fd, rf, rf->units, ELEMENTSOF(rf->units), from_unit, &f);
        if (r >= 0)
                r = from_config(root_fd, rf, &f);
        if (r >= 0 && f.dir && !(simplified = strdup(f.dir)))
                r = -ENOMEM;
        if (simplified)
                path_simplify(simplified);
        /* Only an absolute, normalised directory other than the default, and no system path (the
         * profile removes it whole), moves the profile's paths. */
        if (r >= 0 && simplified && path_validate_absolute(simplified, NULL) == 0 && !path_is_guarded(simplified) &&
            !streq(simplified, rf->default_dir)) {
                *ret_dir = TAKE_PTR(simplified);
                *ret_evidence = TAKE_PTR(f.evidence);
                r = 1;
        } else if (r >= 0) {
                *ret_dir = strdup(rf->default_dir);
                *ret_evidence = NULL;
                r = *ret_dir ? 0 : -ENOMEM;
        }
        found_done(&f);
        return r;
}

/* --- The node name ------------------------------------------------------------------------ */

/* --node-name in the unit's ExecStart= (the command line wins over the config file, which
 * configfilearg inserts before it). */
static int node_name_from_unit(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f) {
        cleanup_strv char **argv = NULL;
        const char *v;
        int r;

        r = unit_exec_start_argv(text, size, &argv);
        if (r <= 0)
                return r == -ENOMEM ? r : 0;
        if (!f->config && !isempty(v = argv_flag(argv, "config") ?: argv_flag(argv, "c")) && !(f->config = strdup(v)))
                return -ENOMEM;
        for (char **a = argv && argv[0] ? argv + 1 : NULL; a && *a && !streq(*a, "--"); a++)
                if (streq(*a, "--with-node-id") || streq(*a, "--with-node-id=true"))
                        f->with_node_id = true;
        v = argv_flag(argv, "node-name");
        return isempty(v) ? 0 : found_set(f, v, path, "ExecStart= --node-name");
}

/* K3S_NODE_NAME (RKE2_NODE_NAME) from an env file the unit reads: the flag's default, under the
 * command line and the config file. */
static int node_name_from_env(const RancherFiles *rf, const char *path, const char *text, size_t size, Found *f) {
        cleanup_strv char **pairs = NULL;
        cleanup_free char *key = strprintf("%.*s_NODE_NAME", (int) strcspn(rf->env_key, "_"), rf->env_key);
        const char *v;
        int r;

        if (!key)
                return -ENOMEM;
        r = env_file_parse(text, size, &pairs, NULL);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if (!f->config && !isempty(v = env_get(pairs, rf->config_env_key)) && !(f->config = strdup(v)))
                return -ENOMEM;
        v = env_get(pairs, key);
        return isempty(v) ? 0 : found_set(f, v, path, key);
}

/* Is program installed on this node at all: a unit, an env file or its config file? */
static bool rancher_present(int root_fd, const RancherFiles *rf) {
        const char *const *lists[] = { rf->units, rf->env_files };
        const size_t sizes[] = { ELEMENTSOF(rf->units), ELEMENTSOF(rf->env_files) };

        if (fileio_exists_beneath(root_fd, rf->config))
                return true;
        for (size_t l = 0; l < ELEMENTSOF(lists); l++)
                for (size_t i = 0; i < sizes[l] && lists[l][i]; i++)
                        if (fileio_exists_beneath(root_fd, lists[l][i]))
                                return true;
        return false;
}

/* --with-node-id: the name gets "-" and /etc/rancher/node/id (k3s pkg/agent/config: ensureNodeID). */
static int append_node_id(int root_fd, Found *f) {
        cleanup_free char *id = NULL, *name = NULL;
        size_t n;
        int r;

        r = fileio_read_beneath(root_fd, RANCHER_NODE_ID, 4096, &id, &n);
        if (r < 0)
                return r == -ENOMEM ? r : -ENXIO;
        while (n > 0 && strchr(" \t\r\n", id[n - 1]))
                id[--n] = '\0';
        name = strprintf("%s-%s", f->dir, id + strspn(id, " \t"));
        if (!name)
                return -ENOMEM;
        free(f->dir);
        f->dir = TAKE_PTR(name);
        return 0;
}

/* "with-node-id: true" in the config file or a drop-in. */
static int config_with_node_id(int root_fd, const RancherFiles *rf, Found *f) {
        Found w = { .config_key = "with-node-id", .config = f->config ? strdup(f->config) : NULL };
        int r;

        if (f->config && !w.config)
                return -ENOMEM;
        r = from_config(root_fd, rf, &w);
        f->with_node_id = r >= 0 && streq_ptr(w.dir, "true");
        found_done(&w);
        return r;
}

int rancher_node_name(int root_fd, char **ret_name, char **ret_evidence) {
        static const char *const programs[] = { "k3s", "rke2" };

        for (size_t p = 0; p < ELEMENTSOF(programs); p++) {
                const RancherFiles *rf = rancher_files_of(programs[p]);
                Found f = { .config_key = "node-name" };
                int r;

                if (!rancher_present(root_fd, rf))
                        continue;
                r = read_each(root_fd, rf, rf->units, ELEMENTSOF(rf->units), node_name_from_unit, &f);
                /* The env files first name the config file, when one does; their node name comes last. */
                if (r >= 0 && !f.dir) {
                        Found env = { .config_key = "node-name" };

                        r = read_each(root_fd, rf, rf->env_files, ELEMENTSOF(rf->env_files), node_name_from_env, &env);
                        if (r >= 0 && !f.config)
                                f.config = TAKE_PTR(env.config);
                        if (r >= 0)
                                r = from_config(root_fd, rf, &f);
                        if (r >= 0 && !f.dir) {
                                f.dir = TAKE_PTR(env.dir);
                                f.evidence = TAKE_PTR(env.evidence);
                        }
                        found_done(&env);
                }
                if (r >= 0 && f.dir && !f.with_node_id)
                        r = config_with_node_id(root_fd, rf, &f);
                if (r >= 0 && f.dir && f.with_node_id)
                        r = append_node_id(root_fd, &f);
                if (r >= 0 && f.dir) {
                        *ret_name = TAKE_PTR(f.dir);
                        *ret_evidence = TAKE_PTR(f.evidence);
                        r = 1;
                }
                found_done(&f);
                if (r != 0)
                        return r;
        }
        return 0;
}
