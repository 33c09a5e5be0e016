/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every detector shares: reading a node file, collecting evidence, settling a finding. */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/detect/finding.h"
#include "agent/os/fileio.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

bool node_exists(int root_fd, const char *path) {
        return fileio_exists_beneath(root_fd, path);
}

/* The file's text, or NULL when it is missing, unreadable or too big (evidence of nothing). */
char *node_read(int root_fd, const char *path) {
        char *text = NULL;
        size_t size;

        if (fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size) < 0)
                return NULL;
        return text;
}

int evidence_add(char ***l, const char *path, const char *fmt, ...) _printf_(3, 4);
int evidence_add(char ***l, const char *path, const char *fmt, ...) {
        cleanup_free char *what = NULL;
        va_list ap;

        va_start(ap, fmt);
        what = vstrprintf(fmt, ap);
        va_end(ap);
        if (!what)
                return -ENOMEM;
        return strv_consume(l, strprintf("%s: %s", path, what));
}

int finding_set(Finding *f, const char *value) {
        if (!value)
                return 0;
        if (!f->value) {
                f->value = strdup(value);
                return f->value ? 0 : -ENOMEM;
        }
        if (!streq(f->value, value))
                f->ambiguous = true;
        return 0;
}

void finding_done(Finding *f) {
        f->value = mfree(f->value);
        f->evidence = strv_free(f->evidence);
}

/* A finding that disagrees has no value: the evidence says what each side was. */
void finding_settle(Finding *f) {
        if (f->ambiguous)
                f->value = mfree(f->value);
}

void yaml_file_done(YamlFile *y) {
        for (size_t i = 0; i < y->n; i++)
                yaml_document_delete(&y->docs[i]);
        y->n = 0;
}

static int yaml_file_next(yaml_parser_t *parser, YamlFile *y, bool *done) {
        yaml_document_t extra, *doc = y->n < YAML_DOCS_MAX ? &y->docs[y->n] : &extra;

        if (!yaml_parser_load(parser, doc))
                return parser->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
        *done = !yaml_document_get_root_node(doc);
        if (*done || doc == &extra)
                yaml_document_delete(doc);
        else
                y->n++;
        return 0;
}

int yaml_file_load(Finding *f, const char *path, const char *text, size_t size, YamlFile *y) {
        yaml_parser_t parser;
        bool done = false;
        int r = 0;

        y->n = 0;
        if (!yaml_parser_initialize(&parser)) {
                r = evidence_add(&f->evidence, path, "%s", "not read (libyaml is not available): not evidence");
                return r < 0 ? r : -EINVAL;
        }
        yaml_parser_set_input_string(&parser, (const unsigned char *) text, size);
        while (r >= 0 && !done)
                r = yaml_file_next(&parser, y, &done);
        if (r == -EINVAL && evidence_add(&f->evidence, path, "not valid YAML (line %zu: %s): not evidence",
                                         parser.problem_mark.line + 1, strempty(parser.problem)) < 0)
                r = -ENOMEM;
        yaml_parser_delete(&parser);
        if (r < 0)
                yaml_file_done(y);
        return r;
}

/* The YAML file at path, every document parsed (-EINVAL: absent, unreadable or not YAML). */
int node_read_yaml(int root_fd, const char *path, Finding *f, YamlFile *y) {
        cleanup_free char *text = NULL;
        size_t size;
        int r;

        r = fileio_read_beneath(root_fd, path, DETECT_FILE_MAX, &text, &size);
        if (r == -ENOMEM)
                return r;
        return r < 0 ? -EINVAL : yaml_file_load(f, path, text, size, y);
}
