/* The large-count (_c) collectives: every one, blocking and nonblocking (all of a round outstanding
 * at once), with MPI_Count counts and MPI_Aint displacements, each result checked element by
 * element against what the test computes. Element i of rank r's contribution is val(r, i), small
 * enough that sums never overflow.
 *
 * With --huge (2 ranks; two buffers of 2 GiB each): MPI_Bcast_c and MPI_Allreduce_c with a count above
 * INT_MAX, and an MPI_Iallgather_c whose buffer holds more than INT_MAX bytes; every byte checked.
 *
 * Usage: coll_bigcount [max_count] [--huge] [--weft] */
#include "mpitest.h"

#include <limits.h>
#include <stdbool.h>

static int me, np;

static int val(int r, MPI_Count i)
{
    return r * 1000 + (int)(i % 997);
}

static void fill(int *b, MPI_Count n, int r)
{
    for (MPI_Count i = 0; i < n; i++)
        b[i] = val(r, i);
}

#define CHECK_AT(what, n, expr_expected, got_arr)                                                  \
    do {                                                                                           \
        for (MPI_Count i_ = 0; i_ < (n); i_++) {                                                   \
            MPI_Count i = i_;                                                                      \
            long long e_ = (long long)(expr_expected), g_ = (long long)(got_arr)[i_];              \
            if (e_ != g_)                                                                          \
                MT_FAIL("%s count %lld element %lld expected %lld got %lld", (what),               \
                        (long long)(n), (long long)i_, e_, g_);                                    \
            (void)i;                                                                               \
        }                                                                                          \
    } while (0)

/* Sum over ranks lo..hi-1 of val(r, i). */
static long long sum_ranks(int lo, int hi, MPI_Count i)
{
    long long s = 0;
    for (int r = lo; r < hi; r++)
        s += val(r, i);
    return s;
}

/* Per-rank count of the v forms: differs between ranks, 0 for some. */
static MPI_Count vcount(int r, MPI_Count n)
{
    return r % 3 == 1 ? n / 2 : n + (MPI_Count)r;
}

typedef struct {
    int *s, *r;
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
    MPI_Datatype *st, *rt;
} bufs_t;

static void bufs_alloc(bufs_t *b, MPI_Count n)
{
    size_t elems = (size_t)(n + 3 * np + 4) * (size_t)np + 16;
    b->s = mt_malloc(elems * sizeof(int));
    b->r = mt_malloc(elems * sizeof(int));
    b->sc = mt_malloc((size_t)np * sizeof(MPI_Count));
    b->rc = mt_malloc((size_t)np * sizeof(MPI_Count));
    b->sd = mt_malloc((size_t)np * sizeof(MPI_Aint));
    b->rd = mt_malloc((size_t)np * sizeof(MPI_Aint));
    b->st = mt_malloc((size_t)np * sizeof(MPI_Datatype));
    b->rt = mt_malloc((size_t)np * sizeof(MPI_Datatype));
}

static void bufs_free(bufs_t *b)
{
    free(b->s), free(b->r), free(b->sc), free(b->rc), free(b->sd), free(b->rd), free(b->st),
        free(b->rt);
}

enum { C_BCAST, C_GATHER, C_GATHERV, C_SCATTER, C_SCATTERV, C_ALLGATHER, C_ALLGATHERV, C_ALLTOALL,
       C_ALLTOALLV, C_ALLTOALLW, C_REDUCE, C_ALLREDUCE, C_RS, C_RSB, C_SCAN, C_EXSCAN, C_COUNT };
static const char *cname[] = { "Bcast_c", "Gather_c", "Gatherv_c", "Scatter_c", "Scatterv_c",
                               "Allgather_c", "Allgatherv_c", "Alltoall_c", "Alltoallv_c",
                               "Alltoallw_c", "Reduce_c", "Allreduce_c", "Reduce_scatter_c",
                               "Reduce_scatter_block_c", "Scan_c", "Exscan_c" };

/* Prepare the buffers of collective k with count n (root `root`), and start it: blocking when req
 * is NULL. */
static void run(int k, bufs_t *b, MPI_Count n, int root, MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    size_t rbytes = ((size_t)(n + 3 * np + 4) * (size_t)np + 16) * sizeof(int);
    memset(b->r, 0xEE, rbytes);
    MPI_Aint off = 0;
    switch (k) {
    case C_BCAST:
        if (me == root)
            fill(b->r, n, root);
        MT_CALL(req ? MPI_Ibcast_c(b->r, n, MPI_INT, root, w, req)
                    : MPI_Bcast_c(b->r, n, MPI_INT, root, w));
        break;
    case C_GATHER:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Igather_c(b->s, n, MPI_INT, b->r, n, MPI_INT, root, w, req)
                    : MPI_Gather_c(b->s, n, MPI_INT, b->r, n, MPI_INT, root, w));
        break;
    case C_GATHERV:
        fill(b->s, vcount(me, n), me);
        for (int p = 0; p < np; p++)
            b->rc[p] = vcount(p, n), b->rd[p] = off + 1, off += b->rc[p] + 1;   /* gaps */
        MT_CALL(req ? MPI_Igatherv_c(b->s, vcount(me, n), MPI_INT, b->r, b->rc, b->rd, MPI_INT, root,
                                     w, req)
                    : MPI_Gatherv_c(b->s, vcount(me, n), MPI_INT, b->r, b->rc, b->rd, MPI_INT, root,
                                    w));
        break;
    case C_SCATTER:
        for (int p = 0; p < np; p++)
            fill(b->s + (size_t)p * (size_t)n, n, root * 100 + p);
        MT_CALL(req ? MPI_Iscatter_c(b->s, n, MPI_INT, b->r, n, MPI_INT, root, w, req)
                    : MPI_Scatter_c(b->s, n, MPI_INT, b->r, n, MPI_INT, root, w));
        break;
    case C_SCATTERV:
        for (int p = np - 1; p >= 0; p--) {   /* blocks in reverse order in the send buffer */
            b->sc[p] = vcount(p, n), b->sd[p] = off, off += b->sc[p] + 2;
            fill(b->s + b->sd[p], b->sc[p], root * 100 + p);
        }
        MT_CALL(req ? MPI_Iscatterv_c(b->s, b->sc, b->sd, MPI_INT, b->r, vcount(me, n), MPI_INT,
                                      root, w, req)
                    : MPI_Scatterv_c(b->s, b->sc, b->sd, MPI_INT, b->r, vcount(me, n), MPI_INT,
                                     root, w));
        break;
    case C_ALLGATHER:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Iallgather_c(b->s, n, MPI_INT, b->r, n, MPI_INT, w, req)
                    : MPI_Allgather_c(b->s, n, MPI_INT, b->r, n, MPI_INT, w));
        break;
    case C_ALLGATHERV:
        fill(b->s, vcount(me, n), me);
        for (int p = 0; p < np; p++)
            b->rc[p] = vcount(p, n), b->rd[p] = off + 1, off += b->rc[p] + 1;
        MT_CALL(req ? MPI_Iallgatherv_c(b->s, vcount(me, n), MPI_INT, b->r, b->rc, b->rd, MPI_INT,
                                        w, req)
                    : MPI_Allgatherv_c(b->s, vcount(me, n), MPI_INT, b->r, b->rc, b->rd, MPI_INT,
                                       w));
        break;
    case C_ALLTOALL:
        for (int p = 0; p < np; p++)
            fill(b->s + (size_t)p * (size_t)n, n, me * 100 + p);
        MT_CALL(req ? MPI_Ialltoall_c(b->s, n, MPI_INT, b->r, n, MPI_INT, w, req)
                    : MPI_Alltoall_c(b->s, n, MPI_INT, b->r, n, MPI_INT, w));
        break;
    case C_ALLTOALLV:
    case C_ALLTOALLW: {
        /* to rank p: vcount(me + p, n) elements; from p: vcount(p + me, n) */
        MPI_Aint roff = 0;
        for (int p = 0; p < np; p++) {
            b->sc[p] = vcount(me + p, n), b->sd[p] = off, off += b->sc[p] + 1;
            b->rc[p] = vcount(p + me, n), b->rd[p] = roff, roff += b->rc[p] + 3;
            fill(b->s + b->sd[p], b->sc[p], me * 100 + p);
            b->st[p] = b->rt[p] = MPI_INT;
        }
        if (k == C_ALLTOALLV) {
            MT_CALL(req ? MPI_Ialltoallv_c(b->s, b->sc, b->sd, MPI_INT, b->r, b->rc, b->rd, MPI_INT,
                                           w, req)
                        : MPI_Alltoallv_c(b->s, b->sc, b->sd, MPI_INT, b->r, b->rc, b->rd, MPI_INT,
                                          w));
        } else {
            for (int p = 0; p < np; p++)   /* alltoallw: displacements in bytes */
                b->sd[p] *= (MPI_Aint)sizeof(int), b->rd[p] *= (MPI_Aint)sizeof(int);
            MT_CALL(req ? MPI_Ialltoallw_c(b->s, b->sc, b->sd, b->st, b->r, b->rc, b->rd, b->rt, w,
                                           req)
                        : MPI_Alltoallw_c(b->s, b->sc, b->sd, b->st, b->r, b->rc, b->rd, b->rt, w));
        }
        break;
    }
    case C_REDUCE:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Ireduce_c(b->s, b->r, n, MPI_INT, MPI_SUM, root, w, req)
                    : MPI_Reduce_c(b->s, b->r, n, MPI_INT, MPI_SUM, root, w));
        break;
    case C_ALLREDUCE:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Iallreduce_c(b->s, b->r, n, MPI_INT, MPI_SUM, w, req)
                    : MPI_Allreduce_c(b->s, b->r, n, MPI_INT, MPI_SUM, w));
        break;
    case C_RS: {
        MPI_Count tot = 0;
        for (int p = 0; p < np; p++)
            b->rc[p] = vcount(p, n), tot += b->rc[p];
        fill(b->s, tot, me);
        MT_CALL(req ? MPI_Ireduce_scatter_c(b->s, b->r, b->rc, MPI_INT, MPI_SUM, w, req)
                    : MPI_Reduce_scatter_c(b->s, b->r, b->rc, MPI_INT, MPI_SUM, w));
        break;
    }
    case C_RSB:
        fill(b->s, n * np, me);
        MT_CALL(req ? MPI_Ireduce_scatter_block_c(b->s, b->r, n, MPI_INT, MPI_SUM, w, req)
                    : MPI_Reduce_scatter_block_c(b->s, b->r, n, MPI_INT, MPI_SUM, w));
        break;
    case C_SCAN:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Iscan_c(b->s, b->r, n, MPI_INT, MPI_SUM, w, req)
                    : MPI_Scan_c(b->s, b->r, n, MPI_INT, MPI_SUM, w));
        break;
    case C_EXSCAN:
        fill(b->s, n, me);
        MT_CALL(req ? MPI_Iexscan_c(b->s, b->r, n, MPI_INT, MPI_SUM, w, req)
                    : MPI_Exscan_c(b->s, b->r, n, MPI_INT, MPI_SUM, w));
        break;
    }
}

/* Check the result of collective k (buffers as run() left them). */
static void check(int k, bufs_t *b, MPI_Count n, int root)
{
    const char *what = cname[k];
    const int guard = (int)0xEEEEEEEE;
    switch (k) {
    case C_BCAST:
        CHECK_AT(what, n, val(root, i), b->r);
        break;
    case C_GATHER:
        if (me == root)
            for (int p = 0; p < np; p++)
                CHECK_AT(what, n, val(p, i), b->r + (size_t)p * (size_t)n);
        break;
    case C_GATHERV:
    case C_ALLGATHERV:
        if (me == root || k == C_ALLGATHERV)
            for (int p = 0; p < np; p++) {
                CHECK_AT(what, b->rc[p], val(p, i), b->r + b->rd[p]);
                MT_EQ("gap before a block untouched", guard, b->r[b->rd[p] - 1]);
            }
        break;
    case C_SCATTER:
        CHECK_AT(what, n, val(root * 100 + me, i), b->r);
        break;
    case C_SCATTERV:
        CHECK_AT(what, vcount(me, n), val(root * 100 + me, i), b->r);
        MT_EQ("past the block untouched", guard, b->r[vcount(me, n)]);
        break;
    case C_ALLGATHER:
        for (int p = 0; p < np; p++)
            CHECK_AT(what, n, val(p, i), b->r + (size_t)p * (size_t)n);
        break;
    case C_ALLTOALL:
        for (int p = 0; p < np; p++)
            CHECK_AT(what, n, val(p * 100 + me, i), b->r + (size_t)p * (size_t)n);
        break;
    case C_ALLTOALLV:
    case C_ALLTOALLW:
        for (int p = 0; p < np; p++) {
            MPI_Aint d = k == C_ALLTOALLW ? b->rd[p] / (MPI_Aint)sizeof(int) : b->rd[p];
            CHECK_AT(what, b->rc[p], val(p * 100 + me, i), b->r + d);
            MT_EQ("gap after a block untouched", guard, b->r[d + b->rc[p]]);
        }
        break;
    case C_REDUCE:
        if (me == root)
            CHECK_AT(what, n, sum_ranks(0, np, i), b->r);
        break;
    case C_ALLREDUCE:
        CHECK_AT(what, n, sum_ranks(0, np, i), b->r);
        break;
    case C_RS: {
        MPI_Count off = 0;
        for (int p = 0; p < me; p++)
            off += vcount(p, n);
        CHECK_AT(what, vcount(me, n), sum_ranks(0, np, off + i), b->r);
        break;
    }
    case C_RSB:
        CHECK_AT(what, n, sum_ranks(0, np, (MPI_Count)me * n + i), b->r);
        break;
    case C_SCAN:
        CHECK_AT(what, n, sum_ranks(0, me + 1, i), b->r);
        break;
    case C_EXSCAN:
        if (me > 0)
            CHECK_AT(what, n, sum_ranks(0, me, i), b->r);
        break;
    }
}

static void round_all(MPI_Count n, int root, bool nb)
{
    bufs_t b[C_COUNT];
    MPI_Request req[C_COUNT];
    for (int k = 0; k < C_COUNT; k++) {
        bufs_alloc(&b[k], n);
        run(k, &b[k], n, root, nb ? &req[k] : NULL);
        if (!nb)
            check(k, &b[k], n, root);
    }
    if (nb) {
        MT_CALL(MPI_Waitall(C_COUNT, req, MPI_STATUSES_IGNORE));
        for (int k = 0; k < C_COUNT; k++)
            check(k, &b[k], n, root);
    }
    for (int k = 0; k < C_COUNT; k++)
        bufs_free(&b[k]);
}

static void reduce_local(MPI_Count n)
{
    int *in = mt_malloc((size_t)n * sizeof(int) + 4), *io = mt_malloc((size_t)n * sizeof(int) + 4);
    memset(in, 0, (size_t)n * sizeof(int) + 4);
    memset(io, 0, (size_t)n * sizeof(int) + 4);
    fill(in, n, 1);
    fill(io, n, 2);
    MT_CALL(MPI_Reduce_local_c(in, io, n, MPI_INT, MPI_SUM));
    CHECK_AT("Reduce_local_c", n, val(1, i) + val(2, i), io);
    free(in);
    free(io);
}

/* Counts above INT_MAX: bytes, so a buffer is a little over 2 GiB. */
static void huge(void)
{
    const MPI_Count n = (MPI_Count)INT_MAX + 4099;
    uint8_t *a = mt_malloc((size_t)n), *c = mt_malloc((size_t)n);
    /* Bcast_c from rank 1 */
    for (MPI_Count i = 0; i < n; i++)
        a[i] = me == 1 ? (uint8_t)(i * 7 + (i >> 24)) : 0;
    double t0 = MPI_Wtime();
    MT_CALL(MPI_Bcast_c(a, n, MPI_UINT8_T, 1, MPI_COMM_WORLD));
    double tb = MPI_Wtime() - t0;
    for (MPI_Count i = 0; i < n; i++)
        if (a[i] != (uint8_t)(i * 7 + (i >> 24)))
            MT_FAIL("huge Bcast_c byte %lld expected %u got %u", (long long)i,
                    (uint8_t)(i * 7 + (i >> 24)), a[i]);
    /* Allreduce_c: the sum of (i + r) & 3 over the ranks fits a byte */
    for (MPI_Count i = 0; i < n; i++)
        a[i] = (uint8_t)((i + me) & 3);
    t0 = MPI_Wtime();
    MT_CALL(MPI_Allreduce_c(a, c, n, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD));
    double ta = MPI_Wtime() - t0;
    for (MPI_Count i = 0; i < n; i++) {
        unsigned e = 0;
        for (int r = 0; r < np; r++)
            e += (unsigned)((i + r) & 3);
        if (c[i] != (uint8_t)e)
            MT_FAIL("huge Allreduce_c byte %lld expected %u got %u", (long long)i, (uint8_t)e, c[i]);
    }
    /* Iallgather_c in place into c: blocks of n / np bytes, more than INT_MAX bytes in all */
    MPI_Count per = n / np;
    uint8_t *g = c;
    for (MPI_Count i = 0; i < per; i++)
        g[(size_t)(me * per + i)] = (uint8_t)(i * 13 + me);
    MPI_Request r;
    t0 = MPI_Wtime();
    MT_CALL(MPI_Iallgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, per, MPI_UINT8_T,
                             MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    double tg = MPI_Wtime() - t0;
    if (me == 0)
        printf("huge: Bcast_c %.2f s, Allreduce_c %.2f s, Iallgather_c %.2f s\n", tb, ta, tg);
    for (int p = 0; p < np; p++)
        for (MPI_Count i = 0; i < per; i++)
            if (g[(size_t)(p * per + i)] != (uint8_t)(i * 13 + p))
                MT_FAIL("huge Iallgather_c block %d byte %lld expected %u got %u", p, (long long)i,
                        (uint8_t)(i * 13 + p), g[(size_t)(p * per + i)]);
    free(c);
    free(a);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long max_count = mt_init_args(argc, argv, 100000);
    bool do_huge = false;
    for (int i = 1; i < argc; i++)
        do_huge |= strcmp(argv[i], "--huge") == 0;
    me = mt_rank, np = mt_size;
    if (do_huge) {
        huge();
        return mt_finish("coll_bigcount --huge");
    }
    static const MPI_Count counts[] = { 0, 1, 7, 1000, 30000, 100000, 600000 };
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        MPI_Count n = counts[ci];
        if (n > max_count)
            break;
        int root = (int)(ci % (size_t)np);
        round_all(n, root, false);
        round_all(n, (root + 1) % np, true);
        reduce_local(n);
    }
    return mt_finish("coll_bigcount");
}
