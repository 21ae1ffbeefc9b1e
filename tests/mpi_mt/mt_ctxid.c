/* Context ids from world rank 0 (docs/communicators.md, "Context ids"): a communicator whose leader
 * is not world rank 0 costs it a round trip to rank 0.
 * - While rank 0's main thread is blocked in MPI_Recv, the worker threads of every other rank
 *   duplicate MPI_COMM_SELF again and again (each a request to rank 0, several threads asking at
 *   once) and use each duplicate for a message to self; rank 0's workers do the same (a local
 *   atomic there). Then every rank tells rank 0 it is done, which lets its MPI_Recv return.
 * - The main threads split MPI_COMM_WORLD by parity (the odd part's leader is world rank 1) and
 *   check an Allreduce and a message on each part: two live communicators made at once by
 *   different leaders must not share a context id.
 * Arguments: n (duplicates per thread, default 200), --threads=T. */
#include "mttest.h"

static long n_dup = 200;

static void worker(int t, void *arg)
{
    (void)arg;
    for (long i = 0; i < n_dup; i++) {
        MPI_Comm c;
        mtt_at("duplicate %ld of MPI_COMM_SELF", i, 0);
        MT_CALL(MPI_Comm_dup(MPI_COMM_SELF, &c));
        long out = i * 1000 + t, in = -1;
        MT_CALL(MPI_Sendrecv(&out, 1, MPI_LONG, 0, 5, &in, 1, MPI_LONG, 0, 5, c, MPI_STATUS_IGNORE));
        MT_EQ("message to self on a duplicate", out, in);
        MT_CALL(MPI_Comm_free(&c));
        mtt_count(1);
    }
}

int main(int argc, char **argv)
{
    long nums[1] = {n_dup};
    mtt_args(argc, argv, nums, 1);
    n_dup = nums[0];
    mtt_init(&argc, &argv);

    if (mt_rank == 0) {
        /* blocked inside MPI while the others ask; the workers run meanwhile */
        mtt_at("waiting for the other ranks", 0, 0);
        MPI_Request *reqs = calloc((size_t)mt_size, sizeof(*reqs));
        int *flags = calloc((size_t)mt_size, sizeof(*flags));
        MT_TRUE(reqs && flags, "no memory");
        for (int r = 1; r < mt_size; r++)
            MT_CALL(MPI_Irecv(&flags[r], 1, MPI_INT, r, 7, MPI_COMM_WORLD, &reqs[r - 1]));
        mtt_run(mtt_nthreads, worker, NULL);
        MT_CALL(MPI_Waitall(mt_size - 1, reqs, MPI_STATUSES_IGNORE));
        for (int r = 1; r < mt_size; r++)
            MT_EQ("done flag", 1, flags[r]);
        free(reqs);
        free(flags);
    } else {
        mtt_run(mtt_nthreads, worker, NULL);
        int one = 1;
        MT_CALL(MPI_Send(&one, 1, MPI_INT, 0, 7, MPI_COMM_WORLD));
    }

    MPI_Comm part;
    mtt_at("split by parity", 0, 0);
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, mt_rank, &part));
    int psize = -1, prank = -1;
    MT_CALL(MPI_Comm_size(part, &psize));
    MT_CALL(MPI_Comm_rank(part, &prank));
    int sum = 0, mine = mt_rank;
    MT_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, part));
    int want = 0;
    for (int r = mt_rank % 2; r < mt_size; r += 2)
        want += r;
    MT_EQ("Allreduce over the parity part", want, sum);
    int token = mt_rank, got = -1;
    MT_CALL(MPI_Sendrecv(&token, 1, MPI_INT, (prank + 1) % psize, 9, &got, 1, MPI_INT,
                         (prank + psize - 1) % psize, 9, part, MPI_STATUS_IGNORE));
    MT_EQ("ring message on the parity part", ((prank + psize - 1) % psize) * 2 + mt_rank % 2, got);
    MT_CALL(MPI_Comm_free(&part));
    return mtt_finish("mt_ctxid");
}
