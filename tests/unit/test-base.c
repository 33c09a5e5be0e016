/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The base (include/ and lib/): string vectors, array growth, time and directory iteration. */

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "alloc-util.h"
#include "dirent-util.h"
#include "strv.h"
#include "time-util.h"

static void test_strv_extend(void **state) {
        cleanup_strv char **l = NULL;

        assert_int_equal(strv_length(l), 0);
        assert_false(strv_contains(l, "a"));
        assert_int_equal(strv_extend(&l, "b"), 0);
        assert_int_equal(strv_extend_unique(&l, "a"), 1);
        assert_int_equal(strv_extend_unique(&l, "b"), 0);
        assert_int_equal(strv_consume(&l, strdup("c")), 0);
        assert_int_equal(strv_consume(&l, NULL), -ENOMEM);
        assert_int_equal(strv_length(l), 3);
        assert_null(l[3]);
        strv_sort(l);
        assert_string_equal(l[0], "a");
        assert_string_equal(l[1], "b");
        assert_string_equal(l[2], "c");
        assert_true(strv_contains(l, "c"));
}

static void test_strv_join(void **state) {
        cleanup_strv char **l = NULL;
        cleanup_free char *none = strv_join(NULL, ", "), *one = NULL, *three = NULL;

        assert_string_equal(none, "");
        assert_int_equal(strv_extend(&l, "https://10.0.0.1:2380"), 0);
        one = strv_join(l, ", ");
        assert_string_equal(one, "https://10.0.0.1:2380");
        assert_int_equal(strv_extend(&l, ""), 0);
        assert_int_equal(strv_extend(&l, "c"), 0);
        three = strv_join(l, ", ");
        assert_string_equal(three, "https://10.0.0.1:2380, , c");
}

static void test_greedy_realloc(void **state) {
        cleanup_free int *a = NULL;
        size_t allocated = 0;

        for (size_t i = 0; i < 1000; i++) {
                assert_int_equal(GREEDY_REALLOC(a, allocated, i + 1), 0);
                a[i] = (int) i;
        }
        assert_true(allocated >= 1000 && allocated < 2048);
        assert_int_equal(a[999], 999);
        /* Asking for less never shrinks, asking for the impossible fails and keeps the array. */
        assert_int_equal(GREEDY_REALLOC(a, allocated, 1), 0);
        assert_int_equal(GREEDY_REALLOC(a, allocated, SIZE_MAX), -ENOMEM);
        assert_int_equal(a[500], 500);
}

static void test_time(void **state) {
        usec_t t = now(CLOCK_MONOTONIC);

        assert_true(t > 0);
        assert_true(now(CLOCK_MONOTONIC) >= t);
        assert_int_equal(usec_add(USEC_INFINITY - 1, 5), USEC_INFINITY);
        assert_int_equal(usec_add(1, 2), 3);
        assert_int_equal(usec_left(USEC_INFINITY), USEC_INFINITY);
        assert_int_equal(usec_left(1), 0);
        assert_true(usec_left(t + 3600 * USEC_PER_SEC) > 3599 * USEC_PER_SEC);
}

static void test_comma_list_contains(void **state) {
        assert_true(comma_list_contains("mounts,files", "files"));
        assert_true(comma_list_contains(",,mounts,,", "mounts"));
        assert_false(comma_list_contains("mounts,files", "file"));
        assert_false(comma_list_contains("mountsx", "mounts"));
        assert_false(comma_list_contains("", "mounts"));
        assert_false(comma_list_contains(NULL, "mounts"));
}

static void test_foreach_dirent(void **state) {
        char tmp[] = "/tmp/test-base.XXXXXX";
        cleanup_closedir DIR *d = NULL;
        cleanup_strv char **seen = NULL;
        int fd;

        assert_non_null(mkdtemp(tmp));
        fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(mkdirat(fd, "x", 0700), 0);
        assert_int_equal(mkdirat(fd, "..y", 0700), 0);
        d = fdopendir(fd);
        assert_non_null(d);
        FOREACH_DIRENT(de, d)
        assert_int_equal(strv_extend(&seen, de->d_name), 0);
        strv_sort(seen);
        assert_int_equal(strv_length(seen), 2);
        assert_string_equal(seen[0], "..y");
        assert_string_equal(seen[1], "x");
        assert_int_equal(unlinkat(fd, "x", AT_REMOVEDIR), 0);
        assert_int_equal(unlinkat(fd, "..y", AT_REMOVEDIR), 0);
        assert_int_equal(rmdir(tmp), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_strv_extend),    cmocka_unit_test(test_strv_join),
                cmocka_unit_test(test_greedy_realloc), cmocka_unit_test(test_time),
                cmocka_unit_test(test_foreach_dirent), cmocka_unit_test(test_comma_list_contains),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
