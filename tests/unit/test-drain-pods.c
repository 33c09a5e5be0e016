/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/phases/drain/drain-pods.c: a PodList classified as kubectl drain's filters do. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/phases/drain/drain-pods.h"
#include "macro.h"
#include "string-util.h"

/* What the API server answers to GET /api/v1/pods?fieldSelector=spec.nodeName=w1 (as YAML). */
static const char pods[] =
        "apiVersion: v1\n"
        "kind: PodList\n"
        "items:\n"
        "- metadata: {name: web-1, namespace: default, uid: u1,\n"
        "    ownerReferences: [{kind: ReplicaSet, name: web, controller: true}]}\n"
        "  spec: {volumes: [{name: s, emptyDir: {}}]}\n"
        "  status: {phase: Running}\n"
        "- metadata: {name: agent-1, namespace: kube-system, uid: u2,\n"
        "    ownerReferences: [{kind: DaemonSet, name: agent, controller: true}]}\n"
        "  status: {phase: Running}\n"
        "- metadata: {name: done-1, namespace: default, uid: u3,\n"
        "    ownerReferences: [{kind: DaemonSet, name: agent, controller: true}]}\n"
        "  status: {phase: Succeeded}\n"
        "- metadata: {name: etcd-w1, namespace: kube-system, uid: u4,\n"
        "    annotations: {kubernetes.io/config.mirror: 3f2a},\n"
        "    ownerReferences: [{kind: Node, name: w1, controller: true}]}\n"
        "  status: {phase: Running}\n"
        "- metadata: {name: bare-1, uid: u5,\n"
        "    ownerReferences: [{kind: ConfigMap, name: x}]}\n"
        "  status: {phase: Pending}\n"
        "- metadata: {name: job-1, namespace: default, uid: u6}\n"
        "  status: {phase: Failed}\n";

static void test_classes(void **state) {
        DrainPodList l;
        const DrainPod *p;

        assert_int_equal(drain_pods_parse(pods, strlen(pods), &l), 0);
        assert_int_equal(l.n, 6);
        p = drain_pod_list_find(&l, "default", "web-1");
        assert_non_null(p);
        assert_int_equal(p->class, DRAIN_EVICT);
        assert_string_equal(p->owner, "ReplicaSet/web");
        assert_string_equal(p->uid, "u1");
        assert_true(p->emptydir);
        /* A DaemonSet's pod is skipped while it runs, evicted once it finished. */
        assert_int_equal(drain_pod_list_find(&l, "kube-system", "agent-1")->class, DRAIN_DAEMONSET);
        assert_int_equal(drain_pod_list_find(&l, "default", "done-1")->class, DRAIN_EVICT);
        assert_int_equal(drain_pod_list_find(&l, "kube-system", "etcd-w1")->class, DRAIN_MIRROR);
        /* An owner that is not the controller manages nothing; no namespace is "default". */
        p = drain_pod_list_find(&l, "default", "bare-1");
        assert_non_null(p);
        assert_int_equal(p->class, DRAIN_UNMANAGED);
        assert_null(p->owner);
        assert_false(p->emptydir);
        /* A finished pod goes whatever manages it. */
        assert_int_equal(drain_pod_list_find(&l, "default", "job-1")->class, DRAIN_EVICT);
        assert_null(drain_pod_list_find(&l, "default", "etcd-w1"));
        drain_pod_list_done(&l);
}

/* The same list as the JSON the API server sends without Accept: YAML reads it the same. */
static void test_json(void **state) {
        static const char json[] =
                "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\","
                "\"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"s\",\"controller\":true}]},"
                "\"status\":{\"phase\":\"Running\"}}]}";
        DrainPodList l;

        assert_int_equal(drain_pods_parse(json, strlen(json), &l), 0);
        assert_int_equal(l.n, 1);
        assert_int_equal(l.pods[0].class, DRAIN_EVICT);
        assert_string_equal(l.pods[0].owner, "StatefulSet/s");
        drain_pod_list_done(&l);
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "items: [{metadata: {namespace: x}}]\n", /* a pod without a name */
                "items: [\n",                             /* not YAML */
                "",                                       /* nothing */
        };
        DrainPodList l;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                assert_int_equal(drain_pods_parse(bad[i], strlen(bad[i]), &l), -EBADMSG);
                assert_int_equal(l.n, 0);
        }
        /* A list with no items is an empty list. */
        assert_int_equal(drain_pods_parse("kind: PodList\nitems: []\n", 24, &l), 0);
        assert_int_equal(l.n, 0);
        drain_pod_list_done(&l);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_classes),
                cmocka_unit_test(test_json),
                cmocka_unit_test(test_malformed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
