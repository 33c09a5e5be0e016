/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Parser for /proc/self/mountinfo (proc(5)) and the queries the unmount phase asks of it. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/os/mountinfo.h"
#include "alloc-util.h"
#include "errno-util.h"
#include "macro.h"
#include "string-util.h"

static void mount_entry_done(MountEntry *e) {
        free(e->root);
        free(e->mount_point);
        free(e->fstype);
        free(e->source);
        free(e->options);
        *e = (MountEntry) {};
}

MountTable *mount_table_free(MountTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_entries; i++)
                mount_entry_done(&t->entries[i]);
        free(t->entries);
        free(t);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);

static bool is_octal(char c) {
        return c >= '0' && c <= '7';
}

int mountinfo_unescape(const char *s, char **ret) {
        cleanup_free char *buf = NULL;
        size_t k = 0;

        if (!s || !ret)
                return -EINVAL;
        buf = malloc(strlen(s) + 1);
        if (!buf)
                return -ENOMEM;
        while (*s) {
                unsigned v;

                if (*s != '\\') {
                        buf[k++] = *s++;
                        continue;
                }
                /* Exactly three octal digits; \000 would cut the string short, above \377 is no byte. */
                if (!is_octal(s[1]) || !is_octal(s[2]) || !is_octal(s[3]))
                        return -EBADMSG;
                v = (unsigned) (s[1] - '0') << 6 | (unsigned) (s[2] - '0') << 3 | (unsigned) (s[3] - '0');
                if (v == 0 || v > 0377)
                        return -EBADMSG;
                buf[k++] = (char) v;
                s += 4;
        }
        buf[k] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The kernel separates fields by exactly one space: an empty field (an empty source) is real. */
static char *next_field(char **p) {
        return *p ? strsep(p, " ") : NULL;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *ret) {
        unsigned long v = 0;

        if (isempty(s))
                return -EBADMSG;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return -EBADMSG;
                if (v > (max - (unsigned long) (*s - '0')) / 10)
                        return -EBADMSG;
                v = v * 10 + (unsigned long) (*s - '0');
        }
        *ret = v;
        return 0;
}

static int parse_id(const char *s, int *ret) {
        unsigned long v;
        int r;

        r = parse_uint(s, INT32_MAX, &v);
        if (r < 0)
                return r;
        *ret = (int) v;
        return 0;
}

static int parse_devnum(char *s, unsigned *ret_major, unsigned *ret_minor) {
        unsigned long major, minor;
        char *colon;

        colon = s ? strchr(s, ':') : NULL;
        if (!colon)
                return -EBADMSG;
        *colon = 0;
        if (parse_uint(s, UINT32_MAX, &major) < 0 || parse_uint(colon + 1, UINT32_MAX, &minor) < 0)
                return -EBADMSG;
        *ret_major = (unsigned) major;
        *ret_minor = (unsigned) minor;
        return 0;
}

static int unescape_field(const char *s, bool allow_empty, char **ret) {
        if (!s || (!allow_empty && !*s))
                return -EBADMSG;
        return mountinfo_unescape(s, ret);
}

/* Fields 7.. : optional fields up to the lone "-", then fstype, source and super options. */
static int parse_tail(char **p, MountEntry *e) {
        const char *f;
        int r;

        for (;;) {
                f = next_field(p);
                if (!f)
                        return -EBADMSG;
                if (streq(f, "-"))
                        break;
        }
        r = unescape_field(next_field(p), false, &e->fstype);
        if (r < 0)
                return r;
        r = unescape_field(next_field(p), true, &e->source);
        if (r < 0)
                return r;
        /* The super options must be there; anything a later kernel appends after them is ignored. */
        return next_field(p) ? 0 : -EBADMSG;
}

static int mount_entry_parse(char *line, unsigned order, MountEntry *ret) {
        CLEANUP(mount_entry_done) MountEntry e = { .order = order };
        char *p = line;
        const char *f;
        int r;

        if (parse_id(next_field(&p), &e.mount_id) < 0 || parse_id(next_field(&p), &e.parent_id) < 0 ||
            parse_devnum(next_field(&p), &e.major, &e.minor) < 0)
                return -EBADMSG;
        r = unescape_field(next_field(&p), false, &e.root);
        if (r < 0)
                return r;
        r = unescape_field(next_field(&p), false, &e.mount_point);
        if (r < 0)
                return r;
        if (e.mount_point[0] != '/')
                return -EBADMSG;
        f = next_field(&p);
        if (isempty(f))
                return -EBADMSG;
        e.options = strdup(f);
        if (!e.options)
                return -ENOMEM;
        r = parse_tail(&p, &e);
        if (r < 0)
                return r;
        *ret = e;
        e = (MountEntry) {};
        return 0;
}

static int mount_table_add_line(MountTable *t, char *line, unsigned order) {
        MountEntry e;
        int r;

        r = mount_entry_parse(line, order, &e);
        if (r < 0)
                return r;
        if (GREEDY_REALLOC(t->entries, t->allocated, t->n_entries + 1) < 0) {
                mount_entry_done(&e);
                return -ENOMEM;
        }
        t->entries[t->n_entries++] = e;
        return 0;
}

int mount_table_parse(FILE *f, MountTable **ret) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        cleanup_fclose FILE *owned = NULL;
        cleanup_free char *line = NULL;
        size_t alloc = 0;
        unsigned n_line = 0;
        int r;

        if (!ret)
                return -EINVAL;
        if (!f) {
                f = owned = fopen("/proc/self/mountinfo", "re");
                if (!f)
                        return negative_errno();
        }
        t = calloc(1, sizeof(MountTable));
        if (!t)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                errno = 0;
                n = getline(&line, &alloc, f);
                if (n < 0) {
                        if (ferror(f))
                                return errno_or_else(EIO);
                        break;
                }
                n_line++;
                if (n > 0 && line[n - 1] == '\n')
                        line[--n] = 0;
                if (n == 0)
                        continue;
                if (strlen(line) != (size_t) n) /* an embedded NUL */
                        return -EBADMSG;
                r = mount_table_add_line(t, line, n_line);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(t);
        return 0;
}

int mount_table_read(MountTable **ret) {
        return mount_table_parse(NULL, ret);
}

/* Component-wise prefix test: the rest of path after prefix (leading slashes skipped), or NULL
 * when prefix is not an ancestor-or-self of path. "/a/bc" does not start with "/a/b". */
static const char *path_startswith_components(const char *path, const char *prefix) {
        for (;;) {
                size_t la, lb;

                path += strspn(path, "/");
                prefix += strspn(prefix, "/");
                if (!*prefix)
                        return path;
                la = strcspn(path, "/");
                lb = strcspn(prefix, "/");
                if (la != lb || memcmp(path, prefix, la) != 0)
                        return NULL;
                path += la;
                prefix += lb;
        }
}

static unsigned path_components(const char *p) {
        unsigned n = 0;

        for (;;) {
                p += strspn(p, "/");
                if (!*p)
                        return n;
                n++;
                p += strcspn(p, "/");
        }
}

/* Deepest first; for one mount point the topmost (latest) first; otherwise by path, for a stable
 * order. */
static int mount_entry_compare(const void *a, const void *b) {
        const MountEntry *x = *(const MountEntry *const *) a, *y = *(const MountEntry *const *) b;
        unsigned dx = path_components(x->mount_point), dy = path_components(y->mount_point);
        int c;

        if (dx != dy)
                return dx > dy ? -1 : 1;
        c = strcmp(x->mount_point, y->mount_point);
        if (c != 0)
                return c;
        if (x->order != y->order)
                return x->order > y->order ? -1 : 1;
        return 0;
}

/* How many mounts of the group (one mount point) this one is stacked on: its parent chain within
 * the group. Bounded by the group's size, so a malformed table cannot loop. */
static size_t stack_height(const MountEntry **g, size_t n, const MountEntry *e) {
        size_t h = 0;

        for (bool found = true; found && h < n;) {
                found = false;
                for (size_t i = 0; i < n; i++)
                        if (g[i]->mount_id == e->parent_id && g[i] != e) {
                                e = g[i];
                                h++;
                                found = true;
                                break;
                        }
        }
        return h;
}

/* Within one mount point the topmost mount goes first. Line order says which is on top only when
 * the mounts were made one over the other here; a mount propagated into a shared parent (ip netns
 * makes /run/netns shared) can be listed before the one it covers. The parent chain says it always. */
static void order_stacks(const MountEntry **l, size_t n) {
        for (size_t i = 0; i < n;) {
                size_t j = i + 1;

                while (j < n && streq(l[j]->mount_point, l[i]->mount_point))
                        j++;
                /* Insertion sort by height, highest first: groups are tiny. */
                for (size_t a = i + 1; a < j; a++)
                        for (size_t b = a;
                             b > i && stack_height(l + i, j - i, l[b]) > stack_height(l + i, j - i, l[b - 1]); b--) {
                                const MountEntry *tmp = l[b];

                                l[b] = l[b - 1];
                                l[b - 1] = tmp;
                        }
                i = j;
        }
}

int mount_table_beneath(const MountTable *t, const char *prefix, const MountEntry ***ret, size_t *ret_n) {
        cleanup_free const MountEntry **l = NULL;
        size_t n = 0;

        if (!t || !prefix || prefix[0] != '/' || !ret || !ret_n)
                return -EINVAL;
        if (t->n_entries > 0) {
                l = calloc(t->n_entries, sizeof(MountEntry *));
                if (!l)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < t->n_entries; i++) {
                const char *rest = path_startswith_components(t->entries[i].mount_point, prefix);

                if (rest && *rest)
                        l[n++] = &t->entries[i];
        }
        if (n > 0) {
                qsort(l, n, sizeof(MountEntry *), mount_entry_compare);
                order_stacks(l, n);
        } else
                l = mfree(l);
        *ret = TAKE_PTR(l);
        *ret_n = n;
        return 0;
}

bool mount_table_is_mount_point(const MountTable *t, const char *path) {
        if (!t || !path || path[0] != '/')
                return false;
        for (size_t i = 0; i < t->n_entries; i++) {
                const char *rest = path_startswith_components(t->entries[i].mount_point, path);

                if (rest && !*rest)
                        return true;
        }
        return false;
}

static const MountEntry *mount_table_find_id(const MountTable *t, int id) {
        for (size_t i = 0; i < t->n_entries; i++)
                if (t->entries[i].mount_id == id)
                        return &t->entries[i];
        return NULL;
}

const MountEntry *mount_table_covering(const MountTable *t, const MountEntry *e) {
        const MountEntry *cur = e, *a = mount_table_find_id(t, e->parent_id);

        for (size_t steps = 0; a && a != cur && steps < t->n_entries; steps++) {
                /* cur stacked on a (same mount point) is the path's way through a; otherwise a mount
                 * stacked on a covers it, and whatever hangs beneath a is out of reach. */
                if (!streq(cur->mount_point, a->mount_point))
                        for (size_t i = 0; i < t->n_entries; i++) {
                                const MountEntry *b = &t->entries[i];

                                if (b != a && b->parent_id == a->mount_id && streq(b->mount_point, a->mount_point))
                                        return b;
                        }
                cur = a;
                a = mount_table_find_id(t, a->parent_id);
        }
        return NULL;
}
