/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the API server says of a node forget is asked to remove: its Node (addresses, being deleted,
 * whether it is a control plane or etcd server, its Ready condition) and its Lease in kube-node-lease,
 * and from them how long it has shown no sign of life. */
#pragma once

#include <stdbool.h>

#include "agent/base/json.h"
#include "time-util.h"

typedef struct ForgetNode {
        char **addresses;  /* status.addresses[].address */
        bool deleting;     /* metadata.deletionTimestamp */
        char *finalizers;  /* ", "-separated; NULL when none */
        char *server;      /* the label or annotation that makes it a control plane or etcd server; NULL */
        char *etcd_member; /* k3s's and rke2's etcd.{k3s,rke2}.cattle.io/node-name: its member's name */
        usec_t created;    /* metadata.creationTimestamp, CLOCK_REALTIME; 0 when not given */
        usec_t heartbeat;  /* the Ready condition's lastHeartbeatTime; 0 when none */
        char *ready;       /* the Ready condition's status ("True", "False", "Unknown"), NULL when none */
} ForgetNode;

void forget_node_done(ForgetNode *n);

/* RFC 3339 as the API writes metav1.Time and MicroTime ("2026-01-02T03:04:05Z",
 * "2026-01-02T03:04:05.123456Z", "...+01:00"): 0 and microseconds since the epoch, -EINVAL. */
int kube_time_parse(const char *s, usec_t *ret);

/* A Node's fields (the API server's JSON answer), added to what *ret holds (addresses are appended,
 * unique): 0, -ENOMEM. A field that is absent, empty or of another JSON type is left unset. */
int forget_node_read(const JsonValue *node, ForgetNode *ret);

/* A Lease's spec.renewTime: 0 and the time, -ENOENT when it has none, -ENOMEM. */
int forget_lease_read(const JsonValue *lease, usec_t *ret);

/* The last sign of life: the later of the Ready condition's heartbeat and the Lease's renewal
 * (renew, 0 when there is no Lease), else the Node's creation; 0 when none is known. */
usec_t forget_node_last_seen(const ForgetNode *n, usec_t renew);
