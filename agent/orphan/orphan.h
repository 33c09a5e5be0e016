/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* orphan-check: is this worker's control plane gone for good? The probe, its classes and the persistence rule. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/base/http.h"
#include "agent/base/output.h"

#define ORPHAN_STATE_DIR "/var/lib/node-reset"
#define ORPHAN_STATE_NAME "orphan.state"
#define ORPHAN_FOR_DEFAULT_SEC (30 * 60)
#define ORPHAN_PROBE_TIMEOUT_DEFAULT_MS 10000
#define ORPHAN_CONNECT_TIMEOUT_MAX_MS 5000

typedef enum OrphanClass {
        ORPHAN_HEALTHY,      /* 200: the control plane knows this node */
        ORPHAN_NODE_MISSING, /* 404: it answers, but this node is not registered */
        ORPHAN_UNAUTHORIZED, /* 401/403: it rejects the node's credentials */
        ORPHAN_CA_MISMATCH,  /* TLS verification against the configured CA failed: rebuilt */
        ORPHAN_UNREACHABLE,  /* DNS, connect, TLS handshake or timeout */
        ORPHAN_API_ERROR,    /* another HTTP status: our control plane answered, unwell */
        ORPHAN_NOT_A_NODE,   /* no kubeconfig: nothing to be orphaned from */
        _ORPHAN_CLASS_MAX,
        _ORPHAN_CLASS_INVALID = -EINVAL,
} OrphanClass;

const char *orphan_class_to_string(OrphanClass c);
OrphanClass orphan_class_from_string(const char *s);

/* Does this class count toward "orphaned" (non-healthy, not not-a-node, not api-error)? */
bool orphan_class_is_evidence(OrphanClass c);

/* The class of a finished probe. An HTTP status, when one arrived, decides. Otherwise curl's
 * code: -EINVAL for a failure that is about this node's own configuration (a CA or client
 * certificate that cannot be loaded, a malformed URL), which is an error, not evidence. */
OrphanClass orphan_classify(CURLcode code, long http_status);

/* What /var/lib/node-reset/orphan.state keeps between checks. */
typedef struct OrphanState {
        uint64_t first_seen; /* CLOCK_REALTIME seconds of the first sighting; 0: none */
        uint64_t last_seen;  /* of the latest one */
        OrphanClass class;   /* the latest class seen */
} OrphanState;

/* "first_seen=S\nlast_seen=S\nclass=NAME\n" with '#' comments; -EBADMSG when malformed. */
int orphan_state_parse(const char *text, OrphanState *ret);
int orphan_state_format(const OrphanState *s, char **ret);

/* The persistence rule, a pure function of the old state, this check's class, now and --for:
 * a class that is not evidence clears the state; evidence keeps the first sighting, unless the
 * previous sighting is older than for_sec (the checks were not continuous: a node that was off
 * for a week has not watched its control plane for a week) or lies in the future (the clock was
 * set back), which starts over at now. Orphaned when now - first_seen >= for_sec. */
bool orphan_state_update(OrphanState *s, OrphanClass c, uint64_t now, uint64_t for_sec);

typedef struct OrphanOptions {
        int root_fd; /* "/" or --root */
        const char *root;
        const char *kubeconfig; /* absolute node path */
        const char *node_name;  /* NULL: from the client certificate, else the host name */
        const char *proxy;      /* NULL: the kubeconfig's proxy-url, else none */
        uint64_t for_sec;
        uint64_t timeout_ms; /* the whole probe; connecting gets at most 5 s of it */
        uint64_t now;        /* CLOCK_REALTIME seconds */
} OrphanOptions;

typedef struct OrphanCheck {
        OrphanClass class; /* _ORPHAN_CLASS_INVALID when error is set */
        char *server;      /* redacted */
        char *node;
        const char *node_source; /* "--node-name", "client certificate", "hostname" */
        bool probed;
        HttpResult http;
        OrphanState state; /* after this check */
        bool orphaned;
        char *error; /* why the check could not decide */
} OrphanCheck;

/* Read the kubeconfig, probe, classify and apply the persistence rule to the state file.
 * Returns < 0 (with c->error) when no decision can be made: the caller fails loudly. */
int orphan_check(const OrphanOptions *o, OrphanCheck *c);
void orphan_check_done(OrphanCheck *c);

void orphan_check_emit(Emitter *e, const OrphanOptions *o, const OrphanCheck *c, int exit_status);
