/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node paths: validation of manifest paths and component-wise glob matching, without touching the file system. */

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "agent/path.h"
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

/* Removing or emptying one of these wipes the node, whatever the manifest author meant. */
static const char *const top_level_dirs[] = {
        "etc",  "usr",  "var",  "bin",  "sbin", "lib", "lib32", "lib64", "libx32", "home", "root",
        "boot", "opt",  "run",  "tmp",  "srv",  "proc", "sys",  "dev",   "mnt",    "media",
};

/* Advance *p to the next component; returns its length, 0 at the end. Empty components are skipped. */
static size_t component_next(const char **p, const char **ret_start) {
        const char *s = *p + strspn(*p, "/");
        size_t n = strcspn(s, "/");

        *ret_start = s;
        *p = s + n;
        return n;
}

/* fnmatch(3) needs NUL-terminated strings. A longer component than PATH_MAX can come from neither
 * a file system (NAME_MAX is 255) nor a manifest line (4096 bytes): it gets the heap, and as a
 * "no" from a protect check could cost data, running out of memory there aborts. */
static bool component_match_heap(const char *pat, size_t pn, const char *s, size_t sn) {
        cleanup_free char *a = strndup(pat, pn), *b = strndup(s, sn);

        if (!a || !b)
                abort();
        return fnmatch(a, b, PATH_FNMATCH_FLAGS) == 0;
}

static bool component_match(const char *pat, size_t pn, const char *s, size_t sn) {
        char a[PATH_MAX], b[PATH_MAX];

        if (pn >= sizeof(a) || sn >= sizeof(b))
                return component_match_heap(pat, pn, s, sn);
        memcpy(a, pat, pn);
        a[pn] = 0;
        memcpy(b, s, sn);
        b[sn] = 0;
        return fnmatch(a, b, PATH_FNMATCH_FLAGS) == 0;
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

static bool path_is_top_level_dir(const char *path) {
        for (size_t i = 0; i < ELEMENTSOF(top_level_dirs); i++)
                if (path[0] == '/' && streq(path + 1, top_level_dirs[i]))
                        return true;
        return false;
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
        if (path_is_top_level_dir(path))
                return set_errmsg(reterr, -EINVAL, "refuses a top-level system directory '%s'", path);
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
