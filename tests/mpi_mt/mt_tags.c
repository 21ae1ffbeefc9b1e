/* Per-thread tags: worker thread t of every rank exchanges n messages with thread t of every other
 * rank, all with tag t on MPI_COMM_WORLD, while the other threads do the same with their tags.
 * - Sizes 0 B .. 256 KiB, chosen per message, cross the eager limit (16 KiB in Weft) and the
 *   rendezvous fragment size; every byte is checked against a pattern of (source, thread, seq).
 * - Messages go in rounds of W per peer. Receives are posted in sequence order, so the status and
 *   payload of receive m of a round must be those of message m: order per (source, tag) holds.
 * - The rounds cycle through every send mode (Send, Isend, Ssend, Issend, Bsend into one buffer
 *   shared by all threads, Ibsend, Rsend, Irsend after a ready message, persistent Send_init),
 *   receives posted before the sends (Irecv, Recv_init+Startall), after them (unexpected messages)
 *   or blocking Recv, and every completion call (Wait/Test, -all, -any, -some).
 * Arguments: n (messages per thread and peer, default 512), --threads=T. */
#include "mttest.h"

#include <sched.h>

#define W 8                  /* messages per peer and round */
#define BSEND_CAP 20000      /* largest buffered message; a few above the eager limit */
#define READY_TAG 1000       /* + thread: "my receives of this round are posted" (ready mode) */

static const int sizes[] = {0,     1,     8,     13,    64,    512,   4096,   16383,
                            16384, 16385, 24576, 32768, 65543, 98304, 200000, 262144};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSZ 262144

enum { S_SEND, S_ISEND, S_SSEND, S_ISSEND, S_BSEND, S_IBSEND, S_RSEND, S_IRSEND, S_PSEND };
enum { R_IRECV, R_PRECV, R_LATE, R_RECV };
enum { C_WAITALL, C_WAITANY, C_WAITSOME, C_TESTALL, C_TESTANY, C_TESTSOME, C_WAIT, C_TEST };
static const char *completion_steps[] = {
    "round %ld: MPI_Waitall over %ld requests",  "round %ld: MPI_Waitany over %ld requests",
    "round %ld: MPI_Waitsome over %ld requests", "round %ld: MPI_Testall over %ld requests",
    "round %ld: MPI_Testany over %ld requests",  "round %ld: MPI_Testsome over %ld requests",
    "round %ld: MPI_Wait on %ld requests in turn", "round %ld: MPI_Test on %ld requests in turn"};
static const char *send_names[] = {"Send", "Isend", "Ssend", "Issend", "Bsend", "Ibsend", "Rsend", "Irsend",
                                   "Send_init"};

/* Round k follows plan[k % NPLAN]. Blocking sends and ready sends need the receives posted first
 * (R_IRECV, R_PRECV); R_LATE and R_RECV receive after all sends started, so they go with
 * nonblocking sends only. */
static const struct {
    int s, r, c;
} plan[] = {
    {S_SEND, R_IRECV, C_WAITALL},    {S_ISEND, R_IRECV, C_WAITANY},  {S_SSEND, R_PRECV, C_WAITSOME},
    {S_ISSEND, R_IRECV, C_TESTSOME}, {S_BSEND, R_IRECV, C_TESTANY},  {S_IBSEND, R_LATE, C_TESTALL},
    {S_RSEND, R_IRECV, C_WAIT},      {S_IRSEND, R_PRECV, C_TEST},    {S_PSEND, R_IRECV, C_WAITALL},
    {S_ISEND, R_RECV, C_WAITSOME},   {S_ISSEND, R_LATE, C_WAITANY},  {S_PSEND, R_LATE, C_TESTSOME},
    {S_IBSEND, R_RECV, C_TEST},      {S_ISEND, R_LATE, C_WAIT},
};
#define NPLAN ((int)(sizeof plan / sizeof plan[0]))

static long n_msgs = 512;

static int msg_size(int src, int t, long seq, int cap)
{
    uint64_t x = mtt_seed(src, t, seq, 1);
    int sz = sizes[x % NSIZES];
    return sz <= cap ? sz : (int)((x >> 20) % (uint64_t)(cap + 1));
}
static uint64_t msg_seed(int src, int t, long seq) { return mtt_seed(src, t, seq, 0); }

typedef struct {
    int t, npeer, peers[MTT_MAX_THREADS];
    uint8_t *sbuf, *rbuf;    /* one round's payloads, back to back */
    MPI_Request *req;        /* receives [0, nr), then sends [nr, nr + ns) */
    MPI_Status *st;
    int *idx, *done;
    long checked;
} ctx_t;

/* Checks receive i of the round (peer i / nw, slot i % nw) against message seq of that peer. */
static void check_recv(ctx_t *c, long k, int nw, int i, const MPI_Status *st, int cap, const size_t *roff)
{
    int p = c->peers[i / nw];
    long seq = k * W + i % nw;
    int sz = msg_size(p, c->t, seq, cap);
    MT_TRUE(!c->done[i], "round %ld: receive %d completed twice", k, i);
    c->done[i] = 1;
    MTT_STATUS("message (source, seq)", p, seq, *st, p, c->t, sz);
    mtt_check(c->rbuf + roff[i], sz, msg_seed(p, c->t, seq), "message (source, seq)", p, seq);
    c->checked++;
    mtt_count(1);
}

static void run_round(ctx_t *c, long k, int nw)
{
    const int s = plan[k % NPLAN].s, r = plan[k % NPLAN].r, cm = plan[k % NPLAN].c;
    const int t = c->t, np = c->npeer, nr = np * nw;
    const int cap = s == S_BSEND || s == S_IBSEND ? BSEND_CAP : MAXSZ;
    const int blocking_send = s == S_SEND || s == S_SSEND || s == S_BSEND || s == S_RSEND;
    size_t roff[MTT_MAX_THREADS * W], soff[MTT_MAX_THREADS * W];
    size_t rtot = 0, stot = 0;
    for (int i = 0; i < nr; i++) {
        roff[i] = rtot;
        rtot += (size_t)msg_size(c->peers[i / nw], t, k * W + i % nw, cap) + 64;
        soff[i] = stot;
        stot += (size_t)msg_size(mt_rank, t, k * W + i % nw, cap);
        c->done[i] = 0;
    }
    MT_TRUE(rtot <= (size_t)nr * (MAXSZ + 64) && stot <= (size_t)nr * MAXSZ, "round %ld: buffer sizes", k);

    /* receives first, in sequence order per peer */
    int ntot = nr;
    if (r == R_IRECV || r == R_PRECV) {
        mtt_at("round %ld: posting receives (plan %ld)", k, k % NPLAN);
        for (int i = 0; i < nr; i++) {
            int p = c->peers[i / nw];
            int sz = msg_size(p, t, k * W + i % nw, cap);
            if (r == R_IRECV)
                MT_CALL(MPI_Irecv(c->rbuf + roff[i], sz + 64, MPI_BYTE, p, t, MPI_COMM_WORLD, &c->req[i]));
            else
                MT_CALL(MPI_Recv_init(c->rbuf + roff[i], sz + 64, MPI_BYTE, p, t, MPI_COMM_WORLD, &c->req[i]));
        }
        if (r == R_PRECV)
            MT_CALL(MPI_Startall(nr, c->req));
    }
    if (s == S_RSEND || s == S_IRSEND)
        for (int j = 0; j < np; j++)
            MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, c->peers[j], READY_TAG + t, MPI_COMM_WORLD));

    /* sends, peer by peer in sequence order */
    for (int j = 0; j < np; j++) {
        int p = c->peers[j];
        if (s == S_RSEND || s == S_IRSEND) {
            mtt_at("round %ld: waiting for the ready message of rank %ld", k, p);
            MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, p, READY_TAG + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        for (int m = 0; m < nw; m++) {
            int i = j * nw + m;
            long seq = k * W + m;
            int sz = msg_size(mt_rank, t, seq, cap);
            uint8_t *b = c->sbuf + soff[i];
            MPI_Request *q = &c->req[nr + i];
            mtt_fill(b, sz, msg_seed(mt_rank, t, seq));
            mtt_at("round %ld: sending to rank %ld", k, p);
            switch (s) {
            case S_SEND: MT_CALL(MPI_Send(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD)); break;
            case S_SSEND: MT_CALL(MPI_Ssend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD)); break;
            case S_BSEND: MT_CALL(MPI_Bsend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD)); break;
            case S_RSEND: MT_CALL(MPI_Rsend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD)); break;
            case S_ISEND: MT_CALL(MPI_Isend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD, q)); break;
            case S_ISSEND: MT_CALL(MPI_Issend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD, q)); break;
            case S_IBSEND: MT_CALL(MPI_Ibsend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD, q)); break;
            case S_IRSEND: MT_CALL(MPI_Irsend(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD, q)); break;
            case S_PSEND: MT_CALL(MPI_Send_init(b, sz, MPI_BYTE, p, t, MPI_COMM_WORLD, q)); break;
            }
        }
    }
    if (s == S_PSEND)
        MT_CALL(MPI_Startall(nr, c->req + nr));
    if (!blocking_send)
        ntot = 2 * nr;

    /* receives after the sends: unexpected messages, or blocking receives in order */
    if (r == R_LATE) {
        for (int i = 0; i < nr; i++) {
            int p = c->peers[i / nw];
            int sz = msg_size(p, t, k * W + i % nw, cap);
            MT_CALL(MPI_Irecv(c->rbuf + roff[i], sz + 64, MPI_BYTE, p, t, MPI_COMM_WORLD, &c->req[i]));
        }
    } else if (r == R_RECV) {
        for (int i = 0; i < nr; i++) {
            int p = c->peers[i / nw];
            int sz = msg_size(p, t, k * W + i % nw, cap);
            MPI_Status st;
            mtt_at("round %ld: MPI_Recv from rank %ld", k, p);
            MT_CALL(MPI_Recv(c->rbuf + roff[i], sz + 64, MPI_BYTE, p, t, MPI_COMM_WORLD, &st));
            check_recv(c, k, nw, i, &st, cap, roff);
            c->req[i] = MPI_REQUEST_NULL;
        }
    }

    /* completion of everything left; receives are checked as they complete */
    int first = r == R_RECV ? nr : 0; /* blocking receives are already done */
    int cnt = ntot - first;
    MPI_Request *q = c->req + first;
    MPI_Status *st = c->st;
    mtt_at(completion_steps[cm], k, cnt);
    int left = cnt, flag = 0, idx = -1, out = 0;
    switch (cm) {
    case C_WAITALL:
        MT_CALL(MPI_Waitall(cnt, q, st));
        for (int i = 0; i < cnt; i++)
            if (first + i < nr)
                check_recv(c, k, nw, first + i, &st[i], cap, roff);
        break;
    case C_TESTALL:
        while (!flag) {
            MT_CALL(MPI_Testall(cnt, q, &flag, st));
            if (!flag)
                sched_yield();
        }
        for (int i = 0; i < cnt; i++)
            if (first + i < nr)
                check_recv(c, k, nw, first + i, &st[i], cap, roff);
        break;
    case C_WAITANY:
    case C_TESTANY:
        while (left > 0) {
            if (cm == C_WAITANY) {
                MT_CALL(MPI_Waitany(cnt, q, &idx, &st[0]));
            } else {
                MT_CALL(MPI_Testany(cnt, q, &idx, &flag, &st[0]));
                if (!flag) {
                    MT_EQ("Testany index without completion", MPI_UNDEFINED, idx);
                    sched_yield();
                    continue;
                }
            }
            MT_TRUE(idx >= 0 && idx < cnt, "round %ld: Waitany/Testany index expected 0..%d got %d", k, cnt - 1,
                    idx);
            if (first + idx < nr)
                check_recv(c, k, nw, first + idx, &st[0], cap, roff);
            left--;
        }
        break;
    case C_WAITSOME:
    case C_TESTSOME:
        while (left > 0) {
            if (cm == C_WAITSOME)
                MT_CALL(MPI_Waitsome(cnt, q, &out, c->idx, st));
            else
                MT_CALL(MPI_Testsome(cnt, q, &out, c->idx, st));
            MT_TRUE(out >= (cm == C_WAITSOME) && out <= left, "round %ld: Waitsome/Testsome outcount expected %d..%d got %d",
                    k, cm == C_WAITSOME, left, out);
            if (out == 0)
                sched_yield();
            for (int j = 0; j < out; j++) {
                int i = c->idx[j];
                MT_TRUE(i >= 0 && i < cnt, "round %ld: Waitsome/Testsome index expected 0..%d got %d", k, cnt - 1, i);
                if (first + i < nr)
                    check_recv(c, k, nw, first + i, &st[j], cap, roff);
            }
            left -= out;
        }
        break;
    case C_WAIT:
    case C_TEST:
        for (int i = 0; i < cnt; i++) {
            if (cm == C_WAIT) {
                MT_CALL(MPI_Wait(&q[i], &st[0]));
            } else {
                for (flag = 0; !flag;) {
                    MT_CALL(MPI_Test(&q[i], &flag, &st[0]));
                    if (!flag)
                        sched_yield();
                }
            }
            if (first + i < nr)
                check_recv(c, k, nw, first + i, &st[0], cap, roff);
        }
        break;
    }
    for (int i = 0; i < nr; i++)
        MT_TRUE(c->done[i], "round %ld: receive %d (rank %d seq %ld) expected complete got not", k, i,
                c->peers[i / nw], k * W + i % nw);
    /* persistent requests stay allocated when complete */
    if (r == R_PRECV)
        for (int i = 0; i < nr; i++)
            MT_CALL(MPI_Request_free(&c->req[i]));
    if (s == S_PSEND)
        for (int i = 0; i < nr; i++)
            MT_CALL(MPI_Request_free(&c->req[nr + i]));
    for (int i = 0; i < ntot; i++)
        MT_TRUE(c->req[i] == MPI_REQUEST_NULL, "round %ld (%s sends): request %d after completion expected "
                "MPI_REQUEST_NULL", k, send_names[s], i);
}

static void worker(int t, void *arg)
{
    ctx_t c = {.t = t};
    for (int p = 0; p < mt_size; p++)
        if (p != mt_rank)
            c.peers[c.npeer++] = p;
    int nr = c.npeer * W;
    c.sbuf = mt_malloc((size_t)nr * MAXSZ);
    c.rbuf = mt_malloc((size_t)nr * (MAXSZ + 64));
    c.req = mt_malloc(sizeof(MPI_Request) * 2 * nr);
    c.st = mt_malloc(sizeof(MPI_Status) * 2 * nr);
    c.idx = mt_malloc(sizeof(int) * 2 * nr);
    c.done = mt_malloc(sizeof(int) * nr);
    for (long k = 0; k * W < n_msgs; k++) {
        int nw = n_msgs - k * W < W ? (int)(n_msgs - k * W) : W;
        run_round(&c, k, nw);
    }
    MT_EQ("messages checked", n_msgs * c.npeer, c.checked);
    free(c.sbuf);
    free(c.rbuf);
    free(c.req);
    free(c.st);
    free(c.idx);
    free(c.done);
}

int main(int argc, char **argv)
{
    long nums[1] = {512};
    mtt_args(argc, argv, nums, 1);
    n_msgs = nums[0];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2, "run with at least 2 ranks");
    MT_TRUE(mt_size <= MTT_MAX_THREADS, "run with at most %d ranks", MTT_MAX_THREADS);
    MT_TRUE(n_msgs >= 1, "message count expected >= 1 got %ld", n_msgs);

    /* one buffer for the buffered sends of every thread: a round's worth of each, twice over */
    int bsz = 2 * mtt_nthreads * (mt_size - 1) * W * (BSEND_CAP + MPI_BSEND_OVERHEAD) + 65536;
    void *bbuf = mt_malloc(bsz);
    MT_CALL(MPI_Buffer_attach(bbuf, bsz));

    mtt_run(mtt_nthreads, worker, NULL);

    void *b = NULL;
    int bs = 0;
    MT_CALL(MPI_Buffer_detach(&b, &bs));
    MT_TRUE(b == bbuf && bs == bsz, "Buffer_detach expected the attached buffer");
    free(bbuf);
    return mtt_finish("mt_tags");
}
