/* Messages from a rank to itself: Isend + Recv (unexpected) and Irecv + Send (expected), small and
 * large; non-overtaking among many self messages of mixed sizes; Issend to self completes only once the
 * receive is posted; Sendrecv and Sendrecv_replace with self; Probe of a self message. Every rank works
 * alone, so this runs with any number of ranks (also 1). */
#include "mpitest.h"

static const int sizes[] = {0, 1, 64, 16384, 16385, 100000, 1 << 20, 8 << 20};
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    const int me = mt_rank;
    uint8_t *s = mt_malloc(8 << 20), *r = mt_malloc(8 << 20);
    MPI_Request req;
    MPI_Status st;

    for (int i = 0; i < NSIZES; i++) {
        int n = sizes[i];
        /* unexpected: the send is posted first */
        mt_fill(s, n, 100 + i);
        memset(r, 0, n);
        MT_CALL(MPI_Isend(s, n, MPI_BYTE, me, i, MPI_COMM_WORLD, &req));
        MT_CALL(MPI_Recv(r, n, MPI_BYTE, me, i, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MT_STATUS("self message (send first)", st, me, i, n);
        mt_verify(r, n, 100 + i, "self message (send first)");

        /* expected: the receive is posted first, then a blocking send */
        mt_fill(s, n, 200 + i);
        memset(r, 0, n);
        MT_CALL(MPI_Irecv(r, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
        MT_CALL(MPI_Send(s, n, MPI_BYTE, me, 1000 + i, MPI_COMM_WORLD));
        MT_CALL(MPI_Wait(&req, &st));
        MT_STATUS("self message (receive first)", st, me, 1000 + i, n);
        mt_verify(r, n, 200 + i, "self message (receive first)");

        /* Sendrecv with self, separate buffers */
        mt_fill(s, n, 300 + i);
        memset(r, 0, n);
        MT_CALL(MPI_Sendrecv(s, n, MPI_BYTE, me, 7, r, n, MPI_BYTE, me, 7, MPI_COMM_WORLD, &st));
        MT_STATUS("Sendrecv with self", st, me, 7, n);
        mt_verify(r, n, 300 + i, "Sendrecv with self");

        /* Sendrecv_replace with self */
        mt_fill(r, n, 400 + i);
        MT_CALL(MPI_Sendrecv_replace(r, n, MPI_BYTE, me, 8, me, 8, MPI_COMM_WORLD, &st));
        MT_STATUS("Sendrecv_replace with self", st, me, 8, n);
        mt_verify(r, n, 400 + i, "Sendrecv_replace with self");
    }

    /* Many self messages in flight, one tag, received in order with a probe each time */
    enum { M = 64 };
    MPI_Request reqs[M];
    uint8_t *bufs[M];
    for (int k = 0; k < M; k++) {
        int n = sizes[(k * 5) % (NSIZES - 1)] / (k % 3 + 1);
        bufs[k] = mt_malloc(n);
        mt_fill(bufs[k], n, 500 + k);
        MT_CALL(MPI_Isend(bufs[k], n, MPI_BYTE, me, 3, MPI_COMM_WORLD, &reqs[k]));
    }
    for (int k = 0; k < M; k++) {
        int n = sizes[(k * 5) % (NSIZES - 1)] / (k % 3 + 1), cnt = -1;
        MT_CALL(MPI_Probe(me, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Get_count(&st, MPI_BYTE, &cnt));
        MT_EQ("probed size of self message in order", n, cnt);
        MT_CALL(MPI_Recv(r, 8 << 20, MPI_BYTE, me, 3, MPI_COMM_WORLD, &st));
        MT_STATUS("self message in order", st, me, 3, n);
        mt_verify(r, n, 500 + k, "self message in order");
    }
    MT_CALL(MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE));
    for (int k = 0; k < M; k++)
        free(bufs[k]);

    /* Issend to self: incomplete until the receive is posted */
    for (int i = 0; i < 2; i++) {
        int n = i ? 1 << 20 : 4, flag = 1;
        mt_fill(s, n, 600 + i);
        MT_CALL(MPI_Issend(s, n, MPI_BYTE, me, 9, MPI_COMM_WORLD, &req));
        for (int k = 0; k < 10; k++) {
            MT_CALL(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
            MT_EQ("Issend to self completed before the receive was posted", 0, flag);
        }
        MT_CALL(MPI_Recv(r, n, MPI_BYTE, me, 9, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
        mt_verify(r, n, 600 + i, "Issend to self");
    }

    free(s);
    free(r);
    return mt_finish("p2p_self");
}
