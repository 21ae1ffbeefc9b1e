/* Collective calls with bad arguments under MPI_ERRORS_RETURN give the right error class (and no
 * message is exchanged, so the ranks stay in step); requests of collectives report an empty status
 * and work with MPI_Test / MPI_Request_get_status.
 *
 * Usage: coll_err [--weft] */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    MPI_Comm comm;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MT_CALL(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int n = mt_size, me = mt_rank;
    int buf[64] = { 0 }, out[64 * 8] = { 0 };
    MPI_Request req;

    MT_CLASS_EQ("Bcast with root = size", MPI_ERR_ROOT, MPI_Bcast(buf, 1, MPI_INT, n, comm));
    MT_CLASS_EQ("Bcast with root = -1", MPI_ERR_ROOT, MPI_Bcast(buf, 1, MPI_INT, -1, comm));
    MT_CLASS_EQ("Bcast with count -1", MPI_ERR_COUNT, MPI_Bcast(buf, -1, MPI_INT, 0, comm));
    MT_CLASS_EQ("Bcast with MPI_DATATYPE_NULL", MPI_ERR_TYPE,
                MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, comm));
    MT_CLASS_EQ("Allreduce with MPI_OP_NULL", MPI_ERR_OP,
                MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, comm));
    MT_CLASS_EQ("Allreduce MPI_SUM on MPI_BYTE", MPI_ERR_OP,
                MPI_Allreduce(buf, out, 1, MPI_BYTE, MPI_SUM, comm));
    MT_CLASS_EQ("Reduce with root = size", MPI_ERR_ROOT,
                MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, n, comm));
    MT_CLASS_EQ("Allgather with recvbuf MPI_IN_PLACE", MPI_ERR_BUFFER,
                MPI_Allgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm));
    MT_CLASS_EQ("Gather with recvcount -1 at the root", me == 0 ? MPI_ERR_COUNT : MPI_SUCCESS,
                me == 0 ? MPI_Gather(buf, 1, MPI_INT, out, -1, MPI_INT, 0, comm) : MPI_SUCCESS);
    if (mt_weft) {
        /* NULL arguments and freed handles: Weft checks them, other MPIs may crash */
        MT_CLASS_EQ("Ibcast with request NULL", MPI_ERR_ARG,
                    MPI_Ibcast(buf, 1, MPI_INT, 0, comm, NULL));
        MT_CLASS_EQ("Alltoallv with sendcounts NULL", MPI_ERR_ARG,
                    MPI_Alltoallv(buf, NULL, NULL, MPI_INT, out, NULL, NULL, MPI_INT, comm));
        MPI_Comm dead;
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dead));
        MPI_Comm keep = dead;
        MT_CALL(MPI_Comm_free(&dead));
        /* an invalid communicator's error goes to a predefined communicator's handler */
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
        MT_CLASS_EQ("Barrier on a freed communicator", MPI_ERR_COMM, MPI_Barrier(keep));
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    }

    /* the ranks are still in step: a collective works */
    for (int i = 0; i < 64; i++)
        buf[i] = me == 1 % n ? i * 3 : -1;
    MT_CALL(MPI_Bcast(buf, 64, MPI_INT, 1 % n, comm));
    for (int i = 0; i < 64; i++)
        MT_EQ("bcast after the errors", i * 3, buf[i]);

    /* (MPI_Request_free on a collective's request is erroneous: not tested) */
    MPI_Request b;
    MT_CALL(MPI_Ibarrier(comm, &b));
    MPI_Status st;
    MT_CALL(MPI_Wait(&b, &st));
    if (mt_weft) {   /* Weft's choice: the empty status (MPICH leaves other values) */
        MT_EQ("collective status MPI_SOURCE", MPI_ANY_SOURCE, st.MPI_SOURCE);
        MT_EQ("collective status MPI_TAG", MPI_ANY_TAG, st.MPI_TAG);
    }
    MT_CALL(MPI_Barrier(comm));

    /* MPI_Test on a collective request, and Request_get_status */
    MT_CALL(MPI_Iallreduce(&me, out, 1, MPI_INT, MPI_SUM, comm, &req));
    int flag = 0;
    while (!flag)
        MT_CALL(MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_EQ("iallreduce sum of ranks", n * (n - 1) / 2, out[0]);

    MT_CALL(MPI_Comm_free(&comm));
    return mt_finish("coll_err");
}
