/* Multiple completion: Waitany, Waitsome, Testany, Testsome, Testall, Waitall over arrays mixing
 * MPI_REQUEST_NULL entries with receives and an Issend, where the peer controls which request can
 * complete next; indices and statuses must point at exactly that request, completed entries become
 * MPI_REQUEST_NULL, and arrays of only null requests give MPI_UNDEFINED (or flag true for Testall).
 * Ranks pair up (r, r^1); both ranks of a pair play both roles in turn. */
#include "mpitest.h"

#define N 8

/* The roles: the "waiter" posts the array, the "driver" sends one tag at a time on request. */
enum { T_GO = 100, T_SYNC = 9 };

static void go(int peer) /* driver: wait for the waiter's go-ahead */
{
    MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}
static void ask(int peer) /* waiter: let the driver send the next message(s) */
{
    MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, T_GO, MPI_COMM_WORLD));
}
static void send_tag(int peer, int tag)
{
    int v = 1000 + tag;
    MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD));
}

static void driver(int peer)
{
    go(peer);
    send_tag(peer, 2);
    go(peer);
    send_tag(peer, 0);
    send_tag(peer, 3);
    go(peer);
    send_tag(peer, 1);
    go(peer);
    int v = 0;
    MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, T_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_EQ("value of the Issend", 4242, v);
    go(peer);
    send_tag(peer, 4);
}

static void check_recv(const char *what, int idx, const int *vals, const MPI_Status *st, int peer,
                       const int *tag_of)
{
    if (st->MPI_SOURCE != peer || st->MPI_TAG != tag_of[idx])
        MT_FAIL("%s status of index %d expected (source %d, tag %d) got (%d, %d)", what, idx, peer,
                tag_of[idx], st->MPI_SOURCE, st->MPI_TAG);
    MT_EQ("received value", 1000 + tag_of[idx], vals[idx]);
}

static void waiter(int peer)
{
    /* slot:              0     1  2     3  4  5     6        7 */
    const int tag_of[N] = {-1, 3, -1, 1, 2, -1, T_SYNC, 0};
    int vals[N];
    int sv = 4242;
    MPI_Request r[N];
    MPI_Status st[N];
    int idx = -7, flag = -7, outcount = -7, indices[N];

    for (int i = 0; i < N; i++) {
        vals[i] = -1;
        r[i] = MPI_REQUEST_NULL;
        if (i == 6)
            MT_CALL(MPI_Issend(&sv, 1, MPI_INT, peer, T_SYNC, MPI_COMM_WORLD, &r[i]));
        else if (tag_of[i] >= 0)
            MT_CALL(MPI_Irecv(&vals[i], 1, MPI_INT, peer, tag_of[i], MPI_COMM_WORLD, &r[i]));
    }

    /* nothing can complete yet: the driver waits for our go and the Issend is unmatched */
    MT_CALL(MPI_Testany(N, r, &idx, &flag, &st[0]));
    MT_EQ("Testany flag with nothing completable", 0, flag);
    MT_EQ("Testany index with nothing completable", MPI_UNDEFINED, idx);
    MT_CALL(MPI_Testsome(N, r, &outcount, indices, st));
    MT_EQ("Testsome outcount with nothing completable", 0, outcount);
    MT_CALL(MPI_Testall(N, r, &flag, st));
    MT_EQ("Testall flag with nothing completable", 0, flag);

    /* tag 2 only: Waitany must return slot 4 */
    ask(peer);
    MT_CALL(MPI_Waitany(N, r, &idx, &st[0]));
    MT_EQ("Waitany index for tag 2", 4, idx);
    check_recv("Waitany", idx, vals, &st[0], peer, tag_of);
    MT_TRUE(r[4] == MPI_REQUEST_NULL, "completed request of Waitany expected MPI_REQUEST_NULL");

    /* tags 0 and 3: Waitsome until both slots 7 and 1 are done, nothing else */
    ask(peer);
    int done = 0, got7 = 0, got1 = 0;
    while (done < 2) {
        MT_CALL(MPI_Waitsome(N, r, &outcount, indices, st));
        MT_TRUE(outcount >= 1 && outcount <= 2 - done, "Waitsome outcount expected 1..%d got %d", 2 - done,
                outcount);
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            MT_TRUE(i == 7 || i == 1, "Waitsome index expected 7 or 1 got %d", i);
            MT_TRUE(r[i] == MPI_REQUEST_NULL, "Waitsome completed request expected MPI_REQUEST_NULL");
            check_recv("Waitsome", i, vals, &st[k], peer, tag_of);
            got7 += i == 7;
            got1 += i == 1;
        }
        done += outcount;
    }
    MT_TRUE(got7 == 1 && got1 == 1, "Waitsome expected slots 7 and 1 once each got %d and %d", got7, got1);

    /* tag 1: Testany until slot 3 */
    ask(peer);
    flag = 0;
    while (!flag) {
        MT_CALL(MPI_Testany(N, r, &idx, &flag, &st[0]));
        if (!flag)
            MT_EQ("Testany index while nothing completed", MPI_UNDEFINED, idx);
    }
    MT_EQ("Testany index for tag 1", 3, idx);
    check_recv("Testany", idx, vals, &st[0], peer, tag_of);

    /* only the Issend is left; it cannot complete before the driver receives */
    MT_CALL(MPI_Testsome(N, r, &outcount, indices, st));
    MT_EQ("Testsome outcount with only an unmatched Issend", 0, outcount);
    ask(peer);
    flag = 0;
    while (!flag)
        MT_CALL(MPI_Testall(N, r, &flag, st));
    for (int i = 0; i < N; i++)
        MT_TRUE(r[i] == MPI_REQUEST_NULL, "request %d after Testall expected MPI_REQUEST_NULL", i);

    /* all null now */
    MT_CALL(MPI_Waitany(N, r, &idx, &st[0]));
    MT_EQ("Waitany index over null requests", MPI_UNDEFINED, idx);
    MT_STATUS_EMPTY("Waitany status over null requests", st[0]);
    flag = 0;
    MT_CALL(MPI_Testany(N, r, &idx, &flag, &st[0]));
    MT_EQ("Testany flag over null requests", 1, flag);
    MT_EQ("Testany index over null requests", MPI_UNDEFINED, idx);
    MT_CALL(MPI_Waitsome(N, r, &outcount, indices, st));
    MT_EQ("Waitsome outcount over null requests", MPI_UNDEFINED, outcount);
    MT_CALL(MPI_Testsome(N, r, &outcount, indices, MPI_STATUSES_IGNORE));
    MT_EQ("Testsome outcount over null requests", MPI_UNDEFINED, outcount);
    flag = 0;
    MT_CALL(MPI_Testall(N, r, &flag, MPI_STATUSES_IGNORE));
    MT_EQ("Testall flag over null requests", 1, flag);
    MT_CALL(MPI_Waitall(N, r, MPI_STATUSES_IGNORE));
    MT_CALL(MPI_Waitall(0, r, MPI_STATUSES_IGNORE));
    MT_CALL(MPI_Waitany(0, r, &idx, MPI_STATUS_IGNORE));
    MT_EQ("Waitany index over zero requests", MPI_UNDEFINED, idx);

    /* Waitall with null entries and MPI_STATUSES_IGNORE; Waitsome with MPI_STATUSES_IGNORE */
    MT_CALL(MPI_Irecv(&vals[2], 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &r[2]));
    ask(peer);
    MT_CALL(MPI_Waitsome(N, r, &outcount, indices, MPI_STATUSES_IGNORE));
    MT_EQ("Waitsome outcount for the last receive", 1, outcount);
    MT_EQ("Waitsome index for the last receive", 2, indices[0]);
    MT_EQ("value of the last receive", 1004, vals[2]);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    int peer = mt_rank ^ 1;
    for (int round = 0; round < 2; round++) {
        if (peer < mt_size) {
            if ((mt_rank % 2) == round)
                waiter(peer);
            else
                driver(peer);
        }
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    return mt_finish("p2p_complete");
}
