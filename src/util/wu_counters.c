#include "util/wu_counters.h"
#include "util/wu_log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

__thread wu_counters_t *wu_counters_mine;
uint32_t wu_counters_watchers;

static wu_counters_t *wu_counters_head;   /* __atomic: push-only list of every block */
static pthread_key_t wu_counters_key;
static pthread_once_t wu_counters_once = PTHREAD_ONCE_INIT;

/* Thread exit: the block goes back for reuse, keeping its counts. */
static void wu_counters_release(void *arg)
{
    wu_counters_t *c = arg;
    wu_counters_mine = NULL;   /* a later destructor that counts attaches again */
    __atomic_store_n(&c->in_use, 0, __ATOMIC_RELEASE);
}

static void wu_counters_key_make(void)
{
    if (pthread_key_create(&wu_counters_key, wu_counters_release) != 0)
        wu_log_fatal("per-thread counters: no thread-specific key left");
}

wu_counters_t *wu_counters_attach(void)
{
    pthread_once(&wu_counters_once, wu_counters_key_make);
    wu_counters_t *c;
    for (c = __atomic_load_n(&wu_counters_head, __ATOMIC_ACQUIRE); c; c = c->next) {
        int free_ = 0;
        if (__atomic_load_n(&c->in_use, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(&c->in_use, &free_, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            break;
    }
    if (!c) {
        c = aligned_alloc(WU_CACHELINE, sizeof(*c));
        if (!c)
            wu_log_fatal("out of memory for per-thread counters");
        memset(c, 0, sizeof(*c));
        c->in_use = 1;
        c->next = __atomic_load_n(&wu_counters_head, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&wu_counters_head, &c->next, c, true,
                                            __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            ;
    }
    (void)pthread_setspecific(wu_counters_key, c);
    wu_counters_mine = c;
    return c;
}

void wu_counters_watch(int delta)
{
    __atomic_fetch_add(&wu_counters_watchers, (uint32_t)delta, __ATOMIC_RELAXED);
}

uint64_t wu_counter_sum(wu_counter_t id)
{
    uint64_t s = 0;
    for (wu_counters_t *c = __atomic_load_n(&wu_counters_head, __ATOMIC_ACQUIRE); c; c = c->next)
        s += __atomic_load_n(&c->v[id], __ATOMIC_RELAXED);
    return s;
}

static const char *const wu_counter_names[] = {
#define WU_X(name, desc) #name,
    WU_COUNTERS(WU_X)
#undef WU_X
};
static const char *const wu_counter_descs[] = {
#define WU_X(name, desc) desc,
    WU_COUNTERS(WU_X)
#undef WU_X
};

const char *wu_counter_name(wu_counter_t id)
{
    return wu_counter_names[id];
}

const char *wu_counter_desc(wu_counter_t id)
{
    return wu_counter_descs[id];
}
