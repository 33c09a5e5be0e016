/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit files read as systemd reads them (systemd.syntax(7), systemd.exec(5), systemd.service(5)):
 * sections, '#'/';' comments, a trailing backslash continuing a line; only what a service's main
 * process is started with. */

#include <errno.h>
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

static int assignment(int root_fd, const char *key, const char *value, const char *unit, UnitExec *u,
                      char **exec_start) {
        cleanup_strv char **words = NULL;
        int r;

        if (streq(key, "Environment")) {
                if (argv_split(value, &words) < 0)
                        return -EBADMSG;
                STRV_FOREACH(w, words)
                        if ((r = env_set(&u->env, *w)) < 0)
                                return r;
                return 0;
        }
        if (streq(key, "EnvironmentFile"))
                return read_env_file(root_fd, value, unit, u);
        if (streq(key, "ExecStart")) {
                /* An empty assignment resets the list; the last command is the main one for etcd's
                 * Type=notify/simple units. */
                free(*exec_start);
                *exec_start = *value ? strdup(value) : NULL;
                return *value && !*exec_start ? -ENOMEM : 0;
        }
        return 0;
}

/* The [Service] section's assignments. A backslash ending a line joins the next one, as a blank. */
static int parse_service(int root_fd, char *text, const char *unit, UnitExec *u, char **exec_start) {
        bool service = false;
        char *save = NULL;

        for (char *c = strstr(text, "\\\n"); c; c = strstr(c, "\\\n"))
                c[0] = c[1] = ' ';
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *eq, *v;
                int r;

                line += strspn(line, " \t");
                if (*line == '#' || *line == ';' || !*line)
                        continue;
                if (*line == '[') {
                        service = startswith(line, "[Service]") != NULL;
                        continue;
                }
                eq = strchr(line, '=');
                if (!eq)
                        return -EBADMSG;
                v = eq + 1 + strspn(eq + 1, " \t");
                while (eq > line && strchr(" \t", eq[-1]))
                        eq--;
                *eq = '\0';
                for (size_t n = strlen(v); n > 0 && strchr(" \t\r", v[n - 1]); n--)
                        v[n - 1] = '\0';
                if (service && (r = assignment(root_fd, line, v, unit, u, exec_start)) < 0)
                        return r;
        }
        return 0;
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
 * words; ${NAME} is substituted within its word. The prefixes @-:+! are not part of the command. */
static int expand_exec(const char *exec_start, char *const *env, char ***ret) {
        cleanup_strv char **words = NULL, **argv = NULL;
        int r;

        exec_start += strspn(exec_start, "@-:+!");
        if (argv_split(exec_start, &words) < 0)
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

int unit_file_exec(int root_fd, const char *path, const char *unit, UnitExec *ret) {
        cleanup_free char *text = NULL, *exec_start = NULL;
        UnitExec u = {};
        int r;

        r = fileio_read_beneath(root_fd, path, UNIT_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        r = parse_service(root_fd, text, unit, &u, &exec_start);
        if (r >= 0 && exec_start)
                r = expand_exec(exec_start, u.env, &u.argv);
        if (r < 0) {
                unit_exec_done(&u);
                return r;
        }
        *ret = u;
        return 0;
}
