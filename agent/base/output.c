/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One emitter call per field serves both the human text and --output=json (iproute2's PRINT_ANY). */

#include <inttypes.h>
#include <stdarg.h>
#include <unistd.h>

#include "agent/base/json.h"
#include "agent/base/output.h"
#include "escape.h"
#include "macro.h"
#include "string-util.h"

static const char *const color_codes[] = {
        [COLOR_NONE] = "",          [COLOR_GREEN] = "\033[32m", [COLOR_YELLOW] = "\033[33m",
        [COLOR_RED] = "\033[1;31m", [COLOR_BOLD] = "\033[1m",   [COLOR_GREY] = "\033[2m",
};

void emitter_init(Emitter *e, FILE *f, OutputMode mode, bool color) {
        *e = (Emitter) { .f = f, .mode = mode, .color = color && mode == OUTPUT_TEXT };
}

/* The formats --output names; OUTPUT_NONE is no format anyone asks for by name. */
static const char *const output_modes[] = {
        [OUTPUT_TEXT] = "text",
        [OUTPUT_JSON] = "json",
};

const char *output_mode_nth(size_t i) {
        return i < ELEMENTSOF(output_modes) ? output_modes[i] : NULL;
}

OutputMode output_mode_from_string(const char *s) {
        for (size_t i = 0; i < ELEMENTSOF(output_modes); i++)
                if (streq(output_modes[i], s))
                        return (OutputMode) i;
        return _OUTPUT_MODE_INVALID;
}

bool color_wanted(FILE *f) {
        const char *term = getenv("TERM");

        if (getenv("NO_COLOR"))
                return false;
        if (!term || streq(term, "dumb"))
                return false;
        return isatty(fileno(f));
}

static void json_key(Emitter *e, const char *key) {
        if (e->depth > 0 && e->need_comma[e->depth])
                fputc(',', e->f);
        if (e->depth < ELEMENTSOF(e->need_comma))
                e->need_comma[e->depth] = true;
        if (key) {
                json_write_string(e->f, key);
                fputc(':', e->f);
        }
}

static void open_container(Emitter *e, const char *key, char c) {
        if (e->mode != OUTPUT_JSON)
                return;
        json_key(e, key);
        fputc(c, e->f);
        e->depth++;
        if (e->depth < ELEMENTSOF(e->need_comma))
                e->need_comma[e->depth] = false;
}

static void close_container(Emitter *e, char c) {
        if (e->mode != OUTPUT_JSON)
                return;
        e->depth--;
        fputc(c, e->f);
        if (e->depth == 0)
                fputc('\n', e->f);
}

void emit_open_object(Emitter *e, const char *key) {
        open_container(e, key, '{');
}

void emit_close_object(Emitter *e) {
        close_container(e, '}');
}

void emit_open_array(Emitter *e, const char *key) {
        open_container(e, key, '[');
}

void emit_close_array(Emitter *e) {
        close_container(e, ']');
}

static void color_on(Emitter *e, Color c) {
        if (e->color && c != COLOR_NONE)
                fputs(color_codes[c], e->f);
}

static void color_off(Emitter *e, Color c) {
        if (e->color && c != COLOR_NONE)
                fputs("\033[0m", e->f);
}

/* The text formats are the callers' literals, passed through: the same shape as printf itself. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

void emit_string(Emitter *e, Color c, const char *key, const char *fmt, const char *value) {
        cleanup_free char *escaped = NULL;

        if (e->mode == OUTPUT_JSON) {
                json_key(e, key);
                if (value)
                        json_write_string(e->f, value);
                else
                        fputs("null", e->f);
                /* Invalid bytes became U+FFFD above: the exact bytes ride beside, reversibly. */
                if (key && value && !json_utf8_valid(value)) {
                        cleanup_free char *b64 = json_base64(value);
                        char k[64];

                        /* Without libcrypto the member is left out: U+FFFD above is all there is. */
                        if (b64) {
                                (void) snprintf(k, sizeof k, "%s_b64", key);
                                json_key(e, k);
                                json_write_string(e->f, b64);
                        }
                }
                return;
        }
        if (!fmt || e->mode != OUTPUT_TEXT)
                return;
        /* Values are names from the node: escaped, they cannot forge a report line or reach the
         * terminal as a control sequence. */
        escaped = text_escape(value);
        color_on(e, c);
        fprintf(e->f, fmt, escaped ?: "(out of memory)");
        color_off(e, c);
}

void emit_uint(Emitter *e, Color c, const char *key, const char *fmt, unsigned long long value) {
        if (e->mode == OUTPUT_JSON) {
                json_key(e, key);
                fprintf(e->f, "%llu", value);
                return;
        }
        if (!fmt || e->mode != OUTPUT_TEXT)
                return;
        color_on(e, c);
        fprintf(e->f, fmt, value);
        color_off(e, c);
}

void emit_bool(Emitter *e, const char *key, const char *fmt, bool value) {
        if (e->mode == OUTPUT_JSON) {
                json_key(e, key);
                fputs(value ? "true" : "false", e->f);
                return;
        }
        if (fmt && e->mode == OUTPUT_TEXT)
                fprintf(e->f, fmt, value ? "yes" : "no");
}

#pragma GCC diagnostic pop

void emit_null(Emitter *e, const char *key) {
        if (e->mode != OUTPUT_JSON)
                return;
        json_key(e, key);
        fputs("null", e->f);
}

void emit_text(Emitter *e, Color c, const char *fmt, ...) {
        va_list ap;

        if (e->mode != OUTPUT_TEXT)
                return;
        color_on(e, c);
        va_start(ap, fmt);
        vfprintf(e->f, fmt, ap);
        va_end(ap);
        color_off(e, c);
}
