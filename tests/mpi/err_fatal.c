/* A job that must fail. One rank (the last) makes an error while the others wait for it in MPI_Recv;
 * the whole job must end with a non-zero exit code. Run through expect_fail.sh, which also checks
 * that the output names the failing call. Argument: the error to make:
 *   send       MPI_Send to rank `size` under the default handler (MPI_ERRORS_ARE_FATAL)
 *   comm_null  MPI_Send on MPI_COMM_NULL: raised on MPI_COMM_SELF, fatal by default
 *   abort      MPI_Recv with a negative tag after setting MPI_ERRORS_ABORT on MPI_COMM_WORLD
 *   mpi_abort  MPI_Abort(MPI_COMM_WORLD, 7)
 * Reaching the end means the error was not fatal: the program then exits 0, and the test fails. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "send";
    int v = 0, last = mt_size - 1, rc = MPI_SUCCESS;

    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == last) {
        if (strcmp(mode, "send") == 0) {
            rc = MPI_Send(&v, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD);
        } else if (strcmp(mode, "comm_null") == 0) {
            rc = MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
        } else if (strcmp(mode, "abort") == 0) {
            MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
            rc = MPI_Recv(&v, 1, MPI_INT, 0, MPI_ANY_TAG == -3 ? -4 : -3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (strcmp(mode, "mpi_abort") == 0) {
            rc = MPI_Abort(MPI_COMM_WORLD, 7);
        } else {
            fprintf(stderr, "err_fatal: unknown mode %s\n", mode);
            return 2;
        }
        printf("err_fatal: rank %d: %s returned %d instead of ending the job\n", mt_rank, mode, rc);
        fflush(stdout);
        v = 1;
        for (int r = 0; r < last; r++) /* release the others: the job exits 0 */
            MPI_Send(&v, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&v, 1, MPI_INT, last, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
