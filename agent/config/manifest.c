/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reset manifest parser: words, quoting, includes, and a printer that round-trips; the directive
 * table and its validators are in manifest-directives.c. */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/os/fileio.h"
#include "agent/config/manifest-directives.h"
#include "agent/config/manifest.h"
#include "agent/base/path.h"
#include "agent/config/profile.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

#define MANIFEST_LINE_MAX 4096U
#define MANIFEST_INCLUDE_DEPTH_MAX 8U
/* Far beyond any real manifest; it stops "include /dev/zero" from eating the memory. */
#define MANIFEST_FILE_SIZE_MAX (4U * 1024U * 1024U)
/* file_load()'s answer for a FIFO, socket or device; read_error() words it, no errno does. */
#define ERRNO_NOT_REGULAR EBADFD /* what fileio_read_regular() says of one */

/* Where a line came from, for every message. */
typedef struct Where {
        const char *file;
        unsigned line;
} Where;

/* One text being parsed; the parent chain is the include stack, used to detect cycles. */
typedef struct Source {
        const char *name;
        bool is_file;         /* relative includes resolve against the directory of name */
        const char *base_dir; /* for text: where relative includes resolve; NULL refuses include */
        dev_t dev;
        ino_t ino;
        unsigned depth;
        const struct Source *parent;
} Source;

Manifest *manifest_new(void) {
        return calloc(1, sizeof(Manifest));
}

static void manifest_entry_done(ManifestEntry *e) {
        strv_free(e->args);
        free(e->file);
}

/* Drop what was added after the first n_entries entries and n_files files, so that a failed
 * parse leaves the manifest as it found it. */
static void manifest_truncate(Manifest *m, size_t n_entries, size_t n_files) {
        for (size_t i = n_entries; i < m->n_entries; i++)
                manifest_entry_done(m->entries + i);
        m->n_entries = n_entries;
        for (size_t i = n_files; i < m->n_files; i++)
                m->files[i] = mfree(m->files[i]);
        m->n_files = n_files;
}

Manifest *manifest_free(Manifest *m) {
        if (!m)
                return NULL;
        manifest_truncate(m, 0, 0);
        free(m->entries);
        strv_free(m->files);
        return mfree(m);
}

/* Record a source in m->files; the vector stays NULL-terminated at every step. */
static int manifest_add_file(Manifest *m, const char *name) {
        int r;

        /* manifest_truncate() leaves files[n_files] NULL: strv_extend() appends right there. */
        r = strv_extend(&m->files, name);
        if (r < 0)
                return r;
        m->n_files++;
        return 0;
}

static int where_error(const Where *w, char **reterr, int r, const char *fmt, ...) _printf_(4, 5);
static int where_error(const Where *w, char **reterr, int r, const char *fmt, ...) {
        cleanup_free char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        msg = vstrprintf(fmt, ap);
        va_end(ap);
        if (!msg)
                return r;
        if (w->line > 0)
                return set_errmsg(reterr, r, "%s:%u: %s", w->file, w->line, msg);
        return set_errmsg(reterr, r, "%s: %s", w->file, msg);
}

/* Tabs are the only control character a line may hold raw: a stray "\r" from a CRLF file would
 * otherwise become part of a protected path and silently protect nothing. */
static int line_check_bytes(const char *s, size_t len, const Where *w, char **reterr) {
        if (len > MANIFEST_LINE_MAX)
                return where_error(w, reterr, -EINVAL, "line too long (%zu bytes, at most %u)", len, MANIFEST_LINE_MAX);
        for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];

                if (c == 0)
                        return where_error(w, reterr, -EINVAL, "NUL byte in the file");
                if ((c < 0x20 && c != '\t') || c == 0x7f)
                        return where_error(w, reterr, -EINVAL,
                                           "control character 0x%02x (write \\n or \\t inside quotes)", c);
        }
        return 0;
}

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static int unescape(char c, char *ret) {
        switch (c) {
        case '"':
        case '\\':
                *ret = c;
                return 0;
        case 'n':
                *ret = '\n';
                return 0;
        case 't':
                *ret = '\t';
                return 0;
        default:
                return -EINVAL;
        }
}

/* *p is just past the opening quote; on success it is just past the closing one. */
static int word_quoted(const char **p, const char *end, char **ret, const Where *w, char **reterr) {
        cleanup_free char *word = malloc(end - *p + 1);
        const char *q = *p;
        size_t n = 0;

        if (!word)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        for (; q < end && *q != '"'; q++) {
                if (*q != '\\') {
                        word[n++] = *q;
                        continue;
                }
                if (++q == end)
                        break;
                if (unescape(*q, word + n++) < 0)
                        return where_error(w, reterr, -EINVAL, "unknown escape '\\%c' in a quoted word", *q);
        }
        if (q == end)
                return where_error(w, reterr, -EINVAL, "unterminated quote");
        if (++q < end && !is_blank(*q))
                return where_error(w, reterr, -EINVAL, "unexpected '%c' after a closing quote", *q);
        word[n] = 0;
        *p = q;
        *ret = TAKE_PTR(word);
        return 0;
}

static int word_bare(const char **p, const char *end, char **ret, const Where *w, char **reterr) {
        const char *q = *p;

        for (; q < end && !is_blank(*q); q++)
                if (*q == '"')
                        return where_error(w, reterr, -EINVAL, "unexpected '\"' inside a word (quote the whole word)");
        *ret = strndup(*p, q - *p);
        if (!*ret)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        *p = q;
        return 0;
}

/* Split a line into unquoted words; a '#' that starts a word starts a comment. */
static int line_split(const char *s, size_t len, const Where *w, char ***ret, char **reterr) {
        cleanup_strv char **words = NULL;
        const char *p = s, *end = s + len;
        int r;

        for (;;) {
                char *word = NULL;

                while (p < end && is_blank(*p))
                        p++;
                if (p == end || *p == '#')
                        break;
                if (*p == '"') {
                        p++;
                        r = word_quoted(&p, end, &word, w, reterr);
                } else
                        r = word_bare(&p, end, &word, w, reterr);
                if (r < 0)
                        return r;
                if (strv_consume(&words, word) < 0)
                        return where_error(w, reterr, -ENOMEM, "out of memory");
        }
        *ret = TAKE_PTR(words);
        return 0;
}

static int manifest_add_entry(Manifest *m, DirectiveType t, char **args, const Where *w, char **reterr) {
        char *file;

        file = strdup(w->file);
        if (!file || GREEDY_REALLOC(m->entries, m->allocated_entries, m->n_entries + 1) < 0) {
                free(file);
                return where_error(w, reterr, -ENOMEM, "out of memory");
        }
        m->entries[m->n_entries++] = (ManifestEntry) {
                .type = t,
                .args = args,
                .n_args = strv_length(args),
                .file = file,
                .line = w->line,
        };
        return 0;
}

static int args_check_count(const char *name, size_t min, size_t max, size_t n, const Where *w, char **reterr) {
        if (n >= min && n <= max)
                return 0;
        if (min == max)
                return where_error(w, reterr, -EINVAL, "'%s' takes exactly %zu argument%s, got %zu", name, min,
                                   min == 1 ? "" : "s", n);
        if (max == SIZE_MAX)
                return where_error(w, reterr, -EINVAL, "'%s' takes at least %zu argument%s, got %zu", name, min,
                                   min == 1 ? "" : "s", n);
        return where_error(w, reterr, -EINVAL, "'%s' takes %zu to %zu arguments, got %zu", name, min, max, n);
}

static bool word_needs_quotes(const char *s) {
        return isempty(s) || strpbrk(s, " \t#\"\\\n");
}

/* The escapes a quoted word is printed with, the inverse of unescape(). */
static const char *char_escape(char c) {
        switch (c) {
        case '"':
                return "\\\"";
        case '\\':
                return "\\\\";
        case '\n':
                return "\\n";
        case '\t':
                return "\\t";
        default:
                return NULL;
        }
}

static size_t word_print_length(const char *s) {
        size_t n = 2;

        if (!word_needs_quotes(s))
                return strlen(s);
        for (; *s; s++)
                n += char_escape(*s) ? 2 : 1;
        return n;
}

/* Quoting can make a line longer than it was written (unquoted /a\b prints as "/a\\b"), and
 * "manifest print" output must parse back: refuse an entry whose printed line would not fit. */
static int entry_check_length(const char *name, char **args, const Where *w, char **reterr) {
        size_t n = strlen(name);

        for (char **a = args; *a; a++)
                n += 1 + word_print_length(*a);
        if (n > MANIFEST_LINE_MAX)
                return where_error(w, reterr, -EINVAL, "'%s' line too long once quoted (%zu bytes, at most %u)", name,
                                   n, MANIFEST_LINE_MAX);
        return 0;
}

/* The system-path guard of every directive that writes or deletes (the rows marked .writes: remove,
 * empty, unmount, bpf-pin, bpf-mount, remove-block, remove-symlink-to; the rule is path_guard_check()'s). It is checked
 * here rather than in the rows' validators because its opt-in is another line: an "allow-system-path" naming exactly
 * this path, read before it (in this file, an include, or an earlier --manifest), so that the opt-in is in front of
 * whoever reads the manifest. */
static int guard_apply(const Manifest *m, DirectiveType t, const char *path, bool *ret_system_path, const Where *w,
                       char **reterr) {
        cleanup_free char *reason = NULL;
        int r;

        *ret_system_path = false;
        if (!directive_table[t].writes)
                return 0;
        r = path_guard_check(path, &reason);
        if (r == -EPERM)
                MANIFEST_FOREACH(e, m, DIRECTIVE_ALLOW_SYSTEM_PATH)
                        if (streq(e->args[0], path) && (!e->args[1] || directive_type_from_string(e->args[1]) == t)) {
                                *ret_system_path = true;
                                return 0;
                        }
        if (r < 0)
                return where_error(w, reterr, -EINVAL, "'%s' %s", directive_type_to_string(t), strna(reason));
        return 0;
}

/* words[0] names a directive of the table; the entry takes the rest of the words. */
static int directive_apply(Manifest *m, char **words, const Where *w, char **reterr) {
        cleanup_free char *reason = NULL;
        cleanup_strv char **args = NULL;
        const DirectiveRow *d;
        DirectiveType t;
        size_t n = strv_length(words) - 1;
        bool system_path;
        int r;

        t = directive_type_from_string(words[0]);
        if (t < 0)
                return where_error(w, reterr, -EINVAL, "unknown directive '%s'", words[0]);
        d = directive_table + t;
        r = args_check_count(d->name, d->min_args, d->max_args, n, w, reterr);
        if (r < 0)
                return r;

        args = calloc(n + 1, sizeof(char *));
        if (!args)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        memcpy(args, words + 1, n * sizeof(char *));
        memset(words + 1, 0, n * sizeof(char *));

        r = d->validate ? d->validate(args, &reason) : 0;
        if (r < 0)
                return where_error(w, reterr, r, "'%s' %s", d->name, strna(reason));
        r = entry_check_length(d->name, args, w, reterr);
        if (r < 0)
                return r;
        r = guard_apply(m, t, args[0], &system_path, w, reterr);
        if (r < 0)
                return r;
        r = manifest_add_entry(m, t, args, w, reterr);
        if (r < 0)
                return r;
        TAKE_PTR(args);
        m->entries[m->n_entries - 1].system_path = system_path;
        return 0;
}

static int parse_file(Manifest *m, const char *path, const Source *parent, const Where *from, char **reterr);

/* The included name, resolved against the including file's directory (or the text's base_dir). */
static char *include_resolve(const Source *src, const char *name) {
        const char *slash;
        char *j;

        if (name[0] == '/')
                j = strdup(name);
        else if (!src->is_file)
                j = asprintf(&j, "%s/%s", src->base_dir, name) < 0 ? NULL : j;
        else if ((slash = strrchr(src->name, '/')))
                j = asprintf(&j, "%.*s/%s", (int) (slash - src->name), src->name, name) < 0 ? NULL : j;
        else
                j = strdup(name);
        return j ? path_simplify(j) : NULL;
}

static int text_parse(Manifest *m, const Source *src, const char *text, size_t size, char **reterr);

static bool source_name_is_open(const Source *chain, const char *name) {
        for (; chain; chain = chain->parent)
                if (!chain->is_file && streq(chain->name, name))
                        return true;
        return false;
}

/* "include profile:NAME": a built-in profile or fragment, from the binary, whatever the including
 * text is (a file, the embedded default or another profile). */
static int include_profile(Manifest *m, const Source *src, const char *name, const Where *w, char **reterr) {
        cleanup_free char *text = NULL, *why = NULL, *full = NULL;
        const char *resolved;
        Source p;
        int r;

        r = profile_text(name, &resolved, &text, &why);
        if (r == -ENOMEM)
                return where_error(w, reterr, r, "out of memory");
        if (r < 0)
                return where_error(w, reterr, -EINVAL, "'include %s%s': %s", PROFILE_PREFIX, name, strna(why));
        full = strprintf("%s%s", PROFILE_PREFIX, resolved);
        if (!full)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        if (source_name_is_open(src, full))
                return where_error(w, reterr, -EINVAL, "include cycle: '%s' is already being read", full);
        if (manifest_add_file(m, full) < 0)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        p = (Source) { .name = full, .depth = src->depth + 1, .parent = src };
        return text_parse(m, &p, text, strlen(text), reterr);
}

static int include_apply(Manifest *m, const Source *src, char **words, const Where *w, char **reterr) {
        cleanup_free char *path = NULL;
        int r;

        r = args_check_count("include", 1, 1, strv_length(words) - 1, w, reterr);
        if (r < 0)
                return r;
        if (isempty(words[1]))
                return where_error(w, reterr, -EINVAL, "'include' needs a file name, got an empty one");
        if (src->depth >= MANIFEST_INCLUDE_DEPTH_MAX)
                return where_error(w, reterr, -EINVAL, "'include' nested too deeply (at most %u levels), at '%s'",
                                   MANIFEST_INCLUDE_DEPTH_MAX, words[1]);
        if (startswith(words[1], PROFILE_PREFIX))
                return include_profile(m, src, words[1] + strlen(PROFILE_PREFIX), w, reterr);
        if (!src->is_file && !src->base_dir)
                return where_error(w, reterr, -EINVAL,
                                   "'include' is not allowed here (no directory to resolve it against)");
        path = include_resolve(src, words[1]);
        if (!path)
                return where_error(w, reterr, -ENOMEM, "out of memory");
        return parse_file(m, path, src, w, reterr);
}

typedef struct Rebased {
        Manifest *m;
        const Where *w;
        char **reterr;
        bool failed;
} Rebased;

/* directive_apply() takes the words' strings: a line applied more than once is applied as a copy. */
static int directive_apply_copy(Manifest *m, char *const *words, const Where *w, char **reterr) {
        cleanup_strv char **copy = NULL;

        for (char *const *i = words; *i; i++)
                if (strv_extend(&copy, *i) < 0)
                        return where_error(w, reterr, -ENOMEM, "out of memory");
        return directive_apply(m, copy, w, reterr);
}

static int rebased_apply(char **words, void *userdata) {
        Rebased *c = userdata;
        int r = directive_apply_copy(c->m, words, c->w, c->reterr);

        c->failed = r < 0;
        return r;
}

/* A built-in profile's paths move with k3s's or rke2's data dir; its protect lines keep protecting
 * the default dir too (profile_rebase_keeps_default()). 1: the line was applied as it moved. */
static int profile_line_rebase(Manifest *m, const Source *src, char **words, const Where *w, char **reterr) {
        Rebased c = { .m = m, .w = w, .reterr = reterr };
        int r;

        if (src->is_file || !startswith(src->name, PROFILE_PREFIX) || streq(words[0], "include"))
                return 0;
        if (streq(words[0], "protect") && profile_rebase_keeps_default(words) &&
            (r = directive_apply_copy(m, words, w, reterr)) < 0)
                return r;
        r = profile_rebase_line(words, rebased_apply, &c);
        if (r < 0 && !c.failed)
                return where_error(w, reterr, r, "out of memory");
        return r;
}

static int line_parse(Manifest *m, const Source *src, const char *s, size_t len, const Where *w, char **reterr) {
        cleanup_strv char **words = NULL;
        int r;

        r = line_check_bytes(s, len, w, reterr);
        if (r < 0)
                return r;
        r = line_split(s, len, w, &words, reterr);
        if (r < 0)
                return r;
        if (!words)
                return 0;
        r = profile_line_rebase(m, src, words, w, reterr);
        if (r != 0)
                return r < 0 ? r : 0;
        if (streq(words[0], "include"))
                return include_apply(m, src, words, w, reterr);
        return directive_apply(m, words, w, reterr);
}

static int text_parse(Manifest *m, const Source *src, const char *text, size_t size, char **reterr) {
        const char *p = text, *end = text + size;
        unsigned line = 0;
        int r;

        while (p < end) {
                const char *nl = memchr(p, '\n', end - p);
                size_t len = (nl ?: end) - p;
                Where w = { .file = src->name };

                w.line = ++line;
                r = line_parse(m, src, p, len, &w, reterr);
                if (r < 0)
                        return r;
                p = nl ? nl + 1 : end;
        }
        return 0;
}

static int read_error(const char *path, const Where *from, char **reterr, int r) {
        const char *why = r == -ERRNO_NOT_REGULAR ? "not a regular file" : strerror(-r);
        Where w = { .file = path };

        if (r == -ERRNO_NOT_REGULAR)
                r = -EINVAL;
        if (from)
                return where_error(from, reterr, r, "cannot read include '%s': %s", path, why);
        if (r == -EINVAL)
                return where_error(&w, reterr, r, "%s", why);
        return where_error(&w, reterr, r, "cannot read: %s", why);
}

/* Open path and read it whole; the identity (dev, inode) is what include cycles are detected by.
 * O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever; a FIFO, a socket
 * or a device is refused on what fstat() says of the opened file, before any read. Symlinks are
 * followed (an operator's /etc/node-reset/manifest.conf may well be one): what matters is what
 * they lead to. */
static int file_load(const char *path, Source *src, char **ret, size_t *ret_size) {
        cleanup_close int fd = -EBADF;
        struct stat st;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        r = fileio_read_regular(fd, MANIFEST_FILE_SIZE_MAX, ret, ret_size, &st);
        if (r < 0)
                return r;
        src->dev = st.st_dev;
        src->ino = st.st_ino;
        return 0;
}

static bool source_is_open(const Source *chain, const Source *s) {
        for (; chain; chain = chain->parent)
                if (chain->is_file && chain->dev == s->dev && chain->ino == s->ino)
                        return true;
        return false;
}

static int parse_file(Manifest *m, const char *path, const Source *parent, const Where *from, char **reterr) {
        Source src = {
                .name = path,
                .is_file = true,
                .depth = parent ? parent->depth + 1 : 0,
                .parent = parent,
        };
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        r = file_load(path, &src, &text, &size);
        if (r < 0)
                return read_error(path, from, reterr, r);
        if (source_is_open(parent, &src))
                return where_error(from, reterr, -EINVAL, "include cycle: '%s' is already being read", path);
        if (manifest_add_file(m, path) < 0)
                return read_error(path, from, reterr, -ENOMEM);
        return text_parse(m, &src, text, size, reterr);
}

int manifest_parse_file(Manifest *m, const char *path, char **reterr) {
        size_t n_entries, n_files;
        int r;

        if (!m || isempty(path))
                return -EINVAL;
        n_entries = m->n_entries;
        n_files = m->n_files;
        r = parse_file(m, path, NULL, NULL, reterr);
        if (r < 0)
                manifest_truncate(m, n_entries, n_files);
        return r;
}

int manifest_parse_string(Manifest *m, const char *name, const char *text, const char *base_dir, char **reterr) {
        Source src = { .name = name, .base_dir = base_dir };
        size_t n_entries, n_files;
        int r;

        if (!m || isempty(name) || !text)
                return -EINVAL;
        n_entries = m->n_entries;
        n_files = m->n_files;
        /* The embedded text is a source too: "manifest print" should say where entries came from. */
        r = manifest_add_file(m, name);
        if (r < 0)
                return set_errmsg(reterr, r, "%s: out of memory", name);
        r = text_parse(m, &src, text, strlen(text), reterr);
        if (r < 0)
                manifest_truncate(m, n_entries, n_files);
        return r;
}

static void word_print(const char *s, FILE *f) {
        if (!word_needs_quotes(s)) {
                fputs(s, f);
                return;
        }
        fputc('"', f);
        for (; *s; s++) {
                const char *e = char_escape(*s);

                if (e)
                        fputs(e, f);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

int manifest_print(const Manifest *m, FILE *f) {
        fputs("# node-reset manifest, read from:\n", f);
        for (char **i = m->files; i && *i; i++) {
                fputs("#   ", f);
                word_print(*i, f);
                fputc('\n', f);
        }
        for (size_t i = 0; i < m->n_entries; i++) {
                const ManifestEntry *e = m->entries + i;

                fputs(strna(directive_type_to_string(e->type)), f);
                for (size_t j = 0; j < e->n_args; j++) {
                        fputc(' ', f);
                        word_print(e->args[j], f);
                }
                fputc('\n', f);
        }
        if (fflush(f) != 0)
                return negative_errno();
        return ferror(f) ? -EIO : 0;
}

char *manifest_entry_reason(const ManifestEntry *e) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fprintf(f, "%s:%u: %s", e->file, e->line, directive_type_to_string(e->type));
        STRV_FOREACH(a, e->args)
                fprintf(f, " %s", *a);
        if (e->system_path)
                fputs(" (SYSTEM PATH, allowed by allow-system-path)", f);
        if (fclose(f) != 0)
                return mfree(buf);
        return buf;
}

const ManifestEntry *manifest_find_covering(const Manifest *m, DirectiveType t, const char *path) {
        MANIFEST_FOREACH(e, m, t)
                if (path_pattern_covers(e->args[0], path))
                        return e;
        return NULL;
}
