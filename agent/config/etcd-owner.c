/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The one decision of who owns this node's etcd (etcd-owner.h), from the files each installer writes,
 * each read as what it is: kubeadm's static pod as a pod spec, its ClusterConfiguration as YAML,
 * /etc/etcd.env as an environment file, k3s's etcd configuration as YAML, a unit as a unit file. */

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <yaml.h>

#include "agent/base/path.h"
#include "agent/config/envfile.h"
#include "agent/config/etcd-flags.h"
#include "agent/config/etcd-owner.h"
#include "agent/config/rancher-datadir.h"
#include "agent/config/unit-file.h"
#include "agent/config/yaml-util.h"
#include "agent/os/fileio.h"
#include "chase.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define OWNER_FILE_MAX (1U << 20)
#define DEFAULT_DATA_DIR KUBEADM_ETCD_DATA_DIR
/* k3s's own client of its etcd (pkg/etcd/etcd.go: const endpoint). */
#define K3S_ENDPOINT "https://127.0.0.1:2379"

/* systemd's unit search path for system units, highest precedence first (systemd.unit(5)). */
static const char *const unit_dirs[] = { "/etc/systemd/system", "/usr/local/lib/systemd/system",
                                         "/usr/lib/systemd/system", "/lib/systemd/system" };

char *k3s_data_dir(int root_fd, Installer installer) {
        cleanup_free char *evidence = NULL;
        char *dir = NULL;

        /* As k3s and rke2 resolve it (rancher-datadir.h): env file, the unit's argv, config.yaml. */
        if (rancher_data_dir(root_fd, installer == INSTALLER_RKE2 ? "rke2" : "k3s", &dir, &evidence) < 0)
                return NULL;
        return dir;
}

void etcd_scope_done(EtcdScope *s) {
        free(s->source);
        free(s->why);
        strv_free(s->argv);
        free(s->server_dir);
        free(s->unit);
        strv_free(s->keep);
        *s = (EtcdScope) {};
}

/* etcd.external's files (caFile, certFile, keyFile): the out-of-scope etcd's certificates. */
static int doc_names_external(yaml_document_t *doc, const char *path, void *userdata) {
        static const char *const keys[] = { "caFile", "certFile", "keyFile" };
        yaml_node_t *root = yaml_document_get_root_node(doc);
        const char *kind = yaml_scalar_of(yaml_map_get(doc, root, "kind"));
        yaml_node_t *ext = yaml_map_get(doc, yaml_map_get(doc, root, "etcd"), "external");
        char ***files = userdata;

        if (!streq_ptr(kind, "ClusterConfiguration") || !ext || ext->type != YAML_MAPPING_NODE)
                return 0;
        for (size_t i = 0; files && i < ELEMENTSOF(keys); i++) {
                const char *f = yaml_scalar_of(yaml_map_get(doc, ext, keys[i]));

                if (f && strv_extend(files, f) < 0)
                        return -ENOMEM;
        }
        return 1;
}

/* kubeadm's ClusterConfiguration, among the documents of kubeadm-config.yaml (kubespray and kubekey
 * write it there; kubeadm keeps its own copy in the kubeadm-config ConfigMap), with etcd.external:
 * 1 yes (and its certificate files in *files), 0 no or no such file, -EBADMSG a file that is no
 * YAML, -ELIBACC without libyaml. */
static int kubeadm_external(int root_fd, char ***files) {
        cleanup_free char *text = NULL;
        size_t size;

        if (fileio_read_beneath(root_fd, KUBEADM_CONFIG, OWNER_FILE_MAX, &text, &size) < 0)
                return 0;
        return yaml_each_document(text, size, KUBEADM_CONFIG, doc_names_external, files, NULL);
}

static int set_why(EtcdScope *s, const char *fmt, ...) _printf_(2, 3);
static int set_why(EtcdScope *s, const char *fmt, ...) {
        va_list ap;
        char *w;

        va_start(ap, fmt);
        w = vstrprintf(fmt, ap);
        va_end(ap);
        if (!w)
                return -ENOMEM;
        free(s->why);
        s->why = w;
        return 0;
}

/* An owned member's command line from its file; a file that does not parse names nothing, and why
 * says so. */
static int owned_file(int root_fd, EtcdScope *s, EtcdOwner owner, const char *path, const char *what) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        s->owner = owner;
        s->source = strdup(path);
        if (!s->source)
                return -ENOMEM;
        r = fileio_read_beneath(root_fd, path, OWNER_FILE_MAX, &text, &size);
        if (r >= 0 && owner == ETCD_OWNER_KUBEADM)
                r = pod_container_argv(text, size, "etcd", &s->argv) ?: -EBADMSG; /* no etcd container */
        else if (r >= 0)
                r = etcd_env_argv(text, size, &s->argv, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return set_why(s, "%s (%s), which does not parse as %s: it says nothing of this node's etcd member",
                               what, path,
                               owner == ETCD_OWNER_KUBEADM ? "a static pod with an etcd container"
                                                           : "an environment file");
        return set_why(s, "%s (%s)", what, path);
}

/* k3s's own reading of its layout (pkg/etcd/etcd.go: etcdDBDir is <data-dir>/server/db/etcd, the
 * member's name in db/etcd/name; pkg/daemons/executor: ETCDConfig.ToConfigFile writes
 * db/etcd/config, the YAML etcd reads with --config-file, rke2's static pod too). */
static int embedded_argv(int root_fd, const char *db, char ***ret) {
        cleanup_free char *name_path = strprintf("%s/name", db), *config_path = strprintf("%s/config", db);
        cleanup_free char *name = NULL, *text = NULL;
        cleanup_strv char **argv = NULL, **config = NULL;
        size_t size;
        int r;

        if (!name_path || !config_path)
                return -ENOMEM;
        if (strv_extend(&argv, "etcd") < 0 || strv_consume(&argv, strprintf("--data-dir=%s", db)) < 0 ||
            strv_extend(&argv, "--listen-client-urls=" K3S_ENDPOINT) < 0)
                return -ENOMEM;
        if (fileio_read_beneath(root_fd, name_path, 4096, &name, NULL) >= 0 && *name && !strpbrk(name, "\n\r") &&
            strv_consume(&argv, strprintf("--name=%s", name)) < 0)
                return -ENOMEM;
        r = fileio_read_beneath(root_fd, config_path, OWNER_FILE_MAX, &text, &size);
        if (r >= 0 && (r = etcd_config_argv(text, size, &config)) < 0)
                return r; /* a configuration that does not parse */
        STRV_FOREACH(c, strv_length(config) > 0 ? config + 1 : NULL)
                if (strv_extend(&argv, *c) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(argv);
        return 0;
}

static int owned_embedded(int root_fd, Installer installer, EtcdScope *s) {
        cleanup_free char *dir = k3s_data_dir(root_fd, installer), *db = NULL;
        const char *who = installer == INSTALLER_RKE2 ? "rke2" : "k3s";
        int r;

        if (!dir || !(db = installer_path(installer_info(installer), dir, installer_info(installer)->etcd[0])))
                return -ENOMEM;
        if (!fileio_exists_beneath(root_fd, db))
                return 0;
        s->owner = installer == INSTALLER_RKE2 ? ETCD_OWNER_RKE2 : ETCD_OWNER_K3S;
        s->server_dir = strprintf("%s/server", dir);
        if (!s->server_dir)
                return -ENOMEM;
        r = embedded_argv(root_fd, db, &s->argv);
        if (r == -ENOMEM)
                return r;
        s->source = TAKE_PTR(db);
        if (r < 0)
                r = set_why(s,
                            "%s's embedded etcd (%s), whose config does not parse as etcd's configuration file: "
                            "it says nothing of this node's etcd member",
                            who, s->source);
        else
                r = set_why(s, "%s's embedded etcd (%s)", who, s->source);
        return r < 0 ? r : 1;
}

/* The first etcd.service on systemd's search path: its file (node path), or NULL. */
static char *etcd_unit_path(int root_fd) {
        for (size_t i = 0; i < ELEMENTSOF(unit_dirs); i++) {
                char *p = strprintf("%s/etcd.service", unit_dirs[i]);

                if (!p || fileio_exists_beneath(root_fd, p))
                        return p;
                free(p);
        }
        return NULL;
}

static int keep_path(EtcdScope *s, const char *path) {
        char *p;

        if (!path || path[0] != '/')
                return 0; /* relative: beneath the unit's working directory, never a profile's line */
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        path_simplify(p);
        return strv_consume_unique(&s->keep, p);
}

/* What an etcd command line names: its data directory and certificates. */
static int keep_argv(EtcdScope *s, char **argv) {
        static const char *const files[] = {
                "data-dir",      "cert-file",           "key-file", "trusted-ca-file", "peer-cert-file",
                "peer-key-file", "peer-trusted-ca-file"
        };

        for (size_t i = 0; argv && i < ELEMENTSOF(files); i++)
                if (keep_path(s, argv_flag(argv, files[i])) < 0)
                        return -ENOMEM;
        return 0;
}

/* What the foreign unit names: its unit and environment files, its data directory and certificates. */
static int keep_unit(int root_fd, EtcdScope *s, const char *path) {
        cleanup_strv char **argv = NULL;
        UnitExec u = {};
        int r;

        r = unit_file_exec(root_fd, path, "etcd.service", &u);
        if (r == -ENOMEM)
                return r;
        s->unit = strdup("etcd.service");
        if (!s->unit || keep_path(s, path) < 0)
                goto oom;
        STRV_FOREACH(f, u.env_files)
                if (keep_path(s, *f) < 0)
                        goto oom;
        /* etcd reads ETCD_* from its environment; a flag on the command line wins over it. */
        if (r >= 0 && (strv_extend(&argv, "etcd") < 0 || etcd_env_pairs_argv(u.env, &argv) < 0))
                goto oom;
        STRV_FOREACH(a, r >= 0 && u.argv && u.argv[0] ? u.argv + 1 : NULL)
                if (strv_extend(&argv, *a) < 0)
                        goto oom;
        if (keep_argv(s, argv) < 0)
                goto oom;
        unit_exec_done(&u);
        return 0;
oom:
        unit_exec_done(&u);
        return -ENOMEM;
}

/* A static pod beside etcd.external: kubeadm made it, but the cluster's configuration says the etcd
 * is not kubeadm's to manage. Its manifest, kubeadm's etcd PKI and what its command line names stay,
 * so that the member it runs is not left dead in its cluster. An etcd.env no installer of this node
 * wrote stays with what it names. */
static int keep_beside(int root_fd, EtcdScope *s) {
        static const char *const files[] = { ETCD_MANIFEST, ETCD_ENV };

        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                cleanup_free char *text = NULL;
                cleanup_strv char **argv = NULL;
                size_t size;
                int r;

                if (!fileio_exists_beneath(root_fd, files[i]))
                        continue;
                if (keep_path(s, files[i]) < 0 || (i == 0 && keep_path(s, KUBEADM_ETCD_PKI) < 0))
                        return -ENOMEM;
                r = fileio_read_beneath(root_fd, files[i], OWNER_FILE_MAX, &text, &size);
                if (r >= 0)
                        r = i == 0 ? pod_container_argv(text, size, "etcd", &argv)
                                   : etcd_env_argv(text, size, &argv, NULL);
                if (r == -ENOMEM || keep_argv(s, argv) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Out of scope: what it is, the unit that runs it (when one does) and everything that unit names,
 * a static pod kubeadm wrote for it and what that names, etcd.external's certificates, and the
 * default data directory, which no installer of this node owns then. */
static int foreign(int root_fd, EtcdScope *s, const char *source, const char *what) {
        cleanup_free char *unit = etcd_unit_path(root_fd), *kept = NULL;
        cleanup_strv char **external = NULL;
        int r;

        s->owner = ETCD_OWNER_FOREIGN;
        s->source = strdup(source ?: unit);
        if (!s->source)
                return -ENOMEM;
        if (unit && (r = keep_unit(root_fd, s, unit)) < 0)
                return r;
        if ((r = keep_beside(root_fd, s)) < 0)
                return r;
        /* The file that decided stays, so that a rerun decides the same ("remove /etc/kubernetes"
         * would leave an external etcd's data to the next run's default). */
        if (streq(s->source, KUBEADM_CONFIG)) {
                if (keep_path(s, KUBEADM_CONFIG) < 0 || kubeadm_external(root_fd, &external) == -ENOMEM)
                        return -ENOMEM;
                STRV_FOREACH(f, external)
                        if (keep_path(s, *f) < 0)
                                return -ENOMEM;
        }
        if (keep_path(s, DEFAULT_DATA_DIR) < 0)
                return -ENOMEM;
        STRV_FOREACH(k, s->keep) {
                char *n = strprintf("%s%s%s", kept ?: "", kept ? ", " : "", *k);

                if (!n)
                        return -ENOMEM;
                free(kept);
                kept = n;
        }
        return set_why(s,
                       "out of scope: %s (%s): no installer of this node made it; its unit, data, certificates and "
                       "member are never touched (kept: %s)",
                       what, s->source, kept);
}

/* No installer's etcd: a unit of the site's is out of scope. A kubeadm control plane without
 * etcd.yaml is no evidence that lasts: every profile empties the manifests, and a rerun would decide
 * otherwise. */
static int site_unit(int root_fd, EtcdScope *s) {
        cleanup_free char *unit = etcd_unit_path(root_fd);

        return unit ? foreign(root_fd, s, unit, "an etcd unit that no installer of this node writes") : 0;
}

static int embedded(int root_fd, Installer installer, EtcdScope *s) {
        int r = owned_embedded(root_fd, installer, s);

        return r == 0 ? site_unit(root_fd, s) : r;
}

/* kubeadm writes no etcd.env: on a kubeadm node its etcd is its static pod, unless the
 * ClusterConfiguration says etcd.external, whatever files sit beside it. */
static int kubeadm_node(int root_fd, int ext, EtcdScope *s) {
        bool pod = fileio_exists_beneath(root_fd, ETCD_MANIFEST);

        if (ext > 0)
                return foreign(root_fd, s, KUBEADM_CONFIG,
                               pod ? "kubeadm's ClusterConfiguration names etcd.external, beside an etcd static pod"
                                   : "kubeadm's ClusterConfiguration names etcd.external");
        if (pod)
                return owned_file(root_fd, s, ETCD_OWNER_KUBEADM, ETCD_MANIFEST, "kubeadm's stacked etcd");
        if (fileio_exists_beneath(root_fd, ETCD_ENV)) {
                cleanup_free char *unit = etcd_unit_path(root_fd);

                if (!unit)
                        return foreign(root_fd, s, ETCD_ENV,
                                       "an etcd environment file on a kubeadm node, which kubeadm never writes");
        }
        return site_unit(root_fd, s);
}

/* kubespray and kubekey run their etcd from /etc/etcd.env and write etcd.external into
 * kubeadm-config.yaml for it (kubespray roles/kubernetes/control-plane/templates/kubeadm-config.*.yaml.j2);
 * with etcd_deployment_type: kubeadm, a static pod. Without a detected installer, the same order. */
static int env_node(int root_fd, int ext, EtcdScope *s) {
        if (fileio_exists_beneath(root_fd, ETCD_MANIFEST))
                return ext > 0 ? foreign(root_fd, s, KUBEADM_CONFIG,
                                         "kubeadm's ClusterConfiguration names etcd.external, beside an etcd static "
                                         "pod")
                               : owned_file(root_fd, s, ETCD_OWNER_KUBEADM, ETCD_MANIFEST, "kubeadm's stacked etcd");
        if (fileio_exists_beneath(root_fd, ETCD_ENV))
                return owned_file(root_fd, s, ETCD_OWNER_ENV, ETCD_ENV, "kubespray's or kubekey's etcd");
        if (ext > 0)
                return foreign(root_fd, s, KUBEADM_CONFIG, "kubeadm's ClusterConfiguration names etcd.external");
        return 0;
}

int etcd_scope_decide(int root_fd, Installer installer, EtcdScope *ret) {
        EtcdScope s = {};
        int ext, r;

        /* The detected installer says which reading applies: the same etcd.external means "not ours"
         * on a kubeadm node and "kubespray's own etcd" on a kubespray one. */
        ext = kubeadm_external(root_fd, NULL);
        switch (installer) {
        case INSTALLER_KUBEADM:
                r = kubeadm_node(root_fd, ext, &s);
                break;
        case INSTALLER_K3S:
        case INSTALLER_RKE2:
                r = embedded(root_fd, installer, &s);
                break;
        default:
                r = env_node(root_fd, ext, &s);
                /* No installer detected: k3s's or rke2's embedded etcd by its files alone. */
                if (r == 0 && s.owner == ETCD_OWNER_NONE && installer == INSTALLER_NONE)
                        r = owned_embedded(root_fd, INSTALLER_K3S, &s) ?: owned_embedded(root_fd, INSTALLER_RKE2, &s);
                if (r == 0 && s.owner == ETCD_OWNER_NONE)
                        r = site_unit(root_fd, &s);
                break;
        }
        if (r < 0) {
                etcd_scope_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

bool etcd_scope_keeps_unit(const EtcdScope *s, const char *unit) {
        return s && s->owner == ETCD_OWNER_FOREIGN && streq_ptr(s->unit, unit);
}
