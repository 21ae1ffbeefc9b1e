/* The derived-datatype halo exchange of the thread-private MPI paper (issue 15; docs/threadcomm.md):
 * every rank holds a 3-D block of doubles with a ghost layer of width g on each side and exchanges
 * its six faces with the six neighbours of a 3-D periodic Cartesian decomposition, each face an
 * MPI_Type_create_subarray of the whole array (C order [z][y][x]: x-faces are g doubles per row,
 * scattered; z-faces are contiguous planes), 6 Irecv + 6 Isend + Waitall per exchange.
 *
 * What a rank is (-m):
 *   -m flat    processes, one rank each (plain MPI_Init; the peers run this, and so does Weft's
 *              `mpicc -ranks-as-threads` build under `mpiexec --ranks-per-process K`)
 *   -m tcomm   Weft's thread-ranks (MPIX_Threadcomm): every process starts -k threads, each a rank of
 *              the threadcomm (MPI_THREAD_MULTIPLE); each thread allocates and first touches its own
 *              block, builds its own datatypes and exchanges on the threadcomm
 *   -m flatmt  as flat, but initialised at MPI_THREAD_MULTIPLE (one thread): what the library's
 *              thread level costs by itself, to tell it apart from what thread-ranks cost
 * Both use the same decomposition of the same total number of ranks, so flat with P processes and
 * tcomm with P/K processes x K threads do the same exchange.
 *
 * The grid: MPI_Dims_create(ranks, 3) (or -d ZxYxX), dims[0] along z (slowest), ranks in row-major
 * order of their coordinates, neighbours periodic (a dimension of 1 rank: the rank is its own
 * neighbour, a message to itself; of 2: both neighbours are one rank, tags tell the faces apart).
 *
 * Output (rank 0), one line per local block size:
 *   mode=tcomm procs=2 k=2 ranks=4 dims=2x2x1 size=64x64x64 ghost=2 face_kib=64.0,64.0,64.0
 *     iters=.. time_us=.. min_us=..
 * time_us: median over 5 samples of the time per exchange (each sample: N exchanges between two
 * barriers, N chosen so that a sample takes about budget/5). face_kib: one x-, y- and z-face.
 * Every size is checked once: after a first exchange every ghost cell holds its periodic
 * neighbour's value of a function of the global coordinates (else the program aborts).
 *
 * Options: -m flat|tcomm|flatmt, -k threads per process (tcomm; default 2), -s sizes (XxYxZ of a
 * rank's block, comma-separated; default 16x16x16,64x64x64,128x128x128,256x32x32,32x256x32,
 * 32x32x256),
 * -g ghost width (2, as in the paper's code), -t budget seconds per size (0.5), -d ZxYxX dims. */
#include "bench_util.h"

#include <mpi.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<weft.h>)
#include <weft.h>
#endif
#endif

#define MAX_SIZES 16
#define SAMPLES 5

enum { M_FLAT, M_TCOMM, M_FLATMT };
static int mode = M_FLAT, nthreads = 2, ghost = 2, nsizes;
static int sizes[MAX_SIZES][3];   /* x, y, z of a rank's block */
static int force_dims[3];         /* z, y, x; 0: MPI_Dims_create */
static double budget = 0.5;
static int nprocs;
static MPI_Comm tcomm;

static void die(const char *msg)
{
    fprintf(stderr, "halo3d: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct {
    MPI_Comm comm;
    int rank, nranks;
    int dims[3], coord[3];        /* z, y, x */
    int nbr[3][2];                /* [dim][0: minus, 1: plus] */
} grid_t;

static void grid_init(grid_t *g, MPI_Comm comm, int rank, int nranks)
{
    g->comm = comm;
    g->rank = rank;
    g->nranks = nranks;
    memcpy(g->dims, force_dims, sizeof(g->dims));
    if (!g->dims[0]) {
        memset(g->dims, 0, sizeof(g->dims));
        MPI_Dims_create(nranks, 3, g->dims);
    }
    if (g->dims[0] * g->dims[1] * g->dims[2] != nranks)
        die("-d does not multiply to the number of ranks");
    g->coord[0] = rank / (g->dims[1] * g->dims[2]);
    g->coord[1] = rank / g->dims[2] % g->dims[1];
    g->coord[2] = rank % g->dims[2];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int c[3] = { g->coord[0], g->coord[1], g->coord[2] };
            c[d] = (c[d] + (s ? 1 : -1) + g->dims[d]) % g->dims[d];
            g->nbr[d][s] = (c[0] * g->dims[1] + c[1]) * g->dims[2] + c[2];
        }
}

/* The value of the global cell (z, y, x), coordinates wrapped. */
static double cell_value(long z, long y, long x)
{
    return (double)z * 1e6 + (double)y * 1e3 + (double)x;
}

typedef struct {
    int n[3];                     /* interior z, y, x */
    int full[3];                  /* with ghosts */
    double *a;
    MPI_Datatype send[3][2], recv[3][2];
} block_t;

static void block_init(block_t *b, const grid_t *g, const int xyz[3])
{
    b->n[0] = xyz[2];
    b->n[1] = xyz[1];
    b->n[2] = xyz[0];
    for (int d = 0; d < 3; d++)
        b->full[d] = b->n[d] + 2 * ghost;
    size_t cells = (size_t)b->full[0] * (size_t)b->full[1] * (size_t)b->full[2];
    b->a = malloc(cells * sizeof(double));
    if (!b->a)
        die("no memory for the block");
    /* interior: the function of global coordinates; ghosts: -1 */
    for (int z = 0; z < b->full[0]; z++)
        for (int y = 0; y < b->full[1]; y++)
            for (int x = 0; x < b->full[2]; x++) {
                int i[3] = { z, y, x };
                bool inner = true;
                long gc[3];
                for (int d = 0; d < 3; d++) {
                    inner &= i[d] >= ghost && i[d] < ghost + b->n[d];
                    gc[d] = (long)g->coord[d] * b->n[d] + (i[d] - ghost);
                }
                b->a[((size_t)z * (size_t)b->full[1] + (size_t)y) * (size_t)b->full[2] + (size_t)x] =
                    inner ? cell_value(gc[0], gc[1], gc[2]) : -1;
            }
    /* face d, side s: the interior slab of width ghost next to side s (send) and the ghost slab
     * beyond it (receive); the other two dimensions span the interior only */
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int sub[3], st_send[3], st_recv[3];
            for (int e = 0; e < 3; e++) {
                sub[e] = e == d ? ghost : b->n[e];
                st_send[e] = st_recv[e] = ghost;
            }
            st_send[d] = s ? b->n[d] : ghost;
            st_recv[d] = s ? b->n[d] + ghost : 0;
            MPI_Type_create_subarray(3, b->full, sub, st_send, MPI_ORDER_C, MPI_DOUBLE,
                                     &b->send[d][s]);
            MPI_Type_create_subarray(3, b->full, sub, st_recv, MPI_ORDER_C, MPI_DOUBLE,
                                     &b->recv[d][s]);
            MPI_Type_commit(&b->send[d][s]);
            MPI_Type_commit(&b->recv[d][s]);
        }
}

static void block_free(block_t *b)
{
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            MPI_Type_free(&b->send[d][s]);
            MPI_Type_free(&b->recv[d][s]);
        }
    free(b->a);
}

/* One exchange. A face sent towards side s of dimension d carries tag 2d+s; the neighbour on side
 * s receives it into its ghost slab on the other side. */
static void exchange(const grid_t *g, block_t *b)
{
    MPI_Request rq[12];
    int k = 0;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++)
            MPI_Irecv(b->a, 1, b->recv[d][s], g->nbr[d][s], 2 * d + (1 - s), g->comm, &rq[k++]);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++)
            MPI_Isend(b->a, 1, b->send[d][s], g->nbr[d][s], 2 * d + s, g->comm, &rq[k++]);
    MPI_Waitall(12, rq, MPI_STATUSES_IGNORE);
}

/* Every ghost face cell holds the periodic neighbour's value (edges and corners are not sent). */
static void check(const grid_t *g, const block_t *b)
{
    long glob[3];
    for (int d = 0; d < 3; d++)
        glob[d] = (long)g->dims[d] * b->n[d];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int lo[3], hi[3];
            for (int e = 0; e < 3; e++) {
                lo[e] = ghost;
                hi[e] = ghost + b->n[e];
            }
            lo[d] = s ? b->n[d] + ghost : 0;
            hi[d] = lo[d] + ghost;
            for (int z = lo[0]; z < hi[0]; z++)
                for (int y = lo[1]; y < hi[1]; y++)
                    for (int x = lo[2]; x < hi[2]; x++) {
                        int i[3] = { z, y, x };
                        long gc[3];
                        for (int e = 0; e < 3; e++)
                            gc[e] = (((long)g->coord[e] * b->n[e] + (i[e] - ghost)) % glob[e] +
                                     glob[e]) % glob[e];
                        double want = cell_value(gc[0], gc[1], gc[2]);
                        double got = b->a[((size_t)z * (size_t)b->full[1] + (size_t)y) *
                                              (size_t)b->full[2] + (size_t)x];
                        if (got != want) {
                            fprintf(stderr, "halo3d: rank %d: ghost (%d,%d,%d) of face %d%c holds "
                                    "%.0f, expected %.0f\n", g->rank, z, y, x, d,
                                    s ? '+' : '-', got, want);
                            MPI_Abort(MPI_COMM_WORLD, 3);
                        }
                    }
        }
}

static void run_rank(MPI_Comm comm)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    grid_t g;
    grid_init(&g, comm, rank, nranks);
    for (int si = 0; si < nsizes; si++) {
        block_t b;
        block_init(&b, &g, sizes[si]);
        for (int d = 0; d < 3; d++)
            if (ghost > b.n[d])
                die("the ghost width exceeds a block dimension");
        exchange(&g, &b);
        check(&g, &b);
        /* calibrate on rank 0: exchanges per sample */
        double t0 = bench_now();
        for (int i = 0; i < 3; i++)
            exchange(&g, &b);
        MPI_Barrier(comm);
        double per = (bench_now() - t0) / 3;
        long n = (long)(budget / SAMPLES / (per > 1e-9 ? per : 1e-9));
        if (n < 1)
            n = 1;
        MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
        bench_samples_t samp = { 0 };
        for (int k = 0; k < SAMPLES; k++) {
            MPI_Barrier(comm);
            t0 = bench_now();
            for (long i = 0; i < n; i++)
                exchange(&g, &b);
            MPI_Barrier(comm);
            bench_samples_reserve(&samp, 1);
            samp.v[samp.n++] = (bench_now() - t0) / (double)n * 1e6;
        }
        if (rank == 0) {
            bench_stats_t st = bench_stats(&samp);
            double face[3];   /* x-, y-, z-face in KiB */
            face[0] = (double)b.n[0] * b.n[1] * ghost * 8 / 1024;
            face[1] = (double)b.n[0] * b.n[2] * ghost * 8 / 1024;
            face[2] = (double)b.n[1] * b.n[2] * ghost * 8 / 1024;
            printf("mode=%s procs=%d k=%d ranks=%d dims=%dx%dx%d size=%dx%dx%d ghost=%d "
                   "face_kib=%.1f,%.1f,%.1f iters=%ld time_us=%.2f min_us=%.2f\n",
                   mode == M_TCOMM ? "tcomm" : mode == M_FLATMT ? "flatmt" : "flat", nprocs,
                   mode == M_TCOMM ? nthreads : 1,
                   nranks, g.dims[0], g.dims[1], g.dims[2], sizes[si][0], sizes[si][1],
                   sizes[si][2], ghost, face[0], face[1], face[2], n, st.median, st.min);
            fflush(stdout);
        }
        free(samp.v);
        block_free(&b);
    }
}

#ifdef WEFT_MPIX_THREADCOMM
static void *thread_main(void *arg)
{
    (void)arg;
    MPIX_Threadcomm_start(tcomm);
    run_rank(tcomm);
    MPIX_Threadcomm_finish(tcomm);
    return NULL;
}
#endif

static int parse_sizes(const char *s)
{
    nsizes = 0;
    while (*s) {
        int x, y, z, used = 0;
        if (nsizes == MAX_SIZES || sscanf(s, "%dx%dx%d%n", &x, &y, &z, &used) != 3 || x < 1 ||
            y < 1 || z < 1)
            return -1;
        sizes[nsizes][0] = x;
        sizes[nsizes][1] = y;
        sizes[nsizes][2] = z;
        nsizes++;
        s += used;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return nsizes ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *size_list = "16x16x16,64x64x64,128x128x128,256x32x32,32x256x32,32x32x256";
    int opt;
    while ((opt = getopt(argc, argv, "m:k:s:g:t:d:")) != -1) {
        switch (opt) {
        case 'm':
            mode = !strcmp(optarg, "tcomm")    ? M_TCOMM
                   : !strcmp(optarg, "flatmt") ? M_FLATMT
                                               : M_FLAT;
            break;
        case 'k': nthreads = atoi(optarg); break;
        case 's': size_list = optarg; break;
        case 'g': ghost = atoi(optarg); break;
        case 't': budget = atof(optarg); break;
        case 'd':
            if (sscanf(optarg, "%dx%dx%d", &force_dims[0], &force_dims[1], &force_dims[2]) != 3)
                force_dims[0] = -1;
            break;
        default:
            fprintf(stderr, "usage: halo3d [-m flat|tcomm|flatmt] [-k threads] [-s XxYxZ,...] "
                            "[-g ghost] "
                            "[-t budget_s] [-d ZxYxX]\n");
            return 2;
        }
    }
    if (parse_sizes(size_list) || ghost < 1 || nthreads < 1 || nthreads > 256 ||
        force_dims[0] < 0) {
        fprintf(stderr, "halo3d: bad -s, -g, -k or -d\n");
        return 2;
    }
    int provided, rank;
    if (mode == M_FLAT) {
        MPI_Init(&argc, &argv);
        nthreads = 1;
    } else {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        if (mode == M_FLATMT)
            nthreads = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (mode != M_TCOMM) {
        run_rank(MPI_COMM_WORLD);
    } else {
#ifdef WEFT_MPIX_THREADCOMM
        pthread_t th[256];
        MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, &tcomm);
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, thread_main, NULL);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
        MPIX_Threadcomm_free(&tcomm);
#else
        if (rank == 0)
            printf("mode=tcomm skipped: this MPI has no MPIX_Threadcomm\n");
#endif
    }
    MPI_Finalize();
    return 0;
}
