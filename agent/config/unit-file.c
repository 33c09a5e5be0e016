/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit files read as systemd reads them (systemd.syntax(7), systemd.exec(5), systemd.service(5)):
 * sections, '#'/';' comments, a trailing backslash continuing a line; only what a service's main
 * process is started with. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define UNIT_FILE_MAX (256U << 10)

void unit_exec_done(UnitExec *u) {
        strv_free(u->argv);
        strv_free(u->env);
        strv_free(u->env_files);
        strv_free(u->dropins);
        *u = (UnitExec) {};
}

/* Set KEY=value in env, replacing an earlier assignment of KEY. */
static int env_set(char ***env, const char *pair) {
        const char *eq = strchr(pair, '=');

        if (!eq || eq == pair)
                return 0; /* systemd ignores an assignment without a name */
        for (char **e = *env; e && *e; e++)
                if (strncmp(*e, pair, (size_t) (eq - pair + 1)) == 0) {
                        char *n = strdup(pair);

                        if (!n)
                                return -ENOMEM;
                        free(*e);
                        *e = n;
                        return 0;
                }
        return strv_extend(env, pair);
}

/* %n, %N, %p and %% in an EnvironmentFile= path; other specifiers stay as written (and the file is
 * then not found, which names nothing). */
static char *expand_specifiers(const char *s, const char *unit) {
        const char *dot = strrchr(unit, '.'), *at = strchr(unit, '@');
        size_t prefix = (size_t) ((at ?: dot ?: unit + strlen(unit)) - unit);
        size_t stem = (size_t) ((dot ?: unit + strlen(unit)) - unit);
        char *out = strdup("");

        for (const char *p = s; out && *p; p++) {
                char *n;

                if (*p == '%' && p[1] == 'n')
                        n = strprintf("%s%s", out, unit);
                else if (*p == '%' && p[1] == 'N')
                        n = strprintf("%s%.*s", out, (int) stem, unit);
                else if (*p == '%' && p[1] == 'p')
                        n = strprintf("%s%.*s", out, (int) prefix, unit);
                else if (*p == '%' && p[1] == '%')
                        n = strprintf("%s%%", out);
                else {
                        n = strprintf("%s%c", out, *p);
                        p--;
                }
                p++;
                free(out);
                out = n;
        }
        return out;
}

static int read_env_file(int root_fd, const char *value, const char *unit, UnitExec *u) {
        bool optional = value[0] == '-';
        cleanup_free char *path = expand_specifiers(value + optional, unit), *text = NULL;
        cleanup_strv char **pairs = NULL;
        size_t size;
        int r;

        if (!path)
                return -ENOMEM;
        r = fileio_read_beneath(root_fd, path, UNIT_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return r;
        /* A missing file fails the unit's start unless optional: either way it sets nothing. */
        if (r < 0 || env_file_parse(text, size, &pairs, NULL) < 0)
                return 0;
        STRV_FOREACH(p, pairs)
                if ((r = env_set(&u->env, *p)) < 0)
                        return r;
        return strv_extend(&u->env_files, path);
}

/* One logical line from p (systemd.syntax(7)): a line ending in a backslash goes on with the next one,
 * joined by a blank; blanks around it dropped. Comment lines are dropped before anything is joined, as
 * systemd drops them: one inside a continuation is skipped, and one is never continued. *next: where
 * the next logical line starts. NULL: out of memory. */
static char *logical_line(const char *p, const char *end, const char **next) {
        char *line = malloc((size_t) (end - p) + 1), *o = line;
        bool first = true;

        if (!line)
                return NULL;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p)), *s = p, *e = nl ?: end;
                bool comment, cont;

                p = nl ? nl + 1 : end;
                while (s < e && (*s == ' ' || *s == '\t'))
                        s++;
                comment = s < e && (*s == '#' || *s == ';');
                if (comment && !first)
                        continue;
                while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                        e--;
                cont = !comment && e > s && e[-1] == '\\';
                memcpy(o, s, (size_t) (e - s) - cont);
                o += (e - s) - cont;
                first = false;
                if (!cont)
                        break;
                *o++ = ' ';
        }
        *o = '\0';
        *next = p;
        return line;
}

int unit_file_service(const char *text, size_t size, char ***ret_pairs, unsigned *ret_malformed) {
        const char *p = text, *end = text + size;
        cleanup_strv char **pairs = NULL;
        unsigned malformed = 0;
        bool service = false;

        while (p < end) {
                cleanup_free char *line = logical_line(p, end, &p);
                char *eq, *key_end;

                if (!line)
                        return -ENOMEM;
                if (line[0] == '\0' || line[0] == '#' || line[0] == ';')
                        continue;
                if (line[0] == '[') {
                        service = streq(line, "[Service]");
                        continue;
                }
                eq = strchr(line, '=');
                if (!eq) {
                        malformed++;
                        continue;
                }
                for (key_end = eq; key_end > line && (key_end[-1] == ' ' || key_end[-1] == '\t'); key_end--)
                        ;
                if (service && strv_consume(&pairs, strprintf("%.*s=%s", (int) (key_end - line), line,
                                                              eq + 1 + strspn(eq + 1, " \t"))) < 0)
                        return -ENOMEM;
        }
        if (ret_malformed)
                *ret_malformed = malformed;
        *ret_pairs = TAKE_PTR(pairs);
        return 0;
}

/* The main command: the last ExecStart= (an empty one resets the list; etcd's and k3s's units are
 * Type=notify with one), without systemd's prefixes. NULL when there is none. */
static const char *exec_start(char **pairs) {
        const char *value = NULL;

        STRV_FOREACH(p, pairs) {
                const char *v = startswith(*p, "ExecStart=");

                if (v)
                        value = *v ? v + strspn(v, "@-:+!|") : NULL;
        }
        return value;
}

int unit_exec_start_argv(const char *text, size_t size, char ***ret) {
        cleanup_strv char **pairs = NULL;
        const char *v;
        int r;

        r = unit_file_service(text, size, &pairs, NULL);
        if (r < 0)
                return r;
        v = exec_start(pairs);
        if (isempty(v))
                return 0;
        return argv_split(v, ret) < 0 ? -EBADMSG : 1;
}

/* ${NAME} replaced by its value wherever it stands in a word (unset: empty). */
static char *substitute(const char *word, char *const *env) {
        char *out = strdup("");

        for (const char *p = word; out && *p;) {
                const char *close = startswith(p, "${") ? strchr(p, '}') : NULL;
                char *n;

                if (close) {
                        cleanup_free char *name = strndup(p + 2, (size_t) (close - p - 2));

                        n = name ? strprintf("%s%s", out, strempty(env_get(env, name))) : NULL;
                        p = close + 1;
                } else
                        n = strprintf("%s%c", out, *p++);
                free(out);
                out = n;
        }
        return out;
}

/* systemd.service(5) "Command lines": a word that is $NAME alone becomes the value's blank-separated
 * words; ${NAME} is substituted within its word. */
static int expand_exec(const char *command, char *const *env, char ***ret) {
        cleanup_strv char **words = NULL, **argv = NULL;
        int r;

        if (argv_split(command, &words) < 0)
                return -EBADMSG;
        STRV_FOREACH(w, words) {
                cleanup_strv char **split = NULL;

                if ((*w)[0] == '$' && (*w)[1] != '{' && (*w)[1]) {
                        if (argv_split_blanks(strempty(env_get(env, *w + 1)), &split) < 0)
                                return -ENOMEM;
                        STRV_FOREACH(s, split)
                                if ((r = strv_extend(&argv, *s)) < 0)
                                        return r;
                } else if ((r = strv_consume(&argv, substitute(*w, env))) < 0)
                        return r;
        }
        *ret = TAKE_PTR(argv);
        return 0;
}

/* Environment= and EnvironmentFile= in the order they come: a later one wins. */
static int read_environment(int root_fd, char **pairs, const char *unit, UnitExec *u) {
        STRV_FOREACH(p, pairs) {
                cleanup_strv char **words = NULL;
                const char *v;
                int r;

                if ((v = startswith(*p, "EnvironmentFile=")) && (r = read_env_file(root_fd, v, unit, u)) < 0)
                        return r;
                if (!(v = startswith(*p, "Environment=")))
                        continue;
                if (argv_split(v, &words) < 0)
                        return -EBADMSG;
                STRV_FOREACH(w, words)
                        if ((r = env_set(&u->env, *w)) < 0)
                                return r;
        }
        return 0;
}

/* systemd's unit search path (systemd.unit(5)), highest precedence first: where drop-in directories
 * are looked for, whichever directory the unit itself is in. */
static const char *const unit_search_dirs[] = { "/etc/systemd/system", "/run/systemd/system",
                                                "/usr/local/lib/systemd/system", "/usr/lib/systemd/system",
                                                "/lib/systemd/system" };

bool unit_file_in_search_path(const char *path) {
        for (size_t i = 0; i < ELEMENTSOF(unit_search_dirs); i++)
                if (path_startswith_dir(path, unit_search_dirs[i]))
                        return true;
        return false;
}

/* The drop-ins of unit: NAME.d/ *.conf in each search directory, a name in a higher directory masking
 * the same name lower down, read in the order of their names. Node paths, NULL when there are none. */
static int unit_dropins(int root_fd, const char *unit, char ***ret) {
        cleanup_strv char **names = NULL, **paths = NULL;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(unit_search_dirs); i++) {
                cleanup_free char *dir = strprintf("%s/%s.d", unit_search_dirs[i], unit);
                cleanup_strv char **here = NULL;

                r = dir ? fileio_list_beneath(root_fd, dir, "*.conf", &here) : -ENOMEM;
                STRV_FOREACH(n, here)
                        if (r >= 0 && !strv_contains(names, *n) && (r = strv_extend(&names, *n)) >= 0)
                                r = strv_consume(&paths, strprintf("%s/%s", dir, *n));
        }
        if (r < 0)
                return r;
        /* By name, whatever directory each is in: a path sorts by its directory first. */
        for (size_t i = 0; paths && paths[i]; i++)
                for (size_t k = i + 1; paths[k]; k++)
                        if (strcmp(strrchr(paths[k], '/'), strrchr(paths[i], '/')) < 0) {
                                char *t = paths[i];

                                paths[i] = paths[k];
                                paths[k] = t;
                        }
        *ret = TAKE_PTR(paths);
        return 0;
}

/* The [Service] assignments of the file at path appended to *pairs: -ENOENT without it, -EBADMSG for a
 * line that is no assignment. */
static int unit_pairs_append(int root_fd, const char *path, char ***pairs) {
        cleanup_strv char **more = NULL;
        cleanup_free char *text = NULL;
        unsigned malformed = 0;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, UNIT_FILE_MAX, &text, &size);
        if (r >= 0)
                r = unit_file_service(text, size, &more, &malformed);
        if (r >= 0 && malformed > 0)
                r = -EBADMSG;
        STRV_FOREACH(m, more)
                if (r >= 0)
                        r = strv_extend(pairs, *m);
        return r;
}

static int unit_exec_from(int root_fd, const char *path, const char *unit, bool dropins, UnitExec *ret) {
        cleanup_strv char **pairs = NULL, **files = NULL;
        const char *command;
        UnitExec u = {};
        int r;

        r = unit_pairs_append(root_fd, path, &pairs);
        if (r >= 0 && dropins)
                r = unit_dropins(root_fd, unit, &files);
        STRV_FOREACH(f, files)
                if (r >= 0 && (r = unit_pairs_append(root_fd, *f, &pairs)) >= 0)
                        r = strv_extend(&u.dropins, *f);
        if (r >= 0)
                r = read_environment(root_fd, pairs, unit, &u);
        if (r >= 0 && (command = exec_start(pairs)))
                r = expand_exec(command, u.env, &u.argv);
        if (r < 0) {
                unit_exec_done(&u);
                return r;
        }
        *ret = u;
        return 0;
}

int unit_file_exec(int root_fd, const char *path, const char *unit, UnitExec *ret) {
        return unit_exec_from(root_fd, path, unit, false, ret);
}

int unit_file_exec_dropins(int root_fd, const char *path, UnitExec *ret) {
        const char *slash = strrchr(path, '/');

        return unit_exec_from(root_fd, path, slash ? slash + 1 : path, true, ret);
}
