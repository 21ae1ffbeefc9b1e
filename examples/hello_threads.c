/* An MPI + threads example: every rank runs NTHREADS threads; thread t of rank r passes a token
 * around the ring of ranks on tag t, adding its rank each hop. With MPI_THREAD_MULTIPLE the threads
 * call MPI freely; with a lower level (Weft 0.1 provides MPI_THREAD_SERIALIZED) they take turns
 * through a mutex, as the standard asks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 3
#define ROUNDS 100

static int rank, size, provided;
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock(void) { if (provided < MPI_THREAD_MULTIPLE) pthread_mutex_lock(&mpi_lock); }
static void unlock(void) { if (provided < MPI_THREAD_MULTIPLE) pthread_mutex_unlock(&mpi_lock); }

/* Wait for a request without holding the lock while another thread needs MPI. */
static void wait_req(MPI_Request *req)
{
    int done = 0;
    while (!done) {
        lock();
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        unlock();
        if (!done)
            sched_yield();
    }
}

static void *worker(void *arg)
{
    int tag = (int)(long)arg;
    long token = 0, expect = 0;
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Request rq;
        long in = 0;
        if (rank == 0) {
            token = r;
            lock(); MPI_Isend(&token, 1, MPI_LONG, (rank + 1) % size, tag, MPI_COMM_WORLD, &rq); unlock();
            wait_req(&rq);
            lock(); MPI_Irecv(&in, 1, MPI_LONG, size - 1, tag, MPI_COMM_WORLD, &rq); unlock();
            wait_req(&rq);
            expect = r + (long)size * (size - 1) / 2;
            if (in != expect) {
                fprintf(stderr, "thread %d round %d: token %ld, expected %ld\n", tag, r, in, expect);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        } else {
            lock(); MPI_Irecv(&in, 1, MPI_LONG, rank - 1, tag, MPI_COMM_WORLD, &rq); unlock();
            wait_req(&rq);
            in += rank;
            lock(); MPI_Isend(&in, 1, MPI_LONG, (rank + 1) % size, tag, MPI_COMM_WORLD, &rq); unlock();
            wait_req(&rq);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len;
    MPI_Get_processor_name(name, &len);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);

    pthread_t th[NTHREADS];
    double t0 = MPI_Wtime();
    for (long t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    double t1 = MPI_Wtime();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d on %s: %d threads passed %d tokens around the ring\n", rank, size, name,
           NTHREADS, ROUNDS);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\nthread level provided: %d; %d ring rounds per thread in %.3f s: OK\n", lib,
               provided, ROUNDS, t1 - t0);
    MPI_Finalize();
    return 0;
}
