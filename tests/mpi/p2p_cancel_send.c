/* MPI_Cancel of sends, and of receives under the same patterns (MPI 4.1 section 3.8.4): a cancel
 * either succeeds (the message is not received, MPI_Test_cancelled is true on the completed
 * request's status) or fails (the message is received normally), and MPI_Wait after MPI_Cancel
 * completes either way.
 * Ranks pair up (r, r^1) and play both roles in turn; every case also runs on MPI_COMM_SELF.
 * - unmatched: Isend, Issend, persistent Send_init + Start and Ibsend of 8, 1000 and 100000 bytes
 *   (eager and rendezvous) while the receiver posts nothing for them; Cancel, Wait. The sender
 *   then tells the receiver (tag 2) whether it was cancelled and sends a later message (tag 3);
 *   once that has arrived, a cancelled message must not be there (Iprobe), a not cancelled one
 *   must be received whole. With --weft: cancelled for every mode but Ibsend (Weft completes a
 *   buffered send when it is buffered, and its cancel fails).
 * - matched: the receive is posted and completed first (Irsend too); a later Cancel fails and the
 *   data arrived.
 * - loop: 1000 Isends of mixed sizes, each cancelled and waited at once, while the receiver has
 *   300 receives posted: with --weft exactly the first 300 fail; every message not cancelled is
 *   received in order, the cancelled ones never.
 * - receive loop: 1000 Irecv + Cancel + Wait against a stream of 1000 messages: each message is
 *   received exactly once, in order, by a receive not cancelled or by the receives after.
 * - queued: 300 Isends of 4000 bytes fill the channel while the receiver is outside MPI; every
 *   third is cancelled (those still queued at the sender, the others through the receiver).
 * - persistent: a cancelled started send can be started again; that one arrives.
 * Arguments: [--weft]. */
#include "mpitest.h"

#define T_DATA 1
#define T_FLAG 2
#define T_LATER 3

enum { M_ISEND, M_ISSEND, M_PERSIST, M_IBSEND, M_COUNT };
static const char *mode_name[M_COUNT] = { "Isend", "Issend", "Send_init", "Ibsend" };

static void sync_pair(MPI_Comm c, int peer)
{
    MT_CALL(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 50, NULL, 0, MPI_BYTE, peer, 50, c,
                         MPI_STATUS_IGNORE));
}

static int cancelled_of(const MPI_Status *st)
{
    int flag = -1;
    MT_CALL(MPI_Test_cancelled(st, &flag));
    return flag;
}

/* After the flag and the later message: the data message is there iff it was not cancelled. */
static void receiver_check(MPI_Comm c, int peer, uint8_t *b, int n, uint64_t seed, int cancelled,
                           const char *what)
{
    MPI_Status st;
    int later = -1, there = 0;
    MT_CALL(MPI_Recv(&later, 1, MPI_INT, peer, T_LATER, c, &st));
    MT_EQ("later message", 4242, later);
    MT_CALL(MPI_Iprobe(peer, T_DATA, c, &there, &st));
    if (cancelled) {
        int cnt = -1;
        if (there)
            MT_CALL(MPI_Get_count(&st, MPI_BYTE, &cnt));
        MT_TRUE(!there, "%s: a cancelled send (Test_cancelled true) expected not to arrive; one "
                "of %d bytes did", what, cnt);
        return;
    }
    MT_TRUE(there, "%s: a send whose cancel failed expected to arrive before a later message",
            what);
    memset(b, 0, (size_t)n);
    MT_CALL(MPI_Recv(b, n, MPI_BYTE, peer, T_DATA, c, &st));
    MT_STATUS(what, st, peer, T_DATA, n);
    mt_verify(b, (size_t)n, seed, what);
}

static void sender_report(MPI_Comm c, int peer, int cancelled)
{
    int later = 4242;
    MT_CALL(MPI_Send(&cancelled, 1, MPI_INT, peer, T_FLAG, c));
    MT_CALL(MPI_Send(&later, 1, MPI_INT, peer, T_LATER, c));
}

static void cancel_unmatched(MPI_Comm c, int peer, int sender, int mode, int n)
{
    char what[96];
    uint8_t *b = mt_malloc((size_t)n);
    uint64_t seed = (uint64_t)mode * 1000003u + (uint64_t)n;
    snprintf(what, sizeof(what), "unmatched %s of %d bytes", mode_name[mode], n);
    if (sender) {
        MPI_Request r;
        MPI_Status st;
        mt_fill(b, (size_t)n, seed);
        switch (mode) {
        case M_ISEND: MT_CALL(MPI_Isend(b, n, MPI_BYTE, peer, T_DATA, c, &r)); break;
        case M_ISSEND: MT_CALL(MPI_Issend(b, n, MPI_BYTE, peer, T_DATA, c, &r)); break;
        case M_PERSIST:
            MT_CALL(MPI_Send_init(b, n, MPI_BYTE, peer, T_DATA, c, &r));
            MT_CALL(MPI_Start(&r));
            break;
        default: MT_CALL(MPI_Ibsend(b, n, MPI_BYTE, peer, T_DATA, c, &r)); break;
        }
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        int flag = cancelled_of(&st);
        if (mt_weft)
            MT_EQ(what, mode == M_IBSEND ? 0 : 1, flag);
        if (mode == M_PERSIST) {
            MT_TRUE(r != MPI_REQUEST_NULL, "%s: persistent request expected to stay", what);
            MT_CALL(MPI_Request_free(&r));
        }
        sender_report(c, peer, flag);
    } else {
        int flag = -1;
        MT_CALL(MPI_Recv(&flag, 1, MPI_INT, peer, T_FLAG, c, MPI_STATUS_IGNORE));
        receiver_check(c, peer, b, n, seed, flag, what);
    }
    sync_pair(c, peer);   /* the next case's message is not sent before this one is checked */
    free(b);
}

/* The receive completes first; the cancel afterwards must fail and the data is there. */
static void cancel_matched(MPI_Comm c, int peer, int sender, int mode, int n)
{
    char what[96];
    uint8_t *b = mt_malloc((size_t)n);
    uint64_t seed = 77u + (uint64_t)mode * 31u + (uint64_t)n;
    snprintf(what, sizeof(what), "matched %s of %d bytes", mode < 0 ? "Irsend" : mode_name[mode], n);
    if (sender) {
        MPI_Request r;
        MPI_Status st;
        mt_fill(b, (size_t)n, seed);
        sync_pair(c, peer);   /* the receive is posted */
        if (mode < 0)
            MT_CALL(MPI_Irsend(b, n, MPI_BYTE, peer, T_DATA, c, &r));
        else if (mode == M_ISSEND)
            MT_CALL(MPI_Issend(b, n, MPI_BYTE, peer, T_DATA, c, &r));
        else
            MT_CALL(MPI_Isend(b, n, MPI_BYTE, peer, T_DATA, c, &r));
        sync_pair(c, peer);   /* the receive is complete */
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        MT_EQ(what, 0, cancelled_of(&st));
    } else {
        MPI_Request r;
        MPI_Status st;
        memset(b, 0, (size_t)n);
        MT_CALL(MPI_Irecv(b, n, MPI_BYTE, peer, T_DATA, c, &r));
        sync_pair(c, peer);
        MT_CALL(MPI_Wait(&r, &st));
        MT_STATUS(what, st, peer, T_DATA, n);
        MT_EQ(what, 0, cancelled_of(&st));
        mt_verify(b, (size_t)n, seed, what);
        sync_pair(c, peer);
    }
    free(b);
}

#define LOOP 1000
#define LOOP_POSTED 300
static int loop_size(int i) { return i % 7 == 3 ? 40000 : i % 2 ? 1000 : 8; }

static void cancel_loop(MPI_Comm c, int peer, int sender)
{
    uint8_t *b = mt_malloc(40000);
    if (sender) {
        static int flags[LOOP];
        MPI_Request r;
        MPI_Status st;
        sync_pair(c, peer);   /* the first LOOP_POSTED receives are posted */
        for (int i = 0; i < LOOP; i++) {
            mt_fill(b, (size_t)loop_size(i), (uint64_t)i);
            MT_CALL(MPI_Isend(b, loop_size(i), MPI_BYTE, peer, T_DATA, c, &r));
            MT_CALL(MPI_Cancel(&r));
            MT_CALL(MPI_Wait(&r, &st));
            flags[i] = cancelled_of(&st);
            if (mt_weft)
                MT_EQ(i < LOOP_POSTED ? "cancel of a send matching a posted receive"
                                      : "cancel of an unmatched send in a loop",
                      i < LOOP_POSTED ? 0 : 1, flags[i]);
        }
        MT_CALL(MPI_Send(flags, LOOP, MPI_INT, peer, T_FLAG, c));
        int later = 4242;
        MT_CALL(MPI_Send(&later, 1, MPI_INT, peer, T_LATER, c));
    } else {
        static int flags[LOOP];
        MPI_Request rs[LOOP_POSTED];
        uint8_t *posted = mt_malloc((size_t)LOOP_POSTED * 40000);
        for (int i = 0; i < LOOP_POSTED; i++)
            MT_CALL(MPI_Irecv(posted + (size_t)i * 40000, 40000, MPI_BYTE, peer, T_DATA, c, &rs[i]));
        sync_pair(c, peer);
        MT_CALL(MPI_Recv(flags, LOOP, MPI_INT, peer, T_FLAG, c, MPI_STATUS_IGNORE));
        int later = -1;
        MT_CALL(MPI_Recv(&later, 1, MPI_INT, peer, T_LATER, c, MPI_STATUS_IGNORE));
        /* every message arrived before the later one: the posted receives hold the first
         * LOOP_POSTED not cancelled, the rest wait unexpected */
        int k = 0, i = 0;
        for (; i < LOOP && k < LOOP_POSTED; i++) {
            if (flags[i])
                continue;
            MPI_Status st;
            MT_CALL(MPI_Wait(&rs[k], &st));
            MT_STATUS("loop message in a posted receive", st, peer, T_DATA, loop_size(i));
            mt_verify(posted + (size_t)k * 40000, (size_t)loop_size(i), (uint64_t)i,
                      "loop message in a posted receive");
            k++;
        }
        for (; i < LOOP; i++) {
            if (flags[i])
                continue;
            MPI_Status st;
            MT_CALL(MPI_Recv(b, 40000, MPI_BYTE, peer, T_DATA, c, &st));
            MT_STATUS("loop message received late", st, peer, T_DATA, loop_size(i));
            mt_verify(b, (size_t)loop_size(i), (uint64_t)i, "loop message received late");
        }
        int there = 0;
        MT_CALL(MPI_Iprobe(peer, T_DATA, c, &there, MPI_STATUS_IGNORE));
        MT_TRUE(!there, "cancelled sends of the loop expected never to arrive; one did");
        for (; k < LOOP_POSTED; k++) {   /* fewer messages than posted receives: cancel the rest */
            MPI_Status st;
            MT_CALL(MPI_Cancel(&rs[k]));
            MT_CALL(MPI_Wait(&rs[k], &st));
            MT_EQ("cancel of a posted receive nothing matched", 1, cancelled_of(&st));
        }
        free(posted);
    }
    free(b);
}

/* Receives cancelled at once against a stream: each message received exactly once, in order. */
static void cancel_recv_loop(MPI_Comm c, int peer, int sender)
{
    if (sender) {
        sync_pair(c, peer);
        for (int i = 0; i < LOOP; i++)
            MT_CALL(MPI_Send(&i, 1, MPI_INT, peer, T_DATA, c));
        return;
    }
    int next = 0, ncancelled = 0;
    sync_pair(c, peer);
    for (int i = 0; i < LOOP; i++) {
        int v = -1;
        MPI_Request r;
        MPI_Status st;
        if (i % 3 == 0 && next < LOOP) {   /* let a message arrive first: this cancel fails */
            int there = 0;
            while (!there)
                MT_CALL(MPI_Iprobe(peer, T_DATA, c, &there, MPI_STATUS_IGNORE));
        }
        MT_CALL(MPI_Irecv(&v, 1, MPI_INT, peer, T_DATA, c, &r));
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        if (cancelled_of(&st)) {
            MT_EQ("buffer of a cancelled receive", -1, v);
            ncancelled++;
            continue;
        }
        MT_STATUS("receive whose cancel failed", st, peer, T_DATA, sizeof(int));
        MT_EQ("message order through receives whose cancel failed", next, v);
        next++;
    }
    for (; next < LOOP; next++) {
        int v = -1;
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, peer, T_DATA, c, MPI_STATUS_IGNORE));
        MT_EQ("message order after cancelled receives", next, v);
    }
    if (mt_rank == 0 && c == MPI_COMM_WORLD)
        printf("p2p_cancel_send: receive loop: %d of %d receives cancelled\n", ncancelled, LOOP);
}

static void cancel_persistent_restart(MPI_Comm c, int peer, int sender)
{
    int v = 99;
    if (sender) {
        MPI_Request r;
        MPI_Status st;
        MT_CALL(MPI_Send_init(&v, 1, MPI_INT, peer, T_DATA, c, &r));
        MT_CALL(MPI_Start(&r));
        MT_CALL(MPI_Cancel(&r));
        MT_CALL(MPI_Wait(&r, &st));
        int flag = cancelled_of(&st);
        if (mt_weft)
            MT_EQ("cancel of an unmatched persistent send", 1, flag);
        MT_CALL(MPI_Start(&r));   /* again: this one is received */
        MT_CALL(MPI_Wait(&r, &st));
        MT_EQ("restarted persistent send", 0, cancelled_of(&st));
        MT_CALL(MPI_Request_free(&r));
        MT_CALL(MPI_Send(&flag, 1, MPI_INT, peer, T_FLAG, c));
    } else {
        int flag = -1, got = -1;
        MT_CALL(MPI_Recv(&flag, 1, MPI_INT, peer, T_FLAG, c, MPI_STATUS_IGNORE));
        MT_CALL(MPI_Recv(&got, 1, MPI_INT, peer, T_DATA, c, MPI_STATUS_IGNORE));
        MT_EQ("restarted persistent send's message", 99, got);
        if (!flag) {   /* the first one was received too */
            MT_CALL(MPI_Recv(&got, 1, MPI_INT, peer, T_DATA, c, MPI_STATUS_IGNORE));
            MT_EQ("restarted persistent send's message", 99, got);
        }
    }
}

/* Sends that find the channel full wait in the sender's queue: cancelled there (the receiver
 * polls nothing for a while), or through the receiver for those already out. Every third of
 * QN sends of 4000 bytes (more than a default ring holds) is cancelled, from the last. */
#define QN 300
#define QSIZE 4000
static void cancel_queued(MPI_Comm c, int peer, int sender)
{
    static int flags[QN];
    uint8_t *b = mt_malloc((size_t)QN * QSIZE);
    if (sender) {
        MPI_Request rs[QN];
        MPI_Status st;
        sync_pair(c, peer);
        for (int i = 0; i < QN; i++) {
            mt_fill(b + (size_t)i * QSIZE, QSIZE, 9000u + (uint64_t)i);
            MT_CALL(MPI_Isend(b + (size_t)i * QSIZE, QSIZE, MPI_BYTE, peer, T_DATA, c, &rs[i]));
        }
        for (int i = QN - 1; i >= 0; i -= 3)
            MT_CALL(MPI_Cancel(&rs[i]));
        for (int i = 0; i < QN; i++) {
            MT_CALL(MPI_Wait(&rs[i], &st));
            flags[i] = cancelled_of(&st);
            if ((QN - 1 - i) % 3)
                MT_EQ("a send not cancelled", 0, flags[i]);
            else if (mt_weft)
                MT_EQ("cancel of a queued or unmatched send", 1, flags[i]);
        }
        MT_CALL(MPI_Send(flags, QN, MPI_INT, peer, T_FLAG, c));
    } else {
        sync_pair(c, peer);
        mt_sleep_ms(300);   /* outside MPI: the sender's channel fills up */
        MT_CALL(MPI_Recv(flags, QN, MPI_INT, peer, T_FLAG, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < QN; i++) {
            if (flags[i])
                continue;
            MPI_Status st;
            memset(b, 0, QSIZE);
            MT_CALL(MPI_Recv(b, QSIZE, MPI_BYTE, peer, T_DATA, c, &st));
            MT_STATUS("queued send", st, peer, T_DATA, QSIZE);
            mt_verify(b, QSIZE, 9000u + (uint64_t)i, "queued send not cancelled");
        }
        int there = 0;
        MT_CALL(MPI_Iprobe(peer, T_DATA, c, &there, MPI_STATUS_IGNORE));
        MT_TRUE(!there, "cancelled queued sends expected never to arrive; one did");
    }
    sync_pair(c, peer);
    free(b);
}

/* Self: the rank is both sender and receiver; a cancelled message never arrives. */
static void cancel_self(int mode, int n)
{
    MPI_Comm c = MPI_COMM_SELF;
    uint8_t *b = mt_malloc((size_t)n);
    MPI_Request r;
    MPI_Status st;
    mt_fill(b, (size_t)n, 5u + (uint64_t)n);
    if (mode == M_ISSEND)
        MT_CALL(MPI_Issend(b, n, MPI_BYTE, 0, T_DATA, c, &r));
    else if (mode == M_IBSEND)
        MT_CALL(MPI_Ibsend(b, n, MPI_BYTE, 0, T_DATA, c, &r));
    else
        MT_CALL(MPI_Isend(b, n, MPI_BYTE, 0, T_DATA, c, &r));
    MT_CALL(MPI_Cancel(&r));
    MT_CALL(MPI_Wait(&r, &st));
    int flag = cancelled_of(&st), there = 0;
    if (mt_weft)
        MT_EQ("cancel of an unmatched send to self", mode == M_IBSEND ? 0 : 1, flag);
    MT_CALL(MPI_Iprobe(0, T_DATA, c, &there, MPI_STATUS_IGNORE));
    MT_EQ("a send to self is there iff its cancel failed", !flag, there);
    if (there) {
        memset(b, 0, (size_t)n);
        MT_CALL(MPI_Recv(b, n, MPI_BYTE, 0, T_DATA, c, &st));
        mt_verify(b, (size_t)n, 5u + (uint64_t)n, "send to self whose cancel failed");
    }
    free(b);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    int bsize = 4 * (100000 + MPI_BSEND_OVERHEAD);
    void *bbuf = mt_malloc((size_t)bsize);
    MT_CALL(MPI_Buffer_attach(bbuf, bsize));
    static const int sizes[] = { 8, 1000, 100000 };
    int peer = mt_rank ^ 1;
    for (int round = 0; round < 2 && peer < mt_size; round++) {
        MPI_Comm c = MPI_COMM_WORLD;
        int sender = (mt_rank % 2) == round;
        for (int m = 0; m < M_COUNT; m++)
            for (int s = 0; s < 3; s++)
                cancel_unmatched(c, peer, sender, m, sizes[s]);
        for (int s = 0; s < 3; s++) {
            cancel_matched(c, peer, sender, M_ISEND, sizes[s]);
            cancel_matched(c, peer, sender, M_ISSEND, sizes[s]);
            cancel_matched(c, peer, sender, -1, sizes[s]);
        }
        cancel_loop(c, peer, sender);
        cancel_queued(c, peer, sender);
        cancel_recv_loop(c, peer, sender);
        cancel_persistent_restart(c, peer, sender);
    }
    for (int m = 0; m < M_COUNT; m++)
        if (m != M_PERSIST)
            for (int s = 0; s < 3; s++)
                cancel_self(m, sizes[s]);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    return mt_finish("p2p_cancel_send");
}
