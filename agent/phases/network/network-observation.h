/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the network phase observes once and its files share: one dump per object type and the
 * guard worked out from them. */
#pragma once

#include "agent/engine/plan.h"
#include "netreset/conntrack.h"
#include "netreset/fib-rule.h"
#include "netreset/guard.h"
#include "netreset/link.h"
#include "netreset/nl.h"
#include "netreset/route.h"

typedef struct NetworkObservation {
        NlSocket *rtnl;
        LinkTable *links;
        RouteTable *routes;
        RuleTable *rules;
        Guard *guard;
        /* The pod and service ranges the node's configuration names (cluster-cidrs.h): a policy
         * rule's "from" prefix is a CNI's only inside one of them. */
        CtPrefix *ranges;
        size_t n_ranges;
} NetworkObservation;

/* Record r on a, with "what: strerror (extack)", each part when present. */
void network_record_errno(Action *a, int r, const char *what, const char *extack);
