/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A TOML reader just large enough for container runtime configs (containerd, CRI-O). */
#pragma once

/* The last value of key in one of the tables (TOML, table names compared without quotes or blanks;
 * "" is the top level); 1 found, 0 not, -ENOMEM. Only basic and literal strings are understood. */
int toml_find_string(const char *text, const char *const *tables, const char *key, char **ret);
/* The same for a non-negative decimal integer ("version = 3"); 0 also when it is not one. */
int toml_find_uint(const char *text, const char *const *tables, const char *key, unsigned *ret);
