/* MPI_Init + MPI_Finalize and nothing else: the start-up cost bench/run_startup.sh times. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    return 0;
}
