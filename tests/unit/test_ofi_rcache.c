/* The libfabric transport's registration cache (src/transport/ofi/wx_ofi_rcache.h) with fake
 * registration calls: hits inside a registered range, page rounding, the two idle policies,
 * eviction of the least recently used idle entry, registrations beyond capacity, lookup by key,
 * and 8 threads acquiring and releasing overlapping buffers (the counts balance, nothing leaks). */
#include "thread/wt_thread.h"
#include "transport/ofi/wx_ofi_rcache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_check.h"

static int live;          /* registrations made and not yet undone (atomics) */
static uint64_t next_key = 100;

static wu_status_t fake_reg(void *ctx, void *buf, size_t len, void **handle_p, uint64_t *key_p)
{
    (void)ctx, (void)buf, (void)len;
    __atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
    *handle_p = malloc(1);
    *key_p = __atomic_fetch_add(&next_key, 1, __ATOMIC_RELAXED);
    return WU_OK;
}

static void fake_dereg(void *ctx, void *handle)
{
    (void)ctx;
    __atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
    free(handle);
}

static char *arena;
static size_t page;

static void test_policy(bool keep_idle)
{
    wx_rcache_t rc;
    wx_rcache_entry_t *a, *b, *c;
    CHECK(wx_rcache_init(&rc, 2, keep_idle, fake_reg, fake_dereg, NULL) == WU_OK, "init");
    CHECK(wx_rcache_acquire(&rc, arena + 10, 3 * page, &a) == WU_OK, "acquire a");
    CHECK(a->start == (uintptr_t)arena && a->end == (uintptr_t)arena + 4 * page,
          "a's range expected the 4 pages around the buffer, got [%#lx, %#lx)",
          (unsigned long)(a->start - (uintptr_t)arena), (unsigned long)(a->end - (uintptr_t)arena));
    CHECK(wx_rcache_acquire(&rc, arena + page, page, &b) == WU_OK && b == a,
          "a buffer inside a's range expected a hit");
    CHECK(a->refs == 2, "refs expected 2 got %d", a->refs);
    CHECK(wx_rcache_find_key(&rc, a->key) == a, "lookup by key");
    wx_rcache_release(&rc, b);
    wx_rcache_release(&rc, a);
    CHECK(live == (keep_idle ? 1 : 0), "live registrations after release expected %d got %d",
          keep_idle ? 1 : 0, live);
    /* fill beyond capacity: two in use, a third is uncached and undone at its release */
    CHECK(wx_rcache_acquire(&rc, arena + 8 * page, page, &a) == WU_OK, "acquire");
    CHECK(wx_rcache_acquire(&rc, arena + 16 * page, page, &b) == WU_OK, "acquire");
    CHECK(wx_rcache_acquire(&rc, arena + 24 * page, page, &c) == WU_OK, "acquire");
    wx_rcache_stats_t st = wx_rcache_stats(&rc);
    CHECK(st.uncached == 1, "uncached expected 1 got %llu", (unsigned long long)st.uncached);
    if (keep_idle)
        CHECK(st.evictions == 1, "the idle first entry expected evicted, evictions %llu",
              (unsigned long long)st.evictions);
    CHECK(!c->cached, "the third entry expected outside the table");
    /* the core releases by key (mem_dereg): an entry outside the table must be found too */
    CHECK(wx_rcache_find_key(&rc, c->key) == c, "lookup by key of the uncached entry");
    int live_before = live;
    wx_rcache_release(&rc, c);
    CHECK(live == live_before - 1, "the uncached entry expected deregistered at its release");
    wx_rcache_release(&rc, b);
    wx_rcache_release(&rc, a);
    /* least recently used idle entry goes first: touch a again, then a new range evicts b */
    if (keep_idle) {
        CHECK(wx_rcache_acquire(&rc, arena + 8 * page, page, &a) == WU_OK, "reacquire");
        wx_rcache_release(&rc, a);
        CHECK(wx_rcache_acquire(&rc, arena + 32 * page, page, &c) == WU_OK, "acquire");
        CHECK(wx_rcache_acquire(&rc, arena + 8 * page, 1, &a) == WU_OK, "acquire");
        st = wx_rcache_stats(&rc);
        CHECK(st.hits == 3, "a expected kept (LRU evicts b): hits %llu", (unsigned long long)st.hits);
        wx_rcache_release(&rc, a);
        wx_rcache_release(&rc, c);
    }
    /* destroy with entries still in use, in the table and outside it (sends abandoned at
     * finalize): every registration is undone */
    CHECK(wx_rcache_acquire(&rc, arena + 8 * page, page, &a) == WU_OK, "acquire");
    CHECK(wx_rcache_acquire(&rc, arena + 16 * page, page, &b) == WU_OK, "acquire");
    CHECK(wx_rcache_acquire(&rc, arena + 24 * page, page, &c) == WU_OK, "acquire");
    CHECK(!c->cached, "the third entry in use expected outside the table");
    wx_rcache_destroy(&rc);
    CHECK(live == 0, "live registrations after destroy expected 0 got %d", live);
}

static wx_rcache_t shared;

static void *worker(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        size_t off = (size_t)(rand_r(&seed) % 64) * page + (size_t)(rand_r(&seed) % 100);
        wx_rcache_entry_t *e;
        CHECK(wx_rcache_acquire(&shared, arena + off, 1 + (size_t)(rand_r(&seed) % (2 * page)), &e)
                  == WU_OK, "acquire");
        CHECK(e->start <= (uintptr_t)arena + off, "entry does not cover the buffer");
        wx_rcache_release(&shared, e);
    }
    return NULL;
}

int main(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    arena = aligned_alloc(page, 80 * page);
    test_policy(false);
    test_policy(true);

    wt_thread_set_multi(true);
    CHECK(wx_rcache_init(&shared, 8, true, fake_reg, fake_dereg, NULL) == WU_OK, "init");
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    wx_rcache_stats_t st = wx_rcache_stats(&shared);
    wx_rcache_destroy(&shared);
    CHECK(live == 0, "live registrations after the threaded run expected 0 got %d", live);
    printf("test_ofi_rcache: ok (threaded: %llu hits, %llu misses, %llu evictions, %llu uncached)\n",
           (unsigned long long)st.hits, (unsigned long long)st.misses,
           (unsigned long long)st.evictions, (unsigned long long)st.uncached);
    free(arena);
    return 0;
}
