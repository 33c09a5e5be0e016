/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for agent/base/path.c: validation, simplification, component-wise glob matching, joins. */

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/base/path.h"
#include "macro.h"
#include "string-util.h"

static void check_simplify(const char *in, const char *out) {
        cleanup_free char *p = strdup(in);

        assert_non_null(p);
        assert_ptr_equal(path_simplify(p), p);
        assert_string_equal(p, out);
}

static void test_simplify(void **state) {
        check_simplify("/a//b/", "/a/b");
        check_simplify("/", "/");
        check_simplify("//", "/");
        check_simplify("///a///", "/a");
        check_simplify("", "");
        check_simplify("a//b/", "a/b");
        check_simplify("/var/lib/kubelet", "/var/lib/kubelet");
        /* Only slashes: "." and ".." are left for validation to refuse. */
        check_simplify("/a/./b/../c/", "/a/./b/../c");
}

static void test_depth(void **state) {
        assert_int_equal(path_depth("/"), 0);
        assert_int_equal(path_depth(""), 0);
        assert_int_equal(path_depth("/a"), 1);
        assert_int_equal(path_depth("/a/b"), 2);
        assert_int_equal(path_depth("//a//b/"), 2);
        assert_int_equal(path_depth("/var/lib/kubelet/pods"), 4);
}

static void test_glob(void **state) {
        assert_true(path_component_is_glob("*"));
        assert_true(path_component_is_glob("cali[a-f0-9]*"));
        assert_true(path_component_is_glob("a?c"));
        assert_true(path_component_is_glob("[x"));
        assert_false(path_component_is_glob("kubelet"));
        assert_false(path_component_is_glob(""));
        assert_true(path_is_glob("/run/netns/cni-*"));
        assert_false(path_is_glob("/run/netns/cni-1"));
}

static void check_validate(int (*f)(const char *, char **), const char *path, const char *reason) {
        cleanup_free char *err = NULL;
        int r = f(path, &err);

        if (!reason) {
                assert_int_equal(r, 0);
                assert_null(err);
                return;
        }
        assert_int_equal(r, -EINVAL);
        assert_non_null(err);
        assert_string_equal(err, reason);
}

static void test_validate_absolute(void **state) {
        check_validate(path_validate_absolute, "/data", NULL);
        check_validate(path_validate_absolute, "/", NULL);
        check_validate(path_validate_absolute, "/etc", NULL);
        check_validate(path_validate_absolute, "/*", NULL);
        check_validate(path_validate_absolute, "/var/.hidden/...", NULL);
        check_validate(path_validate_absolute, "", "needs an absolute path, got an empty one");
        check_validate(path_validate_absolute, "data/x", "needs an absolute path, got 'data/x'");
        check_validate(path_validate_absolute, "/a/../etc", "refuses '.' and '..' components, got '/a/../etc'");
        check_validate(path_validate_absolute, "/a/.", "refuses '.' and '..' components, got '/a/.'");
        check_validate(path_validate_absolute, "/./a", "refuses '.' and '..' components, got '/./a'");
        check_validate(path_validate_absolute, "/a//b",
                       "needs a path without empty components or trailing '/', got '/a//b'");
        check_validate(path_validate_absolute, "/a/",
                       "needs a path without empty components or trailing '/', got '/a/'");
        /* A NULL reterr is allowed: only the verdict is wanted. */
        assert_int_equal(path_validate_absolute("x", NULL), -EINVAL);
}

static void test_validate_target(void **state) {
        check_validate(path_validate_target, "/", "refuses the root directory '/'");
        check_validate(path_validate_target, "/e*", "refuses a glob in the first component, got '/e*'");
        check_validate(path_validate_target, "/*", "refuses a glob in the first component, got '/*'");
        check_validate(path_validate_target, "/[e]tc/x", "refuses a glob in the first component, got '/[e]tc/x'");
        check_validate(path_validate_target, "/?tc", "refuses a glob in the first component, got '/?tc'");
        check_validate(path_validate_target, "etc/kubernetes", "needs an absolute path, got 'etc/kubernetes'");
        check_validate(path_validate_target, "/etc/..", "refuses '.' and '..' components, got '/etc/..'");
        check_validate(path_validate_target, "/etc/",
                       "needs a path without empty components or trailing '/', got '/etc/'");
        /* Deeper paths, globs below the first component and non-system top-level names are fine. */
        check_validate(path_validate_target, "/etc/kubernetes", NULL);
        check_validate(path_validate_target, "/var/lib/kubelet/*", NULL);
        check_validate(path_validate_target, "/run/netns/cni-*", NULL);
        check_validate(path_validate_target, "/etcd", NULL);
        check_validate(path_validate_target, "/usr2", NULL);
        check_validate(path_validate_target, "/k8s", NULL);
        check_validate(path_validate_target, "/etc/*", NULL);
        /* The system paths are the guard's, not this function's. */
        check_validate(path_validate_target, "/etc", NULL);
}

static void test_pattern_match(void **state) {
        assert_true(path_pattern_match("/var/lib/kubelet/*", "/var/lib/kubelet/pods"));
        assert_false(path_pattern_match("/var/lib/kubelet/*", "/var/lib/kubelet/pods/x"));
        assert_false(path_pattern_match("/var/lib/kubelet/*", "/var/lib/kubelet"));
        /* Flags 0: '*' and '?' match a leading dot. */
        assert_true(path_pattern_match("/var/lib/kubelet/*", "/var/lib/kubelet/.hidden"));
        assert_true(path_pattern_match("/a/?x", "/a/.x"));
        /* Character classes, as in "every cali<hex> link". */
        assert_true(path_pattern_match("/sys/class/net/cali[a-f0-9]*", "/sys/class/net/cali0a1b2c3d4e5"));
        assert_true(path_pattern_match("/sys/class/net/cali[a-f0-9]*", "/sys/class/net/calif"));
        assert_false(path_pattern_match("/sys/class/net/cali[a-f0-9]*", "/sys/class/net/caliz0"));
        assert_false(path_pattern_match("/sys/class/net/cali[a-f0-9]*", "/sys/class/net/cali"));
        assert_true(path_pattern_match("/x/[!a]b", "/x/cb"));
        assert_false(path_pattern_match("/x/[!a]b", "/x/ab"));
        /* '*' never crosses a '/', not even inside a bracket expression. */
        assert_false(path_pattern_match("/a*", "/a/b"));
        assert_false(path_pattern_match("/a[/]b", "/a/b"));
        /* A backslash is an ordinary character (FNM_NOESCAPE); a one-character class quotes. */
        assert_false(path_pattern_match("/a/\\*", "/a/*"));
        assert_true(path_pattern_match("/a/\\*", "/a/\\b"));
        assert_true(path_pattern_match("/a/[*]", "/a/*"));
        assert_false(path_pattern_match("/a/[*]", "/a/b"));
        /* Literal paths, and spelling differences that are not differences. */
        assert_true(path_pattern_match("/etc/kubernetes", "/etc/kubernetes"));
        assert_false(path_pattern_match("/etc/kubernetes", "/etc/kubernetes2"));
        assert_true(path_pattern_match("/a//b/", "/a/b"));
        assert_true(path_pattern_match("/", "/"));
        assert_false(path_pattern_match("/", "/a"));
        assert_false(path_pattern_match("/*", "/"));
        assert_true(path_pattern_match("/run/netns/cni-*", "/run/netns/cni-1234-abcd"));
        assert_false(path_pattern_match("/run/netns/cni-*", "/run/netns/cilium-1"));
}

static void test_pattern_match_long(void **state) {
        char path[PATH_MAX + 64];

        /* Components longer than PATH_MAX take the heap fallback and still match correctly. */
        path[0] = '/';
        memset(path + 1, 'a', sizeof(path) - 2);
        path[sizeof(path) - 1] = 0;
        assert_true(path_pattern_match("/*", path));
        assert_true(path_pattern_match("/a*a", path));
        assert_false(path_pattern_match("/b*", path));
        assert_true(path_pattern_match(path, path));
        assert_true(path_pattern_covers("/a*", path));
}

static void test_pattern_covers(void **state) {
        assert_true(path_pattern_covers("/var/lib/kubelet/*", "/var/lib/kubelet/pods/x/y"));
        assert_true(path_pattern_covers("/var/lib/kubelet/*", "/var/lib/kubelet/pods"));
        assert_false(path_pattern_covers("/var/lib/kubelet/*", "/var/lib/kubelet"));
        assert_false(path_pattern_covers("/var/lib/kubelet/*", "/var/lib"));
        assert_false(path_pattern_covers("/var/lib/kubelet/*", "/var/lib/other/pods"));
        assert_true(path_pattern_covers("/data", "/data"));
        assert_true(path_pattern_covers("/data", "/data/a/b"));
        /* Component-wise: a common string prefix is not an ancestor. */
        assert_false(path_pattern_covers("/data", "/database"));
        assert_false(path_pattern_covers("/data", "/"));
        /* "/" covers everything. */
        assert_true(path_pattern_covers("/", "/"));
        assert_true(path_pattern_covers("/", "/var/lib"));
        assert_true(path_pattern_covers("/var/lib/kubelet/pods/*/volumes",
                                        "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~csi/pv"));
        assert_false(path_pattern_covers("/var/lib/kubelet/pods/*/volumes", "/var/lib/kubelet/pods/u1/plugins"));
}

static void test_pattern_below(void **state) {
        const char *pat = "/var/lib/kubelet/pods/*/volumes";

        assert_true(path_pattern_below(pat, "/"));
        assert_true(path_pattern_below(pat, "/var"));
        assert_true(path_pattern_below(pat, "/var/lib/kubelet"));
        assert_true(path_pattern_below(pat, "/var/lib/kubelet/pods"));
        assert_true(path_pattern_below(pat, "/var/lib/kubelet/pods/u1"));
        /* A match is not a proper ancestor of a match. */
        assert_false(path_pattern_below(pat, "/var/lib/kubelet/pods/u1/volumes"));
        assert_false(path_pattern_below(pat, "/var/lib/kubelet/pods/u1/volumes/x"));
        assert_false(path_pattern_below(pat, "/var/lib/other"));
        assert_false(path_pattern_below(pat, "/var/lib/kubelet/plugins"));
        assert_false(path_pattern_below("/", "/"));
        assert_false(path_pattern_below("/data", "/data"));
        assert_true(path_pattern_below("/data", "/"));
        assert_true(path_pattern_below("/d*/x", "/data"));
        assert_false(path_pattern_below("/d*/x", "/etc"));
}

static void check_join(const char *root, const char *path, const char *want) {
        cleanup_free char *j = path_join_root(root, path);

        assert_non_null(j);
        assert_string_equal(j, want);
}

static void test_join_root(void **state) {
        check_join("/", "/etc", "/etc");
        check_join("/tmp/r", "/etc", "/tmp/r/etc");
        check_join("/tmp/r", "/", "/tmp/r");
        check_join("/tmp/r/", "/etc/kubernetes", "/tmp/r/etc/kubernetes");
        check_join("/", "/", "/");
        check_join("", "/etc", "/etc");
        check_join("/tmp/r", "etc", "/tmp/r/etc");
}

/* One rule for every directive (issue 15, hole 3): what "remove" reaches by a literal name,
 * "protect" (covers/below), "unmount" (covers) and "process" (match) reach by the same spelling.
 * One check per metacharacter, and one per literal name that contains it. */
static void test_rule_star(void **state) {
        assert_true(path_pattern_match("/x/a*", "/x/abc"));
        assert_true(path_pattern_match("/x/a*", "/x/a"));
        assert_false(path_pattern_match("/x/a*", "/x/ba"));
        /* A name with a literal '*': the glob "a*b" would take "axb" too; "[*]" names the one. */
        assert_true(path_pattern_match("/x/a[*]b", "/x/a*b"));
        assert_false(path_pattern_match("/x/a[*]b", "/x/axb"));
        assert_true(path_pattern_covers("/x/a[*]b", "/x/a*b/data"));
}

static void test_rule_question(void **state) {
        assert_true(path_pattern_match("/x/a?c", "/x/abc"));
        assert_false(path_pattern_match("/x/a?c", "/x/ac"));
        assert_true(path_pattern_match("/x/a[?]c", "/x/a?c"));
        assert_false(path_pattern_match("/x/a[?]c", "/x/abc"));
        assert_true(path_pattern_covers("/x/a[?]c", "/x/a?c/data"));
}

static void test_rule_bracket(void **state) {
        assert_true(path_pattern_match("/x/cali[0-9a-f]*", "/x/cali0f"));
        assert_false(path_pattern_match("/x/cali[0-9a-f]*", "/x/caliz"));
        assert_true(path_pattern_match("/x/[!a]b", "/x/cb"));
        /* A name with a literal '[': "[[]" is a class holding '['; ']' alone is ordinary. */
        assert_true(path_pattern_match("/x/[[]v1]", "/x/[v1]"));
        assert_false(path_pattern_match("/x/[[]v1]", "/x/v"));
        assert_true(path_pattern_match("/x/v1]", "/x/v1]"));
        assert_true(path_pattern_covers("/x/[[]v1]", "/x/[v1]/data"));
}

static void test_rule_backslash(void **state) {
        /* A backslash is an ordinary character, in a literal path and in a glob alike. */
        assert_true(path_name_match("a\\b", "a\\b"));
        assert_false(path_name_match("a\\b", "ab"));
        assert_true(path_name_match("foo\\x2dbar", "foo\\x2dbar"));
        assert_false(path_name_match("foo\\x2dbar", "foox2dbar"));
        assert_true(path_name_match("foo\\x2d*", "foo\\x2dbar.mount"));
        assert_true(path_name_match("a\\*", "a\\"));
        assert_false(path_name_match("a\\*", "a*"));
        assert_true(path_pattern_match("/var/lib/kubelet/a\\b", "/var/lib/kubelet/a\\b"));
        assert_false(path_pattern_match("/var/lib/kubelet/a\\b", "/var/lib/kubelet/ab"));
        assert_true(path_pattern_match("/etc/systemd/system/foo\\x2dbar.mount",
                                       "/etc/systemd/system/foo\\x2dbar.mount"));
}

/* The regression of hole 3: "protect /var/lib/kubelet/a\b" protected nothing while "remove" of the
 * same spelling removed that directory. The walk asks "covers" of every entry (keep it whole) and
 * "below" of every ancestor (go in, keep what is protected): both must answer for the backslash
 * name, and for the systemd-escaped one, so removing /var/lib/kubelet keeps them. */
static void test_protect_backslash(void **state) {
        const char *p = "/var/lib/kubelet/a\\b", *u = "/var/lib/kubelet/pods/foo\\x2dbar";

        assert_true(path_pattern_covers(p, "/var/lib/kubelet/a\\b"));
        assert_true(path_pattern_covers(p, "/var/lib/kubelet/a\\b/data"));
        assert_false(path_pattern_covers(p, "/var/lib/kubelet/ab"));
        assert_true(path_pattern_below(p, "/var/lib/kubelet"));
        assert_true(path_pattern_below(p, "/var/lib"));
        assert_false(path_pattern_below(p, "/var/lib/kubelet/a\\b"));
        assert_true(path_pattern_covers(u, "/var/lib/kubelet/pods/foo\\x2dbar/volumes"));
        assert_true(path_pattern_below(u, "/var/lib/kubelet/pods"));
        assert_true(path_pattern_covers("/var/lib/kubelet/pods/*\\x2d*", u));
}

static void check_guard(const char *pattern, int want_r, const char *want_reason) {
        cleanup_free char *err = NULL;

        assert_int_equal(path_guard_check(pattern, &err), want_r);
        if (!want_reason) {
                assert_null(err);
                return;
        }
        assert_non_null(err);
        if (!strstr(err, want_reason))
                fail_msg("'%s': '%s' does not say '%s'", pattern, err, want_reason);
}

/* Hole 4: every example of the issue is refused, literal ones (-EPERM: an opt-in may name them)
 * and globs (-EINVAL: no opt-in, a glob cannot name an exact path). */
static void test_guard_issue_examples(void **state) {
        static const char *const literal[] = {
                "/etc", "/usr", "/var/lib", "/usr/bin", "/usr/lib", "/lib/modules", "/etc/ssh", "/lost+found",
                "/var", "/var/log", "/var/cache", "/usr/sbin", "/usr/share", "/usr/local", "/usr/local/bin",
                "/bin", "/sbin", "/lib", "/lib64", "/boot", "/home", "/root", "/opt", "/srv", "/run", "/tmp",
                "/proc", "/sys", "/dev", "/etc/systemd", "/etc/passwd", "/etc/shadow", "/etc/hostname",
                "/home/alice", "/root/.ssh", "/home/alice/.ssh", "/lib/modules/6.1.0-13-amd64", "/boot/vmlinuz",
        };

        for (size_t i = 0; i < ELEMENTSOF(literal); i++) {
                cleanup_free char *want = NULL;

                assert_true(asprintf(&want, "refuses the system path '%s'", literal[i]) > 0);
                check_guard(literal[i], -EPERM, want);
                assert_true(path_is_guarded(literal[i]));
        }
        check_guard("/etc/*", -EINVAL, "refuses '/etc/*': the glob could match the system path '/etc/");
        check_guard("/usr/*", -EINVAL, "refuses '/usr/*': the glob could match the system path '/usr/");
        check_guard("/var/*", -EINVAL, "refuses '/var/*': the glob could match the system path '/var/");
        check_guard("/root/*", -EINVAL, "refuses '/root/*': the glob could match the system path '/root/");
        check_guard("/home/*", -EINVAL, "the glob could match the system path '/home/*'");
        check_guard("/usr/l*", -EINVAL, "the glob could match the system path '/usr/lib");
        check_guard("/etc/s*", -EINVAL, "the glob could match the system path '/etc/s");
        check_guard("/usr/*/bin", -EINVAL, "the glob could match the system path '/usr/local/bin'");
        check_guard("/usr/*/modules", -EINVAL, "the glob could match the system path '/usr/lib/modules'");
        check_guard("/home/*/.s*", -EINVAL, "the glob could match the system path '/home/*/.ssh'");
        /* Rule 2: a last-component glob without a literal start right beneath a system directory. */
        check_guard("/usr/local/bin/*", -EINVAL,
                    "a glob right beneath the system directory '/usr/local/bin' could match every entry");
        check_guard("/etc/systemd/system/*.service", -EINVAL, "the system directory '/etc/systemd/system'");
        check_guard("/var/lib/?ubelet", -EINVAL, "the system directory '/var/lib'");
        check_guard("/var/lib/[k]ubelet", -EINVAL, "the system directory '/var/lib'");
        check_guard("/home/alice/*", -EINVAL, "the glob could match the system path '/home/*/.ssh'");
        check_guard("/home/alice/?x", -EINVAL, "the system directory '/home/alice' could match every entry");
        check_guard("/usr/l*/*", -EINVAL, "could match");
        check_guard("/srv/*", -EINVAL, "a glob right beneath the system directory '/srv' could match every entry");
        /* A path that does not exist yet is judged by its name alone. */
        check_guard("/lib/modules/*", -EINVAL, "the glob could match the system path '/lib/modules/*'");
}

/* What the shipped manifests do stays allowed: beneath a system directory, named or prefix-anchored. */
static void test_guard_allowed(void **state) {
        static const char *const ok[] = {
                "/etc/kubernetes", "/etc/cni/net.d", "/var/lib/kubelet", "/var/lib/kubelet/*",
                "/usr/local/bin/kubelet", "/etc/systemd/system/kubelet.service.d", "/root/.kube",
                "/root/.config/helm", "/root/.local/share/helm", "/etc/modules-load.d/kube*",
                "/etc/sysctl.d/99-kubernetes*", "/etc/ssl/etcd", "/run/netns/cni-*", "/var/run/netns/cni-*",
                "/run/containerd/io.containerd.*", "/usr/local/bin/kube*", "/var/lib/etcd/*", "/tmp/kubekey",
                "/opt/cni", "/var/lib/rancher/k3s/agent/containerd/*", "/etc/kube*", "/var/l*/kubelet",
                "/home/*/.kube", "/usr/*/x", "/etcd", "/usr2", "/etc/ssh2", "/var/lib/kubelet/a\\b", "/srv/custom",
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++)
                check_guard(ok[i], 0, NULL);
        assert_false(path_is_guarded("/etc/kubernetes"));
        assert_false(path_is_guarded("/"));
        /* A glob is never "guarded" in the opt-in's sense: it cannot be allowed. */
        assert_false(path_is_guarded("/etc/*"));
}

/* The list must hold every ancestor of what it holds: a line naming /usr/local must not slip
 * through because only /usr/local/bin was written down. */
static void test_guard_list_closed(void **state) {
        size_t n;
        const char *const *l = path_guarded_list(&n);

        assert_true(n > 0);
        for (size_t i = 0; i < n; i++) {
                cleanup_free char *p = strdup(l[i]);
                char *slash;

                assert_non_null(p);
                assert_int_equal(path_validate_absolute(p, NULL), 0);
                while ((slash = strrchr(p, '/')) && slash != p) {
                        bool found = false;

                        *slash = 0;
                        for (size_t j = 0; j < n && !found; j++)
                                found = streq(l[j], p);
                        if (!found)
                                fail_msg("'%s' is guarded but its parent '%s' is not", l[i], p);
                }
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_simplify),
                cmocka_unit_test(test_depth),
                cmocka_unit_test(test_glob),
                cmocka_unit_test(test_validate_absolute),
                cmocka_unit_test(test_validate_target),
                cmocka_unit_test(test_pattern_match),
                cmocka_unit_test(test_pattern_match_long),
                cmocka_unit_test(test_pattern_covers),
                cmocka_unit_test(test_pattern_below),
                cmocka_unit_test(test_join_root),
                cmocka_unit_test(test_rule_star),
                cmocka_unit_test(test_rule_question),
                cmocka_unit_test(test_rule_bracket),
                cmocka_unit_test(test_rule_backslash),
                cmocka_unit_test(test_protect_backslash),
                cmocka_unit_test(test_guard_issue_examples),
                cmocka_unit_test(test_guard_allowed),
                cmocka_unit_test(test_guard_list_closed),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
