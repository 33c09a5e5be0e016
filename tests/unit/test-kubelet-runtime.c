/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/config/kubelet-runtime.c (kubelet's runtime flags from argv, environment files
 * and unit files; k3s's --docker) and agent/os/docker-api.c's reading of the Engine API's answers. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/envfile.h"
#include "agent/config/unit-file.h"
#include "agent/config/kubelet-runtime.h"
#include "agent/os/docker-api.h"
#include "macro.h"
#include "string-util.h"
#include "strv.h"

static KubeletRuntime of_env(const char *text) {
        cleanup_strv char **argv = NULL;

        assert_int_equal(kubelet_env_argv(text, strlen(text), &argv), 0);
        return kubelet_runtime_of_argv(argv);
}

/* kubeadm 1.20's kubeadm-flags.env on a dockershim worker names no runtime; every other criSocket
 * gives --container-runtime=remote and the endpoint (cmd/kubeadm/app/phases/kubelet/flags.go). */
static void test_env_flags(void **state) {
        cleanup_strv char **argv = NULL;

        assert_int_equal(of_env("KUBELET_KUBEADM_ARGS=\"--network-plugin=cni "
                                "--pod-infra-container-image=k8s.gcr.io/pause:3.2\"\n"),
                         KUBELET_RUNTIME_UNSAID);
        assert_int_equal(of_env("KUBELET_KUBEADM_ARGS=\"--container-runtime=remote "
                                "--container-runtime-endpoint=/run/containerd/containerd.sock\"\n"),
                         KUBELET_RUNTIME_REMOTE);
        assert_int_equal(of_env("KUBELET_EXTRA_ARGS='--container-runtime docker'\n"), KUBELET_RUNTIME_DOCKER);
        assert_int_equal(of_env("KUBELET_KUBEADM_ARGS=--container-runtime-endpoint=unix:///var/run/dockershim.sock\n"),
                         KUBELET_RUNTIME_DOCKER);
        /* A comment, and a variable that is not kubelet's command line, say nothing. */
        assert_int_equal(of_env("# KUBELET_KUBEADM_ARGS=--container-runtime=remote\n"
                                "DOCKER_OPTS=--container-runtime=remote\n"),
                         KUBELET_RUNTIME_UNSAID);
        /* The endpoint decides over --container-runtime, whichever comes first. */
        assert_int_equal(of_env("KUBELET_KUBEADM_ARGS=\"--container-runtime-endpoint=unix:///run/crio/crio.sock "
                                "--container-runtime=docker\"\n"),
                         KUBELET_RUNTIME_REMOTE);
        assert_int_equal(kubelet_env_argv("KUBELET_ARGS=\"unterminated\n", 25, &argv), -EBADMSG);
}

/* The variables kubelet's units expand into its argv: KUBELET_ and ARGS around a name, with a value. */
static void test_env_is_args(void **state) {
        assert_true(kubelet_env_is_args("KUBELET_ARGS=--pod-cidr=10.0.0.0/16"));
        assert_true(kubelet_env_is_args("KUBELET_KUBEADM_ARGS="));
        assert_true(kubelet_env_is_args("KUBELET_EXTRA_ARGS=a=b"));
        assert_false(kubelet_env_is_args("KUBELET_ARGS"));
        assert_false(kubelet_env_is_args("KUBELET_ARG=x"));
        assert_false(kubelet_env_is_args("KUBELET_ARGSX=x"));
        assert_false(kubelet_env_is_args("DOCKER_ARGS=x"));
        assert_false(kubelet_env_is_args("KUBELET_CONFIG=ARGS=x"));
}

static int exec_start(const char *text, char ***argv) {
        return unit_exec_start_argv(text, strlen(text), argv);
}

static void test_unit_exec_start(void **state) {
        cleanup_strv char **argv = NULL, **none = NULL, **other = NULL;

        /* The drop-in's reset, then its own command; a continuation line; comments. */
        assert_int_equal(exec_start("[Unit]\nExecStart=/bin/false\n[Service]\nExecStart=/usr/bin/kubelet --old\n"
                                    "# ExecStart=/usr/bin/kubelet --container-runtime=remote\n"
                                    "ExecStart=\n"
                                    "ExecStart=-/usr/bin/kubelet $KUBELET_KUBEADM_ARGS \\\n"
                                    "  --container-runtime=docker\n",
                                    &argv),
                         1);
        assert_string_equal(argv[0], "/usr/bin/kubelet");
        assert_string_equal(argv[1], "$KUBELET_KUBEADM_ARGS");
        assert_int_equal(kubelet_runtime_of_argv(argv), KUBELET_RUNTIME_DOCKER);
        /* No ExecStart in [Service] (one in another section does not count). */
        assert_int_equal(exec_start("[Unit]\nExecStart=/usr/bin/kubelet\n[Service]\nRestart=always\n", &none), 0);
        assert_null(none);
        /* A reset at the end leaves nothing. */
        assert_int_equal(exec_start("[Service]\nExecStart=/usr/bin/kubelet\nExecStart=\n", &other), 0);
}

static void test_k3s_argv(void **state) {
        char *docker[] = { (char *) "/usr/local/bin/k3s", (char *) "server", (char *) "--docker", NULL };
        char *after[] = { (char *) "k3s", (char *) "agent", (char *) "--", (char *) "--docker", NULL };
        char *plain[] = { (char *) "k3s", (char *) "server", (char *) "--docker-registry", NULL };

        assert_true(k3s_argv_docker(docker));
        assert_false(k3s_argv_docker(after));
        assert_false(k3s_argv_docker(plain));
}

/* An answer as dockerd 20.10 gives it (trimmed), with a sandbox, a container, a container with a
 * dockershim label but no k8s_ name, a container whose name has dockershim's random suffix. */
static const char containers_json[] =
        "[{\"Id\":\"a5fc68fa233de58405a2471b10a21d7092d8ae9b852bc05836eabe12488d2950\","
        "\"Names\":[\"/k8s_app_web_default_u1_0\"],\"State\":\"running\",\"Labels\":{"
        "\"io.kubernetes.docker.type\":\"container\",\"io.kubernetes.pod.uid\":\"u1\","
        "\"io.kubernetes.pod.name\":\"web\",\"io.kubernetes.pod.namespace\":\"default\","
        "\"io.kubernetes.container.name\":\"app\"},\"Mounts\":[]},"
        "{\"Id\":\"d4a7fce6186f\",\"Names\":[\"/k8s_POD_web_default_u1_0\"],\"State\":\"exited\",\"Labels\":{"
        "\"io.kubernetes.docker.type\":\"podsandbox\",\"io.kubernetes.pod.uid\":\"u1\"}},"
        "{\"Id\":\"0011\",\"Names\":[\"/decoy\"],\"Labels\":{\"io.kubernetes.docker.type\":\"container\","
        "\"io.kubernetes.pod.uid\":\"x\"}},"
        "{\"Id\":\"0022\",\"Names\":[\"/k8s_app_web_default_u1_1_1a2b3c4d\"],\"Labels\":{"
        "\"io.kubernetes.docker.type\":\"container\",\"io.kubernetes.pod.uid\":\"u1\"}},"
        "{\"Id\":\"0033\",\"Names\":[\"/k8s_POD_web_default_u1_0\"],\"Labels\":{"
        "\"io.kubernetes.docker.type\":\"container\",\"io.kubernetes.pod.uid\":\"u1\"}},"
        "{\"Id\":\"0044\",\"Names\":[\"/k8s_app_web_default_u1_0\"],\"Labels\":null}]";

static void test_containers_parse(void **state) {
        DockerContainer *c = NULL;
        size_t n = 0;

        assert_int_equal(docker_containers_parse(containers_json, strlen(containers_json), &c, &n), 0);
        assert_int_equal(n, 6);
        assert_string_equal(c[0].name, "k8s_app_web_default_u1_0");
        assert_string_equal(c[0].state, "running");
        assert_string_equal(c[0].pod_namespace, "default");
        assert_string_equal(c[0].container_name, "app");
        assert_true(docker_container_is_kubernetes(&c[0]));
        assert_false(docker_container_is_sandbox(&c[0]));
        assert_true(docker_container_is_kubernetes(&c[1]));
        assert_true(docker_container_is_sandbox(&c[1]));
        assert_false(docker_container_is_kubernetes(&c[2])); /* no k8s_ name */
        assert_true(docker_container_is_kubernetes(&c[3]));  /* dockershim's random suffix */
        assert_false(docker_container_is_kubernetes(&c[4])); /* a k8s_POD_ name typed as a container */
        assert_false(docker_container_is_kubernetes(&c[5])); /* no labels at all */
        docker_containers_free(c, n);

        assert_int_equal(docker_containers_parse("[]", 2, &c, &n), 0);
        assert_int_equal(n, 0);
        docker_containers_free(c, n);
        assert_int_equal(docker_containers_parse("{\"message\":\"x\"}", 15, &c, &n), -EBADMSG);
        assert_int_equal(docker_containers_parse("[{\"Names\":[\"/k8s_a_b_c_d_0\"]}]", 30, &c, &n), -EBADMSG);
        assert_int_equal(docker_containers_parse("[{\"Id\":\"1\",\"Labels\":[]}]", 24, &c, &n), -EBADMSG);
        assert_int_equal(docker_containers_parse("[{\"Id\":\"1\"", 10, &c, &n), -EBADMSG);
}

static void test_version_parse(void **state) {
        static const char v[] = "{\"Platform\":{\"Name\":\"\"},\"Version\":\"20.10.24+dfsg1\",\"ApiVersion\":\"1.41\","
                                "\"MinAPIVersion\":\"1.12\"}";
        DockerVersion d;

        assert_int_equal(docker_version_parse(v, strlen(v), &d), 0);
        assert_string_equal(d.version, "20.10.24+dfsg1");
        assert_string_equal(d.api, "1.41");
        assert_string_equal(d.min_api, "1.12");
        docker_version_done(&d);
        assert_int_equal(docker_version_parse("{}", 2, &d), -EBADMSG);
        assert_null(d.version);
        assert_int_equal(docker_version_parse("not json", 8, &d), -EBADMSG);
}

/* The API version spoken, as Docker's client negotiates it, raised to the engine's minimum. */
static void test_api_negotiate(void **state) {
        char api[DOCKER_API_MAX];

        /* Docker 20.10: 1.12-1.41, ours is in. */
        assert_int_equal(
                docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.41", .min_api = (char *) "1.12" }, api), 0);
        assert_string_equal(api, "1.24");
        /* Docker 29: 1.44-1.52, ours is refused ("client version 1.24 is too old"): its minimum. */
        assert_int_equal(
                docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.52", .min_api = (char *) "1.44" }, api), 0);
        assert_string_equal(api, "1.44");
        /* An engine before API 1.25 says no minimum. */
        assert_int_equal(docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.24" }, api), 0);
        assert_string_equal(api, "1.24");
        /* Older than 1.24 (Docker 1.11): no label filter. */
        assert_int_equal(docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.23" }, api), -EPROTONOSUPPORT);
        /* Not versions at all. */
        assert_int_equal(docker_api_negotiate(&(DockerVersion) { .api = (char *) "latest" }, api), -EBADMSG);
        assert_int_equal(
                docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.41", .min_api = (char *) "1." }, api),
                -EBADMSG);
        assert_int_equal(docker_api_negotiate(&(DockerVersion) { .api = (char *) "1.41/x" }, api), -EBADMSG);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_env_flags),        cmocka_unit_test(test_env_is_args),
                cmocka_unit_test(test_unit_exec_start),  cmocka_unit_test(test_k3s_argv),
                cmocka_unit_test(test_containers_parse), cmocka_unit_test(test_version_parse),
                cmocka_unit_test(test_api_negotiate),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
