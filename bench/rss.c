/* Memory of a job: the resident size of every process of the job after MPI_Init and a first
 * collective, summed over processes (ranks that share a process, as with ranks as threads, count it
 * once). For issue 15's "resident size of a 4-rank job as 1 process x 4 threads against 4 processes".
 *
 * Each rank reads VmRSS from /proc/self/status after an MPI_Allreduce and an MPI_Barrier, and sends
 * (pid, VmRSS) to rank 0, which sums one VmRSS per distinct pid.
 *
 * Output on rank 0:  ranks=4 processes=1 rss_total_kb=.. rss_per_rank_kb=..
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long vmrss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    long me[2] = { (long)getpid(), vmrss_kb() };
    long *all = rank == 0 ? malloc(sizeof(long) * 2 * (size_t)size) : NULL;
    MPI_Gather(me, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        long total = 0;
        int procs = 0;
        for (int r = 0; r < size; r++) {
            int seen = 0;
            for (int q = 0; q < r; q++)
                seen |= all[2 * q] == all[2 * r];
            if (!seen) {
                procs++;
                total += all[2 * r + 1];
            }
            if (all[2 * r + 1] < 0)
                rc = 1;
        }
        printf("ranks=%d processes=%d rss_total_kb=%ld rss_per_rank_kb=%ld check=%s\n", size, procs, total,
               total / size, rc ? "FAIL" : "ok");
        free(all);
    }
    MPI_Finalize();
    return rc;
}
