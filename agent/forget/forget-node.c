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

#include "agent/config/yaml-util.h"
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

static usec_t time_of(yaml_document_t *doc, yaml_node_t *map, const char *key) {
        usec_t t;

        return kube_time_parse(yaml_scalar_of(yaml_map_get(doc, map, key)), &t) >= 0 ? t : 0;
}

static int read_strings(yaml_document_t *doc, yaml_node_t *seq, const char *key, char ***l) {
        if (!seq || seq->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = seq->data.sequence.items.start; i < seq->data.sequence.items.top; i++) {
                yaml_node_t *n = yaml_document_get_node(doc, *i);
                const char *v = key ? yaml_scalar_of(yaml_map_get(doc, n, key)) : yaml_scalar_of(n);

                if (v && strv_extend_unique(l, v) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int read_metadata(yaml_document_t *doc, yaml_node_t *meta, ForgetNode *n) {
        yaml_node_t *labels = yaml_map_get(doc, meta, "labels"), *notes = yaml_map_get(doc, meta, "annotations");
        cleanup_strv char **fin = NULL;

        n->deleting = yaml_scalar_of(yaml_map_get(doc, meta, "deletionTimestamp")) != NULL;
        n->created = time_of(doc, meta, "creationTimestamp");
        for (size_t i = 0; !n->server && i < ELEMENTSOF(server_labels); i++)
                if (yaml_map_get(doc, labels, server_labels[i]) &&
                    !(n->server = strprintf("label %s", server_labels[i])))
                        return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(member_annotations); i++) {
                const char *v = yaml_scalar_of(yaml_map_get(doc, notes, member_annotations[i]));

                if (!v || n->etcd_member)
                        continue;
                if (!(n->etcd_member = strdup(v)) ||
                    (!n->server && !(n->server = strprintf("annotation %s", member_annotations[i]))))
                        return -ENOMEM;
        }
        if (read_strings(doc, yaml_map_get(doc, meta, "finalizers"), NULL, &fin) < 0)
                return -ENOMEM;
        if (fin && !(n->finalizers = strv_join(fin, ", ")))
                return -ENOMEM;
        return 0;
}

static int read_ready(yaml_document_t *doc, yaml_node_t *conditions, ForgetNode *n) {
        if (!conditions || conditions->type != YAML_SEQUENCE_NODE)
                return 0;
        for (yaml_node_item_t *i = conditions->data.sequence.items.start; i < conditions->data.sequence.items.top;
             i++) {
                yaml_node_t *c = yaml_document_get_node(doc, *i);
                const char *status = yaml_scalar_of(yaml_map_get(doc, c, "status"));

                if (!streq_ptr(yaml_scalar_of(yaml_map_get(doc, c, "type")), "Ready"))
                        continue;
                n->heartbeat = time_of(doc, c, "lastHeartbeatTime");
                if (status && !n->ready && !(n->ready = strdup(status)))
                        return -ENOMEM;
                return 0;
        }
        return 0;
}

int forget_node_read(yaml_document_t *doc, ForgetNode *ret) {
        yaml_node_t *root = yaml_document_get_root_node(doc), *status = yaml_map_get(doc, root, "status");
        int r;

        r = read_metadata(doc, yaml_map_get(doc, root, "metadata"), ret);
        if (r >= 0)
                r = read_ready(doc, yaml_map_get(doc, status, "conditions"), ret);
        if (r >= 0)
                r = read_strings(doc, yaml_map_get(doc, status, "addresses"), "address", &ret->addresses);
        return r;
}

int forget_lease_read(yaml_document_t *doc, usec_t *ret) {
        yaml_node_t *spec = yaml_map_get(doc, yaml_document_get_root_node(doc), "spec");

        *ret = time_of(doc, spec, "renewTime");
        return *ret > 0 ? 0 : -ENOENT;
}

usec_t forget_node_last_seen(const ForgetNode *n, usec_t renew) {
        usec_t t = n->heartbeat > renew ? n->heartbeat : renew;

        return t > 0 ? t : n->created;
}
