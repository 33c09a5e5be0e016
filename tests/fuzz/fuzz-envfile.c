/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for the environment-file and command-line readers: any bytes in; pairs or -EBADMSG
 * with a line inside the input out, every pair "KEY=value" with a valid key, and the same bytes split
 * into words and read for a flag, and read as a unit file's ExecStart=, never a crash. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "macro.h"
#include "strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pairs(char **pairs) {
        for (size_t i = 0; pairs[i]; i++) {
                const char *eq = strchr(pairs[i], '=');

                assert(eq && eq > pairs[i]);
                assert(env_get(pairs, strndupa(pairs[i], (size_t) (eq - pairs[i]))));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char **pairs = NULL, **words = NULL, *copy;
        unsigned line = 0, lines = 1;
        int r;

        r = env_file_parse((const char *) data, size, &pairs, &line);
        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        for (size_t i = 0; i < size; i++)
                lines += data[i] == '\n';
        if (r == -EBADMSG)
                assert(!pairs && line >= 1 && line <= lines);
        if (r == 0)
                check_pairs(pairs);
        strv_free(pairs);

        copy = strndup((const char *) data, size);
        if (!copy)
                return 0;
        r = argv_split(copy, &words);
        assert(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == 0)
                (void) argv_flag(words, "container-runtime-endpoint");
        strv_free(words);
        words = NULL;
        if (argv_split_blanks(copy, &words) == 0)
                (void) argv_flag(words, "data-dir");
        strv_free(words);
        words = NULL;
        free(copy);
        /* The same bytes as a unit file: its ExecStart= command line, or none. */
        r = unit_exec_start_argv((const char *) data, size, &words);
        assert(r == 0 || r == 1 || r == -EBADMSG || r == -ENOMEM);
        assert(r == 1 ? words != NULL : words == NULL);
        if (r == 1)
                (void) argv_flag(words, "data-dir");
        strv_free(words);
        return 0;
}
