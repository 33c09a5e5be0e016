/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Setting a caller's message out-parameter, once, for the negative-errno convention. */

#include "errno-util.h"

int set_errmsg(char **reterr, int r, const char *fmt, ...) {
        va_list ap;

        if (!reterr || *reterr)
                return r;
        va_start(ap, fmt);
        if (vasprintf(reterr, fmt, ap) < 0)
                *reterr = NULL;
        va_end(ap);
        return r;
}
