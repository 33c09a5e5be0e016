/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The completion scripts, one writer per shell (completion-SHELL.c), each from the same tables. */
#pragma once

#include <stdio.h>

#include "agent/verbs/completion-tables.h"

void completion_bash(FILE *f, const CompletionTables *t);
void completion_zsh(FILE *f, const CompletionTables *t);
void completion_fish(FILE *f, const CompletionTables *t);
