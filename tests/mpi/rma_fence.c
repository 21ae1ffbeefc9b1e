/* Active-target RMA (MPI 4.1 sections 12.3-12.5): for each window flavor (Win_create,
 * Win_allocate, Win_allocate_shared), a ring of Put and of Get with fences, contiguous and derived
 * (vector) datatypes and a disp_unit of 4; Accumulate with MPI_SUM from every rank to rank 0
 * (exact sum); Get_accumulate with MPI_NO_OP and MPI_REPLACE; then the same ring under
 * post/start/complete/wait. */
#include "mpitest.h"

#define N 64

static MPI_Win make(int flavor, int **base)
{
    MPI_Win win;
    MPI_Aint bytes = 2 * N * sizeof(int);
    if (flavor == 0) {
        *base = malloc((size_t)bytes);
        MT_CALL(MPI_Win_create(*base, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else if (flavor == 1) {
        MT_CALL(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, base, &win));
    } else {
        MT_CALL(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, base,
                                        &win));
    }
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    return win;
}

static int val(int rank, int i)
{
    return rank * 100000 + i * 7 + 3;
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    MPI_Datatype every2;   /* N ints, every other one */
    MPI_Type_vector(N, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    MPI_Datatype half2;    /* N / 2 ints, every other one */
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &half2);
    MPI_Type_commit(&half2);

    for (int flavor = 0; flavor < 3; flavor++) {
        int *b, src[2 * N], got[2 * N];
        MPI_Win win = make(flavor, &b);
        for (int i = 0; i < 2 * N; i++) {
            b[i] = -1;
            src[i] = val(mt_rank, i);
        }
        /* Put to the right neighbour: contiguous into [0, N) */
        MT_CALL(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        MT_CALL(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
        MT_CALL(MPI_Win_fence(0, win));
        for (int i = 0; i < N; i++)
            MT_EQ("ring Put, contiguous", val(left, i), b[i]);
        for (int i = N; i < 2 * N; i++)
            MT_EQ("ring Put left the rest alone", -1, b[i]);
        MT_CALL(MPI_Win_fence(0, win));   /* my reads before the next epoch's writes */

        /* Put of N contiguous ints into every other int of the target (derived target type) */
        MT_CALL(MPI_Put(src, N, MPI_INT, right, 1, 1, every2, win));
        MT_CALL(MPI_Win_fence(0, win));
        for (int i = 0; i < N; i++)
            MT_EQ("ring Put, vector target", val(left, i), b[1 + 2 * i]);
        MT_CALL(MPI_Win_fence(0, win));

        /* Get from the left neighbour with a derived origin type */
        for (int i = 0; i < 2 * N; i++)
            got[i] = -2;
        MT_CALL(MPI_Get(got, 1, every2, left, 1, 1, every2, win));
        MT_CALL(MPI_Win_fence(0, win));
        for (int i = 0; i < N; i++) {
            int left2 = (left - 1 + mt_size) % mt_size;   /* what the left neighbour received */
            MT_EQ("ring Get, vector origin and target", val(left2, i), got[2 * i]);
            MT_EQ("ring Get left the gaps alone", -2, got[2 * i + 1]);
        }

        /* Accumulate MPI_SUM from every rank into rank 0's [0, N) */
        for (int i = 0; i < 2 * N; i++)
            b[i] = 0;
        MT_CALL(MPI_Win_fence(0, win));
        int add[N];
        for (int i = 0; i < N; i++)
            add[i] = (mt_rank + 1) * (i + 1);
        MT_CALL(MPI_Accumulate(add, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
        MT_CALL(MPI_Accumulate(add, N / 2, MPI_INT, 0, N, 1, half2, MPI_MAX, win));
        MT_CALL(MPI_Win_fence(0, win));
        if (mt_rank == 0)
            for (int i = 0; i < N; i++) {
                MT_EQ("Accumulate MPI_SUM from all ranks", mt_size * (mt_size + 1) / 2 * (i + 1),
                      b[i]);
                if (i < N / 2)
                    MT_EQ("Accumulate MPI_MAX, vector target", mt_size * (i + 1), b[N + 2 * i]);
            }

        /* Get_accumulate: NO_OP reads atomically, REPLACE swaps */
        int old[N], mine[N];
        for (int i = 0; i < N; i++)
            mine[i] = val(mt_rank, i);
        MT_CALL(MPI_Get_accumulate(NULL, 0, MPI_INT, old, N, MPI_INT, 0, 0, N, MPI_INT, MPI_NO_OP,
                                   win));
        MT_CALL(MPI_Win_fence(0, win));
        for (int i = 0; i < N; i++)
            MT_EQ("Get_accumulate NO_OP", mt_size * (mt_size + 1) / 2 * (i + 1), old[i]);
        MT_CALL(MPI_Win_fence(0, win));
        if (mt_rank == mt_size - 1)
            MT_CALL(MPI_Get_accumulate(mine, N, MPI_INT, old, N, MPI_INT, 0, 0, N, MPI_INT,
                                       MPI_REPLACE, win));
        MT_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        if (mt_rank == mt_size - 1)
            for (int i = 0; i < N; i++)
                MT_EQ("Get_accumulate REPLACE: old value", mt_size * (mt_size + 1) / 2 * (i + 1),
                      old[i]);
        if (mt_rank == 0)
            for (int i = 0; i < N; i++)
                MT_EQ("Get_accumulate REPLACE: new value", val(mt_size - 1, i), b[i]);

        /* PSCW ring: expose to the left, access the right */
        MPI_Group world, lg, rg;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, 1, &left, &lg);
        MPI_Group_incl(world, 1, &right, &rg);
        for (int round = 0; round < 3; round++) {
            MT_CALL(MPI_Win_post(lg, 0, win));
            MT_CALL(MPI_Win_start(rg, 0, win));
            int v = val(mt_rank, round);
            MT_CALL(MPI_Put(&v, 1, MPI_INT, right, round, 1, MPI_INT, win));
            MT_CALL(MPI_Win_complete(win));
            if (round == 2) {
                int flag = 0;
                while (!flag)
                    MT_CALL(MPI_Win_test(win, &flag));
            } else {
                MT_CALL(MPI_Win_wait(win));
            }
            MT_EQ("PSCW ring Put", val(left, round), b[round]);
        }
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
        MPI_Group_free(&world);

        MT_CALL(MPI_Win_free(&win));
        if (flavor == 0)
            free(b);
    }
    MPI_Type_free(&every2);
    MPI_Type_free(&half2);
    return mt_finish("rma_fence");
}
