/* Stress: many small messages from every thread at once, and some large ones among them.
 * Worker thread t of every rank exchanges small messages (0..64 bytes) with thread t of every other
 * rank, in rounds of B per peer: receives posted first, then Isends (every 8th an Issend), then
 * Waitall or a Waitsome loop. Even threads receive from each source on tag t. Odd threads receive
 * with MPI_ANY_SOURCE on a tag of the thread and round (ANYTAG), so that a round cannot take a
 * message of a later round and leave an Issend of this round unmatched; their receives are matched
 * in posted order per source, so walking them in that order, each source's messages must come in
 * sequence. Every L-th round also moves
 * one large message (256 KiB .. 1 MiB, rendezvous) per peer on tag LARGE + t. Every byte is checked.
 * Arguments: n (small messages sent per rank, default 1500000), L (default 32), --threads=T. */
#include "mttest.h"

#define B 32        /* small messages per peer and round */
#define SMALL 64    /* largest small message */
#define LARGE 1000  /* tag base of the large messages */
#define ANYTAG(t, r) (2000 + (int)((r) % 4) * MTT_MAX_THREADS + (t))
#define LMIN 262144
#define LMAX 1048576

static long n_total = 1500000, every_l = 32;
static long per_peer; /* small messages per thread and peer */

static int small_size(int src, int t, long seq) { return (int)(mtt_seed(src, t, seq, 1) % (SMALL + 1)); }
static uint64_t small_seed(int src, int t, long seq) { return mtt_seed(src, t, seq, 0); }
static int large_size(int src, int t, long r) { return LMIN + (int)(mtt_seed(src, t, r, 3) % (LMAX - LMIN + 1)); }
static uint64_t large_seed(int src, int t, long r) { return mtt_seed(src, t, r, 4); }

static void worker(int t, void *arg)
{
    int peers[MTT_MAX_THREADS], np = 0;
    for (int p = 0; p < mt_size; p++)
        if (p != mt_rank)
            peers[np++] = p;
    const int any = t % 2 == 1;
    const int maxreq = 2 * np * (B + 1);
    MPI_Request *req = mt_malloc(sizeof(MPI_Request) * maxreq);
    MPI_Status *st = mt_malloc(sizeof(MPI_Status) * maxreq);
    int *idx = mt_malloc(sizeof(int) * maxreq);
    uint8_t *rsmall = mt_malloc((size_t)np * B * SMALL), *ssmall = mt_malloc((size_t)np * B * SMALL);
    uint8_t *rlarge = mt_malloc((size_t)np * LMAX), *slarge = mt_malloc((size_t)np * LMAX);
    long next[MTT_MAX_THREADS] = {0}; /* by rank: seq of the next small message expected */
    long sent = 0, received = 0;

    for (long r = 0; r * B < per_peer; r++) {
        const int nb = per_peer - r * B < B ? (int)(per_peer - r * B) : B;
        const int tag = any ? ANYTAG(t, r) : t;
        const int large = every_l > 0 && r % every_l == every_l - 1;
        int nreq = 0;
        mtt_at("round %ld: posting receives%.0ld", r, 0);
        for (int j = 0; j < np; j++)
            for (int m = 0; m < nb; m++, nreq++)
                MT_CALL(MPI_Irecv(rsmall + (size_t)nreq * SMALL, SMALL, MPI_BYTE, any ? MPI_ANY_SOURCE : peers[j],
                                  tag, MPI_COMM_WORLD, &req[nreq]));
        const int nsmall = nreq;
        if (large)
            for (int j = 0; j < np; j++)
                MT_CALL(MPI_Irecv(rlarge + (size_t)j * LMAX, LMAX, MPI_BYTE, peers[j], LARGE + t, MPI_COMM_WORLD,
                                  &req[nreq++]));
        const int nrecv = nreq;
        mtt_at("round %ld: sending%.0ld", r, 0);
        for (int j = 0; j < np; j++) {
            for (int m = 0; m < nb; m++) {
                long seq = r * B + m;
                int sz = small_size(mt_rank, t, seq);
                uint8_t *b = ssmall + (size_t)(j * B + m) * SMALL;
                mtt_fill(b, sz, small_seed(mt_rank, t, seq));
                if (seq % 8 == 7)
                    MT_CALL(MPI_Issend(b, sz, MPI_BYTE, peers[j], tag, MPI_COMM_WORLD, &req[nreq++]));
                else
                    MT_CALL(MPI_Isend(b, sz, MPI_BYTE, peers[j], tag, MPI_COMM_WORLD, &req[nreq++]));
            }
            if (large) {
                int sz = large_size(mt_rank, t, r);
                mtt_fill(slarge + (size_t)j * LMAX, sz, large_seed(mt_rank, t, r));
                MT_CALL(MPI_Isend(slarge + (size_t)j * LMAX, sz, MPI_BYTE, peers[j], LARGE + t, MPI_COMM_WORLD,
                                  &req[nreq++]));
            }
        }
        sent += (long)np * nb;
        if (r % 2 == 0) {
            mtt_at("round %ld: MPI_Waitall over %ld requests", r, nreq);
            MT_CALL(MPI_Waitall(nreq, req, st));
        } else {
            /* Waitsome, keeping each status at its request's index */
            MPI_Status *one = mt_malloc(sizeof(MPI_Status) * nreq);
            mtt_at("round %ld: MPI_Waitsome over %ld requests", r, nreq);
            for (int left = nreq; left > 0;) {
                int out = -1;
                MT_CALL(MPI_Waitsome(nreq, req, &out, idx, one));
                MT_TRUE(out >= 1 && out <= left, "round %ld: Waitsome outcount expected 1..%d got %d", r, left, out);
                for (int k = 0; k < out; k++) {
                    MT_TRUE(idx[k] >= 0 && idx[k] < nreq && req[idx[k]] == MPI_REQUEST_NULL,
                            "round %ld: Waitsome index %d expected a completed request", r, idx[k]);
                    st[idx[k]] = one[k];
                }
                left -= out;
            }
            free(one);
        }
        /* small messages in posted order: per source, in sequence */
        for (int i = 0; i < nsmall; i++) {
            int src = any ? st[i].MPI_SOURCE : peers[i / nb];
            MT_TRUE(src >= 0 && src < mt_size && src != mt_rank, "round %ld: receive %d source expected another rank "
                    "got %d", r, i, src);
            long seq = next[src]++;
            MT_TRUE(seq < per_peer, "round %ld: rank %d sent more than %ld messages", r, src, per_peer);
            int sz = small_size(src, t, seq);
            MT_TRUE(seq >= r * B, "round %ld: message from rank %d expected seq from %ld on got %ld", r, src, r * B, seq);
            MTT_STATUS("small message (source, seq)", src, seq, st[i], src, tag, sz);
            mtt_check(rsmall + (size_t)i * SMALL, sz, small_seed(src, t, seq), "small message (source, seq)", src,
                      seq);
        }
        received += nsmall;
        for (int i = nsmall; i < nrecv; i++) {
            int src = peers[i - nsmall], sz = large_size(src, t, r);
            MTT_STATUS("large message (source, round)", src, r, st[i], src, LARGE + t, sz);
            mtt_check(rlarge + (size_t)(i - nsmall) * LMAX, sz, large_seed(src, t, r), "large message (source, round)",
                      src, r);
        }
        mtt_count(nsmall);
    }
    for (int j = 0; j < np; j++)
        if (next[peers[j]] != per_peer)
            MT_FAIL("small messages from rank %d expected %ld got %ld", peers[j], per_peer, next[peers[j]]);
    MT_EQ("small messages sent", per_peer * np, sent);
    MT_EQ("small messages received", per_peer * np, received);
    free(req);
    free(st);
    free(idx);
    free(rsmall);
    free(ssmall);
    free(rlarge);
    free(slarge);
}

int main(int argc, char **argv)
{
    long nums[2] = {1500000, 32};
    mtt_args(argc, argv, nums, 2);
    n_total = nums[0];
    every_l = nums[1];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2 && mt_size <= MTT_MAX_THREADS, "run with 2..%d ranks", MTT_MAX_THREADS);
    MT_TRUE(n_total >= 1 && every_l >= 0, "arguments expected n >= 1 and L >= 0 got %ld %ld", n_total, every_l);
    long per = (long)mtt_nthreads * (mt_size - 1);
    per_peer = (n_total + per - 1) / per;
    double t0 = MPI_Wtime();
    mtt_run(mtt_nthreads, worker, NULL);
    double dt = MPI_Wtime() - t0;
    if (mt_rank == 0)
        printf("mt_stress: %ld small messages sent per rank in %.1f s (%.0f per second per rank)\n",
               per_peer * per, dt, per_peer * per / dt);
    return mtt_finish("mt_stress");
}
