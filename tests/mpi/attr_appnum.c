/* MPI_APPNUM is the MPMD section a process was launched in: run as
 *   mpiexec -n 1 attr_appnum 0 : -n 2 attr_appnum 1
 * every process checks the attribute against the number it was given. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    MT_CALL(MPI_Init(&argc, &argv));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_TRUE(argc > 1, "argument expected the section number got none");
    int *val = NULL, flag = 0;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag));
    MT_EQ("MPI_APPNUM flag", 1, flag);
    MT_EQ("MPI_APPNUM", atoi(argv[1]), *val);
    MT_CALL(MPI_Finalize());
    return 0;
}
