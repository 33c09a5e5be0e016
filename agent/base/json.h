/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Minimal JSON writing: string escaping that always yields valid JSON, whatever the bytes. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/* Write s as a JSON string literal, quotes included. Control characters become \uXXXX; each byte
 * that is not part of valid UTF-8 (file names may hold any byte) becomes U+FFFD, so the output stays
 * valid and a real "\u00ff" is never confused with the byte 0xff. */
void json_write_string(FILE *f, const char *s);

/* Whether s is valid UTF-8 throughout: when not, the emitter adds KEY_b64 beside KEY. */
bool json_utf8_valid(const char *s);

/* The bytes of s, base64-encoded (RFC 4648, with padding; libcrypto's EVP_EncodeBlock), malloc'd;
 * NULL when libcrypto does not load (or out of memory). */
char *json_base64(const char *s);
