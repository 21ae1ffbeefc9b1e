/* A flood of unexpected messages: each odd rank posts N small Isends (0 to 60 bytes, tags 0..6) to the
 * even rank below it, then all ranks pass a barrier, and only then does the receiver post anything.
 * Every message must come out whole and in order: the first half through blocking Recv with
 * MPI_ANY_TAG, the second half through batches of Irecv with specific tags completed by Waitall.
 * Argument: N (default 100000). */
#include "mpitest.h"

#define MAXMSG 60
#define NTAG 7
#define BATCH 1000

static int msg_size(long i) { return (int)(i % (MAXMSG + 1)); }
static int msg_tag(long i) { return (int)((i * 3) % NTAG); }

/* Byte j of message i: the first four bytes spell i, the rest depend on i and j. */
static uint8_t msg_byte(long i, int j) { return j < 4 ? (uint8_t)(i >> (8 * j)) : (uint8_t)(i * 31 + j * 7); }

static void check(long i, const uint8_t *b, const MPI_Status *st, int from)
{
    int cnt = -1;
    MT_CALL(MPI_Get_count(st, MPI_BYTE, &cnt));
    if (st->MPI_SOURCE != from || st->MPI_TAG != msg_tag(i) || cnt != msg_size(i))
        MT_FAIL("message %ld status expected (source %d, tag %d, count %d) got (%d, %d, %d)", i, from,
                msg_tag(i), msg_size(i), st->MPI_SOURCE, st->MPI_TAG, cnt);
    for (int j = 0; j < cnt; j++)
        if (b[j] != msg_byte(i, j))
            MT_FAIL("message %ld byte %d expected %u got %u", i, j, msg_byte(i, j), b[j]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long n = mt_init_args(argc, argv, 100000);
    int peer = mt_rank ^ 1;
    double t0 = MPI_Wtime();

    if (peer >= mt_size) { /* odd rank count: the last rank only joins the barrier */
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    } else if (mt_rank % 2 == 1) {
        uint8_t *bufs = mt_malloc((size_t)n * MAXMSG);
        MPI_Request *reqs = mt_malloc(sizeof(MPI_Request) * n);
        for (long i = 0; i < n; i++) {
            uint8_t *b = bufs + (size_t)i * MAXMSG;
            for (int j = 0; j < msg_size(i); j++)
                b[j] = msg_byte(i, j);
            MT_CALL(MPI_Isend(b, msg_size(i), MPI_BYTE, peer, msg_tag(i), MPI_COMM_WORLD, &reqs[i]));
        }
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Waitall((int)n, reqs, MPI_STATUSES_IGNORE));
        for (long i = 0; i < n; i++)
            MT_TRUE(reqs[i] == MPI_REQUEST_NULL, "request %ld after Waitall expected MPI_REQUEST_NULL", i);
        free(bufs);
        free(reqs);
    } else {
        uint8_t b[MAXMSG + 8];
        MPI_Status st;
        long half = n / 2;
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        for (long i = 0; i < half; i++) {
            MT_CALL(MPI_Recv(b, sizeof b, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check(i, b, &st, peer);
        }
        uint8_t *bufs = mt_malloc((size_t)BATCH * MAXMSG);
        MPI_Request reqs[BATCH];
        MPI_Status sts[BATCH];
        for (long i0 = half; i0 < n; i0 += BATCH) {
            int k = (int)(n - i0 < BATCH ? n - i0 : BATCH);
            for (int j = 0; j < k; j++)
                MT_CALL(MPI_Irecv(bufs + (size_t)j * MAXMSG, MAXMSG, MPI_BYTE, peer, msg_tag(i0 + j),
                                  MPI_COMM_WORLD, &reqs[j]));
            MT_CALL(MPI_Waitall(k, reqs, sts));
            for (int j = 0; j < k; j++)
                check(i0 + j, bufs + (size_t)j * MAXMSG, &sts[j], peer);
        }
        free(bufs);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("p2p_flood: %ld messages per pair in %.2f s\n", n, MPI_Wtime() - t0);
    return mt_finish("p2p_flood");
}
