/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Where k3s or rke2 keeps its state: the data directory read from the node's files in the order and
 * with the precedence k3s itself resolves it. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "agent/base/path.h"
#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "agent/config/rancher-datadir.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "chase.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define RANCHER_FILE_MAX (1024U * 1024U)

typedef InstallerDataDir RancherFiles;

typedef struct Found {
        const char *config_key;           /* the config file's key: "data-dir" (NULL), "node-name", ... */
        char *dir;                        /* the value said (the data directory), NULL when nothing said one */
        char *evidence;                   /* "PATH: what said it" */
        char *config;                     /* the config file named by --config/-c or *_CONFIG_FILE, when one is */
        char *config_value, *config_from; /* the config files' value so far, and the file that set it */
        bool with_node_id;                /* --with-node-id on the command line */
} Found;

static const char *found_key(const Found *f) {
        return f->config_key ?: "data-dir";
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

/* The unit with its drop-ins (systemctl edit): K3S_DATA_DIR in its Environment= and the
 * EnvironmentFile= it reads, then ExecStart='s --data-dir/-d, and --config/-c naming the file.
 * Environment is read before any unit's flags: phase says which (0 env, 1 flags). */
static int from_unit(int root_fd, const RancherFiles *rf, const char *path, unsigned phase, Found *f) {
        CLEANUP(unit_exec_done) UnitExec u = {};
        cleanup_free char *where = NULL;
        const char *v;
        int r;

        r = unit_file_exec_dropins(root_fd, path, &u);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        /* The drop-ins that were read are named with the unit: the data dir may come from one. */
        where = u.dropins ? strprintf("%s (with %s)", path, u.dropins[strv_length(u.dropins) - 1]) : strdup(path);
        if (!where)
                return -ENOMEM;
        if (phase == 0) {
                if (!f->config && !isempty(v = env_get(u.env, rf->config_env_key)) && !(f->config = strdup(v)))
                        return -ENOMEM;
                v = env_get(u.env, rf->env_key);
                return isempty(v) ? 0 : found_set(f, v, where, rf->env_key);
        }
        if (!f->config && !isempty(v = argv_flag(u.argv, "config") ?: argv_flag(u.argv, "c")) &&
            !(f->config = strdup(v)))
                return -ENOMEM;
        v = argv_flag(u.argv, "data-dir") ?: argv_flag(u.argv, "d");
        return isempty(v) ? 0 : found_set(f, v, where, "ExecStart= --data-dir");
}

static int from_units(int root_fd, const RancherFiles *rf, unsigned phase, Found *f) {
        int r = 0;

        INSTALLER_LIST_FOREACH(u, rf->units)
                if ((r = from_unit(root_fd, rf, *u, phase, f)) < 0)
                        break;
        return r;
}

/* One config file's top-level key (or "key+", which appends: k3s joins with a comma). */
static int config_value(const char *text, size_t size, const char *key, char **value) {
        yaml_document_t doc;
        yaml_node_t *root;
        int r;

        r = yaml_load_first(text, size, NULL, &doc, NULL);
        if (r < 0)
                return r;
        root = yaml_document_get_root_node(&doc);
        for (yaml_node_pair_t *i = root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
             i && i < root->data.mapping.pairs.top && r >= 0; i++) {
                const char *k = yaml_scalar_of(yaml_document_get_node(&doc, i->key));
                const char *v = yaml_scalar_of(yaml_document_get_node(&doc, i->value)), *plus;
                char *n;

                if (!k || !v || !(plus = startswith(k, key)) || (!streq(plus, "") && !streq(plus, "+")))
                        continue;
                n = streq(plus, "+") ? strprintf("%s,%s", strempty(*value), v) : strdup(v);
                if (!n)
                        r = -ENOMEM;
                free(*value);
                *value = n;
        }
        yaml_document_delete(&doc);
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
        r = config_value(text, size, found_key(f), &f->config_value);
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
        return found_set(f, f->config_value, f->config_from, found_key(f));
}

void rancher_data_dir_done(RancherDataDir *d) {
        free(d->dir);
        free(d->spelled);
        free(d->evidence);
        free(d->refused);
        *d = (RancherDataDir) {};
}

static void found_done(Found *f) {
        free(f->dir);
        free(f->evidence);
        free(f->config);
        free(f->config_value);
        free(f->config_from);
}

/* A value k3s would take is one a manifest line can carry: absolute, one directory (data-dir+ joins
 * several with a comma, which k3s then takes as one odd name), no character a line would quote. */
static char *value_refused(const char *value) {
        if (streq(value, "/"))
                return strdup("the root directory");
        if (value[0] != '/')
                return strdup("not an absolute path (k3s would take it relative to its working directory)");
        if (strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@") != strlen(value))
                return strdup("characters no manifest line carries (a comma: several data-dir+ values joined)");
        return NULL;
}

/* Where spelled leads beneath the root: itself when it is no symlink or not there. */
static int resolve(int root_fd, RancherDataDir *d) {
        cleanup_close int parent = -EBADF;
        cleanup_free char *target = NULL;
        const char *last;
        struct stat st;
        int r;

        r = fileio_resolve_beneath(root_fd, d->spelled, &target);
        if (r <= 0)
                return r < 0 ? r : (d->dir = strdup(d->spelled)) ? 0 : -ENOMEM;
        path_simplify(target);
        parent = chaseat(root_fd, d->spelled, CHASE_PARENT, O_PATH, &last, NULL);
        d->link = parent >= 0 && fstatat(parent, last, &st, AT_SYMLINK_NOFOLLOW) >= 0 && S_ISLNK(st.st_mode);
        d->dir = TAKE_PTR(target);
        return 0;
}

/* The value said, or the default; refused and left at the default when no line can carry it. */
static int decide(const RancherFiles *rf, Found *f, RancherDataDir *d) {
        cleanup_free char *why = NULL;

        if (f->dir)
                path_simplify(f->dir);
        if (f->dir && (why = value_refused(f->dir))) {
                d->refused = strprintf("%s: '%s' is %s", f->evidence, f->dir, why);
                return d->refused ? 0 : -ENOMEM;
        }
        if (f->dir && !streq(f->dir, rf->dir)) {
                d->spelled = TAKE_PTR(f->dir);
                d->evidence = TAKE_PTR(f->evidence);
        }
        return 0;
}

int rancher_data_dir_find(int root_fd, const InstallerInfo *info, RancherDataDir *ret) {
        const RancherFiles *rf = info ? &info->data : NULL;
        RancherDataDir d = {};
        Found f = {};
        int r;

        if (!rf || !rf->dir)
                return -EINVAL;
        r = read_each(root_fd, rf, rf->env_files, ELEMENTSOF(rf->env_files), from_env_file, &f);
        if (r >= 0)
                r = from_units(root_fd, rf, 0, &f);
        if (r >= 0)
                r = from_units(root_fd, rf, 1, &f);
        if (r >= 0)
                r = from_config(root_fd, rf, &f);
        if (r >= 0)
                r = decide(rf, &f, &d);
        if (r >= 0 && !d.spelled && !(d.spelled = strdup(rf->dir)))
                r = -ENOMEM;
        if (r >= 0)
                r = resolve(root_fd, &d);
        found_done(&f);
        if (r < 0) {
                rancher_data_dir_done(&d);
                return r;
        }
        *ret = d;
        return 0;
}

int rancher_data_dir(int root_fd, const char *program, char **ret_dir, char **ret_evidence) {
        const InstallerInfo *info = installer_info_by_program(program);
        RancherDataDir d = {};
        int r;

        if (!info)
                return -EINVAL;
        r = rancher_data_dir_find(root_fd, info, &d);
        if (r < 0)
                return r;
        r = !streq(d.dir, info->data.dir);
        *ret_dir = TAKE_PTR(d.dir);
        *ret_evidence = TAKE_PTR(d.evidence);
        rancher_data_dir_done(&d);
        return r;
}

/* --- The node name ------------------------------------------------------------------------ */

/* --node-name in a unit's ExecStart= (drop-ins included: the command line wins over the config
 * file, which configfilearg inserts before it), --with-node-id, and --config/-c naming the file. */
static int node_name_from_unit(int root_fd, const char *path, Found *f) {
        CLEANUP(unit_exec_done) UnitExec u = {};
        const char *v;
        int r;

        r = unit_file_exec_dropins(root_fd, path, &u);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if (!f->config && !isempty(v = argv_flag(u.argv, "config") ?: argv_flag(u.argv, "c")) &&
            !(f->config = strdup(v)))
                return -ENOMEM;
        for (char **a = u.argv && u.argv[0] ? u.argv + 1 : NULL; a && *a && !streq(*a, "--"); a++)
                if (streq(*a, "--with-node-id") || streq(*a, "--with-node-id=true"))
                        f->with_node_id = true;
        v = argv_flag(u.argv, "node-name");
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

/* Is the program installed on this node at all: a unit, an env file or its config file? */
static bool rancher_present(int root_fd, const RancherFiles *rf) {
        if (fileio_exists_beneath(root_fd, rf->config))
                return true;
        INSTALLER_LIST_FOREACH(u, rf->units)
                if (fileio_exists_beneath(root_fd, *u))
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(rf->env_files) && rf->env_files[i]; i++)
                if (fileio_exists_beneath(root_fd, rf->env_files[i]))
                        return true;
        return false;
}

/* --with-node-id: the name gets "-" and the node's id file (k3s pkg/agent/config: ensureNodeID). */
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

static int node_name_of(int root_fd, const RancherFiles *rf, Found *f) {
        int r = 0;

        INSTALLER_LIST_FOREACH(u, rf->units)
                if ((r = node_name_from_unit(root_fd, *u, f)) < 0)
                        return r;
        if (!f->dir) {
                /* The env files first name the config file, when one does; their node name comes last. */
                Found env = { .config_key = "node-name" };

                r = read_each(root_fd, rf, rf->env_files, ELEMENTSOF(rf->env_files), node_name_from_env, &env);
                if (r >= 0 && !f->config)
                        f->config = TAKE_PTR(env.config);
                if (r >= 0)
                        r = from_config(root_fd, rf, f);
                if (r >= 0 && !f->dir) {
                        f->dir = TAKE_PTR(env.dir);
                        f->evidence = TAKE_PTR(env.evidence);
                }
                found_done(&env);
        }
        if (r >= 0 && f->dir && !f->with_node_id)
                r = config_with_node_id(root_fd, rf, f);
        if (r >= 0 && f->dir && f->with_node_id)
                r = append_node_id(root_fd, f);
        return r;
}

int rancher_node_name(int root_fd, char **ret_name, char **ret_evidence) {
        INSTALLER_FOREACH(info) {
                const RancherFiles *rf = &info->data;
                Found f = { .config_key = "node-name" };
                int r;

                if (!info->program || !rf->dir || !rf->env_key || !rancher_present(root_fd, rf))
                        continue;
                r = node_name_of(root_fd, rf, &f);
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
