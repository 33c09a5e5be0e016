/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The default manifest, built into the binary so a copied binary works alone in a rescue shell. */

#include "agent/config/embedded.h"

/* The assembler copies manifests/default.conf in verbatim (the Makefile makes this object depend on
 * it), followed by a NUL so the text is a C string. Paths are relative to the top of the tree,
 * where make runs. */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".type node_reset_default_manifest, @object\n"
        "node_reset_default_manifest:\n"
        ".incbin \"manifests/default.conf\"\n"
        ".byte 0\n"
        ".size node_reset_default_manifest, . - node_reset_default_manifest\n"
        ".previous\n");

extern const char node_reset_default_manifest[];

const char *embedded_default_manifest(void) {
        return node_reset_default_manifest;
}
