/* An erroneous program that leaves with operations pending (issue 18): rank 0 starts sends that
 * rank 1 never receives, unmaps their buffers (so that any later access faults) and leaves by
 * MPI_Finalize, exit(0) or a return from main without finalizing. The library must not touch the
 * unmapped buffers any more, must not crash, and must name the pending operations on stderr.
 *
 * usage: finalize_pending CASE END
 *   CASE  rndv   one 8 MiB MPI_Isend (tag 5): its RTS is out, the receiver never matches it
 *         eager  512 MPI_Isend of 16 KiB (tag 6): the ring to rank 1 fills, the rest wait in the
 *                pending queue, from which progress copies them
 *         late   as rndv, but rank 1 posts the receive (and never waits for it) once rank 0 is
 *                leaving: its CTS reaches rank 0 inside MPI_Finalize or its exit, where the
 *                fragments must not be read
 *         recv   the other way round: rank 1 posts an MPI_Irecv of 16 KiB (tag 7), unmaps its
 *                buffer and leaves; rank 0 sends the message a second later
 *         coll   an MPI_Iallreduce of 1 Mi doubles on rank 0; rank 1 joins it a second later
 *                (and never waits for it)
 *         freed  not an error: the sends of rndv and eager, each MPI_Request_free'd, buffers kept;
 *                rank 1 receives them a second later, while rank 0 is in MPI_Finalize: they
 *                complete, with the right data, and nothing is reported
 *   END   finalize | exit | return: how the rank with the pending operation leaves (the other
 *         rank always calls MPI_Finalize). Leaving without MPI_Finalize, that rank then lingers 2 s
 *         in an exit handler of its own (registered before MPI_Init, so it runs after the
 *         library's), while the other rank drains the rings or sends: the library's threads must
 *         be stopped by then.
 * The driver (finalize_pending.sh) checks the exit status, the warning and the absence of a crash.
 * Rank 1 (rank 0 for `recv`) runs no progress thread and stays out of MPI for a second, so that
 * nothing drains the rings while the erroneous rank is between its munmap and its leaving: an
 * access there would be the program's own fault, not what this test is about.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#define RNDV_BYTES (8u << 20)
#define EAGER_BYTES 16384u
#define EAGER_COUNT 512
#define COLL_COUNT (1u << 20)

static char *map(size_t bytes)
{
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MT_TRUE(p != MAP_FAILED, "mmap of %zu bytes expected to succeed", bytes);
    memset(p, 0x5a, bytes);
    return p;
}

static int lingering;

static void linger(void)
{
    if (lingering)
        sleep(2);
}

static void leave(const char *end)
{
    lingering = strcmp(end, "finalize") != 0;
    if (!strcmp(end, "exit"))
        exit(0);
    if (!strcmp(end, "finalize"))
        MPI_Finalize();
    /* "return": the caller returns from main */
}

/* Rank 0 of `freed`: sends whose requests are freed, from buffers that stay valid. */
static void send_freed(void)
{
    static char big[RNDV_BYTES], small[EAGER_COUNT][EAGER_BYTES];
    MPI_Request r;
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i % 251);
    MPI_Isend(big, RNDV_BYTES, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    for (int i = 0; i < EAGER_COUNT; i++) {
        memset(small[i], i & 0xff, EAGER_BYTES);
        MPI_Isend(small[i], EAGER_BYTES, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &r);
        MPI_Request_free(&r);
    }
}

static void recv_freed(void)
{
    static char big[RNDV_BYTES], small[EAGER_BYTES];
    MPI_Recv(big, RNDV_BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (size_t i = 0; i < sizeof(big); i++)
        if (big[i] != (char)(i % 251))
            MT_FAIL("byte %zu of the freed rendezvous send expected %d got %d", i, (int)(i % 251),
                    big[i]);
    for (int i = 0; i < EAGER_COUNT; i++) {
        MPI_Recv(small, EAGER_BYTES, MPI_BYTE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_EQ("first byte of a freed eager send", (char)(i & 0xff), small[0]);
        MT_EQ("last byte of a freed eager send", (char)(i & 0xff), small[EAGER_BYTES - 1]);
    }
}

int main(int argc, char **argv)
{
    atexit(linger);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    if (argc != 3 || mt_size != 2)
        MT_FAIL("usage: finalize_pending rndv|eager|late|recv|coll|freed finalize|exit|return, "
                "on 2 ranks");
    const char *kind = argv[1], *end = argv[2];
    bool recv_case = !strcmp(kind, "recv");
    int culprit = recv_case ? 1 : 0;
    MPI_Request r;

    if (mt_rank == culprit) {
        if (recv_case) {
            char *buf = map(EAGER_BYTES);
            MPI_Irecv(buf, EAGER_BYTES, MPI_BYTE, 0, 7, MPI_COMM_WORLD, &r);
            munmap(buf, EAGER_BYTES);
        } else if (!strcmp(kind, "eager")) {
            size_t bytes = (size_t)EAGER_BYTES * EAGER_COUNT;
            char *buf = map(bytes);
            static MPI_Request rs[EAGER_COUNT];
            for (int i = 0; i < EAGER_COUNT; i++)
                MPI_Isend(buf + (size_t)i * EAGER_BYTES, EAGER_BYTES, MPI_BYTE, 1, 6,
                          MPI_COMM_WORLD, &rs[i]);
            munmap(buf, bytes);
        } else if (!strcmp(kind, "coll")) {
            size_t bytes = COLL_COUNT * sizeof(double);
            char *in = map(bytes), *out = map(bytes);
            MPI_Iallreduce(in, out, COLL_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
            munmap(in, bytes);
            munmap(out, bytes);
        } else if (!strcmp(kind, "freed")) {
            send_freed();
        } else {
            char *buf = map(RNDV_BYTES);
            MPI_Isend(buf, RNDV_BYTES, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r);
            munmap(buf, RNDV_BYTES);
        }
        leave(end);
        return 0;
    }

    sleep(1);
    if (recv_case) {
        static char small[EAGER_BYTES];
        MPI_Send(small, EAGER_BYTES, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else if (!strcmp(kind, "late")) {
        static char buf[RNDV_BYTES];
        MPI_Irecv(buf, RNDV_BYTES, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &r);
    } else if (!strcmp(kind, "coll")) {
        static double in[COLL_COUNT], out[COLL_COUNT];
        MPI_Iallreduce(in, out, COLL_COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r);
    } else if (!strcmp(kind, "freed")) {
        recv_freed();
    }
    MPI_Finalize();
    return 0;
}
