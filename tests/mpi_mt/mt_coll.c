/* Collectives from several threads at once, each thread on its own communicator (a duplicate of
 * MPI_COMM_WORLD made by the main thread, in the same order on every rank): Bcast, Allreduce,
 * Allgather, Alltoall, Reduce_scatter_block, Scan and Barrier, blocking and nonblocking (several
 * outstanding per thread), sizes 8 B .. 64 KiB. Every result is checked against the value each
 * rank's contribution implies.
 *
 * Usage: mt_coll [iterations] [--threads=T] [--deadline=S] [--weft] */
#include "mttest.h"

static long iters = 100;
static MPI_Comm comms[MTT_MAX_THREADS];

static int val(int rank, int tid, long it, int i)
{
    return (int)((rank * 131 + tid * 17 + it * 7 + i) % 1000);
}

static void worker(int tid, void *arg)
{
    (void)arg;
    MPI_Comm comm = comms[tid];
    int n = mt_size, me = mt_rank;
    int maxc = 16384;   /* ints: 64 KiB */
    int *a = mt_malloc(sizeof(int) * (size_t)maxc * (size_t)n);
    int *b = mt_malloc(sizeof(int) * (size_t)maxc * (size_t)n);
    int *c = mt_malloc(sizeof(int) * (size_t)maxc * (size_t)n);
    int *d = mt_malloc(sizeof(int) * (size_t)maxc * (size_t)n);
    uint64_t rs = (uint64_t)(me * 1000 + tid + 1);
    for (long it = 0; it < iters; it++) {
        /* the same size on every rank: it depends only on (tid, it) */
        int cnt = (int)((it * 37 + tid * 11) % 5);
        cnt = cnt == 0 ? 2 : cnt == 1 ? 17 : cnt == 2 ? 300 : cnt == 3 ? 4000 : maxc;
        if (it % 5 == 4 && (mtt_rand(&rs), 1))
            cnt = 1;
        int root = (int)((it + tid) % n);

        mtt_at("MPI_Bcast it %ld count %ld", it, cnt);
        for (int i = 0; i < cnt; i++)
            a[i] = me == root ? val(root, tid, it, i) : -1;
        MT_CALL(MPI_Bcast(a, cnt, MPI_INT, root, comm));
        for (int i = 0; i < cnt; i++)
            MT_EQ("bcast value", val(root, tid, it, i), a[i]);

        mtt_at("MPI_Allreduce it %ld count %ld", it, cnt);
        for (int i = 0; i < cnt; i++)
            a[i] = val(me, tid, it, i);
        MT_CALL(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < cnt; i++) {
            int e = 0;
            for (int r = 0; r < n; r++)
                e += val(r, tid, it, i);
            MT_EQ("allreduce sum", e, b[i]);
        }

        /* nonblocking, three outstanding at once: allgather, alltoall, scan */
        mtt_at("Iallgather+Ialltoall+Iscan it %ld count %ld", it, cnt);
        int g = cnt > 2048 ? 2048 : cnt;
        MPI_Request rq[3];
        for (int i = 0; i < g; i++)
            a[i] = val(me, tid, it, i);
        MT_CALL(MPI_Iallgather(a, g, MPI_INT, b, g, MPI_INT, comm, &rq[0]));
        for (int r = 0; r < n; r++)
            for (int i = 0; i < g; i++)
                c[r * g + i] = val(me, tid, it, r * 1000 + i);
        MT_CALL(MPI_Ialltoall(c, g, MPI_INT, d, g, MPI_INT, comm, &rq[1]));
        int sv = val(me, tid, it, 0), sr = -1;
        MT_CALL(MPI_Iscan(&sv, &sr, 1, MPI_INT, MPI_SUM, comm, &rq[2]));
        MT_CALL(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
        for (int r = 0; r < n; r++)
            for (int i = 0; i < g; i++) {
                MT_EQ("allgather block", val(r, tid, it, i), b[r * g + i]);
                MT_EQ("alltoall block", val(r, tid, it, me * 1000 + i), d[r * g + i]);
            }
        int se = 0;
        for (int r = 0; r <= me; r++)
            se += val(r, tid, it, 0);
        MT_EQ("scan", se, sr);

        mtt_at("MPI_Reduce_scatter_block it %ld count %ld", it, g);
        for (int i = 0; i < g * n; i++)
            a[i] = val(me, tid, it, i);
        MT_CALL(MPI_Reduce_scatter_block(a, b, g, MPI_INT, MPI_MAX, comm));
        for (int i = 0; i < g; i++) {
            int e = 0;
            for (int r = 0; r < n; r++)
                e = val(r, tid, it, me * g + i) > e ? val(r, tid, it, me * g + i) : e;
            MT_EQ("reduce_scatter_block max", e, b[i]);
        }
        if (it % 8 == 0) {
            mtt_at("MPI_Barrier it %ld%.0ld", it, 0);
            MT_CALL(MPI_Barrier(comm));
        }
        mtt_count(1);
    }
    free(a);
    free(b);
    free(c);
    free(d);
}

int main(int argc, char **argv)
{
    long nums[1] = { iters };
    mtt_args(argc, argv, nums, 1);
    iters = nums[0];
    mtt_init(&argc, &argv);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    mtt_run(mtt_nthreads, worker, NULL);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_free(&comms[t]));
    return mtt_finish("mt_coll");
}
