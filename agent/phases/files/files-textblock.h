/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A marked block inside a text file (Ansible's blockinfile): find it and cut it out, byte for byte. */
#pragma once

#include <stddef.h>

typedef struct TextBlockCut {
        char *text; /* the text without the blocks, NUL-terminated (malloc'd) */
        size_t size;
        unsigned blocks;     /* blocks removed */
        unsigned lines;      /* lines removed, the marker lines included */
        unsigned first_line; /* 1-based line of the first BEGIN marker */
} TextBlockCut;

void text_block_cut_done(TextBlockCut *c);

/* Remove every block from a line equal to "begin" through the next line equal to "end", marker lines
 * included; every other byte stays as it was. A line matches when it is the marker exactly, apart
 * from its "\n" or "\r\n" ending (as blockinfile compares). Returns 0 when there is no marker at all
 * (ret untouched), 1 when blocks were cut (ret filled), or -EBADMSG with the reason in *reterr_msg
 * when the markers do not pair up: a BEGIN without its END, an END without a BEGIN, a BEGIN inside a
 * block. A text that is not sure to be edited right is never edited at all. */
int text_block_cut(const char *text, size_t size, const char *begin, const char *end, TextBlockCut *ret,
                   char **reterr_msg);
