/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths: validation of manifest paths and component-wise glob matching, without touching the file system. */

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/base/path.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

/* The one matching rule of every path-taking directive (remove, empty, unmount, protect, process):
 * fnmatch(3) per component with FNM_NOESCAPE, so a backslash is always an ordinary character. Names
 * with backslashes are real on a node (systemd escapes '-' as "\x2d" in unit and mount names), and
 * a component without '*', '?' or '[' is looked up literally by the removal walk: with escapes on,
 * "protect /a\b" would have matched "ab" while "remove /a\b" removed "a\b". A literal '*', '?' or
 * '[' is written as a one-character class: "[*]", "[?]", "[[]". */
#define PATH_FNMATCH_FLAGS FNM_NOESCAPE

/* Advance *p to the next component; returns its length, 0 at the end. Empty components are skipped. */
static size_t component_next(const char **p, const char **ret_start) {
        const char *s = *p + strspn(*p, "/");
        size_t n = strcspn(s, "/");

        *ret_start = s;
        *p = s + n;
        return n;
}

/* fnmatch(3) needs NUL-terminated strings. A component longer than NAME_MAX (255) cannot come
 * from a file system, only from a manifest line (4096 bytes at most): it gets the heap, and as a
 * "no" from a protect check could cost data, running out of memory there aborts. */
static bool component_match_heap(const char *pat, size_t pn, const char *s, size_t sn) {
        cleanup_free char *a = strndup(pat, pn), *b = strndup(s, sn);

        if (!a || !b)
                abort();
        return fnmatch(a, b, PATH_FNMATCH_FLAGS) == 0;
}

static bool component_match_glob(const char *pat, size_t pn, const char *s, size_t sn) {
        char a[NAME_MAX + 1], b[NAME_MAX + 1];

        if (pn >= sizeof(a) || sn >= sizeof(b))
                return component_match_heap(pat, pn, s, sn);
        memcpy(a, pat, pn);
        a[pn] = 0;
        memcpy(b, s, sn);
        b[sn] = 0;
        return fnmatch(a, b, PATH_FNMATCH_FLAGS) == 0;
}

/* Without a glob character (and with no escapes) fnmatch() is byte equality, and the removal walk
 * looks such a name up as it is. The guard tries every line against some 200 names: the common
 * literal case costs a memcmp(). */
static bool component_match(const char *pat, size_t pn, const char *s, size_t sn) {
        if (!memchr(pat, '*', pn) && !memchr(pat, '?', pn) && !memchr(pat, '[', pn))
                return pn == sn && memcmp(pat, s, pn) == 0;
        return component_match_glob(pat, pn, s, sn);
}

bool path_name_match(const char *glob, const char *name) {
        return fnmatch(glob, name, PATH_FNMATCH_FLAGS) == 0;
}

/* Match the components of both sides pairwise while both have one. Returns false on the first
 * pair that does not match; otherwise says which side has components left. Match, covers and
 * below are three readings of this one walk. */
static bool match_common(const char *pattern, const char *path, bool *ret_pattern_more, bool *ret_path_more) {
        const char *p = pattern, *s = path;

        for (;;) {
                const char *pc, *sc;
                size_t pn = component_next(&p, &pc);
                size_t sn = component_next(&s, &sc);

                if (pn == 0 || sn == 0) {
                        *ret_pattern_more = pn > 0;
                        *ret_path_more = sn > 0;
                        return true;
                }
                if (!component_match(pc, pn, sc, sn))
                        return false;
        }
}

bool path_pattern_match(const char *pattern, const char *path) {
        bool pmore, smore;

        return match_common(pattern, path, &pmore, &smore) && !pmore && !smore;
}

bool path_pattern_covers(const char *pattern, const char *path) {
        bool pmore, smore;

        return match_common(pattern, path, &pmore, &smore) && !pmore;
}

bool path_pattern_below(const char *pattern, const char *path) {
        bool pmore, smore;

        return match_common(pattern, path, &pmore, &smore) && pmore && !smore;
}

unsigned path_depth(const char *path) {
        const char *p = path, *c;
        unsigned n = 0;

        while (component_next(&p, &c) > 0)
                n++;
        return n;
}

char *path_simplify(char *path) {
        char *w = path;

        for (const char *r = path; *r; r++) {
                if (*r == '/' && w > path && w[-1] == '/')
                        continue;
                *w++ = *r;
        }
        /* A lone "/" is the root, not a trailing slash. */
        if (w > path + 1 && w[-1] == '/')
                w--;
        *w = 0;
        return path;
}

bool path_component_is_glob(const char *c) {
        return strpbrk(c, "*?[") != NULL;
}

bool path_is_glob(const char *path) {
        return path_component_is_glob(path);
}

static bool path_is_normalised(const char *path) {
        size_t n = strlen(path);

        if (strstr(path, "//"))
                return false;
        return n <= 1 || path[n - 1] != '/';
}

static bool path_has_dot_component(const char *path) {
        const char *p = path, *c;
        size_t n;

        while ((n = component_next(&p, &c)) > 0)
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return true;
        return false;
}

/* The reasons are verb phrases: callers prefix the subject ("'remove' needs an absolute path, ..."). */
int path_validate_absolute(const char *path, char **reterr) {
        if (isempty(path))
                return set_errmsg(reterr, -EINVAL, "needs an absolute path, got an empty one");
        if (path[0] != '/')
                return set_errmsg(reterr, -EINVAL, "needs an absolute path, got '%s'", path);
        if (path_has_dot_component(path))
                return set_errmsg(reterr, -EINVAL, "refuses '.' and '..' components, got '%s'", path);
        if (!path_is_normalised(path))
                return set_errmsg(reterr, -EINVAL, "needs a path without empty components or trailing '/', got '%s'",
                                  path);
        return 0;
}

static bool path_first_component_is_glob(const char *path) {
        const char *p = path, *c;
        size_t n = component_next(&p, &c);

        return n > 0 && strcspn(c, "*?[") < n;
}

int path_validate_target(const char *path, char **reterr) {
        int r;

        r = path_validate_absolute(path, reterr);
        if (r < 0)
                return r;
        if (streq(path, "/"))
                return set_errmsg(reterr, -EINVAL, "refuses the root directory '/'");
        if (path_first_component_is_glob(path))
                return set_errmsg(reterr, -EINVAL, "refuses a glob in the first component, got '%s'", path);
        return 0;
}

char *path_join_root(const char *root, const char *path) {
        size_t n = strlen(root);
        char *j;

        /* Neither "/tmp/r/" + "/etc" nor "/" + "/" may produce doubled or trailing slashes. */
        while (n > 0 && root[n - 1] == '/')
                n--;
        path += strspn(path, "/");
        if (n == 0)
                return asprintf(&j, "/%s", path) < 0 ? NULL : j;
        if (*path == 0)
                return strndup(root, n);
        return asprintf(&j, "%.*s/%s", (int) n, root, path) < 0 ? NULL : j;
}

/* The system paths no remove, empty or unmount line may reach, by its literal path or by what its
 * glob could expand to. A component "*" here stands for any name: every home directory is guarded,
 * whatever its user is called. The list is closed under ancestors (the unit test checks it), so a
 * line that would take a guarded path along with its parent is caught as matching that parent.
 *
 * The rule, in one place (path_guard_check() applies it; the examples write "/ *" for slash-star):
 *   1. a line may not name or match a guarded path: "remove /var/lib", "remove /usr/l*" (each glob
 *      component is tried against the guarded name it faces: "l*" meets "lib");
 *   2. a glob that is the last component of a line and stands right beneath a guarded directory
 *      must start with a literal character: "/etc/ *", "/usr/local/bin/?*", "/root/[a-z]*" and
 *      "/home/alice/ *" would take every entry of that directory, known or not, so they are refused;
 *      "/etc/kube*" names its prefix and answers to rule 1 only. A glob deeper down
 *      ("/var/lib/kubelet/ *") or followed by more components ("/usr/ * /x") reaches beneath names
 *      it does not know rather than into a guarded directory wholesale; rule 1 still refuses it
 *      when it can meet a guarded path ("/usr/ * /bin" meets /usr/local/bin);
 *   3. a glob in the first component is refused outright (path_validate_target()): every
 *      top-level name is the system's.
 * Only a literal line that names a guarded path exactly can be opted in ("allow-system-path").
 * The shipped manifests remove things beneath these paths (/etc/kubernetes, /var/lib/kubelet,
 * /usr/local/bin/kubelet, /root/.kube, /etc/systemd/system/kubelet.service.d): those stay allowed. */
static const char *const guarded_paths[] = {
        /* The top level. */
        "/bin",
        "/boot",
        "/dev",
        "/etc",
        "/home",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/lost+found",
        "/media",
        "/mnt",
        "/opt",
        "/proc",
        "/root",
        "/run",
        "/sbin",
        "/srv",
        "/sys",
        "/tmp",
        "/usr",
        "/var",
        /* Directories whose every entry is someone's data or the kernel's (/mnt/disks is where local
         * persistent volumes live). /opt and /srv hold site-chosen names a manifest may remove
         * ("/srv/custom"); as system directories they still refuse "/srv/ *". */
        "/boot/*",
        "/dev/*",
        "/home/*",
        "/home/*/.ssh",
        "/lost+found/*",
        "/media/*",
        "/mnt/*",
        "/proc/*",
        "/sys/*",
        /* /usr and the merged-/usr aliases in /. */
        "/usr/bin",
        "/usr/games",
        "/usr/include",
        "/usr/lib",
        "/usr/lib32",
        "/usr/lib64",
        "/usr/libexec",
        "/usr/libx32",
        "/usr/sbin",
        "/usr/share",
        "/usr/src",
        "/usr/share/ca-certificates",
        "/usr/local",
        "/usr/local/bin",
        "/usr/local/etc",
        "/usr/local/games",
        "/usr/local/include",
        "/usr/local/lib",
        "/usr/local/libexec",
        "/usr/local/sbin",
        "/usr/local/share",
        "/usr/local/src",
        "/usr/local/share/ca-certificates",
        "/lib/firmware",
        "/lib/modules",
        "/lib/modules/*",
        "/lib/systemd",
        "/lib/systemd/system",
        "/lib/x86_64-linux-gnu",
        "/lib/aarch64-linux-gnu",
        "/usr/lib/firmware",
        "/usr/lib/modules",
        "/usr/lib/modules/*",
        "/usr/lib/os-release",
        "/usr/lib/systemd",
        "/usr/lib/systemd/system",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        /* /var. */
        "/var/backups",
        "/var/cache",
        "/var/lib",
        "/var/local",
        "/var/lock",
        "/var/log",
        "/var/mail",
        "/var/opt",
        "/var/run",
        "/var/spool",
        "/var/tmp",
        "/var/run/netns",
        "/var/log/journal",
        "/var/lib/apt",
        "/var/lib/dbus",
        "/var/lib/dnf",
        "/var/lib/dpkg",
        "/var/lib/rpm",
        "/var/lib/systemd",
        "/var/lib/yum",
        /* /run: the session, the bus, systemd; /run/netns holds namespaces that are not Kubernetes'. */
        "/run/dbus",
        "/run/lock",
        "/run/log",
        "/run/mount",
        "/run/netns",
        "/run/sshd",
        "/run/systemd",
        "/run/udev",
        "/run/user",
        "/run/utmp",
        /* /root: the login and its keys; /root/.kube and helm's directories are not guarded. */
        "/root/.bashrc",
        "/root/.cache",
        "/root/.config",
        "/root/.gnupg",
        "/root/.local",
        "/root/.local/share",
        "/root/.profile",
        "/root/.ssh",
        /* /etc: who may log in, how the node boots, resolves and reaches its network and packages. */
        "/etc/alternatives",
        "/etc/apparmor.d",
        "/etc/apt",
        "/etc/ca-certificates",
        "/etc/cloud",
        "/etc/cron.d",
        "/etc/crypttab",
        "/etc/dbus-1",
        "/etc/default",
        "/etc/dhcp",
        "/etc/dnf",
        "/etc/environment",
        "/etc/fstab",
        "/etc/group",
        "/etc/gshadow",
        "/etc/hostname",
        "/etc/hosts",
        "/etc/init.d",
        "/etc/initramfs-tools",
        "/etc/iptables",
        "/etc/kernel",
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/localtime",
        "/etc/login.defs",
        "/etc/machine-id",
        "/etc/modprobe.d",
        "/etc/modules-load.d",
        "/etc/netplan",
        "/etc/network",
        "/etc/NetworkManager",
        "/etc/NetworkManager/conf.d",
        "/etc/nftables.conf",
        "/etc/nsswitch.conf",
        "/etc/os-release",
        "/etc/pam.d",
        "/etc/passwd",
        "/etc/pki",
        "/etc/pki/ca-trust",
        "/etc/pki/ca-trust/source",
        "/etc/pki/ca-trust/source/anchors",
        "/etc/polkit-1",
        "/etc/profile",
        "/etc/profile.d",
        "/etc/resolv.conf",
        "/etc/security",
        "/etc/selinux",
        "/etc/shadow",
        "/etc/ssh",
        "/etc/ssl",
        "/etc/ssl/certs",
        "/etc/ssl/private",
        "/etc/subgid",
        "/etc/subuid",
        "/etc/sudoers",
        "/etc/sudoers.d",
        "/etc/sysconfig",
        "/etc/sysctl.conf",
        "/etc/sysctl.d",
        "/etc/systemd",
        "/etc/systemd/network",
        "/etc/systemd/system",
        "/etc/timezone",
        "/etc/udev",
        "/etc/yum.repos.d",
};

static bool component_is_any(const char *c, size_t n) {
        return n == 1 && c[0] == '*';
}

/* Walk a pattern against a guarded entry. Returns false when some pair of components cannot
 * match; else true, with how many pattern components are left once the entry is used up (0: the
 * pattern can match the entry itself) and the first of them. Returns false too when the entry is
 * longer: the pattern then matches an ancestor of it, which is guarded itself. */
static bool guard_walk(const char *pattern, const char *guarded, size_t *ret_left, const char **ret_next,
                       size_t *ret_next_len) {
        const char *p = pattern, *g = guarded;

        for (;;) {
                const char *pc, *gc;
                size_t pn = component_next(&p, &pc);
                size_t gn = component_next(&g, &gc);

                if (gn == 0) {
                        *ret_next = pc;
                        *ret_next_len = pn;
                        *ret_left = pn == 0 ? 0 : 1 + path_depth(p);
                        return true;
                }
                if (pn == 0)
                        return false;
                if (!component_is_any(gc, gn) && !component_match(pc, pn, gc, gn))
                        return false;
        }
}

static bool component_starts_literal(const char *c, size_t n) {
        return n > 0 && !strchr("*?[", c[0]);
}

/* The guarded directory a pattern's prefix faced, spelled from the pattern itself where it is
 * literal ("/home/alice" rather than "/home/ *"). */
static char *guard_prefix(const char *pattern, const char *next) {
        size_t n = next - pattern;

        while (n > 1 && pattern[n - 1] == '/')
                n--;
        return strndup(pattern, n);
}

/* Rule 1: the pattern names or can match a guarded path. */
static int guard_check_match(const char *pattern, char **reterr) {
        bool glob = path_is_glob(pattern);

        for (size_t i = 0; i < ELEMENTSOF(guarded_paths); i++) {
                const char *next;
                size_t left, nn;

                if (!guard_walk(pattern, guarded_paths[i], &left, &next, &nn) || left > 0)
                        continue;
                if (!glob)
                        return set_errmsg(reterr, -EPERM,
                                          "refuses the system path '%s' (name it in an 'allow-system-path' line "
                                          "before this one to mean it)",
                                          pattern);
                return set_errmsg(reterr, -EINVAL, "refuses '%s': the glob could match the system path '%s'", pattern,
                                  guarded_paths[i]);
        }
        return 0;
}

/* Rule 2: its last component is a glob without a literal start right beneath a guarded directory. */
static int guard_check_wholesale(const char *pattern, char **reterr) {
        for (size_t i = 0; i < ELEMENTSOF(guarded_paths); i++) {
                cleanup_free char *dir = NULL;
                const char *next;
                size_t left, nn;

                if (!guard_walk(pattern, guarded_paths[i], &left, &next, &nn) || left != 1 ||
                    strcspn(next, "*?[") >= nn || component_starts_literal(next, nn))
                        continue;
                dir = guard_prefix(pattern, next);
                return set_errmsg(reterr, -EINVAL,
                                  "refuses '%s': a glob right beneath the system directory '%s' could match every "
                                  "entry in it (start it with a literal character)",
                                  pattern, strna(dir));
        }
        return 0;
}

int path_guard_check(const char *pattern, char **reterr) {
        int r;

        r = guard_check_match(pattern, reterr);
        if (r < 0)
                return r;
        return guard_check_wholesale(pattern, reterr);
}

bool path_is_guarded(const char *path) {
        return path_guard_check(path, NULL) == -EPERM;
}

const char *const *path_guarded_list(size_t *ret_n) {
        *ret_n = ELEMENTSOF(guarded_paths);
        return guarded_paths;
}
