/* How fast one core copies between two processes of this machine, by the means Weft's shared-memory
 * rendezvous has: cross-memory attach (process_vm_readv, what a rank copying alone uses) against a
 * plain memcpy inside one process (what the two-core pipelined copy's halves do, through the ring).
 * Not an MPI program and not a comparison with the peers: a probe of the platform, for the bound
 * it puts on the overlap benchmark (docs/shm.md, "What bounds the overlap of one large message").
 *
 * A child process holds a buffer of -s bytes (4 MiB) and computes (a dependent chain, no memory
 * traffic) on CPU 0; the parent, on CPU 1, reads the buffer by runs of -r bytes (256 KiB: the
 * cooperative rendezvous' run of 8 chunks of 32 KiB) with process_vm_readv, then copies the same
 * number of bytes with memcpy, -n times (8). The first repetition faults the pages in and is
 * reported but left out of the medians.
 *
 * Output: one line per repetition, then
 *   cma_probe size=4194304 run=262144 cma_median_us=.. cma_GBps=.. memcpy_median_us=.. memcpy_GBps=..
 * Exit status 77 when process_vm_readv is refused (ptrace rules), as the tests skip. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    (void)sched_setaffinity(0, sizeof(s), &s);   /* one CPU only: both on it, still measured */
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    return v;
}

int main(int argc, char **argv)
{
    size_t size = 4u << 20, run = 256u << 10;
    int n = 8, opt;
    while ((opt = getopt(argc, argv, "s:r:n:")) != -1) {
        if (opt == 's')
            size = parse_size(optarg);
        else if (opt == 'r')
            run = parse_size(optarg);
        else if (opt == 'n')
            n = atoi(optarg);
        else {
            fprintf(stderr, "usage: cma_probe [-s size] [-r run] [-n repetitions]\n");
            return 2;
        }
    }
    if (size == 0 || run == 0 || run > size || n < 2) {
        fprintf(stderr, "cma_probe: expected 0 < run <= size and n >= 2\n");
        return 2;
    }
    char *src = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    char *dst = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!src || !dst)
        return 1;
    memset(src, 0x5a, size);
    memset(dst, 0, size);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {   /* holds src (its own copy after fork, written above) and computes */
        pin(0);
        volatile unsigned long x = 1;
        for (;;)
            x = x * 6364136223846793005ul + 1;
    }
    pin(1);
    double *cma = malloc((size_t)n * sizeof(double)), *mc = malloc((size_t)n * sizeof(double));
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        double t0 = now_us();
        for (size_t off = 0; off < size; off += run) {
            size_t m = size - off < run ? size - off : run;
            struct iovec l = { dst + off, m }, r = { src + off, m };
            ssize_t got = process_vm_readv(child, &l, 1, &r, 1, 0);
            if (got != (ssize_t)m) {
                fprintf(stderr, "cma_probe: process_vm_readv: %s\n",
                        got < 0 ? strerror(errno) : "short read");
                rc = got < 0 && errno == EPERM ? 77 : 1;
                break;
            }
        }
        double t1 = now_us();
        memcpy(src, dst, size);   /* (the parent's own copy of src: one process, one core) */
        double t2 = now_us();
        cma[i] = t1 - t0;
        mc[i] = t2 - t1;
        if (!rc)
            printf("rep %d: process_vm_readv %.1f us, memcpy %.1f us%s\n", i, cma[i], mc[i],
                   i == 0 ? " (first: page faults, left out)" : "");
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (rc)
        return rc;
    qsort(cma + 1, (size_t)n - 1, sizeof(double), cmp);
    qsort(mc + 1, (size_t)n - 1, sizeof(double), cmp);
    double cm = cma[1 + (n - 1) / 2], mm = mc[1 + (n - 1) / 2];
    printf("cma_probe size=%zu run=%zu cma_median_us=%.1f cma_GBps=%.2f memcpy_median_us=%.1f "
           "memcpy_GBps=%.2f\n", size, run, cm, (double)size / cm / 1e3, mm,
           (double)size / mm / 1e3);
    free(cma);
    free(mc);
    free(src);
    free(dst);
    return 0;
}
