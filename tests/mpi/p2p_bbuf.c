/* Buffers of buffered sends (MPI 4.1 section 3.6): MPI_Comm_attach_buffer / _detach_buffer /
 * _flush_buffer / _iflush_buffer, MPI_Buffer_flush / _iflush, MPI_BUFFER_AUTOMATIC. A buffered
 * send uses its communicator's buffer when one is attached, else the process's; flushing waits
 * until the messages buffered before it have left; detaching returns what was attached. Ranks
 * pair up (0-1, 2-3, ...); an odd last rank sends to itself. With --weft: a rendezvous-sized
 * message keeps an iflush request pending until the receiver takes it (Weft's protocol). */
#include "mpitest.h"

#define EXPECT_CLASS(cls, call) MT_CLASS_EQ(#call, (cls), (call))

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int peer = mt_rank ^ 1;
    if (peer >= mt_size)
        peer = mt_rank;
    MPI_Comm c;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));

    /* no buffer anywhere: MPI_ERR_BUFFER */
    int v = 1, got = 0;
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&v, 1, MPI_INT, peer, 0, c));
    void *addr = NULL;
    int size = -1;
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Comm_detach_buffer(c, &addr, &size));
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Buffer_detach(&addr, &size));
    EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_attach_buffer(MPI_COMM_NULL, &v, 4));
    MT_CALL(MPI_Comm_flush_buffer(c));   /* nothing to flush */
    MPI_Request fr;
    MT_CALL(MPI_Comm_iflush_buffer(c, &fr));
    MT_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));

    /* the communicator's buffer serves buffered sends on it, not on others */
    enum { N = 4096 };
    int size_c = 4 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *bufc = mt_malloc((size_t)size_c);
    MT_CALL(MPI_Comm_attach_buffer(c, bufc, size_c));
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Comm_attach_buffer(c, bufc, size_c));
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD));
    int *data = mt_malloc(N * sizeof(int)), *in = mt_malloc(N * sizeof(int));
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < N; i++)
            data[i] = mt_rank * 1000 + round + i;
        MT_CALL(MPI_Bsend(data, N, MPI_INT, peer, round, c));
        MPI_Request rq;
        MT_CALL(MPI_Ibsend(data, 2, MPI_INT, peer, 100 + round, c, &rq));
        MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MT_CALL(MPI_Recv(in, N, MPI_INT, peer, round, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i += 511)
            MT_EQ("buffered message through the communicator's buffer", peer * 1000 + round + i, in[i]);
        MT_CALL(MPI_Recv(in, 2, MPI_INT, peer, 100 + round, c, MPI_STATUS_IGNORE));
        if (round % 5 == 0)
            MT_CALL(MPI_Comm_flush_buffer(c));
    }
    /* larger than the buffer */
    int *huge = mt_malloc((size_t)size_c);
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(huge, size_c / (int)sizeof(int), MPI_INT, peer, 0, c));
    free(huge);
    MT_CALL(MPI_Comm_detach_buffer(c, &addr, &size));
    MT_TRUE(addr == bufc && size == size_c, "MPI_Comm_detach_buffer expected %p, %d got %p, %d",
            (void *)bufc, size_c, addr, size);
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(&v, 1, MPI_INT, peer, 0, c));

    /* MPI_BUFFER_AUTOMATIC on a communicator: any number of messages */
    MT_CALL(MPI_Comm_attach_buffer(c, MPI_BUFFER_AUTOMATIC, 0));
    for (int i = 0; i < 50; i++)
        MT_CALL(MPI_Bsend(data, N, MPI_INT, peer, 200 + i, c));
    MT_CALL(MPI_Comm_iflush_buffer(c, &fr));
    for (int i = 0; i < 50; i++)
        MT_CALL(MPI_Recv(in, N, MPI_INT, peer, 200 + i, c, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MPI_Count sz = -1;
    MT_CALL(MPI_Comm_detach_buffer_c(c, &addr, &sz));
    MT_TRUE(addr == MPI_BUFFER_AUTOMATIC && sz == 0,
            "detach of MPI_BUFFER_AUTOMATIC expected MPI_BUFFER_AUTOMATIC, 0 got %p, %lld", addr,
            (long long)sz);

    /* the process's buffer: Buffer_flush and Buffer_iflush */
    int size_p = 2 * (64 + MPI_BSEND_OVERHEAD);
    char *bufp = mt_malloc((size_t)size_p);
    MT_CALL(MPI_Buffer_attach_c(bufp, size_p));
    MT_CALL(MPI_Bsend(&v, 1, MPI_INT, peer, 300, MPI_COMM_WORLD));
    MT_CALL(MPI_Buffer_iflush(&fr));
    MT_CALL(MPI_Recv(&got, 1, MPI_INT, peer, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Bsend(&v, 1, MPI_INT, peer, 301, MPI_COMM_WORLD));
    MT_CALL(MPI_Recv(&got, 1, MPI_INT, peer, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Buffer_flush());
    /* a communicator's buffer wins over the process's (too small for this message) */
    MT_CALL(MPI_Comm_attach_buffer_c(c, bufc, size_c));
    MT_CALL(MPI_Bsend(data, N, MPI_INT, peer, 302, c));
    MT_CALL(MPI_Recv(in, N, MPI_INT, peer, 302, c, MPI_STATUS_IGNORE));
    EXPECT_CLASS(MPI_ERR_BUFFER, MPI_Bsend(data, N, MPI_INT, peer, 303, MPI_COMM_WORLD));

    /* Weft: a rendezvous message keeps the iflush request pending until the receiver takes it */
    if (mt_weft && peer != mt_rank) {
        enum { BIG = 1 << 20 };
        char *big = mt_malloc(BIG), *bigbuf = mt_malloc(BIG + MPI_BSEND_OVERHEAD);
        MPI_Comm c2;
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
        MT_CALL(MPI_Comm_attach_buffer(c2, bigbuf, BIG + MPI_BSEND_OVERHEAD));
        int go = 0, flag = -1;
        if (mt_rank < peer) {
            mt_fill(big, BIG, 77);
            MT_CALL(MPI_Bsend(big, BIG, MPI_BYTE, peer, 1, c2));
            MT_CALL(MPI_Comm_iflush_buffer(c2, &fr));
            for (int i = 0; i < 100; i++)
                MT_CALL(MPI_Test(&fr, &flag, MPI_STATUS_IGNORE));
            MT_EQ("iflush request while the receiver has not received", 0, flag);
            MT_CALL(MPI_Send(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
            MT_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
        } else {
            MT_CALL(MPI_Recv(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MT_CALL(MPI_Recv(big, BIG, MPI_BYTE, peer, 1, c2, MPI_STATUS_IGNORE));
            mt_verify(big, BIG, 77, "1 MiB buffered message");
        }
        /* freed with a buffer attached: the buffer goes with it */
        MT_CALL(MPI_Comm_free(&c2));
        free(big);
        free(bigbuf);
    }

    MT_CALL(MPI_Comm_detach_buffer(c, &addr, &size));
    MT_CALL(MPI_Buffer_detach(&addr, &size));
    MT_TRUE(addr == bufp && size == size_p, "MPI_Buffer_detach expected %p, %d got %p, %d",
            (void *)bufp, size_p, addr, size);
    MT_CALL(MPI_Comm_free(&c));
    free(bufc);
    free(bufp);
    free(data);
    free(in);
    return mt_finish("p2p_bbuf");
}
