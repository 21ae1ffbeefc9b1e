/* Non-overtaking: messages from one source with one tag on one communicator are received in the order
 * they were sent, whatever their sizes (0 B to 1 MiB, on both sides of the eager limit), whether the
 * receive is posted before or after the message arrives, and in whatever order requests are completed.
 *
 * Ranks pair up (r, r^1); an odd rank without partner only joins the barriers. Each phase runs in both
 * directions. Argument: rounds (default 2). */
#include "mpitest.h"

#define NMSG 48
#define NTAG 3
#define MAXSZ (1 << 20)

/* Sizes straddle Weft's default eager limit (16 KiB) and the small and large rendezvous paths. */
static const int sizes[] = {0,     1,     8,     100,   4096,   16383,  16384,
                            16385, 40000, 65536, 65537, 262144, 1 << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static int msg_size(int round, int i)
{
    return sizes[(unsigned)(i * 7 + round * 5 + (i * i) % 11) % NSIZES];
}
static int msg_tag(int i) { return (i * 5 + i / 7) % NTAG; }
static uint64_t msg_seed(int round, int from, int i) { return ((uint64_t)round << 40) | ((uint64_t)from << 20) | (uint64_t)i; }

/* One stream of NMSG messages from `from` to `to`; the receiver takes them with MPI_ANY_TAG, so each
 * receive matches every pending message and must take the oldest. Blocking on both sides. */
static void phase_blocking(int round, int from, int to, uint8_t *buf)
{
    for (int i = 0; i < NMSG; i++) {
        int n = msg_size(round, i);
        if (mt_rank == from) {
            mt_fill(buf, n, msg_seed(round, from, i));
            MT_CALL(MPI_Send(buf, n, MPI_BYTE, to, msg_tag(i), MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            MT_CALL(MPI_Recv(buf, MAXSZ, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            MT_STATUS("blocking stream message", st, from, msg_tag(i), n);
            mt_verify(buf, n, msg_seed(round, from, i), "blocking stream message");
        }
    }
}

/* The sender posts all messages with Isend; the receiver takes one tag at a time, highest tag first,
 * so it skips over unmatched messages of the other tags (eager and rendezvous). `late` makes every
 * message unexpected: the receiver starts only after a barrier that follows the posting of the sends. */
static void phase_by_tag(int round, int from, int to, uint8_t **bufs, MPI_Request *reqs, int late)
{
    if (mt_rank == from) {
        for (int i = 0; i < NMSG; i++) {
            int n = msg_size(round, i);
            mt_fill(bufs[i], n, msg_seed(round, from, i));
            MT_CALL(MPI_Isend(bufs[i], n, MPI_BYTE, to, msg_tag(i), MPI_COMM_WORLD, &reqs[i]));
        }
        if (late)
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
    } else {
        if (late)
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        for (int t = NTAG - 1; t >= 0; t--) {
            for (int i = 0; i < NMSG; i++) {
                if (msg_tag(i) != t)
                    continue;
                int n = msg_size(round, i);
                MPI_Status st;
                MT_CALL(MPI_Recv(bufs[0], MAXSZ, MPI_BYTE, from, t, MPI_COMM_WORLD, &st));
                MT_STATUS("by-tag message", st, from, t, n);
                mt_verify(bufs[0], n, msg_seed(round, from, i), "by-tag message");
            }
        }
    }
}

/* Both sides post everything at once and complete in reverse order: Waitall over the reversed array,
 * or Wait one by one from the last request. Receives are posted before (expected path) or after
 * (unexpected path) the sends, by a barrier. */
static void phase_bulk(int round, int from, int to, uint8_t **bufs, MPI_Request *reqs, int recv_first,
                       int one_by_one)
{
    MPI_Request rev[NMSG];
    MPI_Status st[NMSG];
    int sender = mt_rank == from;

    if (!sender && recv_first) {
        for (int i = 0; i < NMSG; i++)
            MT_CALL(MPI_Irecv(bufs[i], msg_size(round, i), MPI_BYTE, from, msg_tag(i), MPI_COMM_WORLD,
                              &reqs[i]));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (sender) {
        for (int i = 0; i < NMSG; i++) {
            int n = msg_size(round, i);
            mt_fill(bufs[i], n, msg_seed(round, from, i));
            MT_CALL(MPI_Isend(bufs[i], n, MPI_BYTE, to, msg_tag(i), MPI_COMM_WORLD, &reqs[i]));
        }
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (!sender && !recv_first) {
        /* Receives take the exact size; all messages of one tag are already waiting. */
        for (int i = 0; i < NMSG; i++)
            MT_CALL(MPI_Irecv(bufs[i], msg_size(round, i), MPI_BYTE, from, msg_tag(i), MPI_COMM_WORLD,
                              &reqs[i]));
    }
    if (one_by_one) {
        for (int i = NMSG - 1; i >= 0; i--) {
            MT_CALL(MPI_Wait(&reqs[i], &st[i]));
            MT_TRUE(reqs[i] == MPI_REQUEST_NULL, "request %d after MPI_Wait expected MPI_REQUEST_NULL", i);
        }
    } else {
        for (int i = 0; i < NMSG; i++)
            rev[i] = reqs[NMSG - 1 - i];
        MT_CALL(MPI_Waitall(NMSG, rev, st));
        for (int i = 0; i < NMSG; i++)
            MT_TRUE(rev[i] == MPI_REQUEST_NULL, "request %d after MPI_Waitall expected MPI_REQUEST_NULL", i);
        /* statuses come in the order of rev: put them back in message order */
        for (int i = 0; i < NMSG / 2; i++) {
            MPI_Status t = st[i];
            st[i] = st[NMSG - 1 - i];
            st[NMSG - 1 - i] = t;
        }
    }
    if (!sender) {
        for (int i = 0; i < NMSG; i++) {
            int n = msg_size(round, i);
            MT_STATUS("bulk message", st[i], from, msg_tag(i), n);
            mt_verify(bufs[i], n, msg_seed(round, from, i), "bulk message");
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rounds = (int)mt_init_args(argc, argv, 2);
    int peer = mt_rank ^ 1;
    int active = peer < mt_size;

    uint8_t *bufs[NMSG];
    MPI_Request reqs[NMSG];
    for (int i = 0; i < NMSG; i++)
        bufs[i] = mt_malloc(MAXSZ);

    for (int round = 0; round < rounds; round++) {
        for (int dir = 0; dir < 2; dir++) {
            int from = (mt_rank & ~1) + dir, to = (mt_rank & ~1) + !dir;
            if (active) {
                phase_blocking(round, from, to, bufs[0]);
                phase_by_tag(round, from, to, bufs, reqs, 0);
            }
            /* these phases use barriers: everyone joins */
            if (active) {
                phase_by_tag(round, from, to, bufs, reqs, 1);
            } else {
                MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            }
            for (int variant = 0; variant < 4; variant++) {
                if (active) {
                    phase_bulk(round, from, to, bufs, reqs, variant & 1, variant >> 1);
                } else {
                    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
                    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
                }
            }
        }
    }
    for (int i = 0; i < NMSG; i++)
        free(bufs[i]);
    return mt_finish("p2p_order");
}
