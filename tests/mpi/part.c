/* Partitioned communication (MPI 4.1 chapter 4), one thread: every rank sends to its right
 * neighbour and receives from its left one, the two sides cutting the message into different
 * numbers of partitions; many Start/Wait rounds with new contents; partitions readied in random
 * order with MPI_Pready, MPI_Pready_range and MPI_Pready_list, the receiver polling MPI_Parrived
 * and checking each partition as soon as it says it arrived; an early partition arrives while the
 * later ones are not ready yet; errors. Argument: rounds. */
#include "mpitest.h"

typedef struct pcase {
    int sparts, rparts;   /* partitions of each side */
    int total;            /* ints in all */
} pcase_t;

static const pcase_t pcases[] = {
    { 8, 8, 64 * 1024 },      /* 256 KiB, same cut */
    { 8, 2, 24000 },
    { 4, 12, 24000 },         /* receive partitions smaller than send ones */
    { 1000, 10, 3000 },       /* many small send partitions */
    { 1, 6, 6000 },
    { 6, 4, 3 << 18 },        /* 3 MiB */
    { 3, 3, 0 },              /* empty */
};

static int val(int src, long round, int c, int i)
{
    return (int)(((long)src * 1000003 + round * 7919 + c * 104729 + i * 31) & 0x7fffffff);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void shuffle(int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd() % (uint64_t)(i + 1)), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

static void check_part(const int *r, int j, int rcount, int src, long round, int c)
{
    for (int i = j * rcount; i < (j + 1) * rcount; i++)
        if (r[i] != val(src, round, c, i))
            MT_FAIL("case %d round %ld: partition %d element %d expected %d got %d", c, round, j,
                    i, val(src, round, c, i), r[i]);
}

static void test_case(int c, long rounds)
{
    const pcase_t *k = &pcases[c];
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int scount = k->total / k->sparts, rcount = k->total / k->rparts;
    int *s = mt_malloc(sizeof(int) * (size_t)(k->total + 1));
    int *r = mt_malloc(sizeof(int) * (size_t)(k->total + 1));
    int *order = mt_malloc(sizeof(int) * (size_t)k->sparts);
    int *seen = mt_malloc(sizeof(int) * (size_t)k->rparts);
    int *rdy = mt_malloc(sizeof(int) * (size_t)k->sparts);
    MPI_Request rq[2];
    memset(s, 0, sizeof(int) * (size_t)(k->total + 1));
    MT_CALL(MPI_Psend_init(s, k->sparts, scount, MPI_INT, right, 10 + c, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &rq[0]));
    MT_CALL(MPI_Precv_init(r, k->rparts, rcount, MPI_INT, left, 10 + c, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &rq[1]));
    for (long round = 0; round < rounds; round++) {
        for (int i = 0; i < k->total; i++)
            s[i] = val(mt_rank, round, c, i), r[i] = -1;
        memset(seen, 0, sizeof(int) * (size_t)k->rparts);
        if (round % 2) {
            MT_CALL(MPI_Startall(2, rq));
        } else {
            MT_CALL(MPI_Start(&rq[1]));
            MT_CALL(MPI_Start(&rq[0]));
        }
        for (int i = 0; i < k->sparts; i++)
            order[i] = i;
        shuffle(order, k->sparts);
        int nseen = 0, nready = 0;
        memset(rdy, 0, sizeof(int) * (size_t)k->sparts);
        for (int i = 0; nready < k->sparts; i++) {
            int p = order[i];
            if (rdy[p])
                continue;
            /* ready the next few partitions, one of three ways */
            int how = (int)((round + (long)i) % 3);
            if (how == 0) {
                MT_CALL(MPI_Pready(p, rq[0]));
                rdy[p] = 1, nready++;
            } else if (how == 1) {
                int list[3], m = 0;
                for (int q = i; q < k->sparts && m < 3; q++)
                    if (!rdy[order[q]])
                        list[m++] = order[q], rdy[order[q]] = 1;
                MT_CALL(MPI_Pready_list(m, list, rq[0]));
                nready += m;
            } else {
                int hi = p;
                while (hi + 1 < k->sparts && !rdy[hi + 1] && hi - p < 4)
                    hi++;
                MT_CALL(MPI_Pready_range(p, hi, rq[0]));
                for (int q = p; q <= hi; q++)
                    rdy[q] = 1, nready++;
            }
            /* poll some receive partitions */
            for (int j = 0; j < k->rparts; j++) {
                int flag = 0;
                if (seen[j])
                    continue;
                MT_CALL(MPI_Parrived(rq[1], j, &flag));
                if (flag) {
                    check_part(r, j, rcount, left, round, c);
                    seen[j] = 1;
                    nseen++;
                }
            }
        }
        while (nseen < k->rparts) {
            for (int j = 0; j < k->rparts; j++) {
                int flag = 0;
                if (seen[j])
                    continue;
                MT_CALL(MPI_Parrived(rq[1], j, &flag));
                if (flag) {
                    check_part(r, j, rcount, left, round, c);
                    seen[j] = 1;
                    nseen++;
                }
            }
        }
        MPI_Status st[2];
        MT_CALL(MPI_Waitall(2, rq, st));
        for (int j = 0; j < k->rparts; j++)
            check_part(r, j, rcount, left, round, c);
        int cnt = -1;
        MT_CALL(MPI_Get_count(&st[1], MPI_INT, &cnt));
        MT_EQ("received count", k->total, cnt);
        MT_EQ("status source", left, st[1].MPI_SOURCE);
        MT_EQ("status tag", 10 + c, st[1].MPI_TAG);
    }
    MT_CALL(MPI_Request_free(&rq[0]));
    MT_CALL(MPI_Request_free(&rq[1]));
    free(s), free(r), free(order), free(seen), free(rdy);
}

/* Rank 0 readies partition 0 of 4 only; rank 1 sees it arrive and says so; then the rest. The
 * standard allows an implementation to hold every partition until the last is ready (MPICH 4.0
 * does): Weft's early transfer is checked with --weft only. */
static void test_early(void)
{
    if (mt_size < 2 || mt_rank > 1)
        return;
    enum { N = 4, C = 50000 };
    int *b = mt_malloc(sizeof(int) * N * C);
    MPI_Request q;
    int ack = 0;
    for (int round = 0; round < 5; round++) {
        if (mt_rank == 0) {
            for (int i = 0; i < N * C; i++)
                b[i] = val(0, round, 99, i);
            MT_CALL(MPI_Psend_init(b, N, C, MPI_INT, 1, 99, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            MT_CALL(MPI_Start(&q));
            MT_CALL(MPI_Pready(0, q));
            MT_CALL(MPI_Recv(&ack, 1, MPI_INT, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_CALL(MPI_Pready_range(1, N - 1, q));
        } else {
            for (int i = 0; i < N * C; i++)
                b[i] = -1;
            MT_CALL(MPI_Precv_init(b, N, C, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
            MT_CALL(MPI_Start(&q));
            int flag = 0;
            while (!flag)
                MT_CALL(MPI_Parrived(q, 0, &flag));
            check_part(b, 0, C, 0, round, 99);
            for (int j = 1; j < N; j++) {
                MT_CALL(MPI_Parrived(q, j, &flag));
                MT_EQ("a partition not readied yet arrived", 0, flag);
            }
            MT_CALL(MPI_Send(&ack, 1, MPI_INT, 0, 98, MPI_COMM_WORLD));
        }
        MT_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
        if (mt_rank == 1)
            for (int j = 0; j < N; j++)
                check_part(b, j, C, 0, round, 99);
        MT_CALL(MPI_Request_free(&q));
    }
    free(b);
}

/* Errors (Weft's checks of erroneous programs): Pready on an inactive request, a partition out of
 * range or readied twice, freeing an active request; sizes that differ truncate. */
static void test_errors(void)
{
    MPI_Comm c;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MT_CALL(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int s[8], r[8];
    MPI_Request q[2];
    MT_CALL(MPI_Psend_init(s, 2, 4, MPI_INT, right, 1, c, MPI_INFO_NULL, &q[0]));
    MT_CALL(MPI_Precv_init(r, 2, 2, MPI_INT, left, 1, c, MPI_INFO_NULL, &q[1]));   /* 4 ints < 8 */
    MT_CLASS_EQ("MPI_Pready before MPI_Start", MPI_ERR_REQUEST, MPI_Pready(0, q[0]));
    MT_CALL(MPI_Startall(2, q));
    MT_CLASS_EQ("MPI_Pready of partition 2 of 2", MPI_ERR_ARG, MPI_Pready(2, q[0]));
    MT_CLASS_EQ("MPI_Parrived of a send request", MPI_ERR_REQUEST,
                MPI_Parrived(q[0], 0, &(int){ 0 }));
    MT_CLASS_EQ("MPI_Start of an active request", MPI_ERR_REQUEST, MPI_Start(&q[0]));
    MT_CALL(MPI_Pready(0, q[0]));
    MT_CLASS_EQ("MPI_Pready twice", MPI_ERR_ARG, MPI_Pready(0, q[0]));
    MT_CLASS_EQ("MPI_Request_free of an active request", MPI_ERR_REQUEST, MPI_Request_free(&q[1]));
    MT_CALL(MPI_Pready(1, q[0]));
    MT_CALL(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    MT_CLASS_EQ("receive of 16 bytes from a 32-byte partitioned send", MPI_ERR_TRUNCATE,
                MPI_Wait(&q[1], MPI_STATUS_IGNORE));
    MT_CALL(MPI_Request_free(&q[0]));
    MT_CALL(MPI_Request_free(&q[1]));
    MT_CALL(MPI_Comm_free(&c));
}

/* Empty partitions (count 0) in a ring: a receive partition has not arrived before its sender
 * started and readied, and has after (mpi4py's suite does this). */
static void test_empty(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    for (int parts = 1; parts <= 3; parts++) {
        int sb[1], rb[1];
        MPI_Request s, r;
        MT_CALL(MPI_Psend_init(sb, parts, 0, MPI_INT, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        MT_CALL(MPI_Precv_init(rb, parts, 0, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        for (int round = 0; round < 3; round++) {
            int flag = -1;
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MT_CALL(MPI_Start(&r));
            for (int i = 0; i < parts; i++) {
                MT_CALL(MPI_Parrived(r, i, &flag));
                MT_EQ("MPI_Parrived of an empty partition before the sender started", 0, flag);
            }
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MT_CALL(MPI_Start(&s));
            for (int i = 0; i < parts; i++)
                MT_CALL(MPI_Pready(i, s));
            for (int i = 0; i < parts; i++)
                do
                    MT_CALL(MPI_Parrived(r, i, &flag));
                while (!flag);
            MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            MT_CALL(MPI_Wait(&s, MPI_STATUS_IGNORE));
        }
        MT_CALL(MPI_Request_free(&s));
        MT_CALL(MPI_Request_free(&r));
    }
}

int main(int argc, char **argv)
{
    long rounds = mt_init_args(argc, argv, 20);
    mt_init(&argc, &argv);
    rng += (uint64_t)mt_rank * 7777;
    for (int c = 0; c < (int)(sizeof(pcases) / sizeof(pcases[0])); c++)
        test_case(c, c == 5 ? rounds / 4 + 1 : rounds);
    test_empty();
    if (mt_weft) {
        test_early();
        test_errors();
    }
    return mt_finish("part");
}
