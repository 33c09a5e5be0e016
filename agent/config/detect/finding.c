/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every detector shares: reading a node file, collecting evidence, settling a finding. */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/detect/finding.h"
#include "agent/config/yaml-util.h"
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

int yaml_file_load(Finding *f, const char *path, const char *text, size_t size, YamlFile *y) {
        cleanup_free char *why = NULL;
        YamlLoader l;
        int r;

        y->n = 0;
        r = yaml_loader_open(&l, text, size, path, &why);
        while (r >= 0) {
                yaml_document_t doc;

                r = yaml_loader_next(&l, &doc, &why);
                if (r <= 0)
                        break;
                if (y->n < YAML_DOCS_MAX)
                        y->docs[y->n++] = doc;
                else
                        yaml_document_delete(&doc);
        }
        yaml_loader_close(&l);
        if (r < 0)
                yaml_file_done(y);
        if (r == -ENOMEM)
                return r;
        /* The loader's words name the file: "PATH: malformed YAML at line ...". */
        if (r < 0)
                return strv_consume(&f->evidence, strprintf("%s: not evidence", strna(why))) < 0 ? -ENOMEM : -EINVAL;
        return 0;
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
