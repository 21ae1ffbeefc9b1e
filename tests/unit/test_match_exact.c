/* Exact-only contexts of the matching engine (WC_CTX_EXACT, src/core/wc_match.h): unexpected messages
 * of such a context are found in arrival order by exact patterns, taking one leaves the engine
 * consistent for the others, posted receives still match, and an ordinary context in the same engine
 * keeps its wildcard views. A randomized run compares both kinds against a list-scan model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wc_match.h"

static int failures;

#define CHECK_EQ(what, expected, got)                                                            \
    do {                                                                                         \
        long long e_ = (long long)(expected), g_ = (long long)(got);                            \
        if (e_ != g_) {                                                                          \
            fprintf(stderr, "%s:%d: %s: expected %lld, got %lld\n", __FILE__, __LINE__, (what), \
                    e_, g_);                                                                     \
            if (++failures > 20)                                                                 \
                exit(1);                                                                         \
        }                                                                                        \
    } while (0)

#define N 20000
static wc_match_entry_t msgs[N];
static wc_match_entry_t recvs[N];

static void set(wc_match_entry_t *e, uint32_t ctx, int32_t src, int32_t tag)
{
    memset(e, 0, sizeof(*e));
    e->ctx = ctx;
    e->src = src;
    e->tag = tag;
}

static long idx(const wc_match_entry_t *base, const wc_match_entry_t *e)
{
    return e ? (long)(e - base) : -1;
}

static void test_basic(void)
{
    wc_match_t *m;
    CHECK_EQ("create", WU_OK, wc_match_create(&m));
    const uint32_t ex = 5 | WC_CTX_EXACT, plain = 6;
    /* the same (src, tag) three times on each context, interleaved */
    for (int i = 0; i < 6; i++) {
        set(&msgs[i], (i & 1) ? plain : ex, 1, 7);
        CHECK_EQ("unexpected_add", WU_OK, wc_match_unexpected_add(m, &msgs[i]));
    }
    CHECK_EQ("count", 6, wc_match_unexpected_count(m));
    /* probe does not take */
    CHECK_EQ("probe exact ctx", 0, idx(msgs, wc_match_unexpected_find(m, ex, 1, 7, false)));
    /* the plain context keeps its wildcard views; the exact one is linked only exactly */
    CHECK_EQ("plain ANY_SOURCE", 1, idx(msgs, wc_match_unexpected_find(m, plain, WC_ANY_SOURCE, 7, true)));
    CHECK_EQ("plain ANY_TAG", 3, idx(msgs, wc_match_unexpected_find(m, plain, 1, WC_ANY_TAG, true)));
    CHECK_EQ("plain both", 5, idx(msgs, wc_match_unexpected_find(m, plain, WC_ANY_SOURCE, WC_ANY_TAG, true)));
    CHECK_EQ("exact ctx has no wildcard view", -1,
             idx(msgs, wc_match_unexpected_find(m, ex, WC_ANY_SOURCE, WC_ANY_TAG, false)));
    for (int i = 0; i < 6; i += 2)
        CHECK_EQ("exact ctx in order", i, idx(msgs, wc_match_unexpected_find(m, ex, 1, 7, true)));
    CHECK_EQ("all taken", 0, wc_match_unexpected_count(m));
    /* posted receives on an exact context */
    set(&recvs[0], ex, 2, 9);
    CHECK_EQ("post", WU_OK, wc_match_post(m, &recvs[0]));
    CHECK_EQ("posted_take other tag", -1, idx(recvs, wc_match_posted_take(m, ex, 2, 8)));
    CHECK_EQ("posted_take", 0, idx(recvs, wc_match_posted_take(m, ex, 2, 9)));
    CHECK_EQ("posted empty", 0, wc_match_posted_count(m));
    wc_match_destroy(m);
}

/* Random arrivals and exact receives on 4 exact and 4 plain contexts, checked against a model that
 * scans the messages in arrival order. Plain contexts also get wildcard receives. */
static void test_random(void)
{
    wc_match_t *m;
    CHECK_EQ("create", WU_OK, wc_match_create(&m));
    static int taken[N];
    int nmsg = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 4 * N && nmsg < N; step++) {
        int c = (int)(rand_r(&seed) % 8);
        uint32_t ctx = (uint32_t)(100 + c) | (c < 4 ? WC_CTX_EXACT : 0);
        int32_t src = (int32_t)(rand_r(&seed) % 3), tag = (int32_t)(rand_r(&seed) % 4);
        if (rand_r(&seed) % 2) {
            set(&msgs[nmsg], ctx, src, tag);
            CHECK_EQ("add", WU_OK, wc_match_unexpected_add(m, &msgs[nmsg]));
            nmsg++;
            continue;
        }
        if (c >= 4 && rand_r(&seed) % 3 == 0)
            src = WC_ANY_SOURCE;
        if (c >= 4 && rand_r(&seed) % 3 == 0)
            tag = WC_ANY_TAG;
        long expect = -1;
        for (int i = 0; i < nmsg; i++)
            if (!taken[i] && msgs[i].ctx == ctx && (src == WC_ANY_SOURCE || msgs[i].src == src) &&
                (tag == WC_ANY_TAG || msgs[i].tag == tag)) {
                expect = i;
                break;
            }
        long got = idx(msgs, wc_match_unexpected_find(m, ctx, src, tag, true));
        CHECK_EQ("random take", expect, got);
        if (got >= 0)
            taken[got] = 1;
    }
    size_t left = 0;
    for (int i = 0; i < nmsg; i++)
        left += !taken[i];
    CHECK_EQ("left", left, wc_match_unexpected_count(m));
    wc_match_destroy(m);
}

int main(void)
{
    test_basic();
    test_random();
    if (failures) {
        fprintf(stderr, "test_match_exact: %d failures\n", failures);
        return 1;
    }
    printf("test_match_exact: ok\n");
    return 0;
}
