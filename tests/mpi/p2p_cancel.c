/* Cancel of receives, Test_cancelled, Request_get_status.
 * - An Irecv that nothing matches: Cancel, then Wait (or Test) completes it and Test_cancelled is true;
 *   a message sent afterwards with that tag goes to a later receive, not to the cancelled one.
 * - A receive already complete (seen by Request_get_status): Cancel has no effect, Test_cancelled false.
 * - With --weft: a receive posted when its message was already waiting is matched at once, so Cancel
 *   fails (the standard allows either outcome there).
 * - Request_get_status does not free the request: Wait afterwards returns the same status.
 * - A started persistent receive can be cancelled and started again.
 * Ranks pair up (r, r^1); both ranks of a pair play both roles in turn. */
#include "mpitest.h"

static void sync_pair(int peer)
{
    MT_CALL(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 50, NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
}

static void cancel_unmatched(int peer, int receiver, int use_test)
{
    int v = -1, flag = 0;
    MPI_Status st;
    if (receiver) {
        MPI_Request r;
        MT_CALL(MPI_Irecv(&v, 1, MPI_INT, peer, 777, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Cancel(&r));
        if (use_test) {
            while (!flag)
                MT_CALL(MPI_Test(&r, &flag, &st));
        } else {
            MT_CALL(MPI_Wait(&r, &st));
        }
        MT_TRUE(r == MPI_REQUEST_NULL, "cancelled request after completion expected MPI_REQUEST_NULL");
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        MT_EQ("Test_cancelled of a cancelled unmatched receive", 1, flag);
        MT_EQ("buffer of a cancelled receive", -1, v);
        sync_pair(peer); /* now the peer sends tag 777 */
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, 777, MPI_COMM_WORLD, &st));
        MT_EQ("message sent after a cancel", 31, v);
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        MT_EQ("Test_cancelled of a normal receive", 0, flag);
    } else {
        sync_pair(peer);
        v = 31;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 777, MPI_COMM_WORLD));
    }
}

static void cancel_completed(int peer, int receiver)
{
    int v = -1, flag = 0;
    MPI_Status st, st2;
    if (receiver) {
        MPI_Request r;
        MT_CALL(MPI_Irecv(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r));
        sync_pair(peer);
        while (!flag)
            MT_CALL(MPI_Request_get_status(r, &flag, &st));
        MT_TRUE(r != MPI_REQUEST_NULL, "MPI_Request_get_status expected not to free the request");
        MT_STATUS("Request_get_status", st, peer, 5, sizeof(int));
        flag = 0;
        MT_CALL(MPI_Request_get_status(r, &flag, &st)); /* again: still there, still complete */
        MT_EQ("second Request_get_status flag", 1, flag);
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st2));
        MT_TRUE(r == MPI_REQUEST_NULL, "request after Wait expected MPI_REQUEST_NULL");
        MT_STATUS("Wait after Request_get_status", st2, peer, 5, sizeof(int));
        MT_CALL(MPI_Test_cancelled(&st2, &flag));
        MT_EQ("Test_cancelled of a completed receive", 0, flag);
        MT_EQ("value of a completed receive that was cancelled late", 55, v);
    } else {
        v = 55;
        sync_pair(peer);
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
    }
}

/* The message (or its rendezvous request) is waiting, as Probe shows, when the receive is posted and
 * cancelled. Weft matches at post time, so the cancel must fail (--weft); the standard allows both
 * outcomes, and a cancelled receive must leave the message for the next one. */
static void cancel_matched_at_post(int peer, int receiver, int n)
{
    uint8_t *b = mt_malloc(n);
    if (receiver) {
        MPI_Request r;
        MPI_Status st;
        int flag = 0;
        sync_pair(peer); /* the peer's Isend is posted */
        MT_CALL(MPI_Probe(peer, 6, MPI_COMM_WORLD, &st));
        memset(b, 0, n);
        MT_CALL(MPI_Irecv(b, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        if (mt_weft)
            MT_EQ("Test_cancelled of a receive matched when posted", 0, flag);
        if (flag) /* cancelled: the message must still be there for another receive */
            MT_CALL(MPI_Recv(b, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st));
        MT_STATUS("receive of a message waiting at post time", st, peer, 6, n);
        mt_verify(b, n, 66, "receive of a message waiting at post time");
    } else {
        MPI_Request r;
        mt_fill(b, n, 66);
        MT_CALL(MPI_Isend(b, n, MPI_BYTE, peer, 6, MPI_COMM_WORLD, &r));
        sync_pair(peer);
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    free(b);
}

static void cancel_persistent(int peer, int receiver)
{
    int v = -1, flag = 0;
    MPI_Status st;
    if (receiver) {
        MPI_Request r;
        MT_CALL(MPI_Recv_init(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Start(&r));
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        MT_TRUE(r != MPI_REQUEST_NULL, "cancelled persistent request expected still allocated");
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        MT_EQ("Test_cancelled of a cancelled persistent receive", 1, flag);
        MT_CALL(MPI_Start(&r));
        sync_pair(peer);
        MT_CALL(MPI_Wait(&r, &st));
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        MT_EQ("Test_cancelled of a restarted persistent receive", 0, flag);
        MT_EQ("value of a restarted persistent receive", 88, v);
        MT_CALL(MPI_Request_free(&r));
    } else {
        v = 88;
        sync_pair(peer);
        MT_CALL(MPI_Send(&v, 1, MPI_INT, peer, 8, MPI_COMM_WORLD));
    }
}

static void get_status_null(void)
{
    int flag = 0;
    MPI_Status st;
    MT_CALL(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    MT_EQ("Request_get_status(MPI_REQUEST_NULL) flag", 1, flag);
    MT_STATUS_EMPTY("Request_get_status(MPI_REQUEST_NULL)", st);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    int peer = mt_rank ^ 1;
    get_status_null();
    for (int round = 0; round < 2 && peer < mt_size; round++) {
        int receiver = (mt_rank % 2) == round;
        cancel_unmatched(peer, receiver, 0);
        cancel_unmatched(peer, receiver, 1);
        cancel_completed(peer, receiver);
        cancel_matched_at_post(peer, receiver, 100);
        cancel_matched_at_post(peer, receiver, 100000);
        cancel_persistent(peer, receiver);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* ANY_SOURCE/ANY_TAG receive cancelled while nothing is in flight anywhere */
    {
        int v = -1, flag = 0;
        MPI_Request r;
        MPI_Status st;
        MT_CALL(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        MT_CALL(MPI_Test_cancelled(&st, &flag));
        MT_EQ("Test_cancelled of a cancelled wildcard receive", 1, flag);
    }
    return mt_finish("p2p_cancel");
}
