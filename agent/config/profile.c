/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Profile lookup and the fragments made from the detection. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/config/cnis.h"
#include "agent/config/embedded.h"
#include "agent/base/path.h"
#include "agent/config/profile.h"
#include "agent/config/kubelet-runtime.h"
#include "agent/config/rancher-datadir.h"
#include "macro.h"
#include "string-util.h"

static const ProfileSettings *settings;

void profile_configure(const ProfileSettings *s) {
        settings = s;
}

/* Each installer's own profile (NONE has none: the conservative one is chosen below). */
static const char *const installer_profiles[_INSTALLER_MAX] = {
        [INSTALLER_KUBEADM] = "kubeadm", [INSTALLER_KUBESPRAY] = "kubespray", [INSTALLER_KUBEKEY] = "kubekey",
        [INSTALLER_K3S] = "k3s",         [INSTALLER_RKE2] = "rke2",
};

/* --profile's names: every installer's profile, in the installers' order, then "all". */
const char *profile_selectable_nth(size_t i) {
        for (size_t k = 0; k < ELEMENTSOF(installer_profiles); k++)
                if (installer_profiles[k] && i-- == 0)
                        return installer_profiles[k];
        return i == 0 ? "all" : NULL;
}

bool profile_is_selectable(const char *name) {
        const char *p;

        for (size_t i = 0; name && (p = profile_selectable_nth(i)); i++)
                if (streq(p, name))
                        return true;
        return false;
}

/* The runtimes --with-runtime names, each with its fragment; containerd's is k3s's or rke2's own on
 * their nodes (runtime_fragment()). */
static const struct {
        const char *runtime;
        const char *fragment;
} runtimes[] = {
        { "containerd", "runtime-containerd" },
        { "crio", "runtime-crio" },
        { "docker", "runtime-docker" },
};

const char *profile_runtime_nth(size_t i) {
        return i < ELEMENTSOF(runtimes) ? runtimes[i].runtime : NULL;
}

bool profile_runtime_is_known(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(runtimes); i++)
                if (streq(runtimes[i].runtime, name))
                        return true;
        return false;
}

const char *profile_for_detection(const Detection *d, const char **ret_why) {
        if (d->installer_ambiguous) {
                *ret_why = "several installers' files found: the conservative profile; choose with --profile";
                return "kubeadm";
        }
        if (d->installer <= INSTALLER_NONE || d->installer >= _INSTALLER_MAX) {
                *ret_why = "no installer detected: the conservative profile";
                return "kubeadm";
        }
        *ret_why = "detected";
        return installer_profiles[d->installer];
}

static const char *embedded_text(const char *name) {
        if (streq(name, "all"))
                return embedded_default_manifest();
        for (const ProfileText *p = profile_texts; p->name; p++)
                if (streq(p->name, name))
                        return p->text;
        return NULL;
}

/* The runtime kept (no --with-runtime): on a k3s node crictl and ctr in /usr/local/bin are k3s's links
 * to its own binary, not a kept runtime's tools, so they are not protected there. */
static const char *keep_fragment(void) {
        const Detection *d = settings ? settings->detection : NULL;

        return d && d->installer == INSTALLER_K3S ? "runtime-keep-base" : "runtime-keep";
}

/* --with-runtime: the fragment of the runtime kubelet used; k3s and rke2 embed theirs. */
static int runtime_fragment(const char **ret, char **reterr) {
        const Detection *d = settings->detection;
        const char *rt = settings->runtime ?: d ? d->runtime.value : NULL;
        cleanup_free char *names = NULL;

        if (!rt) {
                names = strjoin_nth(profile_runtime_nth, "|", "|");
                *reterr = strprintf("--with-runtime: %s; name %s with --with-runtime=%s",
                                    d && d->runtime.ambiguous ? "the evidence names several runtimes"
                                                              : "which runtime kubelet used is not known",
                                    d && d->runtime.ambiguous ? "one" : "it", strna(names));
                return -EINVAL;
        }
        if (streq(rt, "containerd") && d && (d->installer == INSTALLER_K3S || d->installer == INSTALLER_RKE2)) {
                *ret = d->installer == INSTALLER_K3S ? "runtime-k3s" : "runtime-rke2";
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(runtimes); i++)
                if (streq(runtimes[i].runtime, rt)) {
                        *ret = runtimes[i].fragment;
                        return 0;
                }
        *reterr = strprintf("--with-runtime: no profile for the runtime '%s'", rt);
        return -EINVAL;
}

/* A detected node path goes into a manifest line only when it is a plain, valid, unguarded path:
 * no quoting needed, nothing a guard would refuse. */
static bool path_usable(const char *p) {
        cleanup_free char *reason = NULL;

        if (!p || strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@") != strlen(p))
                return false;
        if (path_validate_target(p, &reason) < 0 || path_is_glob(p))
                return false;
        reason = mfree(reason);
        return path_guard_check(p, &reason) == 0;
}

/* The comment that says where a detected line comes from; false when the path cannot be used. */
static bool detected_comment(FILE *f, const char *what, const char *path) {
        if (!path)
                return false;
        if (!path_usable(path)) {
                fprintf(f, "# %s: a system path or unusual characters, not added\n", what);
                return false;
        }
        fprintf(f, "# %s\n", what);
        return true;
}

/* Each CNI's own fragment (cnis.h), chosen from the plugin types of the node's first CNI configuration
 * (the one the runtime uses), or, without one, from the CNI's name its own state on the node gave;
 * and, for CNIs whose configuration names another one's plugin, from the configuration's file name
 * (kube-router's bridge plugin on its kube-bridge; canal, calico's plugin on flannel's network, whose
 * daemon leaves /run/flannel). */
static const CniInfo *cni_by_file_name(const Detection *d) {
        const char *base = d->cni_config ? strrchr(d->cni_config, '/') : NULL;

        CNI_FOREACH(c)
                CNI_LIST_FOREACH(n, c->file_names)
                        if (base && c->fragment && strstr(base, *n))
                                return c;
        return NULL;
}

static bool cni_has_type(const char *types, const char *type) {
        size_t n = strlen(type);

        for (const char *p = types; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
                if (strncmp(p, type, n) == 0 && (p[n] == ',' || p[n] == 0))
                        return true;
        return false;
}

/* Do the detected types (or the CNI's name its state gave) name this CNI? */
static bool cni_names(const char *types, const CniInfo *c) {
        CNI_LIST_FOREACH(t, c->types)
                if (cni_has_type(types, *t))
                        return true;
        return cni_has_type(types, c->name);
}

/* "include profile:cni-X" for the detected CNI, with the evidence as a comment; nothing else when
 * none is detected, so that no CNI's state goes on a guess. */
static int cni_detected_text(char **ret) {
        const Detection *d = settings ? settings->detection : NULL;
        const char *types = d ? d->cni.value : NULL;
        const CniInfo *by_name;
        char *buf = NULL;
        size_t size = 0, n = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        if (types && d->cni_config)
                fprintf(f, "# The node's CNI configuration %s names the plugins %s.\n", d->cni_config, types);
        else if (types)
                fprintf(f, "# No CNI configuration: the node's own state is %s's.\n", types);
        CNI_FOREACH(c)
                if (types && c->fragment && cni_names(types, c)) {
                        fprintf(f, "include " PROFILE_PREFIX "cni-%s\n", c->name);
                        n++;
                }
        if (d && (by_name = cni_by_file_name(d)) && !(types && cni_names(types, by_name))) {
                fprintf(f, "include " PROFILE_PREFIX "cni-%s\n", by_name->name);
                n++;
        }
        if (n == 0 && d && d->cni.ambiguous)
                fputs("# No known CNI detected: the evidence names several CNIs (ambiguous), so no CNI's own state "
                      "is removed.\n",
                      f);
        else if (n == 0)
                fputs("# No known CNI detected: no CNI's own state is removed.\n", f);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

static int detected_text(char **ret) {
        const Detection *d = settings ? settings->detection : NULL;
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs("# Lines made from what detection found on this node.\n", f);
        /* kubeadm follows a symlinked /var/lib/kubelet and empties the target: the data disk's state. */
        if (d && detected_comment(f, "/var/lib/kubelet is a symlink: its target", d->kubelet_dir_target))
                fprintf(f, "unmount %s/*\nempty %s\n", d->kubelet_dir_target, d->kubelet_dir_target);
        if (d && detected_comment(f, "the local etcd's data directory", d->etcd_data_dir))
                fprintf(f, "empty %s\n", d->etcd_data_dir);
        /* Docker as kubelet's runtime: its Engine API removes the pods dockershim (gone with kubelet) or
         * a silent cri-dockerd left, at the endpoint kubelet asks (its --docker-endpoint, daemon.json's
         * hosts, or /var/run/docker.sock, a symlink resolved within the tree). */
        if (d && streq_ptr(d->runtime.value, "docker") &&
            startswith(d->docker_endpoint ?: DOCKER_ENDPOINT_DEFAULT, "unix://"))
                fprintf(f,
                        "# Docker is kubelet's runtime (%s): its Kubernetes containers go through its Engine API\n"
                        "docker-endpoint %s\n",
                        strna(d->runtime_endpoint), d->docker_endpoint ?: DOCKER_ENDPOINT_DEFAULT);
        else if (d && streq_ptr(d->runtime.value, "docker"))
                fprintf(f, "# Docker is kubelet's runtime, at %s: no unix socket, its Engine API is not asked\n",
                        d->docker_endpoint);
        /* Only this cluster's entries go; the file itself when nothing else is in it (kubeconfig-entries.h). */
        STRV_FOREACH(k, d ? d->home_kubeconfigs : NULL)
                if (detected_comment(f, "a kubeconfig that holds this cluster's entries", *k))
                        fprintf(f, "prune-kubeconfig %s\n", *k);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

/* The installer whose default data dir word lies at or beneath and whose data dir detection found
 * elsewhere (installers.h), or NULL. */
static const InstallerInfo *moved_data_dir(const char *word) {
        const Detection *d = settings ? settings->detection : NULL;

        INSTALLER_FOREACH(info)
                if (d && d->data_dir[info->id] && info->data.dir && path_startswith_dir(word, info->data.dir))
                        return info;
        return NULL;
}

/* words with words[k] replaced by dir/rest: one line of the rebased profile, handed to fn. */
static int emit_line(char **words, size_t k, const char *dir, const char *rest, profile_line_fn fn, void *userdata) {
        cleanup_free char *n = strprintf("%s%s%s", dir, isempty(rest) || rest[0] == '/' ? "" : "/", strempty(rest));
        char *old = words[k];
        int r;

        if (!n)
                return -ENOMEM;
        words[k] = n;
        r = fn(words, userdata);
        words[k] = old;
        return r;
}

bool profile_rebase_keeps_default(char *const *words) {
        const Detection *d = settings ? settings->detection : NULL;
        const InstallerInfo *info;

        for (char *const *w = words && words[0] ? words + 1 : NULL; w && *w; w++)
                if ((info = moved_data_dir(*w)) && !streq_ptr(d->data_dir_link[info->id], info->data.dir))
                        return true;
        return false;
}

/* Each word beneath a moved data dir is rebased; the data dir itself (remove /var/lib/rancher/k3s)
 * becomes one line per entry its installer makes there, never the directory, which may be shared
 * (data-dir: /data); and the default dir itself when it is a symlink to the moved one. */
int profile_rebase_line(char **words, profile_line_fn fn, void *userdata) {
        const Detection *d = settings ? settings->detection : NULL;
        const InstallerInfo *info;
        bool moved = false;
        size_t whole = 0;
        int r;

        for (size_t k = 1; words && words[0] && words[k]; k++) {
                cleanup_free char *n = NULL;

                if (!(info = moved_data_dir(words[k])))
                        continue;
                if (streq(words[k], info->data.dir) && whole == 0) {
                        whole = k;
                        continue;
                }
                n = strprintf("%s%s", d->data_dir[info->id], words[k] + strlen(info->data.dir));
                if (!n)
                        return -ENOMEM;
                free(words[k]);
                words[k] = TAKE_PTR(n);
                moved = true;
        }
        if (whole == 0 && moved)
                return (r = fn(words, userdata)) < 0 ? r : 1;
        if (whole == 0)
                return 0;
        info = moved_data_dir(words[whole]);
        INSTALLER_LIST_FOREACH(e, info->entries)
                if ((r = emit_line(words, whole, d->data_dir[info->id], *e, fn, userdata)) < 0)
                        return r;
        if (d->data_dir_link[info->id] &&
            (r = emit_line(words, whole, d->data_dir_link[info->id], NULL, fn, userdata)) < 0)
                return r;
        return 1;
}

int profile_text(const char *name, const char **ret_name, char **ret, char **reterr) {
        const char *text;
        int r;

        *ret_name = name;
        /* "detected": the profile detection chose, whole (a site manifest extends it); "node": the
         * lines made from this node's detection, which every profile includes. */
        if (streq(name, "detected")) {
                const char *why;

                name = settings && settings->detection ? profile_for_detection(settings->detection, &why)
                                                       : profile_for_detection(&(Detection) {}, &why);
        } else if (streq(name, "node"))
                return detected_text(ret);
        if (streq(name, "cni-detected"))
                return cni_detected_text(ret);
        if (streq(name, "runtime")) {
                if (!settings || !settings->with_runtime)
                        name = keep_fragment();
                else if ((r = runtime_fragment(&name, reterr)) < 0)
                        return r;
        }
        *ret_name = name;
        text = embedded_text(name);
        if (!text) {
                cleanup_free char *names = strjoin_nth(profile_selectable_nth, ", ", ", ");

                *reterr = strprintf("no built-in profile '%s' (profiles: %s)", name, strna(names));
                return -ENOENT;
        }
        *ret = strdup(text);
        return *ret ? 0 : -ENOMEM;
}
