/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping untrusted names for a terminal: systemd cescape()'s style, reversible byte for byte. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name on the node is chosen by whoever created it (a pod can name a mount point
 * "x\nresidue: none, the node is clean\n\e]0;owned\a"). Text meant for a person shows it as:
 *   - \\ for a backslash, so that the escaping is reversible and a name spelled "a\n" with a real
 *     backslash prints differently from one with a newline;
 *   - \a \b \t \n \v \f \r for those controls, \xHH for every other byte below 0x20 and for 0x7f;
 *   - \xHH for each byte that is not part of valid UTF-8 (stray continuation bytes, truncated and
 *     overlong sequences, surrogates, code points past U+10FFFF);
 *   - \xHH for each byte of the C1 controls U+0080..U+009F ("\xc2\x9b" is a CSI to many terminals);
 *   - everything else, valid printable UTF-8 included, as it is.
 * Each \xHH stands for exactly one byte, whatever the bytes around it, so unescaping gives the
 * original name back. JSON output has its own escaping and never goes through this. */

#define ESCAPE_UNIT_MAX 5 /* the longest escape of one byte, "\xHH", plus its NUL */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when s does not start one. */
size_t utf8_valid_len(const unsigned char *s);

/* Escapes s into buf (always NUL-terminated when size > 0), never cutting an escape or a UTF-8
 * sequence in two. Returns the length the whole escape needs, as snprintf() does: the result was
 * truncated when that is >= size. NULL is "". */
size_t text_escape_buf(const char *s, char *buf, size_t size);

/* The escaped copy of s, malloc'd, or NULL when out of memory. NULL is "". */
char *text_escape(const char *s);

/* Writes s escaped to f without allocating: for sinks that must work out of memory too. */
void fputs_escaped(const char *s, FILE *f);
