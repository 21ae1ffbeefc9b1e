/* A start of a persistent collective allocates nothing: this program replaces malloc, calloc and
 * realloc (glibc's __libc_* underneath) and counts the calls the main thread makes while it
 * starts and waits for persistent Barrier, Allreduce (8 B and 64 KiB), Bcast, Allgather and
 * Alltoall, after a few warm-up starts (pools fill up then). Weft only (--weft: other libraries
 * may allocate); sanitizer builds replace malloc themselves, so the program skips there.
 * Argument: starts counted per collective. */
#include "mpitest.h"

#include <stdbool.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

static __thread bool counting;
static __thread long nallocs;

#if COUNTING
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n)
{
    if (counting)
        nallocs++;
    return __libc_malloc(n);
}
void *calloc(size_t k, size_t n)
{
    if (counting)
        nallocs++;
    return __libc_calloc(k, n);
}
void *realloc(void *p, size_t n)
{
    if (counting)
        nallocs++;
    return __libc_realloc(p, n);
}
#endif

int main(int argc, char **argv)
{
    long starts = mt_init_args(argc, argv, 200);
    mt_init(&argc, &argv);
    if (!COUNTING || !mt_weft) {
        if (mt_rank == 0)
            printf("SKIP: %s\n", COUNTING ? "counts Weft's allocations only (--weft)"
                                          : "a sanitizer replaces malloc");
        MT_CALL(MPI_Finalize());
        return 77;   /* ctest: skipped */
    }
    enum { BIG = 16384 };
    int n = mt_size;
    double x = 1, y = 0;
    int *a = mt_malloc(sizeof(int) * BIG * (size_t)n), *b = mt_malloc(sizeof(int) * BIG * (size_t)n);
    memset(a, 0, sizeof(int) * BIG * (size_t)n);
    MPI_Request q[6];
    const char *names[6] = { "Barrier_init", "Allreduce_init 8 B", "Allreduce_init 64 KiB",
                             "Bcast_init 4 KiB", "Allgather_init 4 B", "Alltoall_init 64 B" };
    MT_CALL(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    MT_CALL(MPI_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    MT_CALL(MPI_Allreduce_init(a, b, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]));
    MT_CALL(MPI_Bcast_init(a, 1024, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]));
    MT_CALL(MPI_Allgather_init(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[4]));
    MT_CALL(MPI_Alltoall_init(a, 16, MPI_INT, b, 16, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[5]));
    for (int k = 0; k < 6; k++) {
        for (long i = 0; i < 20 + starts; i++) {
            counting = i >= 20;
            MT_CALL(MPI_Start(&q[k]));
            MT_CALL(MPI_Wait(&q[k], MPI_STATUS_IGNORE));
            counting = false;
        }
        if (k == 1)
            MT_TRUE(y == n, "Allreduce_init of 1.0 expected %d got %g", n, y);
        if (nallocs)
            MT_FAIL("%s: %ld starts expected no allocation got %ld", names[k], starts, nallocs);
        MT_CALL(MPI_Request_free(&q[k]));
    }
    free(a), free(b);
    return mt_finish("coll_persist_alloc");
}
