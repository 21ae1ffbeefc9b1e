/* The core's point-to-point protocols on the loopback transport: a job of 2 to 4 endpoints in
 * this one process (wc_ep_create; each reaches the others by the loop transport and itself by
 * self), moved by wc_ep_progress, no shared memory, no PMI. Small packets and queues of a few
 * packets per pair force the core's pending queues and the pipelined rendezvous.
 * Cases: eager (posted and unexpected), rendezvous by get, rendezvous by fragments (get off),
 * synchronous send completing only after the match, cancel of a posted receive, truncation (eager
 * and both rendezvous), per-pair order of many messages of mixed sizes behind a full queue,
 * wildcards, several threads sending on one endpoint while another thread progresses. */
#include "core/wc_core.h"
#include "core/wc_ep.h"
#include "transport/loop/wx_loop.h"
#include "transport/self/wx_self.h"
#include "thread/wt_thread.h"
#include "util/wu_config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "test_ep_loop: %s:%d: ", __FILE__, __LINE__);                              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)
#define EQ(what, e, g)                                                                             \
    do {                                                                                           \
        long long e_ = (long long)(e), g_ = (long long)(g);                                        \
        if (e_ != g_)                                                                              \
            FAIL("%s: expected %lld, got %lld", what, e_, g_);                                     \
    } while (0)

#define CTX 5u
#define MAXN 4

typedef struct job {
    int n;
    wx_loop_fabric_t *fab;
    wc_ep_t *ep[MAXN];
    wx_tl_t *loop[MAXN], *self[MAXN];
} job_t;

static void job_create(job_t *j, int n, size_t max_payload, size_t eager_max, size_t frag,
                       unsigned qcap, bool get)
{
    memset(j, 0, sizeof(*j));
    j->n = n;
    wx_loop_config_t cfg = { .nranks = n, .max_payload = max_payload, .eager_max = eager_max,
                             .frag_size = frag, .queue_cap = qcap, .get = get };
    if (wx_loop_fabric_create(&cfg, &j->fab) != WU_OK)
        FAIL("loop fabric");
    for (int r = 0; r < n; r++) {
        if (wc_ep_create(r, n, &j->ep[r]) != WU_OK)
            FAIL("endpoint %d", r);
        wx_bootstrap_t bs = { .rank = r, .size = n, .job_id = "test" };
        if (wx_loop_create(j->fab, r, wc_ep_deliver, j->ep[r], &j->loop[r]) != WU_OK ||
            wx_self_create(&bs, wc_ep_deliver, j->ep[r], &j->self[r]) != WU_OK)
            FAIL("transports of %d", r);
        for (int p = 0; p < n; p++)
            wc_ep_peer_set(j->ep[r], p, p == r ? j->self[r] : j->loop[r]);
        wc_ep_start(j->ep[r], false);
    }
}

static void job_destroy(job_t *j)
{
    for (int r = 0; r < j->n; r++) {
        EQ("packets still queued at teardown", 0, wc_ep_sends_pending(j->ep[r]));
        wc_ep_destroy(j->ep[r]);
        j->loop[r]->ops->finalize(j->loop[r]);
        j->self[r]->ops->finalize(j->self[r]);
    }
    wx_loop_fabric_destroy(j->fab);
}

static int job_progress(job_t *j)
{
    int did = 0;
    for (int r = 0; r < j->n; r++)
        did += wc_ep_progress(j->ep[r]);
    return did;
}

static void job_wait(job_t *j, wc_request_t *req, const char *what)
{
    for (long i = 0; !wc_request_is_complete(req); i++) {
        if (i > 10000000)
            FAIL("%s never completed", what);
        job_progress(j);
    }
}

static void fill(char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(seed * 131 + i * 7 + (i >> 8));
}

static void check(const char *b, size_t n, int seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (char)(seed * 131 + i * 7 + (i >> 8)))
            FAIL("%s: byte %zu of %zu differs", what, i, n);
}

/* One message of len bytes 0 -> 1, the receive posted first or after the send. */
static void one_message(job_t *j, size_t len, bool posted_first, const char *what)
{
    char *s = malloc(len + 1), *r = calloc(1, len + 1);
    wc_request_t sreq, rreq;
    memset(&sreq, 0, sizeof(sreq));
    memset(&rreq, 0, sizeof(rreq));
    fill(s, len, (int)len);
    if (posted_first)
        wc_irecv(j->ep[1], &rreq, r, len, 0, 7, CTX);
    wc_isend(j->ep[0], &sreq, s, len, 1, 7, CTX, WC_SEND_STANDARD);
    if (!posted_first) {
        job_progress(j);
        wc_irecv(j->ep[1], &rreq, r, len, 0, 7, CTX);
    }
    job_wait(j, &rreq, what);
    job_wait(j, &sreq, what);
    EQ(what, WU_OK, rreq.error);
    EQ(what, len, rreq.st_bytes);
    EQ(what, 0, rreq.st_source);
    EQ(what, 7, rreq.st_tag);
    check(r, len, (int)len, what);
    free(s);
    free(r);
}

static void test_eager(void)
{
    job_t j;
    job_create(&j, 2, 1024, 512, 256, 4, true);
    for (size_t len = 0; len <= 512; len += 128) {
        one_message(&j, len, true, "eager, posted");
        one_message(&j, len, false, "eager, unexpected");
    }
    job_destroy(&j);
}

static void test_rndv(bool get)
{
    job_t j;
    job_create(&j, 2, 1024, 512, 256, 3, get);
    size_t sizes[] = { 513, 4096, 100000 };
    for (int i = 0; i < 3; i++) {
        one_message(&j, sizes[i], true, get ? "rendezvous by get, posted" : "pipeline, posted");
        one_message(&j, sizes[i], false, get ? "rendezvous by get, unexpected"
                                             : "pipeline, unexpected");
    }
    job_destroy(&j);
}

/* A synchronous send completes only once the receiver has matched it. */
static void test_ssend(void)
{
    size_t sizes[] = { 16, 5000 };
    for (int g = 0; g < 2; g++) {
        job_t j;
        job_create(&j, 2, 1024, 512, 256, 4, g);
        for (int i = 0; i < 2; i++) {
            char s[5000], r[5000];
            fill(s, sizes[i], 3);
            wc_request_t sreq, rreq;
            memset(&sreq, 0, sizeof(sreq));
            memset(&rreq, 0, sizeof(rreq));
            wc_isend(j.ep[0], &sreq, s, sizes[i], 1, 2, CTX, WC_SEND_SYNC);
            for (int k = 0; k < 1000; k++)
                job_progress(&j);
            if (wc_request_is_complete(&sreq))
                FAIL("synchronous send of %zu bytes complete before the receive was posted",
                     sizes[i]);
            wc_irecv(j.ep[1], &rreq, r, sizes[i], 0, 2, CTX);
            job_wait(&j, &rreq, "ssend's receive");
            job_wait(&j, &sreq, "ssend");
            check(r, sizes[i], 3, "ssend data");
        }
        job_destroy(&j);
    }
}

static void test_cancel(void)
{
    job_t j;
    job_create(&j, 2, 1024, 512, 256, 4, true);
    char r[64], s[64], r2[64];
    wc_request_t rreq, sreq, rreq2;
    memset(&rreq, 0, sizeof(rreq));
    memset(&sreq, 0, sizeof(sreq));
    memset(&rreq2, 0, sizeof(rreq2));
    wc_irecv(j.ep[1], &rreq, r, sizeof(r), 0, 9, CTX);
    if (!wc_cancel_recv(&rreq))
        FAIL("cancel of a posted receive failed");
    if (!wc_request_is_complete(&rreq) || !rreq.cancelled)
        FAIL("cancelled receive not complete and marked");
    if (wc_cancel_recv(&rreq))
        FAIL("a completed receive was cancelled again");
    /* the message that would have matched it goes to the next receive */
    fill(s, sizeof(s), 11);
    wc_isend(j.ep[0], &sreq, s, sizeof(s), 1, 9, CTX, WC_SEND_STANDARD);
    for (int k = 0; k < 100; k++)
        job_progress(&j);
    wc_irecv(j.ep[1], &rreq2, r2, sizeof(r2), 0, 9, CTX);
    job_wait(&j, &rreq2, "receive after a cancel");
    job_wait(&j, &sreq, "send after a cancel");
    check(r2, sizeof(r2), 11, "after cancel");
    job_destroy(&j);
}

static void test_truncate(void)
{
    size_t sizes[] = { 400, 3000 };
    for (int g = 0; g < 2; g++) {
        job_t j;
        job_create(&j, 2, 1024, 512, 256, 4, g);
        for (int i = 0; i < 2; i++) {
            for (int late = 0; late < 2; late++) {
                char s[3000], r[3000];
                memset(r, 0x5a, sizeof(r));
                fill(s, sizes[i], 5);
                wc_request_t sreq, rreq;
                memset(&sreq, 0, sizeof(sreq));
                memset(&rreq, 0, sizeof(rreq));
                if (!late)
                    wc_irecv(j.ep[1], &rreq, r, 300, 0, 4, CTX);
                wc_isend(j.ep[0], &sreq, s, sizes[i], 1, 4, CTX, WC_SEND_STANDARD);
                if (late) {
                    job_progress(&j);
                    wc_irecv(j.ep[1], &rreq, r, 300, 0, 4, CTX);
                }
                job_wait(&j, &rreq, "truncated receive");
                job_wait(&j, &sreq, "truncated send");
                EQ("truncation status", WU_ERR_TRUNCATE, rreq.error);
                EQ("bytes delivered", 300, rreq.st_bytes);
                check(r, 300, 5, "truncated data");
                if (r[300] != 0x5a)
                    FAIL("truncated receive wrote past its capacity (%zu bytes sent)", sizes[i]);
            }
        }
        job_destroy(&j);
    }
}

/* Many messages of mixed sizes 0 -> 1 on one tag, all started before any receive, behind a queue
 * of 2 packets: they must match the receives in send order. */
static void test_order(void)
{
    enum { N = 200 };
    for (int g = 0; g < 2; g++) {
        job_t j;
        job_create(&j, 2, 512, 256, 128, 2, g);
        static char s[N][2100], r[N][2100];
        static wc_request_t sreq[N], rreq[N];
        size_t len[N];
        memset(sreq, 0, sizeof(sreq));
        memset(rreq, 0, sizeof(rreq));
        for (int i = 0; i < N; i++) {
            len[i] = (size_t)((i * 97) % 2100);
            if (i % 5 == 0)
                len[i] = (size_t)(i % 8);
            fill(s[i], len[i], i);
            wc_isend(j.ep[0], &sreq[i], s[i], len[i], 1, 1, CTX, WC_SEND_STANDARD);
        }
        if (!wc_ep_sends_pending(j.ep[0]))
            FAIL("a queue of 2 packets took 200 messages without queueing");
        for (int i = 0; i < N; i++)
            wc_irecv(j.ep[1], &rreq[i], r[i], sizeof(r[i]), 0, 1, CTX);
        for (int i = 0; i < N; i++) {
            job_wait(&j, &rreq[i], "ordered receive");
            EQ("message length (order)", len[i], rreq[i].st_bytes);
            check(r[i], len[i], i, "ordered data");
        }
        for (int i = 0; i < N; i++)
            job_wait(&j, &sreq[i], "ordered send");
        job_destroy(&j);
    }
}

static void test_wildcards(void)
{
    job_t j;
    job_create(&j, 4, 1024, 512, 256, 4, true);
    int seen = 0;
    char s[4][600], r[3][600];
    wc_request_t sreq[4], rreq[3];
    memset(sreq, 0, sizeof(sreq));
    memset(rreq, 0, sizeof(rreq));
    for (int i = 0; i < 3; i++)
        wc_irecv(j.ep[0], &rreq[i], r[i], sizeof(r[i]), WC_ANY_SOURCE, WC_ANY_TAG, CTX);
    for (int src = 1; src < 4; src++) {
        size_t n = src == 2 ? 600 : 100;   /* one by rendezvous */
        fill(s[src], n, src);
        wc_isend(j.ep[src], &sreq[src], s[src], n, 0, 20 + src, CTX, WC_SEND_STANDARD);
    }
    for (int i = 0; i < 3; i++) {
        job_wait(&j, &rreq[i], "wildcard receive");
        int src = rreq[i].st_source;
        if (src < 1 || src > 3 || (seen & (1 << src)))
            FAIL("wildcard receive %d: source %d", i, src);
        seen |= 1 << src;
        EQ("wildcard tag", 20 + src, rreq[i].st_tag);
        check(r[i], rreq[i].st_bytes, src, "wildcard data");
    }
    for (int src = 1; src < 4; src++)
        job_wait(&j, &sreq[src], "wildcard send");
    /* any tag from one source, and any source with one tag, on unexpected messages */
    wc_request_t a, b, ra, rb;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&ra, 0, sizeof(ra));
    memset(&rb, 0, sizeof(rb));
    wc_isend(j.ep[3], &a, s[3], 10, 0, 33, CTX, WC_SEND_STANDARD);
    wc_isend(j.ep[2], &b, s[2], 10, 0, 44, CTX, WC_SEND_STANDARD);
    for (int k = 0; k < 10; k++)
        job_progress(&j);
    wc_irecv(j.ep[0], &rb, r[0], 10, WC_ANY_SOURCE, 44, CTX);
    wc_irecv(j.ep[0], &ra, r[1], 10, 3, WC_ANY_TAG, CTX);
    job_wait(&j, &ra, "any tag");
    job_wait(&j, &rb, "any source");
    EQ("any tag: tag", 33, ra.st_tag);
    EQ("any source: source", 2, rb.st_source);
    job_wait(&j, &a, "send a");
    job_wait(&j, &b, "send b");
    job_destroy(&j);
}

/* Several threads send on endpoint 0 to endpoint 1 (one tag each, sequence numbers in the data)
 * while one thread progresses both endpoints; the main thread receives and checks the order. */
enum { MT_THREADS = 3, MT_MSGS = 400 };
static job_t mt_job;
static atomic_int mt_done;

static void *mt_sender(void *arg)
{
    int t = (int)(intptr_t)arg;
    static wc_request_t reqs[MT_THREADS][MT_MSGS];
    static uint32_t bufs[MT_THREADS][MT_MSGS][200];
    for (int i = 0; i < MT_MSGS; i++) {
        size_t words = (size_t)(i % 7 == 0 ? 150 : 2);   /* some by rendezvous */
        for (size_t w = 0; w < words; w++)
            bufs[t][i][w] = (uint32_t)(i * 1000 + (int)w);
        memset(&reqs[t][i], 0, sizeof(reqs[t][i]));
        wc_isend(mt_job.ep[0], &reqs[t][i], bufs[t][i], words * 4, 1, t, CTX,
                 i % 11 == 0 ? WC_SEND_SYNC : WC_SEND_STANDARD);
    }
    for (int i = 0; i < MT_MSGS; i++)
        while (!wc_request_is_complete(&reqs[t][i]))
            wt_thread_yield();
    return NULL;
}

static void *mt_progress(void *arg)
{
    (void)arg;
    while (!atomic_load(&mt_done))
        job_progress(&mt_job);
    return NULL;
}

static void test_mt(void)
{
    job_create(&mt_job, 2, 256, 128, 128, 4, false);
    atomic_store(&mt_done, 0);
    pthread_t prog, snd[MT_THREADS];
    pthread_create(&prog, NULL, mt_progress, NULL);
    for (int t = 0; t < MT_THREADS; t++)
        pthread_create(&snd[t], NULL, mt_sender, (void *)(intptr_t)t);
    static uint32_t r[200];
    for (int i = 0; i < MT_MSGS; i++) {
        for (int t = 0; t < MT_THREADS; t++) {
            wc_request_t rreq;
            memset(&rreq, 0, sizeof(rreq));
            wc_irecv(mt_job.ep[1], &rreq, r, sizeof(r), 0, t, CTX);
            while (!wc_request_is_complete(&rreq))
                wt_thread_yield();
            size_t words = (size_t)(i % 7 == 0 ? 150 : 2);
            EQ("mt length", words * 4, rreq.st_bytes);
            for (size_t w = 0; w < words; w++)
                if (r[w] != (uint32_t)(i * 1000 + (int)w))
                    FAIL("thread %d message %d word %zu: got %u (out of order?)", t, i, w, r[w]);
        }
    }
    for (int t = 0; t < MT_THREADS; t++)
        pthread_join(snd[t], NULL);
    atomic_store(&mt_done, 1);
    pthread_join(prog, NULL);
    job_destroy(&mt_job);
}

int main(void)
{
    wu_config_init();
    wt_thread_set_multi(true);
    test_eager();
    test_rndv(true);
    test_rndv(false);
    test_ssend();
    test_cancel();
    test_truncate();
    test_order();
    test_wildcards();
    test_mt();
    printf("test_ep_loop: ok\n");
    return 0;
}
