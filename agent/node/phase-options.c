/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The options several phases read, as the command line set them. */

#include <errno.h>

#include "agent/engine/cmdline.h"
#include "agent/node/phase-options.h"
#include "errno-util.h"
#include "string-util.h"

/* Configuration: set once by the command line's option loop, before any run; never by a run. */
static const char *arg_cri_endpoint;
static unsigned arg_unit_timeout_sec;
static bool arg_delete_node;

const char *phase_option_cri_endpoint(void) {
        return arg_cri_endpoint;
}

int phase_option_cri_endpoint_parse(const char *arg, char **reterr) {
        if (!startswith(arg, "unix:///") && arg[0] != '/')
                return set_errmsg(reterr, -EINVAL, "invalid --cri-endpoint '%s': expected unix:///PATH or /PATH", arg);
        arg_cri_endpoint = arg;
        return 0;
}

usec_t phase_option_unit_timeout(void) {
        return (usec_t) arg_unit_timeout_sec * USEC_PER_SEC;
}

static int parse_unit_timeout(const char *arg, char **reterr) {
        return cmdline_parse_duration("unit-timeout", arg, 1, CMDLINE_DURATION_MAX, &arg_unit_timeout_sec, reterr);
}

const PhaseOption phase_unit_options[] = {
        { "unit-timeout", PHASE_OPTION_REQUIRED_ARG, "DURATION", "How long to wait for each unit's stop job (100s)",
          parse_unit_timeout },
        {},
};

bool phase_option_delete_node(void) {
        return arg_delete_node;
}

int phase_option_delete_node_parse(const char *arg, char **reterr) {
        arg_delete_node = true;
        return 0;
}
