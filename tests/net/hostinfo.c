/* A rank of the harness test (test_harness.sh), built with MPICH's mpicc: says where it runs, then
 * checks an allreduce and a ring exchange. Output, one line per rank:
 *   rank R size S proc NAME host NAME shm DEV:INODE pid PID self PID init ARGS sum SUM ring PREV
 * proc is MPI_Get_processor_name, host gethostname; self is what /proc/self names (the pid only if
 * /proc belongs to this process's PID namespace); init names PID 1 (see init_args).
 * usage: hostinfo [die|exit RANK CODE]
 *   die:  rank RANK exits with CODE right after MPI_Init (the others block in the allreduce)
 *   exit: rank RANK returns CODE from main after MPI_Finalize (a clean job with one bad status) */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef HOSTINFO_NO_UCX_WORKAROUND
/* MPICH 4.0's ch4:ucx MPI_Finalize closes every endpoint (ucp_disconnect_nb, which waits for the
 * peer's progress) and then waits in a PMI barrier, where it makes no progress: a rank whose
 * peers have already reached the barrier waits for ever (about one job in two over UCX's tcp
 * transport, on one host or several). MPICH removed that barrier in 2023 (pmodels/mpich#6596).
 * Defined here, this symbol takes the place of UCX's for libmpich: endpoints are left to
 * ucp_worker_destroy, after the barrier, which closes them without waiting for peers. A build
 * of MPICH without UCX never calls it. (ucs_status_ptr_t is void *; UCS_OK is 0.) */
void *ucp_disconnect_nb(void *ep);
void *ucp_disconnect_nb(void *ep)
{
    (void)ep;
    return NULL;
}
#endif

/* PID 1's second argument without its directory, ':', its third (in a fake host: holder.sh:weft-hN). */
static void init_args(char *buf, size_t size)
{
    char raw[1024];
    size_t len = 0, second, third;
    FILE *f = fopen("/proc/1/cmdline", "r");

    if (f) {
        len = fread(raw, 1, sizeof(raw) - 1, f);
        fclose(f);
    }
    raw[len] = 0;                      /* raw + len is "" for the arguments that are not there */
    second = strlen(raw) + 1;
    second = second < len ? second : len;
    third = second + strlen(raw + second) + 1;
    third = third < len ? third : len;
    const char *base = strrchr(raw + second, '/');
    snprintf(buf, size, "%s:%s", base ? base + 1 : raw + second, raw + third);
}

int main(int argc, char **argv)
{
    int rank, size, len, sum, prev;
    char proc[MPI_MAX_PROCESSOR_NAME], host[256], self[32] = "?", init[256] = "";
    struct stat shm;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(proc, &len);
    if (gethostname(host, sizeof(host)) != 0 || stat("/dev/shm", &shm) != 0) {
        perror("hostinfo");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);
    self[n > 0 ? n : 1] = 0;
    init_args(init, sizeof(init));
    int bad_rank = argc == 4 ? atoi(argv[2]) : -1, code = argc == 4 ? atoi(argv[3]) : 0;
    if (argc == 4 && strcmp(argv[1], "die") == 0 && rank == bad_rank) {
        fprintf(stderr, "rank %d on %s: exiting with %d on purpose\n", rank, host, code);
        exit(code);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &prev, 1, MPI_INT, (rank + size - 1) % size,
                 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d size %d proc %s host %s shm %lu:%lu pid %d self %s init %s sum %d ring %d\n", rank,
           size, proc, host, (unsigned long)shm.st_dev, (unsigned long)shm.st_ino, (int)getpid(), self,
           init, sum, prev);
    MPI_Finalize();
    if (argc == 4 && strcmp(argv[1], "exit") == 0 && rank == bad_rank) {
        fprintf(stderr, "rank %d on %s: returning %d on purpose\n", rank, host, code);
        return code;
    }
    return 0;
}
