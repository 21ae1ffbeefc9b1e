/* Blocking collectives back to back on one communicator while ranks run ahead of each other, with
 * nonblocking collectives outstanding on the same communicator across them. Weft gives every
 * blocking collective of a communicator the same tag (and each nonblocking one its own), so a rank
 * that runs ahead sends the messages of the next call while its peers still receive those of the
 * previous one: each result must still be the one of its own call. Sizes both below and above
 * the eager limit (16 KiB), roots changing from call to call, random delays skewing the ranks.
 *
 * Usage: coll_seq [iterations] [--weft] */
#include "mpitest.h"

#define MAXC 6000   /* ints: 24 KiB, a rendezvous message */

static int val(int rank, long it, int k, int i)
{
    return (int)((rank * 7919 + it * 131 + k * 17 + i) % 100003);
}

static uint64_t rs = 1;

static void skew(void)
{
    rs = rs * 6364136223846793005ull + 1442695040888963407ull;
    unsigned r = (unsigned)(rs >> 33) % 8;
    if (r == 0)
        mt_sleep_ms(1);
    else if (r < 3)
        for (volatile int i = 0; i < 2000 * (int)r; i++)
            ;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long iters = mt_init_args(argc, argv, 60);
    int n = mt_size, me = mt_rank;
    rs = (uint64_t)me * 977 + 3;
    MPI_Comm comm;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    int *a = mt_malloc(sizeof(int) * MAXC * (size_t)n), *b = mt_malloc(sizeof(int) * MAXC * (size_t)n);
    int *nb_bc = mt_malloc(sizeof(int) * MAXC), *nb_in = mt_malloc(sizeof(int) * MAXC);
    int *nb_out = mt_malloc(sizeof(int) * MAXC);
    static const int counts[] = { 1, 2, 100, 1000, MAXC };
    for (long it = 0; it < iters; it++) {
        int cnt = counts[it % 5], cnt2 = counts[(it + 2) % 5];
        /* nonblocking ones outstanding across the blocking ones */
        int nroot = (int)((it * 3) % n);
        for (int i = 0; i < cnt2; i++) {
            nb_bc[i] = me == nroot ? val(nroot, it, 9, i) : -1;
            nb_in[i] = val(me, it, 8, i);
        }
        MPI_Request rq[2];
        MT_CALL(MPI_Ibcast(nb_bc, cnt2, MPI_INT, nroot, comm, &rq[0]));
        MT_CALL(MPI_Iallreduce(nb_in, nb_out, cnt2, MPI_INT, MPI_SUM, comm, &rq[1]));

        /* several broadcasts in a row from different roots: the roots run ahead */
        for (int k = 0; k < 4; k++) {
            int root = (int)((it + k) % n);
            for (int i = 0; i < cnt; i++)
                a[i] = me == root ? val(root, it, k, i) : -1;
            if (k == 1)
                skew();
            MT_CALL(MPI_Bcast(a, cnt, MPI_INT, root, comm));
            for (int i = 0; i < cnt; i++)
                MT_EQ("bcast value", val(root, it, k, i), a[i]);
        }
        skew();
        for (int i = 0; i < cnt; i++)
            a[i] = val(me, it, 4, i);
        MT_CALL(MPI_Allreduce(a, b, cnt, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < cnt; i++) {
            int e = 0;
            for (int r = 0; r < n; r++)
                e += val(r, it, 4, i);
            MT_EQ("allreduce sum", e, b[i]);
        }
        int per = cnt / n > 0 ? cnt / n : 1;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < per; i++)
                a[j * per + i] = val(me, it, 5, j * per + i);
        MT_CALL(MPI_Alltoall(a, per, MPI_INT, b, per, MPI_INT, comm));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < per; i++)
                MT_EQ("alltoall value", val(j, it, 5, me * per + i), b[j * per + i]);
        skew();
        for (int i = 0; i < per; i++)
            a[i] = val(me, it, 6, i);
        MT_CALL(MPI_Allgather(a, per, MPI_INT, b, per, MPI_INT, comm));
        for (int j = 0; j < n; j++)
            for (int i = 0; i < per; i++)
                MT_EQ("allgather value", val(j, it, 6, i), b[j * per + i]);
        if (it % 3 == 0)
            MT_CALL(MPI_Barrier(comm));

        MT_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < cnt2; i++) {
            MT_EQ("ibcast value", val(nroot, it, 9, i), nb_bc[i]);
            int e = 0;
            for (int r = 0; r < n; r++)
                e += val(r, it, 8, i);
            MT_EQ("iallreduce sum", e, nb_out[i]);
        }
    }
    free(a);
    free(b);
    free(nb_bc);
    free(nb_in);
    free(nb_out);
    MT_CALL(MPI_Comm_free(&comm));
    return mt_finish("coll_seq");
}
