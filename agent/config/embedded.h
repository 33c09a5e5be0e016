/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The default manifest, built into the binary so a copied binary works alone in a rescue shell. */
#pragma once

#define EMBEDDED_MANIFEST_NAME "default.conf (built in)"

const char *embedded_default_manifest(void);
