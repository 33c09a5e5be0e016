/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in profiles parsed for cmocka tests, and questions about the manifest they make. */
#pragma once

#include <stdbool.h>

#include "agent/config/manifest.h"

/* "include profile:NAME" parsed into a new manifest; the parse must return expect (0: no error
 * message either), else the test fails. */
Manifest *test_parse_profile(const char *name, int expect);

/* Does the manifest hold a line of type t whose first argument is arg? */
bool test_manifest_has_line(const Manifest *m, DirectiveType t, const char *arg);
