/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target for remove-block's parser: any file content and markers in; the blocks cut out, "no
 * block" or -EBADMSG out, never a crash, and a cut text is never longer than the input. The input is
 * "BEGIN\nEND\n" followed by the text. */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/phases/files/files-textblock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *copy, *begin, *end, *text, *msg = NULL;
        TextBlockCut cut = {};
        int r;

        copy = malloc(size + 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        copy[size] = 0;
        begin = copy;
        end = memchr(begin, '\n', size);
        text = end ? memchr(end + 1, '\n', size - (size_t) (end + 1 - copy)) : NULL;
        if (!end || !text || memchr(copy, 0, (size_t) (text - copy))) {
                free(copy);
                return 0;
        }
        *end++ = 0;
        *text++ = 0;
        r = text_block_cut(text, size - (size_t) (text - copy), begin, end, &cut, &msg);
        assert(r == 0 || r == 1 || r == -EBADMSG || r == -ENOMEM || r == -EINVAL);
        if (r == 1)
                assert(cut.size < size - (size_t) (text - copy) && strlen(cut.text) <= cut.size);
        text_block_cut_done(&cut);
        free(msg);
        free(copy);
        return 0;
}
