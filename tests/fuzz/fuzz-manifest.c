/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the manifest parser and printer: arbitrary text, no includes, and the
 * print/parse round trip checked on every input that parses. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/manifest.h"
#include "macro.h"
#include "string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

DEFINE_TRIVIAL_CLEANUP_FUNC(Manifest *, manifest_free);
#define cleanup_manifest CLEANUP(manifest_freep)

/* Opened once: /dev/null costs nothing however many inputs run. */
static FILE *null_stream(void) {
        static FILE *f;

        if (!f)
                f = fopen("/dev/null", "we");
        if (!f)
                abort();
        return f;
}

static bool same_entries(const Manifest *a, const Manifest *b) {
        if (a->n_entries != b->n_entries)
                return false;
        for (size_t i = 0; i < a->n_entries; i++) {
                if (a->entries[i].type != b->entries[i].type || a->entries[i].n_args != b->entries[i].n_args)
                        return false;
                for (size_t j = 0; j < a->entries[i].n_args; j++)
                        if (!streq(a->entries[i].args[j], b->entries[i].args[j]))
                                return false;
        }
        return true;
}

/* What manifest_print writes must parse back to the same entries: "manifest print" output is
 * meant to be saved and used as a manifest. */
static void check_round_trip(const Manifest *m) {
        cleanup_manifest Manifest *again = manifest_new();
        cleanup_free char *buf = NULL, *err = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f || !again)
                abort();
        if (manifest_print(m, f) < 0 || fclose(f) != 0)
                abort();
        if (manifest_parse_string(again, "printed", buf, NULL, &err) < 0 || !same_entries(m, again)) {
                fprintf(stderr, "round trip failed: %s\n--- printed:\n%s", strna(err), buf);
                abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        cleanup_manifest Manifest *m = manifest_new();
        cleanup_free char *text = malloc(size + 1), *err = NULL;
        int r;

        if (!m || !text)
                return 0;
        /* Embedded NULs end the text early, as they would for the built-in manifest. */
        memcpy(text, data, size);
        text[size] = 0;

        r = manifest_parse_string(m, "fuzz", text, NULL, &err);
        (void) manifest_print(m, null_stream());
        if (r >= 0)
                check_round_trip(m);
        return 0;
}
