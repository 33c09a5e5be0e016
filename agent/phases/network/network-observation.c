/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the network phase's files share below the planners: the failure message of a row. */

#include <stdio.h>
#include <stdlib.h>

#include "agent/phases/network/network-observation.h"
#include "string-util.h"

/* "what: strerror (extack)", each part when present. */
void network_record_errno(Action *a, int r, const char *what, const char *extack) {
        char *msg = NULL;

        if (asprintf(&msg, "%s%s%s%s%s%s", strempty(what), what ? ": " : "", strerror(-r), isempty(extack) ? "" : " (",
                     strempty(extack), isempty(extack) ? "" : ")") < 0)
                msg = NULL;
        action_record(a, r, msg);
}
