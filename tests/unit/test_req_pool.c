/* The request pool (src/mpi/wm_request.c) when requests change threads: one thread allocates,
 * another releases (a task runtime; a progress thread freeing detached requests). The released
 * requests must come back to the allocating thread through the shared pool instead of piling up
 * in the releasing thread's list while the allocator carves new ones from the arena; a thread that
 * exits gives its list back. Measured by the number of slots ever carved. */
#include "mpi/wm_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_check.h"

#define TOTAL 200000
#define RING 256          /* requests in flight between the two threads, at most */

/* single-producer single-consumer ring of requests */
static wm_request_t *ring[RING];
static _Atomic unsigned long head, tail;   /* head: next to fill (producer), tail: next to take */

static void *producer(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < TOTAL; i++) {
        while (i - atomic_load_explicit(&tail, memory_order_acquire) >= RING)
            sched_yield();
        wm_request_t *r = wm_request_alloc();
        CHECK(r, "wm_request_alloc failed after %lu requests (carved %zu)", i, wm_request_carved());
        CHECK(r->magic == WM_MAGIC_REQ, "a pooled request is not reset");
        r->tag = (int)i;
        ring[i % RING] = r;
        atomic_store_explicit(&head, i + 1, memory_order_release);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (unsigned long i = 0; i < TOTAL; i++) {
        while (atomic_load_explicit(&head, memory_order_acquire) == i)
            sched_yield();
        wm_request_t *r = ring[i % RING];
        CHECK(r->tag == (int)i, "request %lu carries tag %d: one slot is in use twice", i, r->tag);
        wm_request_release(r);
        atomic_store_explicit(&tail, i + 1, memory_order_release);
    }
    return NULL;
}

static void *alloc_release(void *arg)
{
    int n = *(int *)arg;
    wm_request_t **v = malloc((size_t)n * sizeof(*v));
    CHECK(v, "malloc");
    for (int i = 0; i < n; i++) {
        v[i] = wm_request_alloc();
        CHECK(v[i], "wm_request_alloc failed");
    }
    for (int i = 0; i < n; i++)
        wm_request_release(v[i]);
    free(v);
    return NULL;
}

static void run2(void *(*a)(void *), void *(*b)(void *), void *arg)
{
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, a, arg) == 0, "pthread_create");
    if (b)
        CHECK(pthread_create(&tb, NULL, b, arg) == 0, "pthread_create");
    pthread_join(ta, NULL);
    if (b)
        pthread_join(tb, NULL);
}

int main(void)
{
    wm_request_init();

    /* 1. allocated by one thread, released by another: the slots are reused */
    run2(producer, consumer, NULL);
    size_t carved = wm_request_carved();
    printf("producer/consumer: %d requests, %zu slots carved\n", TOTAL, carved);
    /* in flight (RING) plus what both lists may hold (2 x 2 x 64) plus a chunk being carved */
    CHECK(carved <= RING + 4 * 64 + 64 + 64, "%zu slots carved for %d requests with at most %d in "
          "flight: released requests are not coming back to the allocating thread", carved, TOTAL, RING);

    /* 2. a thread that exits gives its list back: the next thread reuses it */
    int n = 1000;
    run2(alloc_release, NULL, &n);
    size_t before = wm_request_carved();
    for (int round = 0; round < 5; round++)
        run2(alloc_release, NULL, &n);
    size_t after = wm_request_carved();
    printf("5 threads of %d requests after one: %zu -> %zu slots carved\n", n, before, after);
    CHECK(after <= before + 2 * 64, "threads that exited kept their requests: %zu -> %zu", before, after);

    /* 3. one thread alone: alloc/release does not touch the shared pool beyond its lists */
    size_t b3 = wm_request_carved();
    n = 100;
    for (int round = 0; round < 1000; round++)
        alloc_release(&n);
    CHECK(wm_request_carved() <= b3 + 2 * 64, "a single thread's reuse carved more slots");
    puts("PASS");
    return 0;
}
