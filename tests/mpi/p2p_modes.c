/* Send modes.
 * - Synchronous: an Issend (small, so an eager send would be done at once) stays incomplete while the
 *   peer has not posted the receive; Ssend completes once it has. Large messages too.
 * - Ready: Rsend/Irsend with the receive posted before a barrier (small and large).
 * - Buffered: Bsend/Ibsend into an attached buffer complete before any receive is posted and copy the
 *   data (the user buffer is overwritten at once); Buffer_detach returns the attached buffer and size
 *   and waits until the buffered messages are delivered; a second attach works.
 * Ranks pair up (r, r^1); both ranks of a pair play both roles in turn. */
#include "mpitest.h"

static void sync_pair(int peer)
{
    MT_CALL(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 50, NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
}

static void synchronous(int peer, int sender, int n)
{
    uint8_t *b = mt_malloc(n);
    if (sender) {
        MPI_Request r;
        int flag = 0;
        mt_fill(b, n, 1);
        MT_CALL(MPI_Issend(b, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r));
        for (int i = 0; i < 20; i++) {
            MT_CALL(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            MT_EQ("Issend completed before the receive was posted", 0, flag);
            mt_sleep_ms(1);
        }
        sync_pair(peer); /* the peer posts its receive only after this */
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        /* blocking Ssend, then a plain message the peer must not see before receiving the first */
        mt_fill(b, n, 2);
        MT_CALL(MPI_Ssend(b, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        int v = 3;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        int flag = 1;
        sync_pair(peer);
        MT_CALL(MPI_Recv(b, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st));
        MT_STATUS("Issend message", st, peer, 1, n);
        mt_verify(b, n, 1, "Issend message");
        /* the peer is blocked in Ssend until we post its receive, so its next message cannot exist */
        mt_sleep_ms(20);
        MT_CALL(MPI_Iprobe(peer, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MT_EQ("message sent after an Ssend whose receive is not posted: Iprobe flag", 0, flag);
        MT_CALL(MPI_Recv(b, n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st));
        MT_STATUS("Ssend message", st, peer, 2, n);
        mt_verify(b, n, 2, "Ssend message");
        int v = 0;
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("message sent after an Ssend", 3, v);
    }
    free(b);
}

static void ready(int peer, int sender, int n)
{
    uint8_t *b = mt_malloc(n), *b2 = mt_malloc(n);
    if (sender) {
        sync_pair(peer); /* receives are posted */
        mt_fill(b, n, 10);
        MT_CALL(MPI_Rsend(b, n, MPI_BYTE, peer, 10, MPI_COMM_WORLD));
        MPI_Request r;
        mt_fill(b2, n, 11);
        MT_CALL(MPI_Irsend(b2, n, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MPI_Request r[2];
        MPI_Status st[2];
        MT_CALL(MPI_Irecv(b, n, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &r[0]));
        MT_CALL(MPI_Irecv(b2, n, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &r[1]));
        sync_pair(peer);
        MT_CALL(MPI_Waitall(2, r, st));
        MT_STATUS("Rsend message", st[0], peer, 10, n);
        MT_STATUS("Irsend message", st[1], peer, 11, n);
        mt_verify(b, n, 10, "Rsend message");
        mt_verify(b2, n, 11, "Irsend message");
    }
    free(b);
    free(b2);
}

#define NB 6
static const int bsizes[NB] = {0, 1, 100, 16385, 100000, 1 << 20};

static void buffered(int peer, int sender, int round)
{
    int total = 0;
    for (int i = 0; i < NB; i++)
        total += bsizes[i];
    if (sender) {
        int attach_size = total + NB * MPI_BSEND_OVERHEAD + 64;
        char *attach = mt_malloc(attach_size);
        MT_CALL(MPI_Buffer_attach(attach, attach_size));
        uint8_t *b = mt_malloc(1 << 20);
        for (int i = 0; i < NB; i++) {
            mt_fill(b, bsizes[i], 20 + i);
            if (i % 2) {
                MPI_Request r;
                MT_CALL(MPI_Ibsend(b, bsizes[i], MPI_BYTE, peer, 20 + i, MPI_COMM_WORLD, &r));
                /* local completion: no receive is posted, yet Wait must return */
                MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                MT_CALL(MPI_Bsend(b, bsizes[i], MPI_BYTE, peer, 20 + i, MPI_COMM_WORLD));
            }
            memset(b, 0xAB, bsizes[i]); /* the data were copied: overwrite ours */
        }
        sync_pair(peer); /* the peer starts receiving now, after a delay */
        void *back = NULL;
        int back_size = 0;
        MT_CALL(MPI_Buffer_detach(&back, &back_size));
        MT_TRUE(back == (void *)attach, "Buffer_detach expected the attached address");
        MT_EQ("Buffer_detach size", attach_size, back_size);
        /* detach waited for delivery: the peer has all messages, and acknowledges */
        int v = 0;
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 29, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("acknowledgement after buffered messages", 100 + round, v);
        free(attach);
        free(b);
    } else {
        uint8_t *b = mt_malloc(1 << 20);
        sync_pair(peer);
        mt_sleep_ms(50); /* the sender is in Buffer_detach by now, and must wait for us */
        for (int i = NB - 1; i >= 0; i--) { /* in reverse tag order: all are buffered */
            MPI_Status st;
            MT_CALL(MPI_Recv(b, bsizes[i], MPI_BYTE, peer, 20 + i, MPI_COMM_WORLD, &st));
            MT_STATUS("buffered message", st, peer, 20 + i, bsizes[i]);
            mt_verify(b, bsizes[i], 20 + i, "buffered message");
        }
        int v = 100 + round;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 29, MPI_COMM_WORLD));
        free(b);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    int peer = mt_rank ^ 1;
    for (int round = 0; round < 2 && peer < mt_size; round++) {
        int sender = (mt_rank % 2) == round;
        synchronous(peer, sender, 4);
        synchronous(peer, sender, 200000);
        ready(peer, sender, 8);
        ready(peer, sender, 300000);
        buffered(peer, sender, round);
        buffered(peer, sender, round + 10); /* attach again after a detach */
    }
    return mt_finish("p2p_modes");
}
