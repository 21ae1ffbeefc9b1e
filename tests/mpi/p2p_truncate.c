/* Truncation: a message longer than the receive buffer gives MPI_ERR_TRUNCATE (MPI_ERRORS_RETURN is
 * set on MPI_COMM_WORLD), nothing past the buffer is written, the sender completes normally, and the
 * stream stays usable: the message after a truncated one arrives intact. Eager and rendezvous sizes,
 * blocking and nonblocking receives, Waitall (MPI_ERR_IN_STATUS with the class in status.MPI_ERROR),
 * Test, a wildcard receive, a typed receive, and a send to self (also a Waitall without statuses
 * over [ok, truncated, ok, inactive persistent]).
 * With --weft also: the bytes that fit are delivered (the standard leaves the buffer undefined).
 * Ranks pair up (r, r^1): the even rank sends, the odd one receives. */
#include "mpitest.h"

#define GUARD 64
#define GUARD_BYTE 0xEE

struct trunc_case {
    int sent, room; /* bytes sent, bytes of the receive buffer */
};
static const struct trunc_case cases[] = {
    {100, 60},         {16384, 16000},     {16385, 16384},   {20000, 1},
    {200000, 100000},  {1 << 20, 65536},   {3 << 20, 1 << 20}, {1000, 0},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static uint64_t seed_of(int c, int k) { return (uint64_t)c * 1000 + (uint64_t)k; }

/* Receive buffer with a guard zone after `room` bytes. */
static uint8_t *rbuf_new(int room)
{
    uint8_t *b = mt_malloc(room + GUARD);
    memset(b, 0, room);
    memset(b + room, GUARD_BYTE, GUARD);
    return b;
}

/* The standard leaves the buffer contents after an overflow undefined, except that nothing past the
 * buffer may change; Weft delivers the bytes that fit (checked with --weft). */
static void check_delivered(const char *what, uint8_t *b, int room, uint64_t seed)
{
    if (mt_weft)
        mt_verify(b, room, seed, what);
    mt_verify_const(b + room, GUARD, GUARD_BYTE, "guard zone after a truncated receive");
}

/* The small message that follows each truncated one, on the same tag. */
static void after(int peer, int tag, int k, int sender)
{
    int v = sender ? 7000 + k : -1;
    if (sender) {
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD));
    } else {
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("message after a truncated one", 7000 + k, v);
    }
}

static void receiver_side(int peer)
{
    for (int c = 0; c < NCASES; c++) {
        int room = cases[c].room;
        MPI_Status st;
        MPI_Request r;
        int rc, flag;
        uint8_t *b;

        /* k = 0: blocking Recv */
        b = rbuf_new(room);
        rc = MPI_Recv(b, room, MPI_BYTE, peer, c, MPI_COMM_WORLD, &st);
        MT_CLASS_EQ("MPI_Recv into a short buffer", MPI_ERR_TRUNCATE, rc);
        MT_EQ("MPI_SOURCE of a truncated receive", peer, st.MPI_SOURCE);
        MT_EQ("MPI_TAG of a truncated receive", c, st.MPI_TAG);
        check_delivered("truncated MPI_Recv", b, room, seed_of(c, 0));
        after(peer, c, 0, 0);
        free(b);

        /* k = 1: Irecv + Wait */
        b = rbuf_new(room);
        MT_CALL(MPI_Irecv(b, room, MPI_BYTE, peer, c, MPI_COMM_WORLD, &r));
        rc = MPI_Wait(&r, &st);
        MT_CLASS_EQ("MPI_Wait on a truncated receive", MPI_ERR_TRUNCATE, rc);
        MT_TRUE(r == MPI_REQUEST_NULL, "request after MPI_Wait (truncated) expected MPI_REQUEST_NULL");
        check_delivered("truncated MPI_Irecv", b, room, seed_of(c, 1));
        after(peer, c, 1, 0);
        free(b);

        /* k = 2: Waitall over [ok, truncated, ok] */
        {
            int v[2] = {-1, -1};
            MPI_Request rs[3];
            MPI_Status sts[3];
            b = rbuf_new(room);
            MT_CALL(MPI_Irecv(b, room, MPI_BYTE, peer, c, MPI_COMM_WORLD, &rs[1]));
            MT_CALL(MPI_Irecv(&v[0], 1, MPI_INT, peer, c, MPI_COMM_WORLD, &rs[2]));
            MT_CALL(MPI_Irecv(&v[1], 1, MPI_INT, peer, NCASES + c, MPI_COMM_WORLD, &rs[0]));
            int one = 1;
            MT_CALL(MPI_Send(&one, 1, MPI_INT, peer, NCASES + c, MPI_COMM_WORLD)); /* peer echoes it */
            for (int i = 0; i < 3; i++)
                sts[i].MPI_ERROR = -12345;
            rc = MPI_Waitall(3, rs, sts);
            MT_CLASS_EQ("MPI_Waitall with one truncated receive", MPI_ERR_IN_STATUS, rc);
            MT_CLASS_EQ("status.MPI_ERROR of the truncated receive in MPI_Waitall", MPI_ERR_TRUNCATE,
                        sts[1].MPI_ERROR);
            for (int i = 0; i < 3; i += 2) {
                /* MPI_ERR_PENDING would mean "still active": allowed by the standard, so finish it */
                if (sts[i].MPI_ERROR == MPI_ERR_PENDING) {
                    MT_TRUE(rs[i] != MPI_REQUEST_NULL, "pending request %d expected still active", i);
                    MT_CALL(MPI_Wait(&rs[i], &sts[i]));
                } else {
                    MT_CLASS_EQ("status.MPI_ERROR of a good receive in MPI_Waitall", MPI_SUCCESS,
                                sts[i].MPI_ERROR);
                }
            }
            MT_EQ("echo received with Waitall", 1, v[1]);
            MT_EQ("message after the truncated one (Waitall)", 7002, v[0]);
            check_delivered("truncated receive in MPI_Waitall", b, room, seed_of(c, 2));
            free(b);
        }

        /* k = 3: Test until complete */
        b = rbuf_new(room);
        MT_CALL(MPI_Irecv(b, room, MPI_BYTE, peer, c, MPI_COMM_WORLD, &r));
        do {
            flag = 0;
            rc = MPI_Test(&r, &flag, &st);
            MT_TRUE(rc == MPI_SUCCESS || flag, "MPI_Test returned an error (class %s) without completing",
                    mt_class_name(mt_class(rc)));
        } while (!flag);
        MT_CLASS_EQ("MPI_Test on a truncated receive", MPI_ERR_TRUNCATE, rc);
        check_delivered("truncated receive completed by MPI_Test", b, room, seed_of(c, 3));
        after(peer, c, 3, 0);
        free(b);

        /* k = 4: ANY_SOURCE, ANY_TAG */
        b = rbuf_new(room);
        rc = MPI_Recv(b, room, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MT_CLASS_EQ("wildcard MPI_Recv into a short buffer", MPI_ERR_TRUNCATE, rc);
        MT_EQ("MPI_SOURCE of a truncated wildcard receive", peer, st.MPI_SOURCE);
        MT_EQ("MPI_TAG of a truncated wildcard receive", c, st.MPI_TAG);
        check_delivered("truncated wildcard MPI_Recv", b, room, seed_of(c, 4));
        after(peer, c, 4, 0);
        free(b);
    }
}

/* The even rank's side of k = 2: receive the echo request and answer it. */
static void sender_echo(int peer, int c)
{
    int one;
    MT_CALL(MPI_Recv(&one, 1, MPI_INT, peer, NCASES + c, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Send(&one, 1, MPI_INT, peer, NCASES + c, MPI_COMM_WORLD));
}

/* The even rank: five messages per case, each followed by a small one on the same tag; for k = 2 the
 * receiver also asks for an echo on another tag, so its Waitall holds three requests. */
static void sender_side(int peer)
{
    for (int c = 0; c < NCASES; c++) {
        for (int k = 0; k < 5; k++) {
            int n = cases[c].sent;
            uint8_t *b = mt_malloc(n);
            mt_fill(b, n, seed_of(c, k));
            int rc = MPI_Send(b, n, MPI_BYTE, peer, c, MPI_COMM_WORLD);
            MT_CLASS_EQ("MPI_Send of a message truncated at the receiver", MPI_SUCCESS, rc);
            if (k == 2) {
                int v = 7002;
                MPI_Request r;
                MT_CALL(MPI_Isend(&v, 1, MPI_INT, peer, c, MPI_COMM_WORLD, &r));
                sender_echo(peer, c);
                MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                after(peer, c, k, 1);
            }
            free(b);
        }
    }
}

/* Truncation in units of a datatype: 10 ints into room for 4. */
static void typed(int peer, int sender)
{
    int v[10];
    if (sender) {
        for (int i = 0; i < 10; i++)
            v[i] = 500 + i;
        MT_CALL(MPI_Send(v, 10, MPI_INT, peer, 99, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < 10; i++)
            v[i] = -1;
        int rc = MPI_Recv(v, 4, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CLASS_EQ("MPI_Recv of 10 MPI_INT into 4", MPI_ERR_TRUNCATE, rc);
        for (int i = 0; i < 4 && mt_weft; i++)
            MT_EQ("delivered int of a truncated receive", 500 + i, v[i]);
        for (int i = 4; i < 10; i++)
            MT_EQ("int past a truncated receive buffer", -1, v[i]);
    }
}

/* A rank truncating a message to itself, eager and rendezvous. */
static void self(void)
{
    static const int sent[2] = {100, 300000};
    for (int i = 0; i < 2; i++) {
        int n = sent[i], room = n / 2;
        uint8_t *s = mt_malloc(n), *b = rbuf_new(room);
        MPI_Request r;
        mt_fill(s, n, 99 + i);
        MT_CALL(MPI_Isend(s, n, MPI_BYTE, mt_rank, 123, MPI_COMM_WORLD, &r));
        int rc = MPI_Recv(b, room, MPI_BYTE, mt_rank, 123, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MT_CLASS_EQ("MPI_Recv from self into a short buffer", MPI_ERR_TRUNCATE, rc);
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_delivered("truncated receive from self", b, room, 99 + i);
        free(s);
        free(b);
    }

    /* Waitall without statuses over [ok, truncated, ok, inactive persistent]: the failure shows in
     * the return code, every nonpersistent request is freed (those after the failed one too) and
     * the persistent one stays, inactive. */
    int v[3] = {-1, -1, -1}, w[3] = {11, 12, 13}, pbuf = 0;
    int big[4] = {21, 22, 23, 24};
    MPI_Request rs[4], ss[3];
    MT_CALL(MPI_Recv_init(&pbuf, 1, MPI_INT, mt_rank, 130, MPI_COMM_WORLD, &rs[3]));
    MT_CALL(MPI_Irecv(&v[0], 1, MPI_INT, mt_rank, 124, MPI_COMM_WORLD, &rs[0]));
    MT_CALL(MPI_Irecv(&v[1], 1, MPI_INT, mt_rank, 125, MPI_COMM_WORLD, &rs[1]));
    MT_CALL(MPI_Irecv(&v[2], 1, MPI_INT, mt_rank, 126, MPI_COMM_WORLD, &rs[2]));
    MT_CALL(MPI_Isend(&w[0], 1, MPI_INT, mt_rank, 124, MPI_COMM_WORLD, &ss[0]));
    MT_CALL(MPI_Isend(big, 4, MPI_INT, mt_rank, 125, MPI_COMM_WORLD, &ss[1]));
    MT_CALL(MPI_Isend(&w[2], 1, MPI_INT, mt_rank, 126, MPI_COMM_WORLD, &ss[2]));
    int rc = MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
    MT_TRUE(rc != MPI_SUCCESS, "MPI_Waitall (statuses ignored) with a truncated receive succeeded");
    if (mt_weft)
        MT_CLASS_EQ("MPI_Waitall (statuses ignored) with a truncated receive", MPI_ERR_IN_STATUS, rc);
    for (int i = 0; i < 3; i++)
        MT_TRUE(rs[i] == MPI_REQUEST_NULL, "request %d after MPI_Waitall (statuses ignored) expected "
                "MPI_REQUEST_NULL", i);
    MT_TRUE(rs[3] != MPI_REQUEST_NULL, "inactive persistent request freed by MPI_Waitall");
    MT_EQ("receive before the truncated one (Waitall, statuses ignored)", 11, v[0]);
    MT_EQ("receive after the truncated one (Waitall, statuses ignored)", 13, v[2]);
    if (mt_weft)
        MT_EQ("delivered int of a truncated receive (Waitall, statuses ignored)", 21, v[1]);
    MT_CALL(MPI_Waitall(3, ss, MPI_STATUSES_IGNORE));
    MT_CALL(MPI_Request_free(&rs[3]));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int peer = mt_rank ^ 1;
    if (peer < mt_size) {
        if (mt_rank % 2 == 0) {
            sender_side(peer);
        } else {
            receiver_side(peer);
        }
        typed(peer, mt_rank % 2 == 0);
    }
    self();
    return mt_finish("p2p_truncate");
}
