/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Independent reads on two cores (parallel.h): the even items of a list on this thread, the odd ones on a second. */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/base/parallel.h"

typedef struct Share {
        void (*fn)(void *item);
        uint8_t *items;
        size_t n, size, first; /* this share: items first, first + 2, ... */
} Share;

static void *share_run(void *p) {
        Share *s = p;

        for (size_t i = s->first; i < s->n; i += 2)
                s->fn(s->items + i * s->size);
        return NULL;
}

void parallel_each(void (*fn)(void *item), void *items, size_t n, size_t size) {
        Share even = { .fn = fn, .items = items, .n = n, .size = size }, odd = even;
        pthread_t thread;
        bool started;

        odd.first = 1;
        started = n > 1 && pthread_create(&thread, NULL, share_run, &odd) == 0;
        if (!started) {
                even.first = 0;
                for (size_t i = 0; i < n; i++)
                        fn((uint8_t *) items + i * size);
                return;
        }
        (void) share_run(&even);
        (void) pthread_join(thread, NULL);
}
