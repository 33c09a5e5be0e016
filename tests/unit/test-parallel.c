/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parallel_each(): every item once, each share in order, on two threads when it can. */

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/base/parallel.h"

typedef struct Item {
        unsigned index;
        unsigned runs;
        pthread_t thread;
        unsigned order; /* when it ran within its thread's share */
} Item;

static __thread unsigned ran_here;

static void visit(void *p) {
        Item *it = p;

        it->runs++;
        it->thread = pthread_self();
        it->order = ran_here++;
}

static void test_every_item_once(void **state) {
        Item items[7] = {};

        (void) state;
        for (unsigned i = 0; i < 7; i++)
                items[i].index = i;
        ran_here = 0;
        parallel_each(visit, items, 7, sizeof(Item));
        for (unsigned i = 0; i < 7; i++) {
                assert_int_equal(items[i].runs, 1);
                /* Each share in order: the k-th even item ran k-th on its thread, and so the odd. */
                assert_int_equal(items[i].order, i / 2);
        }
        /* The even items on the caller's thread, the odd ones on the same other thread. */
        for (unsigned i = 0; i < 7; i++)
                assert_true(pthread_equal(items[i].thread, items[i % 2].thread));
        assert_true(pthread_equal(items[0].thread, pthread_self()));
        assert_false(pthread_equal(items[1].thread, pthread_self()));
}

static void test_one_and_none(void **state) {
        Item one = {};

        (void) state;
        ran_here = 0;
        parallel_each(visit, &one, 1, sizeof(Item));
        assert_int_equal(one.runs, 1);
        assert_true(pthread_equal(one.thread, pthread_self()));
        parallel_each(visit, NULL, 0, sizeof(Item));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_item_once),
                cmocka_unit_test(test_one_and_none),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
