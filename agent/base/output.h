/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One emitter call per field serves both the human text and --output=json (iproute2's PRINT_ANY). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The JSON report's shape, docs/report.schema.json: raised on an incompatible change (a member
 * removed, renamed or retyped); new members may appear without a raise. */
#define REPORT_SCHEMA_VERSION 1ULL

typedef enum OutputMode {
        OUTPUT_TEXT,
        OUTPUT_JSON,
        OUTPUT_NONE, /* -q: the text report is not printed (the exit status says it); JSON always is */
        _OUTPUT_MODE_MAX,
        _OUTPUT_MODE_INVALID = -1,
} OutputMode;

typedef enum Color {
        COLOR_NONE,
        COLOR_GREEN,
        COLOR_YELLOW,
        COLOR_RED,
        COLOR_BOLD,
        COLOR_GREY,
} Color;

typedef struct Emitter {
        FILE *f;
        OutputMode mode;
        bool color;
        unsigned depth;
        bool need_comma[16];
        bool all_actions; /* text: list every action (-v), not only those with something to do */
} Emitter;

void emitter_init(Emitter *e, FILE *f, OutputMode mode, bool color);
/* "text" or "json" (--output's names, also the i-th for --help and the completion: NULL past the last). */
OutputMode output_mode_from_string(const char *s);
const char *output_mode_nth(size_t i);

/* Colour is used on a terminal only, and never with NO_COLOR set or TERM=dumb. */
bool color_wanted(FILE *f);

/* JSON structure; no text is printed for these. A NULL key inside an array. */
void emit_open_object(Emitter *e, const char *key);
void emit_close_object(Emitter *e);
void emit_open_array(Emitter *e, const char *key);
void emit_close_array(Emitter *e);

/* A field: JSON gets "key": value; text gets printf(fmt, value) when fmt is non-NULL, with value
 * escaped as include/escape.h says (controls, backslash, invalid UTF-8), since it may be a name
 * from the node. */
void emit_string(Emitter *e, Color c, const char *key, const char *fmt, const char *value);
void emit_uint(Emitter *e, Color c, const char *key, const char *fmt, unsigned long long value);
void emit_bool(Emitter *e, const char *key, const char *fmt, bool value);
void emit_null(Emitter *e, const char *key);

/* Text only: literal text (JSON output ignores it). The format and its arguments are printed as
 * they are: pass only trusted text (counts, fixed words); a name goes through emit_string() or
 * text_escape(). */
void emit_text(Emitter *e, Color c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
