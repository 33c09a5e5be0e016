/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the mountinfo parser: golden lines, escapes, malformed input, beneath-sorting. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/os/mountinfo.h"
#include "macro.h"
#include "string-util.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(MountTable *, mount_table_free);

static int parse_buf(const char *buf, size_t n, MountTable **ret) {
        cleanup_fclose FILE *f = NULL;

        f = fmemopen((void *) buf, n, "r");
        assert_non_null(f);
        return mount_table_parse(f, ret);
}

static int parse_string(const char *s, MountTable **ret) {
        return parse_buf(s, strlen(s), ret);
}

static void test_golden_line(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        const MountEntry *e;

        assert_int_equal(parse_string("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root "
                                      "rw,errors=continue\n",
                                      &t),
                         0);
        assert_int_equal(t->n_entries, 1);
        e = &t->entries[0];
        assert_int_equal(e->mount_id, 36);
        assert_int_equal(e->parent_id, 35);
        assert_int_equal(e->major, 98);
        assert_int_equal(e->minor, 0);
        assert_string_equal(e->root, "/mnt1");
        assert_string_equal(e->mount_point, "/mnt2");
        assert_string_equal(e->options, "rw,noatime");
        assert_string_equal(e->fstype, "ext3");
        assert_string_equal(e->source, "/dev/root");
        assert_int_equal(e->order, 1);
}

static void test_escapes(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;

        assert_int_equal(parse_string("40 1 0:50 /a\\040b /mnt/with\\040space\\011tab rw - tmpfs "
                                      "my\\134src rw\n"
                                      "41 1 0:51 / /mnt/new\\012line rw shared:7 - tmpfs none\\040x rw\n"
                                      "42 1 0:52 / /mnt/\\303\\251t\\134\\134 rw - tmpfs tmpfs rw\n",
                                      &t),
                         0);
        assert_int_equal(t->n_entries, 3);
        assert_string_equal(t->entries[0].root, "/a b");
        assert_string_equal(t->entries[0].mount_point, "/mnt/with space\ttab");
        assert_string_equal(t->entries[0].source, "my\\src");
        assert_string_equal(t->entries[1].mount_point, "/mnt/new\nline");
        assert_string_equal(t->entries[1].source, "none x");
        assert_string_equal(t->entries[2].mount_point, "/mnt/\xc3\xa9t\\\\");
}

static void test_unescape(void **state) {
        static const struct {
                const char *in, *out;
        } good[] = {
                { "", "" },
                { "plain", "plain" },
                { "\\040", " " },
                { "\\011\\012\\134", "\t\n\\" },
                { "a\\040b\\040", "a b " },
                { "\\377", "\377" },
        };
        static const char *const bad[] = {
                "\\", "a\\", "\\04", "\\04x", "\\400", "\\777", "\\000", "\\089", "\\x20", "\\\\",
        };
        char *s;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                assert_int_equal(mountinfo_unescape(good[i].in, &s), 0);
                assert_string_equal(s, good[i].out);
                free(s);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                s = NULL;
                assert_int_equal(mountinfo_unescape(bad[i], &s), -EBADMSG);
                assert_null(s);
        }
}

static void test_optional_fields(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;

        assert_int_equal(parse_string("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                      "2 1 8:2 / /a rw shared:1 master:2 propagate_from:3 unbindable - xfs "
                                      "/dev/sda2 rw,attr2\n"
                                      "3 1 0:4 net:[4026532281] /run/netns/cni-1 rw shared:9 - nsfs nsfs rw\n"
                                      "4 1 0:60 / /empty-source rw - tmpfs  rw\n"
                                      "5 1 0:61 / /future rw - tmpfs tmpfs rw extra fields\n",
                                      &t),
                         0);
        assert_int_equal(t->n_entries, 5);
        assert_string_equal(t->entries[0].fstype, "ext4");
        assert_string_equal(t->entries[1].fstype, "xfs");
        assert_string_equal(t->entries[1].source, "/dev/sda2");
        assert_string_equal(t->entries[1].options, "rw");
        assert_string_equal(t->entries[2].root, "net:[4026532281]");
        assert_string_equal(t->entries[3].source, "");
        assert_string_equal(t->entries[4].mount_point, "/future");
}

static void test_blank_lines_and_order(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;

        /* Line numbers count blank lines; the last line may lack its newline. */
        assert_int_equal(parse_string("\n1 0 8:1 / / rw - ext4 /dev/sda1 rw\n\n"
                                      "2 1 0:5 / /b rw - tmpfs t rw",
                                      &t),
                         0);
        assert_int_equal(t->n_entries, 2);
        assert_int_equal(t->entries[0].order, 2);
        assert_int_equal(t->entries[1].order, 4);
        mount_table_free(TAKE_PTR(t));

        assert_int_equal(parse_string("", &t), 0);
        assert_int_equal(t->n_entries, 0);
}

static void test_malformed(void **state) {
        static const char *const bad[] = {
                "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw", /* no separator */
                "36 35 98:0 /mnt1 /mnt2 rw -",                                  /* nothing after it */
                "36 35 98:0 /mnt1 /mnt2 rw - ext3",
                "36 35 98:0 /mnt1 /mnt2 rw - ext3 /dev/root", /* no super options */
                "36 35 98:0 /mnt1 /mnt2 - ext3 /dev/root rw", /* "-" taken as the options */
                "36 35 98:0 /mnt1",
                "36",
                " ",
                "x 35 98:0 / / rw - ext3 s rw",
                "-1 35 98:0 / / rw - ext3 s rw",
                "+1 35 98:0 / / rw - ext3 s rw",
                "99999999999 35 98:0 / / rw - ext3 s rw",
                "36 35 98 / / rw - ext3 s rw",
                "36 35 98: / / rw - ext3 s rw",
                "36 35 :0 / / rw - ext3 s rw",
                "36 35 98:0x / / rw - ext3 s rw",
                "36 35 98:0 / relative rw - ext3 s rw",
                "36 35 98:0 /  rw - ext3 s rw",  /* empty mount point */
                "36 35 98:0  / rw - ext3 s rw",  /* empty root */
                "36  35 98:0 / / rw - ext3 s rw", /* double space */
                "36 35 98:0 / /a\\04 rw - ext3 s rw",
                "36 35 98:0 / /a\\999 rw - ext3 s rw",
                "36 35 98:0 / /a\\000b rw - ext3 s rw",
                "36 35 98:0 /\\ / rw - ext3 s rw",
                "36 35 98:0 / / rw - ext3 s\\4 rw",
                "36 35 98:0 / / rw -  s rw", /* empty fstype */
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                MountTable *t = NULL;
                int r = parse_string(bad[i], &t);

                if (r != -EBADMSG || t)
                        fail_msg("\"%s\": got %d, expected -EBADMSG", bad[i], r);
        }
}

static void test_malformed_after_good(void **state) {
        static const char nul[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n2 1 8:1 / /a\0b rw - ext4 x rw\n";
        MountTable *t = NULL;

        assert_int_equal(parse_string("1 0 8:1 / / rw - ext4 /dev/sda1 rw\ngarbage\n", &t), -EBADMSG);
        assert_null(t);
        assert_int_equal(parse_buf(nul, sizeof(nul) - 1, &t), -EBADMSG);
        assert_null(t);
}

/* A table with stacked mounts and a sibling whose name extends another's. */
static const char stacked[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                              "2 1 8:2 / /a rw - ext4 /dev/sda2 rw\n"
                              "3 2 0:30 / /a/b rw - tmpfs first rw\n"
                              "4 2 0:31 / /a/bc rw - tmpfs sibling rw\n"
                              "5 3 0:32 / /a/b/c rw - tmpfs deep rw\n"
                              "6 3 0:33 / /a/b rw - tmpfs second rw\n"
                              "7 5 0:34 / /a/b/c/d rw - tmpfs deeper rw\n"
                              "8 6 0:35 / /a/b rw - tmpfs third rw\n"
                              "9 1 0:36 / /z rw - tmpfs z rw\n";

static void assert_sources(const MountEntry **l, size_t n, const char *const *expected, size_t n_expected) {
        assert_int_equal(n, n_expected);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(l[i]->source, expected[i]);
}

static void test_beneath_sorting(void **state) {
        static const char *const under_ab[] = { "deeper", "deep" };
        static const char *const under_a[] = { "deeper", "deep", "third", "second", "first", "sibling" };
        static const char *const under_root[] = { "deeper", "deep",    "third", "second", "first",
                                                  "sibling", "/dev/sda2", "z" };
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        const MountEntry **l = NULL;
        size_t n;

        assert_int_equal(parse_string(stacked, &t), 0);
        assert_int_equal(mount_table_beneath(t, "/a/b", &l, &n), 0);
        assert_sources(l, n, under_ab, ELEMENTSOF(under_ab));
        free(l);
        assert_int_equal(mount_table_beneath(t, "/a/b/", &l, &n), 0);
        assert_sources(l, n, under_ab, ELEMENTSOF(under_ab));
        free(l);
        assert_int_equal(mount_table_beneath(t, "/a", &l, &n), 0);
        assert_sources(l, n, under_a, ELEMENTSOF(under_a));
        free(l);
        assert_int_equal(mount_table_beneath(t, "/", &l, &n), 0);
        assert_sources(l, n, under_root, ELEMENTSOF(under_root));
        free(l);
}

/* ip netns makes /run/netns shared: a namespace's nsfs mount is propagated, and mountinfo can list
 * the mount on top (here 202, whose parent is 203) before the one it covers. Topmost first. */
static void test_beneath_propagated_stack(void **state) {
        static const char table[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                    "100 1 0:20 /netns /run/netns rw shared:5 - tmpfs run rw\n"
                                    "202 203 0:4 net:[1] /run/netns/cni-x rw shared:6 - nsfs nsfs rw\n"
                                    "203 100 0:4 net:[1] /run/netns/cni-x rw shared:6 - nsfs nsfs rw\n";
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        const MountEntry **l = NULL;
        size_t n;

        assert_int_equal(parse_string(table, &t), 0);
        assert_int_equal(mount_table_beneath(t, "/run/netns", &l, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(l[0]->mount_id, 202);
        assert_int_equal(l[1]->mount_id, 203);
        free(l);
}

/* /run/netns bind-mounted onto itself twice: the netns mount propagated into the lower copy (203) is
 * hidden by the upper /run/netns (101), the one in the upper copy (202) is reachable. */
static void test_covering(void **state) {
        static const char table[] = "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                    "100 1 0:20 /netns /run/netns rw shared:5 - tmpfs run rw\n"
                                    "101 100 0:20 /netns /run/netns rw shared:5 - tmpfs run rw\n"
                                    "202 101 0:4 net:[1] /run/netns/cni-x rw shared:6 - nsfs nsfs rw\n"
                                    "203 100 0:4 net:[1] /run/netns/cni-x rw shared:6 - nsfs nsfs rw\n";
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        const MountEntry *c;

        assert_int_equal(parse_string(table, &t), 0);
        assert_null(mount_table_covering(t, &t->entries[3]));
        c = mount_table_covering(t, &t->entries[4]);
        assert_non_null(c);
        assert_int_equal(c->mount_id, 101);
        assert_null(mount_table_covering(t, &t->entries[2]));
        assert_null(mount_table_covering(t, &t->entries[0]));
}

static void test_beneath_boundary(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;
        const MountEntry **l = NULL;
        size_t n = 99;

        assert_int_equal(parse_string(stacked, &t), 0);
        /* "/a/bc" is not beneath "/a/b", and nothing is beneath "/a/bc" or a leaf. */
        assert_int_equal(mount_table_beneath(t, "/a/bc", &l, &n), 0);
        assert_int_equal(n, 0);
        assert_null(l);
        assert_int_equal(mount_table_beneath(t, "/a/b/c/d", &l, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(mount_table_beneath(t, "/a/b/c", &l, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(l[0]->mount_point, "/a/b/c/d");
        free(l);
        assert_int_equal(mount_table_beneath(t, "/nowhere", &l, &n), 0);
        assert_int_equal(n, 0);
        assert_int_equal(mount_table_beneath(t, "a", &l, &n), -EINVAL);
}

static void test_is_mount_point(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;

        assert_int_equal(parse_string(stacked, &t), 0);
        assert_true(mount_table_is_mount_point(t, "/"));
        assert_true(mount_table_is_mount_point(t, "/a/b"));
        assert_true(mount_table_is_mount_point(t, "/a/b/"));
        assert_true(mount_table_is_mount_point(t, "/a//bc"));
        assert_false(mount_table_is_mount_point(t, "/a/bcd"));
        assert_false(mount_table_is_mount_point(t, "/a/b/c/d/e"));
        assert_false(mount_table_is_mount_point(t, "/y"));
        assert_false(mount_table_is_mount_point(t, "a/b"));
        assert_false(mount_table_is_mount_point(NULL, "/"));
}

static void test_read_self(void **state) {
        CLEANUP(mount_table_freep) MountTable *t = NULL;

        assert_int_equal(mount_table_read(&t), 0);
        assert_true(t->n_entries > 0);
        assert_true(mount_table_is_mount_point(t, "/"));
        assert_true(mount_table_is_mount_point(t, "/proc"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_golden_line),
                cmocka_unit_test(test_escapes),
                cmocka_unit_test(test_unescape),
                cmocka_unit_test(test_optional_fields),
                cmocka_unit_test(test_blank_lines_and_order),
                cmocka_unit_test(test_beneath_propagated_stack),
                cmocka_unit_test(test_covering),
                cmocka_unit_test(test_malformed),
                cmocka_unit_test(test_malformed_after_good),
                cmocka_unit_test(test_beneath_sorting),
                cmocka_unit_test(test_beneath_boundary),
                cmocka_unit_test(test_is_mount_point),
                cmocka_unit_test(test_read_self),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
