/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/drain/drain-pods.c: a PodList classified as kubectl drain's filters do
 * (kubernetes 1.20 kubectl/pkg/drain/filters.go, filter_test.go's cases). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/phases/drain/drain-pods.h"
#include "macro.h"
#include "string-util.h"

/* What the API server answers to GET /api/v1/pods?fieldSelector=spec.nodeName%3Dw1. */
static const char pods[] =
        "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"9\"},\"items\":["
        /* A ReplicaSet's, with emptyDir data */
        "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"default\",\"uid\":\"u1\",\"ownerReferences\":"
        "[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web\",\"uid\":\"r\",\"controller\":true}]},"
        "\"spec\":{\"volumes\":[{\"name\":\"s\",\"emptyDir\":{}}]},\"status\":{\"phase\":\"Running\"}},"
        /* A running DaemonSet's */
        "{\"metadata\":{\"name\":\"agent-1\",\"namespace\":\"kube-system\",\"uid\":\"u2\",\"ownerReferences\":"
        "[{\"kind\":\"DaemonSet\",\"name\":\"agent\",\"controller\":true}]},\"status\":{\"phase\":\"Running\"}},"
        /* A finished DaemonSet's: no lookup, evicted */
        "{\"metadata\":{\"name\":\"done-1\",\"namespace\":\"default\",\"uid\":\"u3\",\"ownerReferences\":"
        "[{\"kind\":\"DaemonSet\",\"name\":\"gone\",\"controller\":true}]},\"status\":{\"phase\":\"Succeeded\"}},"
        /* A mirror pod (its owner is the Node) */
        "{\"metadata\":{\"name\":\"etcd-w1\",\"namespace\":\"kube-system\",\"uid\":\"u4\",\"annotations\":"
        "{\"kubernetes.io/config.mirror\":\"\"},\"ownerReferences\":[{\"kind\":\"Node\",\"name\":\"w1\","
        "\"controller\":true}]},\"status\":{\"phase\":\"Running\"}},"
        /* An owner that is not the controller manages nothing; no namespace is "default" */
        "{\"metadata\":{\"name\":\"bare-1\",\"uid\":\"u5\",\"ownerReferences\":[{\"kind\":\"ConfigMap\","
        "\"name\":\"x\",\"controller\":false}],\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
        "\"status\":{\"phase\":\"Pending\"}},"
        /* A failed pod with no controller and emptyDir data: finished, evicted */
        "{\"metadata\":{\"name\":\"job-1\",\"namespace\":\"default\",\"uid\":\"u6\"},"
        "\"spec\":{\"volumes\":[{\"name\":\"e\",\"emptyDir\":{}}]},\"status\":{\"phase\":\"Failed\"}},"
        /* A DaemonSet's whose lookup fails, and one whose DaemonSet is gone */
        "{\"metadata\":{\"name\":\"ds-403\",\"namespace\":\"n\",\"uid\":\"u7\",\"ownerReferences\":"
        "[{\"kind\":\"DaemonSet\",\"name\":\"secret\",\"controller\":true}]},\"status\":{\"phase\":\"Running\"}},"
        "{\"metadata\":{\"name\":\"ds-gone\",\"namespace\":\"n\",\"uid\":\"u8\",\"ownerReferences\":"
        "[{\"kind\":\"DaemonSet\",\"name\":\"gone\",\"controller\":true}]},\"status\":{\"phase\":\"Running\"}},"
        /* emptyDir: null is no emptyDir (Go leaves the pointer nil) */
        "{\"metadata\":{\"name\":\"db-1\",\"namespace\":\"default\",\"uid\":\"u9\",\"ownerReferences\":"
        "[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]},"
        "\"spec\":{\"volumes\":[{\"name\":\"e\",\"emptyDir\":null}]},\"status\":{\"phase\":\"Running\"}}"
        "]}";

static unsigned lookups;

/* The DaemonSets: agent exists, gone is NotFound, secret answers 403. */
static int fake_lookup(const char *ns, const char *name, void *userdata, char **reterr) {
        lookups++;
        if (streq(name, "agent"))
                return 1;
        if (streq(name, "gone"))
                return 0;
        *reterr = strdup("HTTP 403: daemonsets.apps \"secret\" is forbidden");
        return -EACCES;
}

static DrainPod *find(DrainPodList *l, const char *ns, const char *name) {
        return (DrainPod *) drain_pod_list_find(l, ns, name);
}

static void classify_all(DrainPodList *l, const DrainOptions *o) {
        lookups = 0;
        for (size_t i = 0; i < l->n; i++)
                assert_int_equal(drain_pod_classify(&l->pods[i], o, fake_lookup, NULL), 0);
}

static void test_parse(void **state) {
        DrainPodList l;
        DrainPod *p;

        assert_int_equal(drain_pods_parse(pods, strlen(pods), &l), 0);
        assert_int_equal(l.n, 9);
        p = find(&l, "default", "web-1");
        assert_string_equal(p->owner_kind, "ReplicaSet");
        assert_string_equal(p->owner_name, "web");
        assert_string_equal(p->uid, "u1");
        assert_true(p->emptydir);
        assert_false(p->deleting);
        p = find(&l, "default", "bare-1");
        assert_non_null(p);
        assert_null(p->owner_kind);
        assert_true(p->deleting);
        assert_true(find(&l, "kube-system", "etcd-w1")->mirror);
        assert_false(find(&l, "default", "db-1")->emptydir);
        assert_null(drain_pod_list_find(&l, "default", "etcd-w1"));
        drain_pod_list_done(&l);
}

/* kubectl drain --ignore-daemonsets, without --force or --delete-emptydir-data. */
static void test_filters_default(void **state) {
        DrainOptions o = {};
        DrainPodList l;
        DrainPod *p;

        assert_int_equal(drain_pods_parse(pods, strlen(pods), &l), 0);
        classify_all(&l, &o);
        /* Running DaemonSet pods only are looked up: agent, secret, gone (done-1 has finished). */
        assert_int_equal(lookups, 3);
        p = find(&l, "default", "web-1");
        assert_int_equal(p->class, DRAIN_REFUSED);
        assert_int_equal(p->refusal, DRAIN_REFUSAL_EMPTYDIR);
        assert_int_equal(find(&l, "kube-system", "agent-1")->class, DRAIN_DAEMONSET);
        assert_int_equal(find(&l, "default", "done-1")->class, DRAIN_EVICT);
        assert_int_equal(find(&l, "kube-system", "etcd-w1")->class, DRAIN_MIRROR);
        assert_int_equal(find(&l, "default", "bare-1")->refusal, DRAIN_REFUSAL_UNMANAGED);
        assert_int_equal(find(&l, "default", "job-1")->class, DRAIN_EVICT);
        /* A lookup that fails with anything but NotFound refuses the drain, even with --force. */
        p = find(&l, "n", "ds-403");
        assert_int_equal(p->class, DRAIN_REFUSED);
        assert_int_equal(p->refusal, DRAIN_REFUSAL_DAEMONSET_LOOKUP);
        assert_non_null(strstr(p->why, "403"));
        assert_int_equal(find(&l, "n", "ds-gone")->refusal, DRAIN_REFUSAL_DAEMONSET_GONE);
        assert_int_equal(find(&l, "default", "db-1")->class, DRAIN_EVICT);
        drain_pod_list_done(&l);
}

static void test_filters_force_emptydir(void **state) {
        DrainOptions o = { .force = true, .delete_emptydir = true };
        cleanup_free char *why = NULL;
        DrainPodList l;
        DrainPod *p;

        assert_int_equal(drain_pods_parse(pods, strlen(pods), &l), 0);
        classify_all(&l, &o);
        assert_int_equal(find(&l, "default", "web-1")->class, DRAIN_EVICT);
        assert_int_equal(find(&l, "default", "bare-1")->class, DRAIN_EVICT);
        p = find(&l, "n", "ds-gone");
        assert_int_equal(p->class, DRAIN_EVICT);
        assert_true(p->owner_gone);
        p = find(&l, "n", "ds-403");
        assert_int_equal(p->refusal, DRAIN_REFUSAL_DAEMONSET_LOOKUP);
        why = drain_refusal_describe(p);
        assert_non_null(strstr(why, "secret"));
        assert_string_equal(drain_refusal_to_string(p->refusal), "daemonset-lookup");
        /* Classified again (the next round of the drain): the same answer, nothing kept from before. */
        assert_int_equal(drain_pod_classify(p, &o, fake_lookup, NULL), 0);
        assert_int_equal(p->refusal, DRAIN_REFUSAL_DAEMONSET_LOOKUP);
        drain_pod_list_done(&l);
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"namespace\":\"x\",\"uid\":\"u\"}}]}",
                "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"a\"}}]}", /* no uid */
                "{\"kind\":\"NodeList\",\"items\":[]}",                               /* not pods */
                "{\"kind\":\"PodList\",\"items\":{}}",
                "<html><body>Kubernetes Dashboard</body></html>",
                "kind: PodList\nitems: []\n", /* YAML is not what the API sends when asked for JSON */
                "",
        };
        static const char empty[] = "{\"kind\":\"PodList\",\"items\":[]}";
        DrainPodList l;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(drain_pods_parse(bad[i], strlen(bad[i]), &l), -EBADMSG);
                assert_int_equal(l.n, 0);
        }
        /* A list with no items is an empty list. */
        assert_int_equal(drain_pods_parse(empty, strlen(empty), &l), 0);
        assert_int_equal(l.n, 0);
        drain_pod_list_done(&l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_filters_default),
                cmocka_unit_test(test_filters_force_emptydir),
                cmocka_unit_test(test_malformed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
