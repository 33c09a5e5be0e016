/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Built-in profiles parsed for cmocka tests. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "macro.h"
#include "string-util.h"
#include "tests/support/profiles.h"

Manifest *test_parse_profile(const char *name, int expect) {
        cleanup_free char *line = strprintf("include profile:%s\n", name), *err = NULL;
        Manifest *m = manifest_new();

        assert_non_null(m);
        assert_int_equal(manifest_parse_string(m, "test", line, NULL, &err), expect);
        if (expect == 0)
                assert_null(err);
        return m;
}

bool test_manifest_has_line(const Manifest *m, DirectiveType t, const char *arg) {
        MANIFEST_FOREACH(e, m, t)
                if (streq(e->args[0], arg))
                        return true;
        return false;
}
