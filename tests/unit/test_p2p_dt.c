/* Typed point-to-point in the core (wc_isend_dt / wc_irecv_dt / wc_imrecv_dt) with hand-built
 * layouts: vector, indexed (blocks out of order), struct-like (mixed units), negative stride,
 * contiguous with an offset, bytes. Every pair of layouts with a common packed length is sent on
 * every path: eager, pipelined rendezvous (or CMA under WEFT_SHM_CMA_MIN=1), self, posted and
 * unexpected, ANY_SOURCE, synchronous, probe + matched receive, truncation, and a burst that
 * overflows the ring so packed packets wait in the pending queue. Each received buffer is compared
 * byte by byte with a reference computed here by a walk of the layout independent of the pack
 * engine, gaps included (they must keep their fill byte).
 *
 * Alone (ctest's unit run) the job is a singleton: every message takes the self path. Under mpiexec
 * (tests/mpi/p2p_dt.cmake) each rank sends to the next rank and to itself. */
#include "core/wc_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CTX      5u    /* below the first allocated context id: no communicator uses it */
#define CTX_SYNC 6u

static int me, np;
static int barrier_seq;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        char m_[512];                                                                              \
        snprintf(m_, sizeof(m_), __VA_ARGS__);                                                     \
        fprintf(stderr, "rank %d: %s (%s:%d)\n", me, m_, __FILE__, __LINE__);                      \
        fflush(stderr);                                                                            \
        wc_abort(1, "test_p2p_dt failed");                                                         \
    } while (0)

#define EQ(what, e, g)                                                                             \
    do {                                                                                           \
        long long e_ = (long long)(e), g_ = (long long)(g);                                        \
        if (e_ != g_)                                                                              \
            FAIL("%s expected %lld got %lld", what, e_, g_);                                       \
    } while (0)

/* ---- layouts ---- */

static wc_dtype_seg_t vec_segs[] = { { .disp = 0, .count = 3, .blocklen = 16, .stride = 40, .unit = 8 } };
static wc_dtype_t L_vec = { .size = 48, .extent = 120, .nsegs = 1, .segs = vec_segs };

static wc_dtype_seg_t idx_segs[] = {
    { .disp = 8, .count = 1, .blocklen = 12, .stride = 0, .unit = 4 },
    { .disp = 40, .count = 1, .blocklen = 4, .stride = 0, .unit = 4 },
    { .disp = 0, .count = 1, .blocklen = 4, .stride = 0, .unit = 4 },
};
static wc_dtype_t L_idx = { .size = 20, .extent = 56, .nsegs = 3, .segs = idx_segs };

static wc_dtype_seg_t st_segs[] = {
    { .disp = 0, .count = 1, .blocklen = 4, .stride = 0, .unit = 4 },
    { .disp = 8, .count = 1, .blocklen = 8, .stride = 0, .unit = 8 },
    { .disp = 20, .count = 2, .blocklen = 2, .stride = 4, .unit = 2 },
};
static wc_dtype_t L_struct = { .size = 16, .extent = 32, .nsegs = 3, .segs = st_segs };

static wc_dtype_seg_t neg_segs[] = { { .disp = 24, .count = 4, .blocklen = 4, .stride = -8, .unit = 4 } };
static wc_dtype_t L_neg = { .size = 16, .extent = 32, .nsegs = 1, .segs = neg_segs };

static wc_dtype_seg_t coff_segs[] = { { .disp = 4, .count = 1, .blocklen = 8, .stride = 0, .unit = 8 } };
static wc_dtype_t L_coff = { .size = 8, .extent = 8, .contig = true, .contig_off = 4, .nsegs = 1,
                             .segs = coff_segs };

/* Blocks of 1200 bytes: large enough for the single copy to scatter into (WC_CMA_MIN_BLOCK). */
static wc_dtype_seg_t big_segs[] = { { .disp = 100, .count = 2, .blocklen = 1200, .stride = 1300, .unit = 8 } };
static wc_dtype_t L_big = { .size = 2400, .extent = 2700, .nsegs = 1, .segs = big_segs };

static wc_dtype_seg_t bytes_segs[] = { { .disp = 0, .count = 1, .blocklen = 1, .stride = 0, .unit = 1 } };
static wc_dtype_t L_bytes = { .size = 1, .extent = 1, .contig = true, .nsegs = 1, .segs = bytes_segs };

/* Buffer offset of every packed byte of (count, dt): the reference, walked naively. */
static int64_t *ref_map(const wc_dtype_t *dt, uint64_t count)
{
    int64_t *off = malloc(sizeof(*off) * (count * dt->size + 1));
    uint64_t k = 0;
    for (uint64_t e = 0; e < count; e++)
        for (uint64_t s = 0; s < dt->nsegs; s++)
            for (uint64_t b = 0; b < dt->segs[s].count; b++)
                for (uint64_t i = 0; i < dt->segs[s].blocklen; i++)
                    off[k++] = (int64_t)e * dt->extent + dt->segs[s].disp +
                               (int64_t)b * dt->segs[s].stride + (int64_t)i;
    if (k != count * dt->size)
        FAIL("layout size %llu does not match its segments", (unsigned long long)dt->size);
    return off;
}

static size_t span(const wc_dtype_t *dt, uint64_t count)
{
    return (size_t)count * (size_t)dt->extent + 64;
}

static unsigned char pat(uint64_t k, int seed)
{
    return (unsigned char)(k * 131 + (uint64_t)seed * 7 + (k >> 8) * 17 + 1);
}

/* ---- a core-level barrier on its own context ---- */

static void barrier(void)
{
    int tag = barrier_seq++;
    wc_request_t *r = calloc((size_t)np * 2, sizeof(*r));
    for (int p = 0; p < np; p++)
        if (p != me)
            wc_irecv(wc_ep_default(), &r[p], NULL, 0, p, tag, CTX_SYNC);
    for (int p = 0; p < np; p++)
        if (p != me)
            wc_isend(wc_ep_default(), &r[np + p], NULL, 0, p, tag, CTX_SYNC, WC_SEND_STANDARD);
    for (int p = 0; p < np; p++)
        if (p != me) {
            wc_wait(&r[p]);
            wc_wait(&r[np + p]);
        }
    free(r);
}

/* ---- one case ---- */

typedef struct {
    const wc_dtype_t *sdt, *rdt;
    uint64_t scount, rcount;
    bool posted;       /* receive posted before the send starts (else the message is unexpected) */
    bool sync;
    bool any_source;
    bool probe;        /* unexpected only: wc_iprobe(wc_ep_default(), take) + wc_imrecv_dt */
    bool self;         /* every rank to itself, else to the next rank */
} dtcase_t;

static void check_recv(const dtcase_t *c, const unsigned char *buf, int seed, uint64_t delivered)
{
    size_t n = span(c->rdt, c->rcount);
    int64_t *off = ref_map(c->rdt, c->rcount);
    unsigned char *exp = malloc(n);
    memset(exp, 0xEE, n);
    for (uint64_t k = 0; k < delivered; k++)
        exp[off[k]] = pat(k, seed);
    for (size_t i = 0; i < n; i++)
        if (exp[i] != buf[i])
            FAIL("case seed %d: received byte %zu of %zu expected 0x%02x got 0x%02x (delivered %llu)",
                 seed, i, n, exp[i], buf[i], (unsigned long long)delivered);
    free(exp);
    free(off);
}

static void run_case(const dtcase_t *c, int seed)
{
    int dst = c->self ? me : (me + 1) % np;
    int src = c->self ? me : (me + np - 1) % np;
    size_t sn = span(c->sdt, c->scount), rn = span(c->rdt, c->rcount);
    unsigned char *sbuf = malloc(sn), *rbuf = malloc(rn);
    memset(sbuf, 0x5A, sn);
    memset(rbuf, 0xEE, rn);
    int64_t *soff = ref_map(c->sdt, c->scount);
    uint64_t slen = c->scount * c->sdt->size, rcap = c->rcount * c->rdt->size;
    for (uint64_t k = 0; k < slen; k++)
        sbuf[soff[k]] = pat(k, seed);
    free(soff);

    wc_request_t sreq, rreq;
    int rsrc = c->any_source ? WC_ANY_SOURCE : src;
    wu_status_t st;
    if (c->posted) {
        if ((st = wc_irecv_dt(wc_ep_default(), &rreq, rbuf, c->rcount, c->rdt, rsrc, seed, CTX)) != WU_OK)
            FAIL("wc_irecv_dt: %s", wu_status_str(st));
        barrier();
    }
    if ((st = wc_isend_dt(wc_ep_default(), &sreq, sbuf, c->scount, c->sdt, dst, seed, CTX,
                          c->sync ? WC_SEND_SYNC : WC_SEND_STANDARD)) != WU_OK)
        FAIL("wc_isend_dt: %s", wu_status_str(st));
    if (!c->posted) {
        barrier();
        if (c->probe) {
            wc_probe_info_t info;
            wc_message_t *msg = NULL;
            while (!wc_iprobe(wc_ep_default(), rsrc, seed, CTX, true, &info, &msg))
                ;
            EQ("probed length", slen, info.len);
            EQ("probed source", src, info.source);
            wc_imrecv_dt(wc_ep_default(), &rreq, rbuf, c->rcount, c->rdt, msg);
        } else if ((st = wc_irecv_dt(wc_ep_default(), &rreq, rbuf, c->rcount, c->rdt, rsrc, seed, CTX)) != WU_OK) {
            FAIL("wc_irecv_dt: %s", wu_status_str(st));
        }
    }
    wc_wait(&rreq);
    wc_wait(&sreq);
    uint64_t delivered = slen < rcap ? slen : rcap;
    EQ("send error", WU_OK, sreq.error);
    EQ("receive error", slen > rcap ? WU_ERR_TRUNCATE : WU_OK, rreq.error);
    EQ("received bytes", delivered, rreq.st_bytes);
    EQ("source", src, rreq.st_source);
    EQ("tag", seed, rreq.st_tag);
    check_recv(c, rbuf, seed, delivered);
    free(sbuf);
    free(rbuf);
}

static uint64_t lcm(uint64_t a, uint64_t b)
{
    uint64_t x = a, y = b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* Packed lengths: small, near the eager limit, several fragments. */
static const uint64_t sizes[] = { 240, 14400, 96000 };

static void run_all(void)
{
    struct { const wc_dtype_t *s, *r; } pairs[] = {
        { &L_vec, &L_bytes }, { &L_bytes, &L_vec }, { &L_vec, &L_idx }, { &L_idx, &L_vec },
        { &L_struct, &L_neg }, { &L_neg, &L_coff }, { &L_coff, &L_struct }, { &L_vec, &L_vec },
        { &L_bytes, &L_bytes }, { &L_bytes, &L_big }, { &L_big, &L_vec }, { &L_coff, &L_big },
    };
    int seed = 0, ncases = 0;
    for (int self = 0; self < 2; self++) {
        if (!self && np == 1)
            continue;
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++)
            for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
                for (int v = 0; v < 6; v++) {
                    dtcase_t c = { .sdt = pairs[p].s, .rdt = pairs[p].r, .self = self };
                    /* the size class rounded to whole elements of both layouts */
                    uint64_t unit = lcm(c.sdt->size, c.rdt->size);
                    uint64_t sz = sizes[z] / unit ? sizes[z] / unit * unit : unit;
                    c.scount = sz / c.sdt->size;
                    c.rcount = sz / c.rdt->size;
                    c.posted = v == 0 || v == 2 || v == 4;
                    c.sync = v == 2 || v == 5;
                    c.any_source = v == 2;
                    c.probe = v == 3;
                    if (v >= 4)   /* truncation: room for about two thirds */
                        c.rcount = c.rcount * 2 / 3;
                    run_case(&c, ++seed);
                    ncases++;
                }
    }
    if (me == 0)
        printf("test_p2p_dt: %d cases on %d ranks passed (eager max %zu, fragment %zu, bulk get %d from %zu)\n",
               ncases, np, wc_ep_default()->limits.eager_max, wc_ep_default()->limits.frag_size, wc_ep_default()->limits.get_bulk_min != 0, wc_ep_default()->limits.get_bulk_min);
}

/* Many small packed messages at once: with a small ring (WEFT_SHM_RING_SIZE=8192) most wait in
 * the pending queue and are packed when the queue drains. */
static void run_burst(void)
{
    enum { N = 64, COUNT = 5 };   /* 240 packed bytes each */
    int dst = (me + 1) % np, src = (me + np - 1) % np;
    size_t sn = span(&L_vec, COUNT), rn = span(&L_idx, 12);
    unsigned char *sbuf = malloc(sn * N), *rbuf = malloc(rn * N);
    memset(sbuf, 0x5A, sn * N);
    memset(rbuf, 0xEE, rn * N);
    int64_t *soff = ref_map(&L_vec, COUNT);
    wc_request_t *sr = calloc(N, sizeof(*sr)), *rr = calloc(N, sizeof(*rr));
    for (int i = 0; i < N; i++) {
        for (uint64_t k = 0; k < COUNT * L_vec.size; k++)
            sbuf[sn * i + soff[k]] = pat(k, 1000 + i);
        wc_isend_dt(wc_ep_default(), &sr[i], sbuf + sn * i, COUNT, &L_vec, dst, 1000 + i, CTX, WC_SEND_STANDARD);
    }
    barrier();
    for (int i = N - 1; i >= 0; i--)   /* reverse order: all but the last are unexpected */
        wc_irecv_dt(wc_ep_default(), &rr[i], rbuf + rn * i, 12, &L_idx, src, 1000 + i, CTX);
    dtcase_t c = { .sdt = &L_vec, .rdt = &L_idx, .scount = COUNT, .rcount = 12 };
    for (int i = 0; i < N; i++) {
        wc_wait(&rr[i]);
        wc_wait(&sr[i]);
        EQ("burst receive error", WU_OK, rr[i].error);
        check_recv(&c, rbuf + rn * i, 1000 + i, 240);
    }
    free(soff);
    free(sbuf);
    free(rbuf);
    free(sr);
    free(rr);
}

int main(void)
{
    wu_status_t st = wc_init(false);
    if (st != WU_OK) {
        fprintf(stderr, "wc_init: %s\n", wu_status_str(st));
        return 1;
    }
    me = wc_world.rank;
    np = wc_world.size;
    run_all();
    run_burst();
    barrier();
    wc_finalize();
    return 0;
}
