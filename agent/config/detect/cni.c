/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The CNI: its configuration where the runtime reads it, else what it leaves (links, pins, state). */

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/detect.h"
#include "agent/config/detect/detectors.h"
#include "agent/config/detect/finding.h"
#include "agent/base/toml.h"
#include "agent/config/cni-conf.h"
#include "agent/config/cnis.h"
#include "agent/os/fileio.h"
#include "agent/os/runtime-info.h"
#include "macro.h"
#include "netreset/link.h"
#include "netreset/nl.h"
#include "string-util.h"
#include "strv.h"

/* The conf dir kubelet's runtime is configured with, when its configuration names one: containerd's
 * CRI cni conf_dir (in the tables of the file's config version), CRI-O's network_dir (drop-ins override the file). */
static int cni_runtime_dir(int root_fd, const Detection *d, char **ret) {
        static const char *const crio[] = { "crio.network", NULL };
        bool is_crio = streq_ptr(d->runtime.value, "crio");
        cleanup_strv char **files = NULL;
        int r = 0;

        *ret = NULL;
        if (!streq_ptr(d->runtime.value, "containerd") && !is_crio)
                return 0;
        if (strv_extend(&files, is_crio ? "/etc/crio/crio.conf" : "/etc/containerd/config.toml") < 0)
                return -ENOMEM;
        if (is_crio) {
                cleanup_strv char **names = NULL;

                r = fileio_list_beneath(root_fd, "/etc/crio/crio.conf.d", "*", &names);
                STRV_FOREACH(n, names)
                        if (r >= 0)
                                r = strv_consume(&files, strprintf("/etc/crio/crio.conf.d/%s", *n));
        }
        STRV_FOREACH(f, files) {
                cleanup_free char *text = node_read(root_fd, *f), *v = NULL;

                if (r >= 0 && text &&
                    (r = toml_find_string(text, is_crio ? crio : runtime_containerd_cni_tables(text),
                                          is_crio ? "network_dir" : "conf_dir", &v)) > 0 &&
                    v[0] == '/') {
                        free(*ret);
                        *ret = TAKE_PTR(v);
                }
        }
        return r < 0 ? r : 0;
}

/* Does kubelet's runtime skip a CNI configuration that does not load and take the next by name?
 * CRI-O does (cri-o/ocicni pkg/ocicni/ocicni.go loadNetworks: "continue" on each error), and so did
 * dockershim, whose code cri-dockerd carries on (kubernetes pkg/kubelet/dockershim/network/cni/cni.go
 * getDefaultCNINetwork). containerd's CRI plugin does not: it loads its conf dir with
 * cni.WithDefaultConf (containerd pkg/cri/server/service_linux.go initPlatform, cniLoadOptions;
 * max_conf_num 1 by default), and go-cni's loadFromConfDir (containerd/go-cni opts.go) sorts the
 * .conf/.conflist/.json names and returns the error of the first file that does not load: the node
 * then has no CNI configuration at all. An unknown runtime counts as containerd: a file's ranges are
 * the pods' only when whichever runtime it is would load that file. */
static bool cni_runtime_skips_invalid(const Detection *d) {
        return streq_ptr(d->runtime.value, "crio") || streq_ptr(d->runtime.value, "docker");
}

/* A file of the conf dir that does not load (why): skipped in naming the CNI, and by a runtime that
 * skips it; where containerd stops at it, the first such file is *stopped, and no CNI file's range is
 * a pod range. */
static int cni_file_refused(Detection *d, const char *path, const char *why, char **stopped) {
        const char *who =
                d->runtime.value ? "containerd's CRI plugin" : "containerd's CRI plugin, if it is the runtime,";

        if (cni_runtime_skips_invalid(d))
                return evidence_add(&d->cni.evidence, path, "%s: skipped, as the runtime's libcni skips it", why);
        if (*stopped)
                return evidence_add(&d->cni.evidence, path, "%s: skipped in naming the CNI (containerd stops before)",
                                    why);
        *stopped = strdup(path);
        if (!*stopped)
                return -ENOMEM;
        return evidence_add(&d->cni.evidence, path,
                            "%s: skipped in naming the CNI; %s stops at it and loads no CNI configuration (go-cni "
                            "loadFromConfDir), so no CNI file's range is a pod range",
                            why, who);
}

/* One file of a CNI conf dir: 1 when it is a configuration libcni loads (then it names the CNI, and
 * its ranges are the pods' unless the runtime stopped at an earlier file), 0 when it does not (a
 * file that does not parse is evidence of nothing). */
static int cni_from_file(int root_fd, const char *path, Detection *d, char **stopped) {
        cleanup_free char *text = NULL, *types = NULL, *unread = NULL;
        const char *why = NULL;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                unread = strprintf("cannot be read (%s)", strerror(-r));
                return unread ? cni_file_refused(d, path, unread, stopped) : -ENOMEM;
        }
        r = cni_conf_types(strrchr(path, '/') + 1, text, size, &types, &why);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return cni_file_refused(d, path, why, stopped);
        if (*stopped)
                r = evidence_add(&d->cni.evidence, path,
                                 "plugins %s (the first configuration that loads: the node's CNI; not the "
                                 "runtime's, which stops at %s: its ranges are not the pods')",
                                 types, *stopped);
        else
                r = evidence_add(&d->cni.evidence, path, "plugins %s (the first configuration the runtime loads)",
                                 types);
        if (r >= 0)
                r = finding_set(&d->cni, types);
        if (r >= 0 && !(d->cni_config = strdup(path)))
                r = -ENOMEM;
        if (r >= 0 && !*stopped && !(d->cni_loaded = strdup(path)))
                r = -ENOMEM;
        return r < 0 ? r : 1;
}

/* The runtime uses the first configuration libcni loads from its conf dir (names ending .conf,
 * .conflist or .json, in byte order, dot files included): its plugins are the node's CNI. */
static int cni_from_config(int root_fd, Detection *d) {
        cleanup_strv char **dirs = NULL;
        cleanup_free char *own = NULL, *stopped = NULL;
        int r;

        /* The runtime's own conf dir first, then the default ones. */
        r = cni_runtime_dir(root_fd, d, &own);
        if (r >= 0 && own)
                r = strv_extend(&dirs, own);
        if (r >= 0)
                r = strv_extend_unique(&dirs, CNI_CONF_DIR);
        /* The installers' own (k3s's agent/etc/cni/net.d), beneath the data directory found. */
        INSTALLER_FOREACH(info)
                INSTALLER_LIST_FOREACH(c, info->cni_conf_dirs)
                        if (r >= 0)
                                r = strv_consume_unique(&dirs, installer_path(info, d->data_dir[info->id], *c));
        STRV_FOREACH(dir, dirs) {
                cleanup_strv char **names = NULL;

                if (r < 0 || d->cni.value)
                        break;
                r = fileio_list_beneath(root_fd, *dir, NULL, &names);
                STRV_FOREACH(n, names) {
                        cleanup_free char *path = NULL;

                        if (r != 0)
                                break;
                        if (!cni_conf_name_loaded(*n) || cni_conf_name_is_rescue(*n))
                                continue;
                        path = strprintf("%s/%s", *dir, *n);
                        r = path ? cni_from_file(root_fd, path, d, &stopped) : -ENOMEM;
                }
        }
        return r < 0 ? r : 0;
}

/* What a CNI leaves on a node besides its configuration (cnis.h): its own links (the running system
 * only), its BPF pins and its state directories. Names no other software uses. */
#define CNI_MARKS_FOREACH(c, m) \
        CNI_FOREACH(c)          \
                for (const CniMark *m = c->marks; m < c->marks + ELEMENTSOF(c->marks) && m->what; m++)

static int cni_mark_seen(Detection *d, char ***seen, const CniInfo *c, const CniMark *m, const char *where) {
        int r = evidence_add(&d->cni.evidence, where, "%s exists (%s's)", m->what, c->name);

        return r < 0 ? r : strv_extend_unique(seen, c->name);
}

/* The first link mark whose name pattern matches name, in *ret_cni and *ret_mark. */
static bool cni_link_mark(const char *name, const CniInfo **ret_cni, const CniMark **ret_mark) {
        CNI_MARKS_FOREACH(c, m)
                if (!m->dir && fnmatch(m->glob, name, 0) == 0) {
                        *ret_cni = c;
                        *ret_mark = m;
                        return true;
                }
        return false;
}

/* The links of the namespace this runs in: only for the running system, never for a --root tree. */
static int cni_from_links(Detection *d, char ***seen) {
        CLEANUP(nl_freep) NlSocket *rtnl = NULL;
        CLEANUP(link_table_freep) LinkTable *t = NULL;
        cleanup_free char *err = NULL;
        int r;

        r = nl_open(NETLINK_ROUTE, &rtnl);
        if (r >= 0)
                r = link_table_read(rtnl, &t, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return evidence_add(&d->cni.evidence, "links", "cannot be listed (%s): not evidence",
                                    err ?: strerror(-r));
        for (size_t i = 0; r >= 0 && i < t->n; i++) {
                const CniInfo *c;
                const CniMark *m;
                cleanup_free char *where = NULL;

                if (!cni_link_mark(t->links[i].name, &c, &m))
                        continue;
                where = strprintf("link %s", t->links[i].name);
                r = where ? cni_mark_seen(d, seen, c, m, where) : -ENOMEM;
        }
        return r;
}

static int cni_from_paths(int root_fd, Detection *d, char ***seen) {
        int r = 0;

        CNI_MARKS_FOREACH(c, m) {
                cleanup_strv char **names = NULL;
                cleanup_free char *where = NULL;

                if (r < 0)
                        break;
                if (!m->dir || (!m->glob && !node_exists(root_fd, m->dir)))
                        continue;
                if (m->glob && ((r = fileio_list_beneath(root_fd, m->dir, m->glob, &names)) < 0 || !names))
                        continue;
                where = names ? strprintf("%s/%s", m->dir, names[0]) : strdup(m->dir);
                r = where ? cni_mark_seen(d, seen, c, m, where) : -ENOMEM;
        }
        return r;
}

/* No configuration the runtime loads: the CNI's own state on the node is the evidence (a rerun after
 * /etc/cni/net.d went, or an operator deleted it). One CNI's state decides; canal is calico's and
 * flannel's together; any other mix is ambiguous, and no CNI's state goes on a guess. */
static int cni_from_state(int root_fd, bool live, Detection *d) {
        cleanup_strv char **seen = NULL;
        int r = 0;

        if (live)
                r = cni_from_links(d, &seen);
        if (r >= 0)
                r = cni_from_paths(root_fd, d, &seen);
        if (r < 0 || !seen)
                return r;
        strv_sort(seen);
        if (strv_length(seen) == 2 && streq(seen[0], "calico") && streq(seen[1], "flannel"))
                return finding_set(&d->cni, "calico,flannel");
        STRV_FOREACH(c, seen)
                if ((r = finding_set(&d->cni, *c)) < 0)
                        return r;
        finding_settle(&d->cni);
        return 0;
}

int detect_cni(int root_fd, bool live, Detection *d) {
        int r = cni_from_config(root_fd, d);

        if (r >= 0 && !d->cni.value)
                r = cni_from_state(root_fd, live, d);
        return r;
}
