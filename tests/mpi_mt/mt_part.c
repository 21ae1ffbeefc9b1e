/* Partitioned communication from many threads: every rank sends one message to its right neighbour
 * and receives one from its left, T threads readying the send partitions at once (each its own
 * share, in random order, with MPI_Pready, MPI_Pready_list or MPI_Pready_range) while polling
 * MPI_Parrived on their share of the receive partitions and checking each as soon as it arrived;
 * the two sides cut the message differently (8 send partitions and 2, 8 or 32 receive ones,
 * 4 MiB and 64 KiB); many Start/Wait rounds with new contents.
 *
 * Usage: mt_part [rounds] [--threads=T] [--deadline=S] [--weft] */
#include "mttest.h"

typedef struct shared {
    int *s, *r;
    int sparts, rparts, total;
    long round;
    int cfg;
    MPI_Request rq[2];
} shared_t;

static int val(int src, long round, int cfg, long i)
{
    return (int)(((long)src * 1000003 + round * 7919 + cfg * 104729 + i * 31) & 0x7fffffff);
}

static void check_part(const shared_t *x, int j, int left)
{
    int rc = x->total / x->rparts;
    for (long i = (long)j * rc; i < (long)(j + 1) * rc; i++)
        if (x->r[i] != val(left, x->round, x->cfg, i))
            MT_FAIL("config %d round %ld: receive partition %d element %ld expected %d got %d",
                    x->cfg, x->round, j, i, val(left, x->round, x->cfg, i), x->r[i]);
}

static void worker(int tid, void *arg)
{
    shared_t *x = arg;
    int T = mtt_nthreads, left = (mt_rank + mt_size - 1) % mt_size;
    uint64_t rs = mtt_seed((uint64_t)mt_rank, (uint64_t)tid, (uint64_t)x->round, 5) | 1;
    /* my send partitions: t, t + T, ...; shuffled */
    int mine[64], n = 0;
    for (int p = tid; p < x->sparts; p += T)
        mine[n++] = p;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(mtt_rand(&rs) % (uint64_t)(i + 1)), t = mine[i];
        mine[i] = mine[j], mine[j] = t;
    }
    mtt_at("readying round %ld, %ld partitions", x->round, n);
    int how = (int)((x->round + tid) % 3);
    if (how == 1 && n > 0) {
        MT_CALL(MPI_Pready_list(n, mine, x->rq[0]));
    } else {
        for (int i = 0; i < n; i++) {
            if (how == 2)
                MT_CALL(MPI_Pready_range(mine[i], mine[i], x->rq[0]));
            else
                MT_CALL(MPI_Pready(mine[i], x->rq[0]));
            if (mtt_rand(&rs) % 4 == 0)
                sched_yield();
        }
    }
    /* my receive partitions: t, t + T, ... */
    int want = 0, got = 0;
    char seen[64] = { 0 };
    for (int j = tid; j < x->rparts; j += T)
        want++;
    mtt_at("polling MPI_Parrived round %ld, %ld partitions", x->round, want);
    while (got < want) {
        for (int j = tid; j < x->rparts; j += T) {
            int flag = 0;
            if (seen[j / T])
                continue;
            MT_CALL(MPI_Parrived(x->rq[1], j, &flag));
            if (flag) {
                check_part(x, j, left);
                seen[j / T] = 1;
                got++;
            }
        }
    }
}

int main(int argc, char **argv)
{
    long nums[1] = { 30 };
    mtt_args(argc, argv, nums, 1);
    long rounds = nums[0];
    mtt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    static const struct { int sparts, rparts, total; } cfgs[] = {
        { 8, 8, 1 << 20 }, { 8, 2, 1 << 20 }, { 8, 32, 1 << 14 }, { 64, 8, 1 << 14 },
    };
    for (int c = 0; c < (int)(sizeof(cfgs) / sizeof(cfgs[0])); c++) {
        shared_t x = { .sparts = cfgs[c].sparts, .rparts = cfgs[c].rparts,
                       .total = cfgs[c].total, .cfg = c };
        x.s = mt_malloc(sizeof(int) * (size_t)x.total);
        x.r = mt_malloc(sizeof(int) * (size_t)x.total);
        memset(x.s, 0, sizeof(int) * (size_t)x.total);
        MT_CALL(MPI_Psend_init(x.s, x.sparts, x.total / x.sparts, MPI_INT, right, c,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &x.rq[0]));
        MT_CALL(MPI_Precv_init(x.r, x.rparts, x.total / x.rparts, MPI_INT, left, c,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &x.rq[1]));
        long nr = x.total > 100000 ? rounds / 3 + 1 : rounds;
        for (long round = 0; round < nr; round++) {
            x.round = round;
            for (long i = 0; i < x.total; i++)
                x.s[i] = val(mt_rank, round, c, i), x.r[i] = -1;
            MT_CALL(MPI_Startall(2, x.rq));
            mtt_run(mtt_nthreads, worker, &x);
            mtt_at("MPI_Waitall config %ld round %ld", c, round);
            MT_CALL(MPI_Waitall(2, x.rq, MPI_STATUSES_IGNORE));
            for (int j = 0; j < x.rparts; j++)
                check_part(&x, j, left);
        }
        MT_CALL(MPI_Request_free(&x.rq[0]));
        MT_CALL(MPI_Request_free(&x.rq[1]));
        free(x.s), free(x.r);
    }
    return mtt_finish("mt_part");
}
