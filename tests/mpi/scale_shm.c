/* Many ranks on few cores through the shared-memory transport: a ring (small and rendezvous-size
 * messages), a sparse exchange with 16 neighbours on each side (more senders per receiver than it
 * has per-pair rings, so the shared queues carry traffic too) and Allreduce, with a ceiling on the
 * /dev/shm the job's segment takes.
 *
 * The segment is unlinked once every rank has mapped it, so rank 0 finds it in /proc/self/maps
 * (a shared mapping of /dev/shm/<job>-shm, deleted) and stats it through /proc/self/map_files:
 * st_blocks is the tmpfs memory really allocated. Where map_files cannot be read, the length of
 * the mapping (the segment's size, an upper bound) is checked instead. Measured twice: after
 * MPI_Init and after the traffic.
 *
 * Argument: the ceiling in MiB (default 1024). With --weft: the segment must be found. */
#include "mpitest.h"

#include <sys/stat.h>

#define RING_BIG  (64 * 1024)
#define NEIGH     16

/* Bytes of /dev/shm held by this job's segment (allocated blocks, or the mapping length when the
 * blocks cannot be read); *found_p = 0 if no segment is mapped (another transport). */
static long long shm_bytes(int *found_p, long long *size_p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    long long best = 0, size = 0;
    *found_p = 0;
    while (f && fgets(line, sizeof(line), f)) {
        /* the job's segment: shared, writable, unlinked; rank 0 made it as an O_TMPFILE
         * ("/dev/shm/#<inode>"), the others opened it by name ("...-shm") */
        if (!strstr(line, "/dev/shm/") || !strstr(line, " (deleted)") || !strstr(line, " rw-s "))
            continue;
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx", &a, &b) != 2)
            continue;
        char path[128];
        snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", a, b);
        struct stat st;
        long long bytes = (long long)(b - a);
        if (stat(path, &st) == 0) {
            bytes = (long long)st.st_blocks * 512;
            size = (long long)st.st_size;
        } else {
            size = bytes;
        }
        *found_p = 1;
        if (bytes > best)
            best = bytes;
    }
    if (f)
        fclose(f);
    *size_p = size;
    return best;
}

static void check_shm(const char *when, long long ceiling)
{
    int found;
    long long size, bytes = shm_bytes(&found, &size);
    if (mt_rank != 0)
        return;
    printf("%s: %d ranks, segment of %.1f MiB, %.1f MiB of /dev/shm allocated (ceiling %lld MiB)\n",
           when, mt_size, (double)size / 1048576.0, (double)bytes / 1048576.0, ceiling >> 20);
    if (mt_weft)
        MT_TRUE(found, "no shared-memory segment mapped %s", when);
    MT_TRUE(bytes <= ceiling, "%s: /dev/shm use %lld bytes above the ceiling %lld", when, bytes, ceiling);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    long long ceiling = mt_init_args(argc, argv, 1024) << 20;
    mt_init(&argc, &argv);
    int me = mt_rank, n = mt_size, right = (me + 1) % n, left = (me + n - 1) % n;
    check_shm("after MPI_Init", ceiling);

    /* ring: a token of 8 bytes around twice, then a 64 KiB message to the right neighbour */
    for (int lap = 0; lap < 2; lap++) {
        long long tok = 0;
        if (me == 0) {
            tok = lap;
            MT_CALL(MPI_Send(&tok, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD));
            MT_CALL(MPI_Recv(&tok, 1, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_EQ("token after a lap", (long long)lap + n - 1, tok);
        } else {
            MT_CALL(MPI_Recv(&tok, 1, MPI_LONG_LONG, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            tok++;
            MT_CALL(MPI_Send(&tok, 1, MPI_LONG_LONG, right, lap, MPI_COMM_WORLD));
        }
    }
    uint8_t *out = malloc(RING_BIG), *in = malloc(RING_BIG);
    MT_TRUE(out && in, "no memory");
    mt_fill(out, RING_BIG, (uint64_t)me);
    MT_CALL(MPI_Sendrecv(out, RING_BIG, MPI_BYTE, right, 7, in, RING_BIG, MPI_BYTE, left, 7,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    mt_verify(in, RING_BIG, (uint64_t)left, "ring message from the left");

    /* sparse exchange: 2 * NEIGH peers each, 1 KiB each way */
    int k = NEIGH < (n - 1) / 2 ? NEIGH : (n - 1) / 2;
    enum { SZ = 1024 };
    uint8_t *sbuf = malloc((size_t)2 * k * SZ + 1), *rbuf = malloc((size_t)2 * k * SZ + 1);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(4 * k + 1));
    MT_TRUE(sbuf && rbuf && req, "no memory");
    int nr = 0;
    for (int d = 1; d <= k; d++) {
        int to[2] = { (me + d) % n, (me + n - d) % n };
        for (int s = 0; s < 2; s++) {
            int slot = 2 * (d - 1) + s;
            MT_CALL(MPI_Irecv(rbuf + (size_t)slot * SZ, SZ, MPI_BYTE, to[s], 11, MPI_COMM_WORLD, &req[nr++]));
            mt_fill(sbuf + (size_t)slot * SZ, SZ, ((uint64_t)me << 16) | (uint64_t)to[s]);
            MT_CALL(MPI_Isend(sbuf + (size_t)slot * SZ, SZ, MPI_BYTE, to[s], 11, MPI_COMM_WORLD, &req[nr++]));
        }
    }
    MT_CALL(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
    for (int d = 1; d <= k; d++) {
        int from[2] = { (me + d) % n, (me + n - d) % n };
        for (int s = 0; s < 2; s++)
            mt_verify(rbuf + (size_t)(2 * (d - 1) + s) * SZ, SZ, ((uint64_t)from[s] << 16) | (uint64_t)me,
                      "neighbour message");
    }

    /* Allreduce: a scalar and a vector */
    long long sum = 0, mine = me;
    MT_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("sum of the ranks", (long long)n * (n - 1) / 2, sum);
    enum { V = 4096 };
    int *v = malloc(V * sizeof(int)), *r = malloc(V * sizeof(int));
    MT_TRUE(v && r, "no memory");
    for (int i = 0; i < V; i++)
        v[i] = me + i;
    MT_CALL(MPI_Allreduce(v, r, V, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    for (int i = 0; i < V; i++)
        MT_EQ("Allreduce MAX element", n - 1 + i, r[i]);

    check_shm("after the traffic", ceiling);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    free(out); free(in); free(sbuf); free(rbuf); free(req); free(v); free(r);
    MT_CALL(MPI_Finalize());
    return 0;
}
