/* MPI_Pack and MPI_Unpack throughput of non-contiguous datatypes (issue 4), on one rank.
 *
 * Cases:
 *   vector  N doubles of a vector: MPI_Type_vector(N, 1, 2, MPI_DOUBLE) (every other double), N from -s
 *   face    the three faces of an n^3 array of doubles (C order, z fastest), MPI_Type_create_subarray:
 *             yz  x = 0: subsizes {1, n, n}, one contiguous block of n*n doubles
 *             xz  y = 0: subsizes {n, 1, n}, n blocks of n doubles
 *             xy  z = 0: subsizes {n, n, 1}, n*n single doubles, stride n
 *           for each n of -f
 * For each case, MPI_Pack of one element of the type into a buffer of MPI_Pack_size bytes, then MPI_Unpack of it
 * back. Each repetition times a loop of calls lasting budget / reps seconds (at least one call); the figure is
 * the median over repetitions of the packed bytes per second (GB = 10^9 bytes), with min and max.
 * The packed data and the unpacked array are checked once per case against the values they must hold.
 *
 * Output (any rank count; rank 0 works, the others wait):
 *   case=vector param=1048576 op=pack bytes=8388608 reps=5 calls=.. median_gbps=.. min_gbps=.. max_gbps=.. check=ok
 *   case=face_xy param=128 op=unpack ...
 * A case whose datatype cannot be built prints "case=... status=unsupported" instead; exit status 3 if no case
 * could be built, 1 if a check failed.
 *
 * Options: -s vector counts (4K,64K,1M)  -f face edges (64,128)  -t budget seconds per (case, op) (0.5)
 *          -r repetitions (5)  -p pin the rank to one CPU */
#include "bench_util.h"

#include <mpi.h>
#include <unistd.h>

static double budget = 0.5;
static int reps = 5, supported = 0, failed = 0;

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Time pack (unpack = 0) or unpack of one element of t between buf and packed. */
static void measure(const char *name, long param, MPI_Datatype t, double *buf, char *packed, int psize,
                    int unpack, int check)
{
    double rate[100];
    long calls_total = 0;
    int bytes = 0;
    MPI_Type_size(t, &bytes);
    for (int r = 0; r < reps; r++) {
        long calls = 0;
        double t0 = bench_now(), t1;
        do {
            int pos = 0;
            if (unpack)
                MPI_Unpack(packed, psize, &pos, buf, 1, t, MPI_COMM_SELF);
            else
                MPI_Pack(buf, 1, t, packed, psize, &pos, MPI_COMM_SELF);
            calls++;
            t1 = bench_now();
        } while (t1 - t0 < budget / reps);
        rate[r] = (double)bytes * (double)calls / (t1 - t0) / 1e9;
        calls_total += calls;
    }
    double med = median_of(rate, reps);
    printf("case=%s param=%ld op=%s bytes=%d reps=%d calls=%ld median_gbps=%.3f min_gbps=%.3f max_gbps=%.3f check=%s\n",
           name, param, unpack ? "unpack" : "pack", bytes, reps, calls_total, med, rate[0], rate[reps - 1],
           check ? "ok" : "FAIL");
    fflush(stdout);
}

/* buf holds n_all doubles of value = index; sel(i) is the index of the i-th packed double. Packs, checks the
 * stream, times pack, zeroes buf, unpacks, checks, times unpack. */
static void run_case(const char *name, long param, MPI_Datatype t, long n_all, long n_sel,
                     long (*sel)(long i, long param))
{
    double *buf = malloc((size_t)n_all * sizeof(double));
    int psize = 0;
    MPI_Pack_size(1, t, MPI_COMM_SELF, &psize);
    char *packed = malloc((size_t)psize);
    if (!buf || !packed) {
        printf("case=%s param=%ld status=no-memory\n", name, param);
        exit(1);
    }
    for (long i = 0; i < n_all; i++)
        buf[i] = (double)i;
    int pos = 0, ok = 1;
    if (MPI_Pack(buf, 1, t, packed, psize, &pos, MPI_COMM_SELF) != MPI_SUCCESS) {
        printf("case=%s param=%ld status=unsupported (MPI_Pack failed)\n", name, param);
        free(buf);
        free(packed);
        return;
    }
    supported++;
    if (pos != (int)(n_sel * sizeof(double)))
        ok = 0;
    for (long i = 0; i < n_sel && ok; i++) {
        double v;
        memcpy(&v, packed + i * sizeof(double), sizeof v);
        if (v != (double)sel(i, param))
            ok = 0;
    }
    measure(name, param, t, buf, packed, psize, 0, ok);
    memset(buf, 0, (size_t)n_all * sizeof(double));
    pos = 0;
    MPI_Unpack(packed, psize, &pos, buf, 1, t, MPI_COMM_SELF);
    int ok2 = 1;
    long k = 0;
    for (long i = 0; i < n_sel && ok2; i++) {
        long j = sel(i, param);
        if (buf[j] != (double)j)
            ok2 = 0;
    }
    for (long i = 0; i < n_all; i++)
        k += buf[i] != 0.0;
    if (k != n_sel - (sel(0, param) == 0))   /* element 0 holds 0.0 anyway */
        ok2 = 0;
    measure(name, param, t, buf, packed, psize, 1, ok2);
    failed |= !ok || !ok2;
    free(buf);
    free(packed);
}

static long sel_vector(long i, long n) { (void)n; return 2 * i; }
static long sel_yz(long i, long n) { (void)n; return i; }                              /* x = 0 */
static long sel_xz(long i, long n) { return (i / n) * n * n + i % n; }                 /* y = 0 */
static long sel_xy(long i, long n) { return ((i / n) * n + i % n) * n; }               /* z = 0 */

int main(int argc, char **argv)
{
    long vs[16], fs[16];
    int nv = bench_parse_list("4K,64K,1M", vs, 16), nf = bench_parse_list("64,128", fs, 16), pin = 0, opt;
    while ((opt = getopt(argc, argv, "s:f:t:r:p")) != -1) {
        switch (opt) {
        case 's': nv = bench_parse_list(optarg, vs, 16); break;
        case 'f': nf = bench_parse_list(optarg, fs, 16); break;
        case 't': budget = atof(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'p': pin = 1; break;
        default:
            fprintf(stderr, "usage: %s [-s 4K,64K,1M] [-f 64,128] [-t budget] [-r reps] [-p]\n", argv[0]);
            return 2;
        }
    }
    if (nv < 0 || nf < 0 || reps < 1 || reps > 100) {
        fprintf(stderr, "pack: bad option\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int cpu = pin ? bench_pin_self(rank) : -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (rank == 0) {
        printf("# pack cpu=%d budget_s=%.3f reps=%d\n", cpu, budget, reps);
        for (int i = 0; i < nv; i++) {
            MPI_Datatype t;
            if (MPI_Type_vector((int)vs[i], 1, 2, MPI_DOUBLE, &t) != MPI_SUCCESS ||
                MPI_Type_commit(&t) != MPI_SUCCESS) {
                printf("case=vector param=%ld status=unsupported (MPI_Type_vector failed)\n", vs[i]);
                continue;
            }
            run_case("vector", vs[i], t, 2 * vs[i], vs[i], sel_vector);
            MPI_Type_free(&t);
        }
        for (int i = 0; i < nf; i++) {
            int n = (int)fs[i];
            int sizes[3] = { n, n, n }, starts[3] = { 0, 0, 0 };
            int sub[3][3] = { { 1, n, n }, { n, 1, n }, { n, n, 1 } };
            const char *names[3] = { "face_yz", "face_xz", "face_xy" };
            long (*sels[3])(long, long) = { sel_yz, sel_xz, sel_xy };
            for (int f = 0; f < 3; f++) {
                MPI_Datatype t;
                if (MPI_Type_create_subarray(3, sizes, sub[f], starts, MPI_ORDER_C, MPI_DOUBLE, &t) != MPI_SUCCESS ||
                    MPI_Type_commit(&t) != MPI_SUCCESS) {
                    printf("case=%s param=%d status=unsupported (MPI_Type_create_subarray failed)\n", names[f], n);
                    continue;
                }
                run_case(names[f], n, t, (long)n * n * n, (long)n * n, sels[f]);
                MPI_Type_free(&t);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && !supported)
        return 3;
    return failed ? 1 : 0;
}
