/* More RMA (MPI 4.1 sections 12.2.4, 12.3.5, 12.5.3): dynamic windows (attach, detach, addresses
 * as displacements, a range outside every region), request-based operations (Rput, Rget,
 * Raccumulate, Rget_accumulate with MPI_Wait), disp units that differ per process, and a passive
 * target that computes without calling MPI while the others lock and accumulate into it. */
#include "mpitest.h"
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    MPI_Win win;

    /* dynamic window */
    int *mem = calloc(16, sizeof(int)), *other = calloc(4, sizeof(int));
    MT_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    void *v;
    int flag;
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MT_EQ("flavor of a dynamic window", MPI_WIN_FLAVOR_DYNAMIC, *(int *)v);
    MT_CALL(MPI_Win_attach(win, mem, 16 * sizeof(int)));
    MT_CLASS_EQ("attach overlapping a region", MPI_ERR_RMA_ATTACH,
                MPI_Win_attach(win, mem + 4, 4 * sizeof(int)));
    MT_CALL(MPI_Win_attach(win, other, 4 * sizeof(int)));
    MPI_Aint mine, *addrs = malloc(sizeof(MPI_Aint) * (size_t)mt_size);
    MPI_Get_address(mem, &mine);
    MT_CALL(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock_all(0, win));
    int vals[4] = {mt_rank, mt_rank + 10, mt_rank + 20, mt_rank + 30};
    MPI_Request req;
    MT_CALL(MPI_Rput(vals, 4, MPI_INT, right, addrs[right] + 4 * sizeof(int), 4, MPI_INT, win,
                     &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int one = 1, old = -1;
    MT_CALL(MPI_Raccumulate(&one, 1, MPI_INT, 0, addrs[0], 1, MPI_INT, MPI_SUM, win, &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* a target on another node checks its regions itself: the flush reports it */
    int rc = MPI_Put(vals, 4, MPI_INT, right, addrs[right] + 14 * sizeof(int), 4, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(right, win);
    MT_CLASS_EQ("Put past a dynamic region", MPI_ERR_RMA_RANGE, rc);
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        MT_EQ("dynamic window: value put by the left rank", left + 10 * i, mem[4 + i]);
    if (mt_rank == 0)
        MT_EQ("dynamic window: Raccumulate count", mt_size, mem[0]);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_lock_all(0, win));
    int got[4] = {0};
    MT_CALL(MPI_Rget(got, 4, MPI_INT, left, addrs[left] + 4 * sizeof(int), 4, MPI_INT, win, &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int left2 = (left - 1 + mt_size) % mt_size;
    for (int i = 0; i < 4; i++)
        MT_EQ("dynamic window: Rget", left2 + 10 * i, got[i]);
    MT_CALL(MPI_Rget_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, 0, addrs[0], 1, MPI_INT,
                                MPI_SUM, win, &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_TRUE(old >= mt_size && old < 2 * mt_size, "Rget_accumulate old value %d not in [%d, %d)",
            old, mt_size, 2 * mt_size);
    MT_CALL(MPI_Win_unlock_all(win));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Win_detach(win, other));
    MT_CLASS_EQ("detach of a region not attached", MPI_ERR_ARG, MPI_Win_detach(win, other));
    MT_CALL(MPI_Win_detach(win, mem));
    MT_CALL(MPI_Win_free(&win));
    free(mem);
    free(other);
    free(addrs);

    /* disp units differ per process: rank r's unit is 1 << (r % 4) bytes */
    int du = 1 << (mt_rank % 4);
    char *b;
    MT_CALL(MPI_Win_allocate(8 * du, du, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    memset(b, 0, (size_t)(8 * du));
    MT_CALL(MPI_Win_fence(0, win));
    char c = (char)(mt_rank + 1);
    MT_CALL(MPI_Put(&c, 1, MPI_CHAR, right, 5, 1, MPI_CHAR, win));
    MT_CALL(MPI_Win_fence(0, win));
    for (int i = 0; i < 8 * du; i++)
        MT_EQ("byte of a window with my disp unit", i == 5 * du ? left + 1 : 0, b[i]);
    MT_CALL(MPI_Win_free(&win));

    /* a target computing, never calling MPI: the others' locks and accumulates still complete */
    long *cnt;
    MT_CALL(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &cnt,
                             &win));
    *cnt = 0;
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        double t0 = now();
        while (__atomic_load_n(cnt, __ATOMIC_ACQUIRE) < mt_size - 1)
            if (now() - t0 > 30)
                MT_FAIL("busy target: %ld of %d accumulates arrived in 30 s", *cnt, mt_size - 1);
    } else {
        long l = 1;
        MT_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MT_CALL(MPI_Accumulate(&l, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_SUM, win));
        MT_CALL(MPI_Win_unlock(0, win));
    }
    MT_CALL(MPI_Win_free(&win));
    return mt_finish("rma_more");
}
