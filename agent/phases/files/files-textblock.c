/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A marked block inside a text file (Ansible's blockinfile): find it and cut it out, byte for byte. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agent/phases/files/files-textblock.h"
#include "errno-util.h"
#include "macro.h"

void text_block_cut_done(TextBlockCut *c) {
        c->text = mfree(c->text);
}

/* The line [p, eol) without its "\n" and a "\r" before it equals marker. */
static bool line_is(const char *p, const char *eol, const char *marker) {
        size_t n = (size_t) (eol - p), m = strlen(marker);

        if (n > 0 && p[n - 1] == '\r')
                n--;
        return n == m && memcmp(p, marker, m) == 0;
}

static const char *line_end(const char *p, const char *end) {
        const char *nl = memchr(p, '\n', (size_t) (end - p));

        return nl ? nl : end;
}

typedef struct Scan {
        const char *text, *end;
        const char *begin, *close;
        char *out; /* NULL: count only */
        size_t size;
        unsigned blocks, lines, first_line;
} Scan;

/* One pass over the lines; the same pass copies what stays when s->out is set. */
static int scan(Scan *s, char **reterr_msg) {
        unsigned line = 0, open_line = 0;
        bool inside = false;

        for (const char *p = s->text; p < s->end;) {
                const char *eol = line_end(p, s->end), *next = eol < s->end ? eol + 1 : eol;

                line++;
                if (line_is(p, eol, s->begin)) {
                        if (inside)
                                return set_errmsg(reterr_msg, -EBADMSG,
                                                  "line %u: a second begin marker inside the block of line %u", line,
                                                  open_line);
                        inside = true;
                        open_line = line;
                        if (s->blocks == 0)
                                s->first_line = line;
                } else if (line_is(p, eol, s->close)) {
                        if (!inside)
                                return set_errmsg(reterr_msg, -EBADMSG, "line %u: an end marker without a begin marker",
                                                  line);
                        inside = false;
                        s->blocks++;
                        s->lines++;
                        p = next;
                        continue;
                }
                if (inside)
                        s->lines++;
                else if (s->out) {
                        memcpy(s->out + s->size, p, (size_t) (next - p));
                        s->size += (size_t) (next - p);
                }
                p = next;
        }
        if (inside)
                return set_errmsg(reterr_msg, -EBADMSG,
                                  "line %u: a begin marker without an end marker (unterminated block)", open_line);
        return s->blocks > 0;
}

int text_block_cut(const char *text, size_t size, const char *begin, const char *end, TextBlockCut *ret,
                   char **reterr_msg) {
        Scan s = { .text = text, .end = text + size, .begin = begin, .close = end };
        int r;

        /* Check first, copy after: a text whose markers do not pair up costs no allocation. */
        r = scan(&s, reterr_msg);
        if (r <= 0)
                return r;
        s = (Scan) { .text = text, .end = text + size, .begin = begin, .close = end, .out = malloc(size + 1) };
        if (!s.out)
                return -ENOMEM;
        r = scan(&s, reterr_msg);
        if (r < 0) {
                free(s.out);
                return r;
        }
        s.out[s.size] = 0;
        *ret = (TextBlockCut) {
                .text = s.out,
                .size = s.size,
                .blocks = s.blocks,
                .lines = s.lines,
                .first_line = s.first_line,
        };
        return 1;
}
