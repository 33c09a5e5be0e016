/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every detector shares (the detectors of agent/config/detect/ only): a node file read, evidence, a finding. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "agent/config/detect.h"
#include "macro.h"

/* Config files are small; a bigger one is not what we look for. */
#define DETECT_FILE_MAX (1024U * 1024U)

bool node_exists(int root_fd, const char *path);

/* The file's text, or NULL when it is missing, unreadable or too big (evidence of nothing). */
char *node_read(int root_fd, const char *path);

/* Append "path: what" to *l. */
int evidence_add(char ***l, const char *path, const char *fmt, ...) _printf_(3, 4);

/* The finding's value, or ambiguous when it has another one already. */
int finding_set(Finding *f, const char *value);
void finding_done(Finding *f);

/* A finding that disagrees has no value: the evidence says what each side was. */
void finding_settle(Finding *f);

/* Every document of a YAML file, parsed whole before any is read: a file that does not parse is
 * evidence of nothing (said in f's evidence, then -EINVAL). The first YAML_DOCS_MAX are kept. */
#define YAML_DOCS_MAX 8U

typedef struct YamlFile {
        yaml_document_t docs[YAML_DOCS_MAX];
        size_t n;
} YamlFile;

void yaml_file_done(YamlFile *y);
int yaml_file_load(Finding *f, const char *path, const char *text, size_t size, YamlFile *y);

/* The YAML file at path, every document parsed (-EINVAL: absent, unreadable or not YAML). */
int node_read_yaml(int root_fd, const char *path, Finding *f, YamlFile *y);
