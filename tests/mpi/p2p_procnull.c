/* MPI_PROC_NULL as source or destination: every send mode and receive completes at once, the receive
 * status says source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, and no buffer is touched. Also inside
 * Sendrecv, Sendrecv_replace and multiple-completion calls. Runs with any number of ranks.
 * The status of nonblocking receives from MPI_PROC_NULL is checked with --weft only (MPICH 4.0 gets it
 * wrong). */
#include "mpitest.h"

static void check_untouched(const int *buf, int n, int base, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != base + i)
            MT_FAIL("%s: element %d expected %d got %d", what, i, base + i, buf[i]);
}

static void init(int *buf, int n, int base)
{
    for (int i = 0; i < n; i++)
        buf[i] = base + i;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    enum { N = 1000 };
    static int a[N], b[N];
    MPI_Status st;
    MPI_Request r[4];
    MPI_Status sts[4];

    init(a, N, 0);
    MT_CALL(MPI_Send(a, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MT_CALL(MPI_Ssend(a, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MT_CALL(MPI_Rsend(a, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MT_CALL(MPI_Bsend(a, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); /* needs no buffer */
    check_untouched(a, N, 0, "send buffer to MPI_PROC_NULL");

    init(b, N, 5000);
    MT_CALL(MPI_Recv(b, N, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Recv from MPI_PROC_NULL", st);
    MT_CALL(MPI_Recv(b, N, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Recv(MPI_ANY_TAG) from MPI_PROC_NULL", st);
    int cnt = -1;
    MT_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
    MT_EQ("Get_count(MPI_INT) of a receive from MPI_PROC_NULL", 0, cnt);
    MT_CALL(MPI_Get_elements(&st, MPI_INT, &cnt));
    MT_EQ("Get_elements(MPI_INT) of a receive from MPI_PROC_NULL", 0, cnt);
    check_untouched(b, N, 5000, "receive buffer from MPI_PROC_NULL");

    /* nonblocking: each request is complete on the first Test */
    MT_CALL(MPI_Isend(a, N, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Issend(a, N, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[1]));
    MT_CALL(MPI_Irsend(a, N, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[2]));
    MT_CALL(MPI_Irecv(b, N, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &r[3]));
    for (int i = 0; i < 4; i++) {
        int flag = 0;
        MT_CALL(MPI_Test(&r[i], &flag, &sts[i]));
        MT_EQ("first Test of a request to/from MPI_PROC_NULL: flag", 1, flag);
        MT_TRUE(r[i] == MPI_REQUEST_NULL, "completed request expected MPI_REQUEST_NULL");
    }
    if (mt_weft) /* MPICH 4.0 leaves the status of a nonblocking MPI_PROC_NULL receive unset */
        MT_STATUS_PROC_NULL("Irecv from MPI_PROC_NULL", sts[3]);

    MT_CALL(MPI_Ibsend(a, N, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Irecv(b, N, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
    MT_CALL(MPI_Waitall(2, r, sts));
    if (mt_weft) /* MPICH 4.0 leaves the status of a nonblocking MPI_PROC_NULL receive unset */
        MT_STATUS_PROC_NULL("Irecv from MPI_PROC_NULL in Waitall", sts[1]);
    MT_CALL(MPI_Irecv(b, N, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &r[0]));
    int idx = -1;
    MT_CALL(MPI_Waitany(1, r, &idx, &st));
    MT_EQ("Waitany index of a receive from MPI_PROC_NULL", 0, idx);
    if (mt_weft) /* MPICH 4.0 leaves the status of a nonblocking MPI_PROC_NULL receive unset */
        MT_STATUS_PROC_NULL("Irecv from MPI_PROC_NULL in Waitany", st);
    check_untouched(b, N, 5000, "receive buffer from MPI_PROC_NULL");

    /* Sendrecv with one side or both MPI_PROC_NULL; the ring message is received by an Irecv posted
     * first, so no rank's send waits on a receive that comes later */
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    static int c[N];
    init(a, N, 100 * mt_rank);
    init(b, N, 5000);
    MT_CALL(MPI_Sendrecv(a, N, MPI_INT, MPI_PROC_NULL, 5, b, N, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Sendrecv from and to MPI_PROC_NULL", st);
    MT_CALL(MPI_Irecv(c, N, MPI_INT, left, 5, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Sendrecv(a, N, MPI_INT, right, 5, b, N, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Sendrecv with source MPI_PROC_NULL", st);
    check_untouched(b, N, 5000, "Sendrecv receive buffer from MPI_PROC_NULL");
    MT_CALL(MPI_Wait(&r[0], &st));
    MT_STATUS("ring message", st, left, 5, N * sizeof(int));
    check_untouched(c, N, 100 * left, "ring message");
    MT_CALL(MPI_Isend(a, N, MPI_INT, right, 6, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Sendrecv(a, N, MPI_INT, MPI_PROC_NULL, 6, b, N, MPI_INT, left, 6, MPI_COMM_WORLD, &st));
    MT_STATUS("Sendrecv with destination MPI_PROC_NULL", st, left, 6, N * sizeof(int));
    check_untouched(b, N, 100 * left, "Sendrecv receive buffer");
    MT_CALL(MPI_Wait(&r[0], MPI_STATUS_IGNORE));

    /* Sendrecv_replace from MPI_PROC_NULL: the buffer keeps what was sent */
    init(a, N, 7);
    MT_CALL(MPI_Sendrecv_replace(a, N, MPI_INT, MPI_PROC_NULL, 6, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Sendrecv_replace with MPI_PROC_NULL", st);
    check_untouched(a, N, 7, "Sendrecv_replace buffer with MPI_PROC_NULL");

    return mt_finish("p2p_procnull");
}
