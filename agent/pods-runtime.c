/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the pods phase learns about a container runtime from /proc and its config files. */

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#include "agent/pods-runtime.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* A runtime config or a cmdline larger than this is not one we should parse. */
#define RUNTIME_FILE_MAX (1U << 20)
/* __SO_ACCEPTCON in /proc/net/unix's Flags column: a listening socket. */
#define UNIX_FLAG_LISTENING 0x10000UL

const char *const pods_known_sockets[] = {
        "/run/containerd/containerd.sock",
        "/var/run/crio/crio.sock",
        "/var/run/cri-dockerd.sock",
        "/run/k3s/containerd/containerd.sock",
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

/* Up to max bytes of a file, NUL-terminated (embedded NULs stay: cmdline uses them). */
static int read_small_file(const char *path, size_t max, char **ret, size_t *ret_len) {
        cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        cleanup_free char *buf = NULL;
        size_t len = 0;

        if (fd < 0)
                return negative_errno();
        buf = malloc(max + 1);
        if (!buf)
                return -ENOMEM;
        while (len < max) {
                ssize_t k = read(fd, buf + len, max - len);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

/* The value of an option in a NUL-separated cmdline: "--name V", "--name=V" or "-s V". */
static const char *cmdline_option(const char *cmdline, size_t len, const char *name, const char *short_name) {
        size_t nl = strlen(name);

        for (const char *p = cmdline; p < cmdline + len; p += strlen(p) + 1) {
                const char *next = p + strlen(p) + 1;

                if (strncmp(p, name, nl) == 0 && p[nl] == '=')
                        return p + nl + 1;
                if ((streq(p, name) || (short_name && streq(p, short_name))) && next < cmdline + len)
                        return next;
        }
        return NULL;
}

static int strdup_to(char **field, const char *v) {
        char *s = strdup(v);

        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

/* TOML, just enough: table headers, key = "basic" or 'literal' strings, comments. */
static void toml_normalise_table(const char *s, size_t n, char *out, size_t size) {
        size_t o = 0;

        for (size_t i = 0; i < n && o + 1 < size; i++)
                if (!strchr("[]\"' \t", s[i]))
                        out[o++] = s[i];
        out[o] = '\0';
}

static bool table_in(const char *table, const char *const *tables) {
        for (; *tables; tables++)
                if (streq(table, *tables))
                        return true;
        return false;
}

/* The string value after "key =" on one line; NULL when the line is not that. */
static char *toml_line_value(const char *line, size_t n, const char *key) {
        size_t kl = strlen(key), i = 0, start;
        char quote;

        while (i < n && isspace((unsigned char) line[i]))
                i++;
        if (n - i < kl || strncmp(line + i, key, kl) != 0)
                return NULL;
        i += kl;
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i >= n || line[i++] != '=')
                return NULL;
        while (i < n && (line[i] == ' ' || line[i] == '\t'))
                i++;
        if (i >= n || (line[i] != '"' && line[i] != '\''))
                return NULL;
        quote = line[i++];
        start = i;
        while (i < n && line[i] != quote)
                i += quote == '"' && line[i] == '\\' && i + 1 < n ? 2 : 1;
        if (i >= n)
                return NULL;
        /* Paths need no escapes; a value with one is taken as written. */
        return strndup(line + start, i - start);
}

int toml_find_string(const char *text, const char *const *tables, const char *key, char **ret) {
        char table[256] = "";
        char *found = NULL;

        for (const char *line = text; *line;) {
                size_t n = strcspn(line, "\n");
                const char *l = line;

                while (l < line + n && isspace((unsigned char) *l))
                        l++;
                if (*l == '[')
                        toml_normalise_table(l, (size_t) (line + n - l), table, sizeof table);
                else if (*l != '#' && table_in(table, tables)) {
                        char *v = toml_line_value(line, n, key);

                        if (v) {
                                free(found);
                                found = v;
                        }
                }
                line += n;
                if (*line)
                        line++;
        }
        if (!found)
                return 0;
        *ret = found;
        return 1;
}

/* Set *field from the first table/key that a config file has; keeps the default otherwise. */
static int config_lookup(const char *path, const char *const *tables, const char *key, char **field) {
        cleanup_free char *text = NULL, *v = NULL;
        int r;

        if (read_small_file(path, RUNTIME_FILE_MAX, &text, NULL) < 0)
                return 0;       /* no config file: the defaults are what the runtime uses */
        r = toml_find_string(text, tables, key, &v);
        if (r <= 0)
                return r;
        free(*field);
        *field = TAKE_PTR(v);
        return 0;
}

static int containerd_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        /* containerd 1.x config version 2, version 1 and containerd 2.x (version 3). */
        static const char *const cni_tables[] = {
                "plugins.io.containerd.grpc.v1.cri.cni", "plugins.cri.cni",
                "plugins.io.containerd.cri.v1.runtime.cni", NULL,
        };
        static const char *const top[] = { "", NULL };
        const char *v;
        int r;

        v = cmdline ? cmdline_option(cmdline, len, "--config", "-c") : NULL;
        if (strdup_to(&i->config, v ?: "/etc/containerd/config.toml") < 0 ||
            strdup_to(&i->cni_conf_dir, "/etc/cni/net.d") < 0 || strdup_to(&i->state_dir, "/run/containerd") < 0 ||
            strdup_to(&i->root_dir, "/var/lib/containerd") < 0)
                return -ENOMEM;
        r = config_lookup(i->config, cni_tables, "conf_dir", &i->cni_conf_dir);
        if (r >= 0)
                r = config_lookup(i->config, top, "state", &i->state_dir);
        if (r >= 0)
                r = config_lookup(i->config, top, "root", &i->root_dir);
        if (r < 0)
                return r;
        /* Flags win over the file (k3s passes --state and --root). */
        if (cmdline && (v = cmdline_option(cmdline, len, "--state", NULL)) && strdup_to(&i->state_dir, v) < 0)
                return -ENOMEM;
        if (cmdline && (v = cmdline_option(cmdline, len, "--root", NULL)) && strdup_to(&i->root_dir, v) < 0)
                return -ENOMEM;
        return 0;
}

static int crio_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        static const char *const tables[] = { "crio.network", NULL };
        struct dirent **names = NULL;
        const char *v;
        int n, r;

        v = cmdline ? cmdline_option(cmdline, len, "--config", "-c") : NULL;
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
        if (r >= 0 && cmdline && (v = cmdline_option(cmdline, len, "--cni-config-dir", NULL)))
                r = strdup_to(&i->cni_conf_dir, v);
        return r;
}

static int cri_dockerd_info(RuntimeInfo *i, const char *cmdline, size_t len) {
        const char *v = cmdline ? cmdline_option(cmdline, len, "--cni-conf-dir", NULL) : NULL;

        return strdup_to(&i->cni_conf_dir, v ?: "/etc/cni/net.d");
}

/* The systemd unit a process runs in: the last "*.service" component of its cgroup path. */
static char *cgroup_unit(pid_t pid) {
        cleanup_free char *text = NULL;
        char path[64], *unit = NULL;

        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) pid);
        if (read_small_file(path, 64 * 1024, &text, NULL) < 0)
                return NULL;
        for (char *line = text, *save = NULL; (line = strtok_r(line, "\n", &save)); line = NULL) {
                char *p = strchr(line, ':');

                /* "ID:CONTROLLERS:PATH" */
                p = p ? strchr(p + 1, ':') : NULL;
                if (!p)
                        continue;
                for (char *c = p + 1, *cs = NULL; (c = strtok_r(c, "/", &cs)); c = NULL) {
                        size_t l = strlen(c);

                        if (l > 8 && streq(c + l - 8, ".service")) {
                                free(unit);
                                unit = strdup(c);
                        }
                }
        }
        return unit;
}

static RuntimeKind kind_from(const char *runtime_name, const char *exe, const char *socket_path) {
        const char *names[] = { runtime_name, exe };

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
                return "cri-docker.service";
        return NULL;
}

static char *exe_name(pid_t pid) {
        char path[64], target[PATH_MAX];
        const char *base;
        ssize_t l;

        snprintf(path, sizeof path, "/proc/%d/exe", (int) pid);
        l = readlink(path, target, sizeof target - 1);
        if (l <= 0)
                return NULL;
        target[l] = '\0';
        if (l > 10 && streq(target + l - 10, " (deleted)"))
                target[l - 10] = '\0';
        base = strrchr(target, '/');
        return strdup(base ? base + 1 : target);
}

int runtime_info_probe(const char *socket_path, const char *runtime_name, RuntimeInfo *ret) {
        cleanup_free char *cmdline = NULL;
        RuntimeInfo i = {};
        size_t len = 0;
        pid_t pid = 0;
        int r;

        if (socket_listener_pid(socket_path, &pid) > 0) {
                char path[64];

                i.pid = pid;
                i.exe = exe_name(pid);
                i.unit = cgroup_unit(pid);
                snprintf(path, sizeof path, "/proc/%d/cmdline", (int) pid);
                if (read_small_file(path, RUNTIME_FILE_MAX, &cmdline, &len) < 0)
                        cmdline = mfree(cmdline);
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

/* The inode of the listening socket bound to path, from /proc/net/unix; 0 when there is none. */
static int listening_inode(const char *path, unsigned long *ret) {
        cleanup_fclose FILE *f = fopen("/proc/net/unix", "re");
        char line[PATH_MAX + 128];

        if (!f)
                return negative_errno();
        *ret = 0;
        /* Num RefCount Protocol Flags Type St Inode Path */
        while (fgets(line, sizeof line, f)) {
                unsigned long flags, inode;
                int off = 0;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %n", &flags, &inode, &off) < 2 || off == 0)
                        continue;
                if ((flags & UNIX_FLAG_LISTENING) && streq(line + off, path)) {
                        *ret = inode;
                        return 1;
                }
        }
        return 0;
}

static bool pid_has_socket(int pid, const char *want) {
        char dir[64], lpath[64 + 256 + 2], target[64];
        struct dirent *de;
        bool found = false;
        DIR *d;

        snprintf(dir, sizeof dir, "/proc/%d/fd", pid);
        d = opendir(dir);
        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                ssize_t l;

                snprintf(lpath, sizeof lpath, "%s/%s", dir, de->d_name);
                l = readlink(lpath, target, sizeof target - 1);
                if (l <= 0)
                        continue;
                target[l] = '\0';
                found = streq(target, want);
        }
        closedir(d);
        return found;
}

int socket_listener_pid(const char *path, pid_t *ret) {
        unsigned long inode;
        char want[48];
        struct dirent *de;
        DIR *proc;
        int r;

        *ret = 0;
        r = listening_inode(path, &inode);
        if (r <= 0)
                return r;
        snprintf(want, sizeof want, "socket:[%lu]", inode);
        proc = opendir("/proc");
        if (!proc)
                return negative_errno();
        while ((de = readdir(proc)))
                if (isdigit_str(de->d_name) && pid_has_socket(atoi(de->d_name), want)) {
                        *ret = (pid_t) atoi(de->d_name);
                        break;
                }
        closedir(proc);
        return *ret > 0;
}

int kubelet_find(pid_t *ret) {
        struct dirent *de;
        DIR *proc;

        proc = opendir("/proc");
        if (!proc)
                return negative_errno();
        while ((de = readdir(proc))) {
                cleanup_free char *exe = NULL;

                if (!isdigit_str(de->d_name))
                        continue;
                exe = exe_name((pid_t) atoi(de->d_name));
                if (exe && streq(exe, "kubelet")) {
                        *ret = (pid_t) atoi(de->d_name);
                        closedir(proc);
                        return 1;
                }
        }
        closedir(proc);
        return 0;
}
