/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which container runtime listens on a CRI socket and what it runs with, from /proc and its config
 * files: what the pods phase knows about a runtime from outside the CRI. */

#include <dirent.h>
#include <limits.h>
#include <stdio.h>

#include "agent/os/fileio.h"
#include "agent/os/proc.h"
#include "agent/os/runtime-info.h"
#include "agent/base/toml.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* A runtime config larger than this is not one we should parse. */
#define RUNTIME_CONFIG_MAX (1U << 20)

const char *const pods_known_sockets[] = {
        "/run/containerd/containerd.sock",
        "/var/run/crio/crio.sock",
        "/var/run/cri-dockerd.sock",
        "/run/k3s/containerd/containerd.sock",
        /* k3s with docker: true (--docker) runs its pods in Docker through its embedded cri-dockerd
         * (k3s pkg/agent/cridockerd); the socket exists only then (k3s#1469, #621). */
        "/run/k3s/cri-dockerd/cri-dockerd.sock",
        NULL,
};

void runtime_info_done(RuntimeInfo *i) {
        free(i->exe);
        free(i->config);
        free(i->unit);
        free(i->cni_conf_dir);
        free(i->state_dir);
        free(i->root_dir);
        *i = (RuntimeInfo) {};
}

const char *runtime_kind_to_string(RuntimeKind k) {
        switch (k) {
        case RUNTIME_CONTAINERD:
                return "containerd";
        case RUNTIME_CRIO:
                return "cri-o";
        case RUNTIME_CRI_DOCKERD:
                return "cri-dockerd";
        default:
                return "unknown";
        }
}

static int strdup_to(char **field, const char *v) {
        char *s = strdup(v);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* Set *field from the config's key in one of the tables, if it has it. */
static int text_lookup(const char *text, const char *const *tables, const char *key, char **field) {
        cleanup_free char *v = NULL;
        int r;

        r = toml_find_string(text, tables, key, &v);
        if (r <= 0)
                return r;
        free(*field);
        *field = TAKE_PTR(v);
        return 0;
}

/* The same from a config file; keeps the default when there is none. */
static int config_lookup(const char *path, const char *const *tables, const char *key, char **field) {
        cleanup_free char *text = NULL;

        if (fileio_read_file(path, RUNTIME_CONFIG_MAX, &text, NULL) < 0)
                return 0; /* no config file: the defaults are what the runtime uses */
        return text_lookup(text, tables, key, field);
}

const char *const *runtime_containerd_cni_tables(const char *config_text) {
        static const char *const v3[] = { "plugins.io.containerd.cri.v1.runtime.cni", NULL };
        static const char *const v2[] = { "plugins.io.containerd.grpc.v1.cri.cni", NULL };
        static const char *const v1[] = { "plugins.cri.cni", NULL };
        static const char *const top[] = { "", NULL };
        unsigned version = 1;

        (void) toml_find_uint(config_text, top, "version", &version);
        return version >= 3 ? v3 : version == 2 ? v2 : v1;
}

static int containerd_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        static const char *const top[] = { "", NULL };
        cleanup_free char *text = NULL;
        const char *v;
        int r = 0;

        v = cmdline ? proc_cmdline_option(cmdline, len, "--config", "-c") : NULL;
        if (strdup_to(&i->config, v ?: "/etc/containerd/config.toml") < 0 ||
            strdup_to(&i->cni_conf_dir, "/etc/cni/net.d") < 0 || strdup_to(&i->state_dir, "/run/containerd") < 0 ||
            strdup_to(&i->root_dir, "/var/lib/containerd") < 0)
                return -ENOMEM;
        /* No config file: the defaults are what the runtime uses. */
        if (fileio_read_file(i->config, RUNTIME_CONFIG_MAX, &text, NULL) >= 0) {
                r = text_lookup(text, runtime_containerd_cni_tables(text), "conf_dir", &i->cni_conf_dir);
                if (r >= 0)
                        r = text_lookup(text, top, "state", &i->state_dir);
                if (r >= 0)
                        r = text_lookup(text, top, "root", &i->root_dir);
        }
        if (r < 0)
                return r;
        /* Flags win over the file (k3s passes --state and --root). */
        if (cmdline && (v = proc_cmdline_option(cmdline, len, "--state", NULL)) && strdup_to(&i->state_dir, v) < 0)
                return -ENOMEM;
        if (cmdline && (v = proc_cmdline_option(cmdline, len, "--root", NULL)) && strdup_to(&i->root_dir, v) < 0)
                return -ENOMEM;
        return 0;
}

static int crio_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        static const char *const tables[] = { "crio.network", NULL };
        struct dirent **names = NULL;
        const char *v;
        int n, r;

        v = cmdline ? proc_cmdline_option(cmdline, len, "--config", "-c") : NULL;
        if (strdup_to(&i->config, v ?: "/etc/crio/crio.conf") < 0 || strdup_to(&i->cni_conf_dir, "/etc/cni/net.d") < 0)
                return -ENOMEM;
        r = config_lookup(i->config, tables, "network_dir", &i->cni_conf_dir);
        /* Drop-ins override the main file, in name order. */
        n = scandir("/etc/crio/crio.conf.d", &names, NULL, alphasort);
        for (int k = 0; k < n; k++) {
                char path[PATH_MAX];

                snprintf(path, sizeof path, "/etc/crio/crio.conf.d/%s", names[k]->d_name);
                if (r >= 0 && names[k]->d_name[0] != '.')
                        r = config_lookup(path, tables, "network_dir", &i->cni_conf_dir);
                free(names[k]);
        }
        free(names);
        if (r >= 0 && cmdline && (v = proc_cmdline_option(cmdline, len, "--cni-config-dir", NULL)))
                r = strdup_to(&i->cni_conf_dir, v);
        return r;
}

static int cri_dockerd_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        const char *v = cmdline ? proc_cmdline_option(cmdline, len, "--cni-conf-dir", NULL) : NULL;

        return strdup_to(&i->cni_conf_dir, v ?: "/etc/cni/net.d");
}

static RuntimeKind kind_from(const char *runtime_name, const char *exe, const char *socket_path) {
        const char *names[] = { runtime_name, exe };

        /* k3s's cri-dockerd is served by the k3s process itself: the socket says what it is. */
        if (strstr(socket_path, "/cri-dockerd/"))
                return RUNTIME_CRI_DOCKERD;
        for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                const char *n = names[k];

                if (!n)
                        continue;
                if (strstr(n, "containerd") || streq(n, "k3s") || streq(n, "rke2"))
                        return RUNTIME_CONTAINERD;
                if (strstr(n, "cri-o") || streq(n, "crio"))
                        return RUNTIME_CRIO;
                if (strstr(n, "dockerd") || strstr(n, "docker"))
                        return RUNTIME_CRI_DOCKERD;
        }
        if (strstr(socket_path, "containerd"))
                return RUNTIME_CONTAINERD;
        if (strstr(socket_path, "crio"))
                return RUNTIME_CRIO;
        return strstr(socket_path, "dockerd") ? RUNTIME_CRI_DOCKERD : RUNTIME_UNKNOWN;
}

static const char *default_unit(RuntimeKind k, const char *socket_path) {
        if (k == RUNTIME_CONTAINERD)
                return strstr(socket_path, "/k3s/") ? "k3s.service" : "containerd.service";
        if (k == RUNTIME_CRIO)
                return "crio.service";
        if (k == RUNTIME_CRI_DOCKERD)
                return strstr(socket_path, "/k3s/") ? "k3s.service" : "cri-docker.service";
        return NULL;
}

int runtime_info_probe(const char *socket_path, const char *runtime_name, RuntimeInfo *ret) {
        cleanup_free char *cmdline = NULL;
        RuntimeInfo i = {};
        size_t len = 0;
        pid_t pid = 0;
        int r;

        if (proc_socket_listener(socket_path, &pid) > 0) {
                i.pid = pid;
                i.exe = proc_exe_name(pid);
                i.unit = proc_cgroup_unit(pid);
                if (proc_cmdline_read(pid, &cmdline, &len) < 0)
                        cmdline = NULL;
        }
        i.kind = kind_from(runtime_name, i.exe, socket_path);
        r = 0;
        if (!i.unit && default_unit(i.kind, socket_path))
                r = strdup_to(&i.unit, default_unit(i.kind, socket_path));
        if (r >= 0 && i.kind == RUNTIME_CONTAINERD)
                r = containerd_info(&i, cmdline, len);
        else if (r >= 0 && i.kind == RUNTIME_CRIO)
                r = crio_info(&i, cmdline, len);
        else if (r >= 0 && i.kind == RUNTIME_CRI_DOCKERD)
                r = cri_dockerd_info(&i, cmdline, len);
        else if (r >= 0)
                r = strdup_to(&i.cni_conf_dir, "/etc/cni/net.d");
        if (r < 0) {
                runtime_info_done(&i);
                return r;
        }
        *ret = i;
        return 0;
}
