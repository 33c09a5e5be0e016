/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/kube/kube-api.c: names escaped as path segments (client-go's request builder),
 * and answers that are none of the API's refused before any caller reads them. */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/kube/kube-api.h"
#include "macro.h"
#include "string-util.h"

static void test_path(void **state) {
        cleanup_free char *p = NULL, *q = NULL, *e = NULL;

        assert_int_equal(kube_api_path(&p, NULL, "api", "v1", "nodes", "w1", NULL), 0);
        assert_string_equal(p, "/api/v1/nodes/w1");
        /* A name is one segment, whatever it holds: no query, no fragment, no other path. */
        assert_int_equal(kube_api_path(&q, "a=b", "apis", "apps", "v1", "daemonsets", "x?watch=1#f ", NULL), 0);
        assert_string_equal(q, "/apis/apps/v1/daemonsets/x%3Fwatch%3D1%23f%20?a=b");
        /* Refused as client-go's IsValidPathSegmentName refuses them. */
        free(p), p = NULL;
        assert_int_equal(kube_api_path(&p, NULL, "api", "..", NULL), -EINVAL);
        assert_int_equal(kube_api_path(&p, NULL, "api", ".", NULL), -EINVAL);
        assert_int_equal(kube_api_path(&p, NULL, "api", "../../healthz", NULL), -EINVAL);
        assert_int_equal(kube_api_path(&p, NULL, "api", "a%2f", NULL), -EINVAL);
        assert_int_equal(kube_api_path(&p, NULL, "api", "", NULL), -EINVAL);
        assert_null(p);
        e = kube_api_escape("spec.nodeName=w1&x");
        assert_string_equal(e, "spec.nodeName%3Dw1%26x");
}

/* An answer as kube_api_request() receives it. */
static HttpResult answer(long status, const char *type, const char *body) {
        HttpResult r = { .code = CURLE_OK, .status = status, .body = (char *) body, .body_size = strlen(body) };

        snprintf(r.content_type, sizeof r.content_type, "%s", type);
        return r;
}

static bool accepted(const KubeRequest *req, long status, const char *type, const char *body) {
        HttpResult r = answer(status, type, body);

        assert_int_equal(kube_api_check_answer(req, &r), 0);
        return kube_api_answered(&r);
}

static void test_answers(void **state) {
        const KubeRequest node = { .path = "/api/v1/nodes/w1", .kind = "Node", .api_version = "v1" };
        const KubeRequest del = { .method = "DELETE", .path = "/api/v1/nodes/w1", .kind = "Node", .api_version = "v1" };
        const char *json = "application/json";
        HttpResult r;

        assert_true(accepted(&node, 200, json, "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"spec\":{}}"));
        assert_true(
                accepted(&node, 200, "application/json; charset=utf-8", "{\"kind\":\"Node\",\"apiVersion\":\"v1\"}"));
        assert_true(
                accepted(&node, 404, json,
                         "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\","
                         "\"code\":404}"));
        assert_true(accepted(&del, 200, json, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\"}"));
        /* A dashboard's or a default backend's page, at 200 or 404, is no answer. */
        assert_false(accepted(&node, 200, "text/html", "<html>Kubernetes Dashboard</html>"));
        assert_false(accepted(&node, 200, json, "<html>Kubernetes Dashboard</html>"));
        assert_false(accepted(&node, 404, "text/plain; charset=utf-8", "404 page not found"));
        assert_false(accepted(&node, 404, json, "{\"error\":\"not found\"}"));
        /* Other objects, other versions, a Status to a GET, a list, no kind, a repeated member. */
        assert_false(accepted(&node, 200, json, "{\"kind\":\"NodeList\",\"apiVersion\":\"v1\",\"items\":[]}"));
        assert_false(accepted(&node, 200, json, "{\"kind\":\"Node\",\"apiVersion\":\"v2\"}"));
        assert_false(accepted(&node, 200, json, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\"}"));
        assert_false(accepted(&del, 200, json, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\"}"));
        assert_false(accepted(&node, 200, json, "{\"apiVersion\":\"v1\"}"));
        assert_false(accepted(&node, 200, json, "[]"));
        assert_false(accepted(&node, 200, json,
                              "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"spec\":{\"unschedulable\":true,"
                              "\"unschedulable\":false}}"));
        /* The words say what came, and what was asked for. */
        r = answer(200, "text/html", "<html></html>");
        assert_int_equal(kube_api_check_answer(&node, &r), 0);
        assert_int_equal(r.code, CURLE_WEIRD_SERVER_REPLY);
        assert_non_null(strstr(r.error, "text/html"));
        assert_non_null(strstr(r.error, "v1 Node"));
        /* A body cut short is none either; a transfer that failed is left as it is. */
        r = answer(200, json, "{\"kind\":\"Node\",\"apiVersion\":\"v1\"}");
        r.truncated = true;
        assert_int_equal(kube_api_check_answer(&node, &r), 0);
        assert_false(kube_api_answered(&r));
        r = (HttpResult) { .code = CURLE_COULDNT_CONNECT };
        assert_int_equal(kube_api_check_answer(&node, &r), 0);
        assert_int_equal(r.code, CURLE_COULDNT_CONNECT);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_path),
                cmocka_unit_test(test_answers),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
