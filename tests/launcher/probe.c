/* The launcher tests' rank program. Built twice: pmi_probe speaks PMI through wi_pmi_* only;
 * mpi_probe (PROBE_MPI) does the same through MPI_Init/Barrier/Abort/Finalize.
 *
 *   probe hello                      print rank, size, singleton flag and job name
 *   probe exchange                   put/fence/get among all ranks (values with odd bytes, a long one)
 *   probe exit CODE WHO finalize     everyone fences and finalizes; rank WHO then exits CODE
 *   probe exit CODE WHO nofinalize   rank WHO exits CODE right after init; the others block in a fence
 *   probe abort CODE WHO             rank WHO aborts with CODE; the others block in a fence
 *   probe signal SIG WHO             rank WHO raises SIG; the others block in a fence
 *   probe sleep [noterm]             init, then sleep for ever (ignoring SIGTERM with noterm)
 *   probe stdio LINES                LINES lines on stdout and one on stderr per rank; rank 0 echoes
 *                                    its stdin, the others report what their stdin gives
 *   probe flood LINES LEN            LINES lines of LEN bytes each on stdout, fully buffered
 *   probe env VAR...                 print VAR=value for each VAR
 *   probe method                     (PMI build) print the PMI backend in use (wi_pmi_method)
 *   probe ring                       (MPI build) pass a token around the ranks twice, Allreduce
 *                                    sum and max of the ranks and an Allgather, checking every value
 *
 * Environment: PROBE_PIDDIR=dir writes <dir>/rank<R> with this pid, <dir>/ppid<R> with its parent's
 * (mpiexec's) pid, and <dir>/child<R> with the pid of a forked sleeper if PROBE_SPAWN=1;
 * PROBE_SHM=1 creates /dev/shm/<kvsname>-probe<R> (PMI build) and leaves it behind. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef PROBE_MPI
#include <mpi.h>
#else
#include "pmi/wi_pmi.h"
#endif

static int rank, size;
static int singleton;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "probe rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(99);
}

#ifdef PROBE_MPI
static const char *probe_kvsname(void) { return "-"; }
static void probe_init(int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        die("MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    singleton = getenv("PMI_FD") == NULL && getenv("PMI_PORT") == NULL;
}
static void probe_fence(void)
{
    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        die("MPI_Barrier failed");
}
static void probe_abort(int code)
{
    fprintf(stderr, "probe rank %d: calling MPI_Abort(%d)\n", rank, code);
    MPI_Abort(MPI_COMM_WORLD, code);
}
static void probe_finalize(void)
{
    if (MPI_Finalize() != MPI_SUCCESS)
        die("MPI_Finalize failed");
}
static void probe_exchange(void)
{
    for (int i = 0; i < 3; i++)
        probe_fence();
}
static const char *probe_method(void)
{
    die("method needs the PMI build of the probe");
}
static void probe_ring(void)
{
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    long token = 0, want = 0;
    for (int round = 0; round < 2; round++) {
        /* rank 0 starts the token; each rank adds its rank + 1 and passes it on */
        if (rank == 0) {
            token = 1;
            if (size > 1) {
                MPI_Send(&token, 1, MPI_LONG, right, round, MPI_COMM_WORLD);
                MPI_Recv(&token, 1, MPI_LONG, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            MPI_Recv(&token, 1, MPI_LONG, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank + 1;
            MPI_Send(&token, 1, MPI_LONG, right, round, MPI_COMM_WORLD);
        }
    }
    want = (long)size * (size + 1) / 2;
    if (rank == 0 && token != want)
        die("ring token came back as %ld, want %ld", token, want);
    long mine[2] = { rank, rank }, sum[2];
    MPI_Allreduce(&mine[0], &sum[0], 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mine[1], &sum[1], 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (sum[0] != (long)size * (size - 1) / 2 || sum[1] != size - 1)
        die("Allreduce gave sum %ld max %ld, want %ld and %d", sum[0], sum[1],
            (long)size * (size - 1) / 2, size - 1);
    int two[2] = { rank, size };
    int *pairs = malloc(sizeof(int) * 2 * (size_t)size);
    if (!pairs)
        die("out of memory");
    MPI_Allgather(two, 2, MPI_INT, pairs, 2, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        if (pairs[2 * r] != r || pairs[2 * r + 1] != size)
            die("Allgather: rank %d says it is rank %d of %d, want %d of %d", r, pairs[2 * r],
                pairs[2 * r + 1], r, size);
    free(pairs);
}
#else
static const char *probe_kvsname(void) { return wi_pmi_kvsname(); }
static void probe_init(int *argc, char ***argv)
{
    bool s;
    if (wi_pmi_init(&rank, &size, &s) != WU_OK)
        die("wi_pmi_init failed");
    singleton = s;
}
static void probe_fence(void)
{
    if (wi_pmi_fence() != WU_OK)
        die("wi_pmi_fence failed");
}
static void probe_abort(int code)
{
    wi_pmi_abort(code, "probe: aborting on purpose");
}
static void probe_finalize(void)
{
    if (wi_pmi_finalize() != WU_OK)
        die("wi_pmi_finalize failed");
}

/* Value of key k for rank r: odd bytes (space, '=', '%', '*', newline) and, for "long", 2500 bytes
 * so that it is split over several PMI values. */
static void probe_value(char *buf, size_t len, const char *k, int r)
{
    int n = snprintf(buf, len, "*r=%d k=%s 100%% %s\n\t~", r, k, probe_kvsname());
    if (!strcmp(k, "long"))
        for (int i = 0; n < 2500 && (size_t)n + 1 < len; i++)
            buf[n++] = (char)(' ' + (i * 7 + r) % 95);
    buf[n] = '\0';
}

static const char *probe_method(void)
{
    return wi_pmi_method();
}
static void probe_ring(void)
{
    die("ring needs the MPI build of the probe");
}

static void probe_exchange(void)
{
    /* Each key is put once (the contract of wi_pmi.h: PMI-2 servers keep a key's first value). */
    static const char *keys[2][3] = { { "addr", "long", "x" }, { "addr2", "long", "x2" } };
    char want[4096], got[4096];
    for (int round = 0; round < 2; round++) {
        for (size_t k = 0; k < 3; k++) {
            if (round == 1 && k == 1)
                continue;
            probe_value(want, sizeof(want), keys[round][k], rank + round * 1000);
            if (wi_pmi_put(keys[round][k], want) != WU_OK)
                die("put of %s failed", keys[round][k]);
        }
        probe_fence();
        for (int r = 0; r < size; r++) {
            for (size_t k = 0; k < 3; k++) {
                int who = round == 1 && k == 1 ? r : r + round * 1000;
                probe_value(want, sizeof(want), keys[round][k], who);
                wu_status_t st = wi_pmi_get(r, keys[round][k], got, sizeof(got));
                if (st != WU_OK)
                    die("get of %s from rank %d failed", keys[round][k], r);
                if (strcmp(want, got))
                    die("get of %s from rank %d gave '%s', want '%s'", keys[round][k], r, got, want);
            }
        }
        probe_fence();
    }
    if (wi_pmi_get(0, "never-put", got, sizeof(got)) != WU_ERR_NOT_FOUND)
        die("get of a missing key did not say WU_ERR_NOT_FOUND");
    if (wi_pmi_get(0, "long", got, 10) != WU_ERR_TRUNCATE)
        die("get into a short buffer did not say WU_ERR_TRUNCATE");
}
#endif

static void probe_side_effects(void)
{
    const char *dir = getenv("PROBE_PIDDIR");
    char path[4096];
    if (dir) {
        snprintf(path, sizeof(path), "%s/rank%d", dir, rank);
        FILE *f = fopen(path, "w");
        if (!f)
            die("cannot write %s", path);
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
        snprintf(path, sizeof(path), "%s/ppid%d", dir, rank);
        f = fopen(path, "w");
        if (!f)
            die("cannot write %s", path);
        fprintf(f, "%ld\n", (long)getppid());
        fclose(f);
        if (getenv("PROBE_SPAWN")) {
            pid_t c = fork();
            if (c == 0) {
                for (int fd = 0; fd < 3; fd++)
                    close(fd);   /* keep no pipe of mpiexec open */
                for (;;)
                    pause();
            }
            snprintf(path, sizeof(path), "%s/child%d", dir, rank);
            f = fopen(path, "w");
            if (!f)
                die("cannot write %s", path);
            fprintf(f, "%ld\n", (long)c);
            fclose(f);
        }
    }
#ifndef PROBE_MPI
    if (getenv("PROBE_SHM")) {
        snprintf(path, sizeof(path), "/%s-probe%d", probe_kvsname(), rank);
        int fd = shm_open(path, O_CREAT | O_RDWR, 0600);
        if (fd < 0)
            die("shm_open %s failed: %s", path, strerror(errno));
        close(fd);
    }
#endif
}

static int arg_int(int argc, char **argv, int i)
{
    if (i >= argc)
        die("missing argument %d", i);
    return atoi(argv[i]);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "hello";
    probe_init(&argc, &argv);
    probe_side_effects();

    if (!strcmp(mode, "hello")) {
        printf("rank %d of %d singleton %d kvs %s\n", rank, size, singleton, probe_kvsname());
    } else if (!strcmp(mode, "method")) {
        printf("rank %d of %d: method %s\n", rank, size, probe_method());
    } else if (!strcmp(mode, "ring")) {
        probe_ring();
        printf("rank %d of %d: ring ok\n", rank, size);
    } else if (!strcmp(mode, "exchange")) {
        probe_exchange();
        printf("rank %d of %d: exchange ok\n", rank, size);
    } else if (!strcmp(mode, "exit")) {
        int code = arg_int(argc, argv, 2), who = arg_int(argc, argv, 3);
        bool fin = argc > 4 && !strcmp(argv[4], "finalize");
        if (!fin && rank == who)
            exit(code);
        probe_fence();
        if (fin) {
            probe_finalize();
            exit(rank == who ? code : 0);
        }
        die("fence completed although rank %d never joined", who);
    } else if (!strcmp(mode, "abort")) {
        int code = arg_int(argc, argv, 2), who = arg_int(argc, argv, 3);
        if (rank == who)
            probe_abort(code);
        probe_fence();
        die("fence completed although rank %d aborted", who);
    } else if (!strcmp(mode, "signal")) {
        int sig = arg_int(argc, argv, 2), who = arg_int(argc, argv, 3);
        if (rank == who) {
            signal(sig, SIG_DFL);   /* sanitizers catch SIGSEGV; the test wants the plain death */
            raise(sig);
        }
        probe_fence();
        die("fence completed although rank %d was killed", who);
    } else if (!strcmp(mode, "sleep")) {
        if (argc > 2 && !strcmp(argv[2], "noterm"))
            signal(SIGTERM, SIG_IGN);
        printf("rank %d sleeping\n", rank);
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(mode, "stdio")) {
        int lines = arg_int(argc, argv, 2);
        char buf[256];
        for (int i = 0; i < lines; i++)
            printf("rank %d line %d\n", rank, i);
        fflush(stdout);
        fprintf(stderr, "rank %d to stderr\n", rank);
        while (fgets(buf, sizeof(buf), stdin))
            printf("rank %d stdin: %s", rank, buf);
        printf("rank %d stdin: EOF\n", rank);
    } else if (!strcmp(mode, "flood")) {
        int lines = arg_int(argc, argv, 2), len = arg_int(argc, argv, 3);
        static char buf[1 << 16];
        setvbuf(stdout, buf, _IOFBF, 4096 + (size_t)rank * 1000);  /* flushes cut lines apart */
        for (int i = 0; i < lines; i++) {
            printf("%d:%d:", rank, i);
            for (int j = 0; j < len; j++)
                putchar('a' + (rank + j) % 26);
            putchar('\n');
        }
    } else if (!strcmp(mode, "env")) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("rank %d %s=%s\n", rank, argv[i], v ? v : "(unset)");
        }
    } else {
        die("unknown mode %s", mode);
    }
    fflush(stdout);
    probe_finalize();
    return 0;
}
