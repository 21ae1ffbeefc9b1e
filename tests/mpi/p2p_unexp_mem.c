/* Unexpected messages take memory in proportion to their size (issue 17 item 7).
 * Ranks pair up (r, r^1): the odd rank sends N messages of S bytes (default 100000 x 1000), with
 * tags cycling over 0..4, then a marker (tag 5), to the even rank, which posts nothing but the
 * marker's receive: messages of one pair arrive in order, so all N are stored unexpected by then.
 * The receiver compares its resident memory (VmRSS of /proc/self/status) before and after: with
 * --weft the growth must stay under 2 x N x S + 16 MiB (measured: 1.2 x; 1.7 x with the redzones
 * of AddressSanitizer). Before Weft stored them in proportion, each took a buffer of the whole
 * eager limit: 16 KiB for these 1000 bytes, 16 x. Then it receives
 * every message, by tag in sending order, and checks each payload.
 * With --budget the program is the flood only (no receive, no check): a job run with a small
 * WEFT_UNEXPECTED_MAX must end with the error naming it (mpi.unexp_budget in tests/mpi/unexp.cmake).
 * Arguments: N [S] [--budget] [--weft]. */
#include "mpitest.h"

#define NTAG 5

/* ThreadSanitizer's shadow memory grows with the heap (7 x the payload measured): resident memory
 * then says nothing about Weft's storage, and the bound is not checked. */
#if defined(__SANITIZE_THREAD__)
#define RSS_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RSS_CHECKED 0
#endif
#endif
#ifndef RSS_CHECKED
#define RSS_CHECKED 1
#endif

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long n = 100000, size = 1000;
    int budget = 0, nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--weft") == 0)
            mt_weft = 1;
        else if (strcmp(argv[i], "--budget") == 0)
            budget = 1;
        else if (nargs++ == 0)
            n = strtol(argv[i], NULL, 0);
        else
            size = strtol(argv[i], NULL, 0);
    }
    int peer = mt_rank ^ 1;
    uint8_t *buf = mt_malloc((size_t)size);

    if (peer >= mt_size) {
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    } else if (mt_rank % 2 == 1) {
        for (long i = 0; i < n; i++) {
            mt_fill(buf, (size_t)size, (uint64_t)i);
            MT_CALL(MPI_Send(buf, (int)size, MPI_BYTE, peer, (int)(i % NTAG), MPI_COMM_WORLD));
        }
        MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, NTAG, MPI_COMM_WORLD));
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        long before = rss_kib();
        MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, NTAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (budget)
            MT_FAIL("a flood of %ld x %ld bytes expected to exceed WEFT_UNEXPECTED_MAX=%s", n, size,
                    getenv("WEFT_UNEXPECTED_MAX") ? getenv("WEFT_UNEXPECTED_MAX") : "(unset)");
        long after = rss_kib();
        double bytes = (double)n * (double)size;
        double grew = (double)(after - before) * 1024.0;
        if (mt_rank == 0)
            printf("p2p_unexp_mem: %ld x %ld bytes stored unexpected: VmRSS %ld -> %ld KiB "
                   "(%.2f x the payload)\n", n, size, before, after, grew / bytes);
        if (RSS_CHECKED && mt_weft && before >= 0 && grew > 2.0 * bytes + 16.0 * 1024 * 1024)
            MT_FAIL("resident memory growth for %ld unexpected messages of %ld bytes expected at "
                    "most %.0f bytes got %.0f", n, size, 2.0 * bytes + 16.0 * 1024 * 1024, grew);
        /* by tag, so each tag's messages come out in sending order among a mix of waiting tags */
        for (int t = 0; t < NTAG; t++) {
            for (long i = t; i < n; i += NTAG) {
                MPI_Status st;
                memset(buf, 0, (size_t)size);
                MT_CALL(MPI_Recv(buf, (int)size, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st));
                MT_STATUS("unexpected message", st, peer, t, size);
                mt_verify(buf, (size_t)size, (uint64_t)i, "unexpected message");
            }
        }
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(buf);
    return mt_finish("p2p_unexp_mem");
}
