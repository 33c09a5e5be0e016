/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reset manifest: a line-oriented list of directives saying what a reset removes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "agent/config/manifest-directives.h"

typedef struct ManifestEntry {
        DirectiveType type;
        char **args; /* NULL-terminated, the words after the directive, unquoted */
        size_t n_args;
        char *file; /* the file (or embedded name) the line came from */
        unsigned line;
        bool system_path; /* a line that writes a system path, let through by allow-system-path */
} ManifestEntry;

typedef struct Manifest {
        ManifestEntry *entries;
        size_t n_entries, allocated_entries;
        char **files; /* every file read, in order, includes too */
        size_t n_files;
} Manifest;

Manifest *manifest_new(void);
Manifest *manifest_free(Manifest *m);

/* Parse a file, following "include" lines (relative to the including file's directory). A
 * symlink is followed; what it leads to must be a regular file (a FIFO or a device is refused
 * before any read, so it cannot hang the parse) of at most 4 MiB.
 * On error returns -EINVAL (or -errno of a failed read) and sets *reterr to "FILE:LINE: reason". */
int manifest_parse_file(Manifest *m, const char *path, char **reterr);

/* Parse text held in memory (the embedded default), "name" is used in messages.
 * "include" is refused in such text unless base_dir is non-NULL. */
int manifest_parse_string(Manifest *m, const char *name, const char *text, const char *base_dir, char **reterr);

/* Print the effective manifest: a comment naming the files read, then one directive per line,
 * quoted where needed. Parsing the output gives the same entries. */
int manifest_print(const Manifest *m, FILE *f);

/* "FILE:LINE: directive arg...": why a planned action exists, as every phase names it, plus a loud
 * note when the line reaches a system path through allow-system-path. NULL when out of memory. */
char *manifest_entry_reason(const ManifestEntry *e);

/* The first line of type t whose pattern covers node path (path_pattern_covers(): it matches the path
 * or one of its ancestors), or NULL. */
const ManifestEntry *manifest_find_covering(const Manifest *m, DirectiveType t, const char *path);

/* Iterate the entries of one type. "e &&": an empty manifest has no array, and NULL + 0 is
 * undefined behaviour (UBSan stops the fuzzer on it). */
#define MANIFEST_FOREACH(e, m, t)                                                                \
        for (const ManifestEntry *e = (m)->entries; e && e < (m)->entries + (m)->n_entries; e++) \
                if (e->type == (t))
