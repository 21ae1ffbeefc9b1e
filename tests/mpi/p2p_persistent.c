/* Persistent requests: Send_init/Recv_init reused many times with Start/Wait and Startall/Waitall
 * (and Testall), eager and rendezvous sizes, new data in the same buffer each time; an inactive
 * persistent request stays allocated after completion, Wait/Test on it return at once with an empty
 * status, and Request_free releases it. MPI_PROC_NULL and MPI_ANY_SOURCE persistent receives too.
 * Ranks pair up (r, r^1). Arguments: iterations (default 500), --weft. */
#include "mpitest.h"

#define NSZ 3
static const int sizes[NSZ] = {8, 4000, 100000};

static uint64_t seed_of(int from, int it, int k) { return (uint64_t)from << 40 | (uint64_t)it << 8 | (unsigned)k; }

/* One direction, Start/Wait each iteration; receives with MPI_ANY_SOURCE on odd iterations' request. */
static void ping(int peer, int iters)
{
    int even = mt_rank % 2 == 0;
    int n = sizes[2];
    uint8_t *buf = mt_malloc(n);
    MPI_Request r;
    MPI_Status st;
    if (even)
        MT_CALL(MPI_Send_init(buf, n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r));
    else
        MT_CALL(MPI_Recv_init(buf, n, MPI_BYTE, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &r));
    for (int it = 0; it < iters / 10; it++) {
        if (even)
            mt_fill(buf, n, seed_of(mt_rank, it, 0));
        else
            memset(buf, 0, n);
        MT_CALL(MPI_Start(&r));
        MT_CALL(MPI_Wait(&r, &st));
        MT_TRUE(r != MPI_REQUEST_NULL, "persistent request after MPI_Wait expected still allocated");
        if (!even) {
            MT_STATUS("persistent ANY_SOURCE receive", st, peer, 1, n);
            mt_verify(buf, n, seed_of(peer, it, 0), "persistent receive buffer");
        }
    }
    /* inactive: Wait and Test complete at once with an empty status */
    int flag = 0;
    MT_CALL(MPI_Wait(&r, &st));
    MT_STATUS_EMPTY("MPI_Wait on an inactive persistent request", st);
    MT_CALL(MPI_Test(&r, &flag, &st));
    MT_EQ("MPI_Test flag on an inactive persistent request", 1, flag);
    MT_STATUS_EMPTY("MPI_Test on an inactive persistent request", st);
    MT_TRUE(r != MPI_REQUEST_NULL, "inactive persistent request after Wait/Test expected still allocated");
    MT_CALL(MPI_Request_free(&r));
    MT_TRUE(r == MPI_REQUEST_NULL, "MPI_Request_free expected to set MPI_REQUEST_NULL");
    free(buf);
}

/* Both directions at once, three sizes each: 6 requests started together. */
static void exchange(int peer, int iters)
{
    uint8_t *sb[NSZ], *rb[NSZ];
    MPI_Request r[2 * NSZ];
    MPI_Status st[2 * NSZ];
    for (int k = 0; k < NSZ; k++) {
        sb[k] = mt_malloc(sizes[k]);
        rb[k] = mt_malloc(sizes[k]);
        MT_CALL(MPI_Recv_init(rb[k], sizes[k], MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &r[k]));
        MT_CALL(MPI_Send_init(sb[k], sizes[k], MPI_BYTE, peer, 10 + k, MPI_COMM_WORLD, &r[NSZ + k]));
    }
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < NSZ; k++) {
            mt_fill(sb[k], sizes[k], seed_of(mt_rank, it, k));
            memset(rb[k], 0, sizes[k]);
        }
        MT_CALL(MPI_Startall(2 * NSZ, r));
        if (it % 2) {
            MT_CALL(MPI_Waitall(2 * NSZ, r, st));
        } else {
            int flag = 0;
            while (!flag)
                MT_CALL(MPI_Testall(2 * NSZ, r, &flag, st));
        }
        for (int k = 0; k < NSZ; k++) {
            MT_TRUE(r[k] != MPI_REQUEST_NULL && r[NSZ + k] != MPI_REQUEST_NULL,
                    "persistent requests after completion expected still allocated");
            MT_STATUS("persistent exchange", st[k], peer, 10 + k, sizes[k]);
            mt_verify(rb[k], sizes[k], seed_of(peer, it, k), "persistent exchange buffer");
        }
    }
    for (int k = 0; k < 2 * NSZ; k++) {
        MT_CALL(MPI_Request_free(&r[k]));
        MT_TRUE(r[k] == MPI_REQUEST_NULL, "MPI_Request_free expected to set MPI_REQUEST_NULL");
    }
    for (int k = 0; k < NSZ; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

/* Persistent communication with MPI_PROC_NULL: always completes at once with the MPI_PROC_NULL status. */
static void proc_null(void)
{
    int v = 5;
    MPI_Request r[2];
    MPI_Status st[2];
    MT_CALL(MPI_Send_init(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Recv_init(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]));
    for (int it = 0; it < 10; it++) {
        MT_CALL(MPI_Startall(2, r));
        MT_CALL(MPI_Waitall(2, r, st));
        /* MPICH 4.0 reports MPI_ANY_SOURCE here; the standard's MPI_PROC_NULL status is checked with --weft */
        if (mt_weft || st[1].MPI_SOURCE != MPI_ANY_SOURCE)
            MT_STATUS_PROC_NULL("persistent receive from MPI_PROC_NULL", st[1]);
        MT_EQ("buffer of a receive from MPI_PROC_NULL", 5, v);
    }
    MT_CALL(MPI_Request_free(&r[0]));
    MT_CALL(MPI_Request_free(&r[1]));
}

/* A receive started before its peer sends, freed with Request_free only after completion; and a started
 * send freed while active (allowed: it still completes and the receiver gets the data). */
static void free_active(int peer)
{
    int even = mt_rank % 2 == 0;
    int v = even ? 77 : 0;
    MPI_Request r;
    if (even) {
        MT_CALL(MPI_Send_init(&v, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Start(&r));
        MT_CALL(MPI_Request_free(&r));
        MT_TRUE(r == MPI_REQUEST_NULL, "MPI_Request_free of an active send expected MPI_REQUEST_NULL");
        /* the peer's reply tells us the send completed there */
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("reply after a freed active persistent send", 78, v);
    } else {
        MT_CALL(MPI_Recv_init(&v, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Start(&r));
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MT_EQ("value of a freed active persistent send", 77, v);
        MT_CALL(MPI_Request_free(&r));
        v++;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 31, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int iters = (int)mt_init_args(argc, argv, 500);
    int peer = mt_rank ^ 1;

    /* A persistent request never started: free it right away. */
    MPI_Request r;
    int dummy = 0;
    MT_CALL(MPI_Recv_init(&dummy, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Request_free(&r));
    MT_TRUE(r == MPI_REQUEST_NULL, "MPI_Request_free of a never-started request expected MPI_REQUEST_NULL");

    proc_null();
    if (peer < mt_size) {
        ping(peer, iters);
        exchange(peer, iters);
        free_active(peer);
    }
    return mt_finish("p2p_persistent");
}
