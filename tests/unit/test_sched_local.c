/* Schedules on a singleton job: temporaries (16-byte aligned, disjoint, from the arena and beyond
 * it), steps in order across fences, more steps than the inline array (and the grown array kept
 * by the per-thread cache), messages to self, blocking (wc_sched_wait) and nonblocking (a request
 * waited with wc_wait), and no schedule left allocated at the end. Each pass runs twice, so the
 * second one runs on the cached schedule with its grown arena and step array. */
#include "core/wc_core.h"
#include "core/wc_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTX 7u   /* below the first allocated context id: no communicator uses it */

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "test_sched_local: ");                                                     \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, " (%s:%d)\n", __FILE__, __LINE__);                                         \
        exit(1);                                                                                   \
    } while (0)

#define EQ(what, e, g)                                                                             \
    do {                                                                                           \
        long long e_ = (long long)(e), g_ = (long long)(g);                                        \
        if (e_ != g_)                                                                              \
            FAIL("%s: expected %lld got %lld", what, e_, g_);                                      \
    } while (0)

static int order[256], norder;

/* Records its step number; checks that what the previous round produced is in place. */
static wu_status_t step_fn(const wc_sched_args_t *a)
{
    order[norder++] = (int)a->n[0];
    if (a->p[0]) {
        const unsigned char *p = a->p[0];
        for (uint64_t i = 0; i < a->n[1]; i++)
            if (p[i] != (unsigned char)(a->n[2] + i))
                FAIL("step %d: byte %llu of its input is %u, expected %u", (int)a->n[0],
                     (unsigned long long)i, p[i], (unsigned)(unsigned char)(a->n[2] + i));
    }
    return WU_OK;
}

static void fill(void *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)p)[i] = (unsigned char)(seed + i);
}

static void pass(bool blocking, int tag)
{
    static const size_t sizes[] = { 1, 17, 100, 5000, 70000, 16 };
    enum { NT = sizeof(sizes) / sizeof(sizes[0]) };
    wc_sched_t *s = wc_sched_create(wc_ep_default(), CTX, tag);
    if (!s)
        FAIL("wc_sched_create");
    unsigned char *t[NT];
    for (int i = 0; i < NT; i++) {
        t[i] = wc_sched_tmp(s, sizes[i]);
        if (!t[i] || ((uintptr_t)t[i] & 15))
            FAIL("temporary %d of %zu bytes at %p: not 16-byte aligned", i, sizes[i], (void *)t[i]);
        fill(t[i], sizes[i], (unsigned)i * 40);
    }
    for (int i = 0; i < NT; i++)   /* disjoint: nobody overwrote another's bytes */
        for (size_t k = 0; k < sizes[i]; k++)
            if (t[i][k] != (unsigned char)(i * 40 + k))
                FAIL("temporary %d byte %zu overwritten", i, k);

    /* round 1: a message to self (into t[1]) and a copy t[3] -> t[4]; round 2: 40 calls checking
     * them, then a copy of t[4] into t[2] and a call checking that */
    unsigned char src[17];
    fill(src, sizeof(src), 200);
    wc_sched_recv(s, t[1], sizeof(src), &wc_dtype_bytes, wc_world.rank);
    wc_sched_send(s, src, sizeof(src), &wc_dtype_bytes, wc_world.rank);
    wc_sched_copy(s, t[3], 5000, &wc_dtype_bytes, t[4], 5000, &wc_dtype_bytes);
    wc_sched_fence(s);
    wc_sched_fence(s);   /* a second fence in a row adds no step */
    for (int k = 0; k < 40; k++) {
        wc_sched_args_t a = { .p = { k % 2 ? t[1] : t[4] },
                              .n = { (uint64_t)k, k % 2 ? sizeof(src) : 5000, k % 2 ? 200 : 120 } };
        wc_sched_call(s, step_fn, &a);
    }
    wc_sched_copy(s, t[4], 100, &wc_dtype_bytes, t[2], 100, &wc_dtype_bytes);
    wc_sched_fence(s);
    wc_sched_args_t last = { .p = { t[2] }, .n = { 40, 100, 120 } };
    wc_sched_call(s, step_fn, &last);
    wc_sched_fence(s);   /* trailing: dropped */
    EQ("steps", 3 + 1 + 40 + 1 + 1 + 1 + 1, wc_sched_nsteps(s));
    if (wc_sched_error(s) != WU_OK)
        FAIL("building: %s", wu_status_str(wc_sched_error(s)));

    norder = 0;
    if (blocking) {
        wc_sched_start(s, NULL);
        wu_status_t st = wc_sched_wait(s);
        if (st != WU_OK)
            FAIL("wc_sched_wait: %s", wu_status_str(st));
    } else {
        wc_request_t req;
        wc_sched_start(s, &req);
        wc_wait(&req);
        if (req.error != WU_OK)
            FAIL("nonblocking schedule: %s", wu_status_str((wu_status_t)req.error));
    }
    EQ("calls run", 41, norder);
    for (int k = 0; k <= 40; k++)
        EQ("call order", k, order[k]);
}

int main(void)
{
    wu_status_t st = wc_init(false);
    if (st != WU_OK) {
        fprintf(stderr, "wc_init: %s\n", wu_status_str(st));
        return 1;
    }
    for (int r = 0; r < 2; r++) {
        pass(true, 100 + r);
        pass(false, 200 + r);
    }
    /* the last nonblocking schedule is reclaimed by the next create, once the engine is done */
    for (int i = 0; i < 1000 && wc_sched_live() > 0; i++) {
        wc_progress();
        wc_sched_discard(wc_sched_create(wc_ep_default(), CTX, 1));
    }
    EQ("schedules left", 0, wc_sched_live());
    wc_finalize();
    printf("test_sched_local: ok\n");
    return 0;
}
