/* Ranks as threads (docs/ranks-as-threads.md): each rank's globals are its own.
 *
 *   rat_globals EXPECT_PER_PROCESS [abort CODE]
 *
 * Every rank increments a static counter and a thread-local one 1000 + rank times, then gathers
 * (pid, counter, thread-local value, address of the counter) from all ranks. Checks, on rank 0:
 *   - each rank's counters hold exactly its own increments (no other rank touched them);
 *   - exactly EXPECT_PER_PROCESS ranks share each process id (1: one rank per process; K: the job
 *     really ran K ranks as threads of each process, the last process possibly fewer);
 *   - ranks that share a process have distinct counter addresses (private copies, not one variable).
 * Also checks that a thread the rank creates (pthread_create inside the rank) sees the rank's
 * globals. With "abort CODE", rank size-1 calls MPI_Abort(MPI_COMM_WORLD, CODE) after the checks:
 * the job must end with that status, the other ranks of its process included.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int counter;
static __thread int tcounter = 7;

typedef struct {
    long pid;
    long counter, tcounter, thread_saw;
    uintptr_t addr;
} info_t;

static void *peek(void *arg)
{
    *(long *)arg = counter;   /* the rank's global, read from a thread of the rank */
    return NULL;
}

static void fail(int rank, const char *what, long expect, long got)
{
    printf("rank %d: %s expected %ld got %ld\n", rank, what, expect, got);
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int per = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < 1000 + rank; i++) {
        counter++;
        tcounter++;
        if (i % 100 == 0 && i < 1000)
            MPI_Barrier(MPI_COMM_WORLD);   /* interleave the ranks' increments (10 on every rank) */
    }
    long saw = -1;
    pthread_t t;
    if (pthread_create(&t, NULL, peek, &saw) != 0 || pthread_join(t, NULL) != 0)
        fail(rank, "pthread_create/join in the rank (0 = ok)", 0, 1);
    info_t me = { getpid(), counter, tcounter, saw, (uintptr_t)&counter };
    info_t *all = malloc(sizeof(info_t) * (size_t)size);
    MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            if (all[r].counter != 1000 + r)
                fail(r, "static counter", 1000 + r, all[r].counter);
            if (all[r].tcounter != 7 + 1000 + r)
                fail(r, "thread-local counter", 7 + 1000 + r, all[r].tcounter);
            if (all[r].thread_saw != 1000 + r)
                fail(r, "counter seen from a thread of the rank", 1000 + r, all[r].thread_saw);
            long same = 0;
            for (int q = 0; q < size; q++)
                if (all[q].pid == all[r].pid) {
                    same++;
                    if (q != r && all[q].addr == all[r].addr)
                        fail(r, "counter address distinct from that of rank (in one process)", q, q);
                }
            /* Ranks go to processes in consecutive groups of per; the last group may be short. */
            long expect = per;
            if ((r / per + 1) * per > size)
                expect = size - (r / per) * per;
            if (same != expect)
                fail(r, "ranks in this rank's process", expect, same);
        }
        printf("rat_globals: %d ranks, %d per process, globals private: ok\n", size, per);
    }
    free(all);
    if (argc > 3 && rank == size - 1) {
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, atoi(argv[3]));
    }
    MPI_Finalize();
    return 0;
}
