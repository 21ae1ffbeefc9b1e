/* MPI_Comm_spawn of N processes (default 4): time from the call to the intercommunicator, then to
 * the end of Comm_disconnect, per round; run by bench/run_spawn.sh under each MPI.
 *   spawn [N] [ROUNDS]      (the children run "spawn --child")
 * Prints one line per round: "round R spawn_s S total_s T". Any MPI. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 4, rounds = argc > 2 ? atoi(argv[2]) : 5;
    char *args[] = { "--child", NULL };
    for (int r = 0; r < rounds; r++) {
        MPI_Comm inter;
        double t0 = MPI_Wtime();
        int rc = MPI_Comm_spawn(argv[0], args, n, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                                MPI_ERRCODES_IGNORE);
        double t1 = MPI_Wtime();
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "MPI_Comm_spawn failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_Comm_disconnect(&inter);
        double t2 = MPI_Wtime();
        printf("round %d spawn_s %.4f total_s %.4f\n", r, t1 - t0, t2 - t0);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
