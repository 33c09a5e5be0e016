/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */
#pragma once

#include <stdio.h>

/* Write s as a JSON string literal, quotes included. Control characters become \uXXXX; bytes that
 * are not part of valid UTF-8 (file names may hold any byte) become \u00XX so the output stays valid. */
void json_write_string(FILE *f, const char *s);
