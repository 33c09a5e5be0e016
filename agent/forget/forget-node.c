/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A Node and its Lease as forget reads them. kubelet renews its Lease in kube-node-lease every 10 s
 * and reports its Ready condition's heartbeat at least every 5 minutes (nodeStatusReportFrequency,
 * kubernetes pkg/kubelet/kubelet_node_status.go, 1.20): the later of the two is when it was last
 * heard from. The roles are the ones kubeadm (node-role.kubernetes.io/control-plane and /master,
 * cmd/kubeadm/app/constants) and k3s/rke2 (node-role.kubernetes.io/etcd, the etcd.*.cattle.io
 * annotations of pkg/etcd/metadata_controller.go) write. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/base/json.h"
#include "agent/forget/forget-node.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static const char *const server_labels[] = {
        "node-role.kubernetes.io/control-plane",
        "node-role.kubernetes.io/master",
        "node-role.kubernetes.io/etcd",
};
static const char *const member_annotations[] = {
        "etcd.k3s.cattle.io/node-name",
        "etcd.rke2.cattle.io/node-name",
};

void forget_node_done(ForgetNode *n) {
        strv_free(n->addresses);
        free(n->finalizers);
        free(n->server);
        free(n->etcd_member);
        free(n->ready);
        *n = (ForgetNode) {};
}

static int digits(const char *s, int n) {
        int v = 0;

        for (int i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

int kube_time_parse(const char *s, usec_t *ret) {
        struct tm tm = {};
        long usec = 0, scale = 100000, offset = 0;
        time_t t;

        if (!s || strlen(s) < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
            s[16] != ':')
                return -EINVAL;
        tm.tm_year = digits(s, 4) - 1900;
        tm.tm_mon = digits(s + 5, 2) - 1;
        tm.tm_mday = digits(s + 8, 2);
        tm.tm_hour = digits(s + 11, 2);
        tm.tm_min = digits(s + 14, 2);
        tm.tm_sec = digits(s + 17, 2);
        if (tm.tm_year < 70 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour < 0 ||
            tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 || tm.tm_sec > 60)
                return -EINVAL;
        s += 19;
        if (*s == '.') {
                if (!(s[1] >= '0' && s[1] <= '9'))
                        return -EINVAL;
                for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
                        usec += scale * (*s - '0');
        }
        if ((*s == 'Z' || *s == 'z') && s[1] == '\0')
                offset = 0;
        else if ((*s == '+' || *s == '-') && strlen(s) == 6 && s[3] == ':' && digits(s + 1, 2) >= 0 &&
                 digits(s + 4, 2) >= 0)
                offset = (*s == '-' ? -1 : 1) * (digits(s + 1, 2) * 3600L + digits(s + 4, 2) * 60L);
        else
                return -EINVAL;
        t = timegm(&tm);
        if (t == (time_t) -1 || t - offset < 0)
                return -EINVAL;
        *ret = (usec_t) (t - offset) * USEC_PER_SEC + (usec_t) usec;
        return 0;
}

/* The API server writes its objects' fields as their Go names say: members are matched exactly. */
static const JsonValue *field(const JsonValue *obj, const char *key) {
        return json_get(obj, key, false);
}

static usec_t time_of(const JsonValue *obj, const char *key) {
        usec_t t;

        return kube_time_parse(json_string_of(field(obj, key)), &t) >= 0 ? t : 0;
}

static int read_strings(const JsonValue *array, const char *key, char ***l) {
        for (size_t i = 0; array && array->type == JSON_ARRAY && i < array->n; i++) {
                const JsonValue *item = array->items[i];
                const char *v = json_string_of(key ? field(item, key) : item);

                if (v && strv_extend_unique(l, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int read_metadata(const JsonValue *meta, ForgetNode *n) {
        const JsonValue *labels = field(meta, "labels"), *notes = field(meta, "annotations");
        cleanup_strv char **fin = NULL;

        n->deleting = json_string_of(field(meta, "deletionTimestamp")) != NULL;
        n->created = time_of(meta, "creationTimestamp");
        for (size_t i = 0; !n->server && i < ELEMENTSOF(server_labels); i++)
                if (field(labels, server_labels[i]) && !(n->server = strprintf("label %s", server_labels[i])))
                        return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(member_annotations); i++) {
                const char *v = json_string_of(field(notes, member_annotations[i]));

                if (!v || n->etcd_member)
                        continue;
                if (!(n->etcd_member = strdup(v)) ||
                    (!n->server && !(n->server = strprintf("annotation %s", member_annotations[i]))))
                        return -ENOMEM;
        }
        if (read_strings(field(meta, "finalizers"), NULL, &fin) < 0)
                return -ENOMEM;
        if (fin && !(n->finalizers = strv_join(fin, ", ")))
                return -ENOMEM;
        return 0;
}

static int read_ready(const JsonValue *conditions, ForgetNode *n) {
        for (size_t i = 0; conditions && conditions->type == JSON_ARRAY && i < conditions->n; i++) {
                const JsonValue *c = conditions->items[i];
                const char *status = json_string_of(field(c, "status"));

                if (!streq_ptr(json_string_of(field(c, "type")), "Ready"))
                        continue;
                n->heartbeat = time_of(c, "lastHeartbeatTime");
                if (status && !n->ready && !(n->ready = strdup(status)))
                        return -ENOMEM;
                return 0;
        }
        return 0;
}

int forget_node_read(const JsonValue *node, ForgetNode *ret) {
        const JsonValue *status = field(node, "status");
        int r;

        r = read_metadata(field(node, "metadata"), ret);
        if (r >= 0)
                r = read_ready(field(status, "conditions"), ret);
        if (r >= 0)
                r = read_strings(field(status, "addresses"), "address", &ret->addresses);
        return r;
}

int forget_lease_read(const JsonValue *lease, usec_t *ret) {
        *ret = time_of(field(lease, "spec"), "renewTime");
        return *ret > 0 ? 0 : -ENOENT;
}

usec_t forget_node_last_seen(const ForgetNode *n, usec_t renew) {
        usec_t t = n->heartbeat > renew ? n->heartbeat : renew;

        return t > 0 ? t : n->created;
}
