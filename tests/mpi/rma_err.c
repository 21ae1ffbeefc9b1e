/* Errors of RMA under MPI_ERRORS_RETURN (MPI 4.1 sections 12.7, 9.4): a displacement outside the
 * target's window (MPI_ERR_RMA_RANGE), an operation or synchronization with no epoch open
 * (MPI_ERR_RMA_SYNC), a bad rank (MPI_ERR_RANK), a second lock of one target, and any call on a
 * freed window (MPI_ERR_WIN); Win_shared_query of a Win_create window and the name of MPI_WIN_NULL
 * (MPI 4.1). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int *b, v = 1, right = (mt_rank + 1) % mt_size;
    MPI_Win win;
    MT_CALL(MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &b,
                             &win));
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));

    /* no epoch */
    MT_CLASS_EQ("Put outside any epoch", MPI_ERR_RMA_SYNC,
                MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    MT_CLASS_EQ("Win_unlock of an unlocked target", MPI_ERR_RMA_SYNC, MPI_Win_unlock(right, win));
    MT_CLASS_EQ("Win_unlock_all without lock_all", MPI_ERR_RMA_SYNC, MPI_Win_unlock_all(win));
    MT_CLASS_EQ("Win_flush outside a passive epoch", MPI_ERR_RMA_SYNC, MPI_Win_flush(right, win));
    MT_CLASS_EQ("Win_complete without start", MPI_ERR_RMA_SYNC, MPI_Win_complete(win));
    MT_CLASS_EQ("Win_wait without post", MPI_ERR_RMA_SYNC, MPI_Win_wait(win));

    /* ranges, in a lock epoch */
    MT_CALL(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_CLASS_EQ("second lock of one target", MPI_ERR_RMA_SYNC,
                MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    MT_CLASS_EQ("fence inside a lock epoch", MPI_ERR_RMA_SYNC, MPI_Win_fence(0, win));
    MT_CLASS_EQ("Put past the end", MPI_ERR_RMA_RANGE,
                MPI_Put(&v, 1, MPI_INT, right, 4, 1, MPI_INT, win));
    int four[5] = {0};
    MT_CLASS_EQ("Get running past the end", MPI_ERR_RMA_RANGE,
                MPI_Get(four, 5, MPI_INT, right, 0, 5, MPI_INT, win));
    MT_CLASS_EQ("Accumulate at a negative disp", MPI_ERR_RMA_RANGE,
                MPI_Accumulate(&v, 1, MPI_INT, right, -1, 1, MPI_INT, MPI_SUM, win));
    long l = 0, r = 0;
    MT_CLASS_EQ("Fetch_and_op of a long at the last int", MPI_ERR_RMA_RANGE,
                MPI_Fetch_and_op(&l, &r, MPI_LONG, right, 3, MPI_SUM, win));
    MT_CLASS_EQ("Put to a rank outside the window", MPI_ERR_RANK,
                MPI_Put(&v, 1, MPI_INT, mt_size, 0, 1, MPI_INT, win));
    MT_CALL(MPI_Put(&v, 1, MPI_INT, right, 3, 1, MPI_INT, win));   /* the last int is fine */
    MT_CALL(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 99, 1, MPI_INT, win));
    MT_CLASS_EQ("Win_free with a lock held", MPI_ERR_RMA_SYNC, MPI_Win_free(&win));
    MT_CALL(MPI_Win_unlock(right, win));
    MT_CLASS_EQ("lock_type neither shared nor exclusive", MPI_ERR_LOCKTYPE,
                MPI_Win_lock(12345, right, 0, win));

    MPI_Win old = win;
    MT_CALL(MPI_Win_free(&win));
    MT_CLASS_EQ("Put on a freed window", MPI_ERR_WIN,
                MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, old));
    MT_CLASS_EQ("fence on a freed window", MPI_ERR_WIN, MPI_Win_fence(0, old));
    MT_CLASS_EQ("Win_free of a freed window", MPI_ERR_WIN, MPI_Win_free(&old));
    MT_CLASS_EQ("Win_lock on MPI_WIN_NULL", MPI_ERR_WIN,
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL));

    /* creation errors */
    MT_CLASS_EQ("Win_allocate with a negative size", MPI_ERR_SIZE,
                MPI_Win_allocate(-1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &win));
    MT_CLASS_EQ("Win_create with disp_unit 0", MPI_ERR_DISP,
                MPI_Win_create(b, 0, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Aint qs;
    int qdu;
    void *qb;
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* MPI 4.1: any flavor may be queried; user memory is not shared: size 0, NULL */
    qs = -1;
    MT_CALL(MPI_Win_shared_query(win, 0, &qs, &qdu, &qb));
    MT_EQ("shared_query size of a Win_create window", 0, qs);
    MT_TRUE(qb == NULL, "shared_query base of a Win_create window is not NULL");
    char nm[MPI_MAX_OBJECT_NAME];
    int nl;
    MT_CALL(MPI_Win_get_name(MPI_WIN_NULL, nm, &nl));
    MT_TRUE(strcmp(nm, "MPI_WIN_NULL") == 0, "name of MPI_WIN_NULL: %s", nm);
    MT_CALL(MPI_Win_free(&win));
    return mt_finish("rma_err");
}
