/* Probes from several threads at once. On every rank, the first half of the worker threads send n
 * messages to every other rank while the second half receive what comes in.
 * - Part 1, matched probes: the receiving threads claim messages from a shared counter and take
 *   them with Mprobe(ANY_SOURCE, ANY_TAG) or an Improbe loop, then Mrecv, Imrecv+Wait or
 *   Imrecv+Test into a buffer of exactly the probed size. A matched message belongs to its message
 *   handle: no message may be delivered twice or lost, the probe's status must equal the
 *   receive's, and one thread's receives see each sending thread's messages in increasing seq.
 * - Part 2, Probe + Recv with a tag per thread: receiving thread j alone uses tag j. It probes
 *   (Probe or an Iprobe loop, ANY_SOURCE) and then receives from the probed source into a buffer of
 *   the probed size: that must be the probed message, and per (source, sending thread) the messages
 *   of tag j arrive exactly in send order.
 * Senders mix Send, Ssend and windows of Isend. Every payload is checked.
 * Arguments: n (messages per sending thread and destination, default 500), --threads=T (>= 2). */
#include "mttest.h"

#include <sched.h>

#define WIN 8

static const int sizes[] = {24, 40, 200, 4000, 16384, 16385, 50000, 100000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSZ 100000

struct hdr {
    int32_t origin, thread, seq, tag, size, part;
};

static long n_msgs = 500;
static int nsend, nrecv; /* threads [0, nsend) send, [nsend, nsend + nrecv) receive */
static MPI_Comm comm[2];  /* one duplicate of MPI_COMM_WORLD per part */
static int part;

static int msg_tag(int part_, int u, long i) { return part_ == 0 ? (int)(i % 5) : (int)((i + u) % nrecv); }
static int msg_size(int origin, int dest, int u, long i) { return sizes[mtt_seed(origin, dest, u, i) % NSIZES]; }
static uint64_t msg_seed(int origin, int dest, int u, long i) { return mtt_seed(origin, dest, u, i + 1000000000L * part); }

static _Atomic long claims;                 /* part 1: messages left to claim on this rank */
static _Atomic unsigned char *seen;         /* [origin][sending thread][seq] */
static _Atomic long delivered;

static void sender(int u)
{
    uint8_t *bufs = mt_malloc((size_t)WIN * MAXSZ);
    MPI_Request req[WIN];
    int used = 0;
    for (long i = 0; i < n_msgs; i++) {
        for (int k = 1; k < mt_size; k++) {
            int d = (mt_rank + k) % mt_size;
            if (used == WIN) {
                mtt_at("MPI_Waitall over the send window, message %ld to rank %ld", i, d);
                MT_CALL(MPI_Waitall(WIN, req, MPI_STATUSES_IGNORE));
                used = 0;
            }
            struct hdr h = {mt_rank, u, (int)i, msg_tag(part, u, i), msg_size(mt_rank, d, u, i), part};
            uint8_t *b = bufs + (size_t)used * MAXSZ;
            mtt_fill(b, h.size, msg_seed(mt_rank, d, u, i));
            memcpy(b, &h, sizeof h);
            mtt_at("sending message %ld to rank %ld", i, d);
            switch ((i + k) % 4) {
            case 0: MT_CALL(MPI_Send(b, h.size, MPI_BYTE, d, h.tag, comm[part])); break;
            case 2: MT_CALL(MPI_Ssend(b, h.size, MPI_BYTE, d, h.tag, comm[part])); break;
            default: MT_CALL(MPI_Isend(b, h.size, MPI_BYTE, d, h.tag, comm[part], &req[used++])); break;
            }
            mtt_count(1);
        }
    }
    mtt_at("MPI_Waitall over the last %ld sends%.0ld", used, 0);
    MT_CALL(MPI_Waitall(used, req, MPI_STATUSES_IGNORE));
    free(bufs);
}

/* Checks a delivered message against the probe's status and the receive's; returns its header. */
static struct hdr check_msg(const char *what, const uint8_t *buf, const MPI_Status *pst, const MPI_Status *rst)
{
    struct hdr h;
    int pc = -1, rc = -1;
    MT_CALL(MPI_Get_count(pst, MPI_BYTE, &pc));
    MT_CALL(MPI_Get_count(rst, MPI_BYTE, &rc));
    if (pst->MPI_SOURCE != rst->MPI_SOURCE || pst->MPI_TAG != rst->MPI_TAG || pc != rc)
        MT_FAIL("%s: receive status expected the probe's (source %d, tag %d, count %d) got (%d, %d, %d)", what,
                pst->MPI_SOURCE, pst->MPI_TAG, pc, rst->MPI_SOURCE, rst->MPI_TAG, rc);
    MT_TRUE(rc >= (int)sizeof h, "%s: count expected at least a header (%d) got %d", what, (int)sizeof h, rc);
    memcpy(&h, buf, sizeof h);
    MT_TRUE(h.origin >= 0 && h.origin < mt_size && h.origin != mt_rank && h.thread >= 0 && h.thread < nsend &&
                h.seq >= 0 && h.seq < n_msgs && h.part == part,
            "%s: header expected a message sent in part %d got (origin %d, thread %d, seq %d, part %d)", what,
            part, h.origin, h.thread, h.seq, h.part);
    MTT_STATUS(what, h.origin, h.seq, *rst, h.origin, msg_tag(part, h.thread, h.seq),
               msg_size(h.origin, mt_rank, h.thread, h.seq));
    mtt_check_from(buf, sizeof h, h.size, msg_seed(h.origin, mt_rank, h.thread, h.seq),
                   "payload of (origin, seq)", h.origin, h.seq);
    unsigned char before =
        atomic_fetch_add(&seen[((size_t)h.origin * nsend + h.thread) * n_msgs + h.seq], 1);
    MT_TRUE(before == 0, "%s: message (origin %d, thread %d, seq %d) expected delivered once got a second time",
            what, h.origin, h.thread, h.seq);
    atomic_fetch_add(&delivered, 1);
    mtt_count(1);
    return h;
}

static void mprobe_receiver(int j)
{
    static const char *names[] = {"Mprobe+Mrecv", "Improbe+Mrecv", "Mprobe+Imrecv+Wait", "Improbe+Imrecv+Test"};
    long *last = mt_malloc(sizeof(long) * mt_size * nsend);
    for (int k = 0; k < mt_size * nsend; k++)
        last[k] = -1;
    for (long it = 0;; it++) {
        long v = atomic_load(&claims);
        while (v > 0 && !atomic_compare_exchange_weak(&claims, &v, v - 1))
            ;
        if (v <= 0)
            break;
        int how = (int)((it + j) % 4);
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status pst, rst;
        MPI_Request r;
        int flag = 0;
        mtt_at("part 1: matched probe of claim %ld (kind %ld)", it, how);
        if (how == 0 || how == 2) {
            MT_CALL(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm[0], &msg, &pst));
        } else {
            while (!flag) {
                MT_CALL(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm[0], &flag, &msg, &pst));
                if (!flag) {
                    MT_TRUE(msg == MPI_MESSAGE_NULL, "Improbe without a message: handle expected "
                            "MPI_MESSAGE_NULL got another");
                    sched_yield();
                }
            }
        }
        MT_TRUE(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "%s: message handle expected a message "
                "got MPI_MESSAGE_NULL or MPI_MESSAGE_NO_PROC", names[how]);
        int cnt = -1;
        MT_CALL(MPI_Get_count(&pst, MPI_BYTE, &cnt));
        MT_TRUE(cnt >= 0 && cnt <= MAXSZ, "%s: probed count expected 0..%d got %d", names[how], MAXSZ, cnt);
        uint8_t *buf = mt_malloc(cnt); /* exactly the probed size */
        mtt_at("part 1: receiving a matched message from rank %ld (kind %ld)", pst.MPI_SOURCE, how);
        if (how < 2) {
            MT_CALL(MPI_Mrecv(buf, cnt, MPI_BYTE, &msg, &rst));
        } else {
            MT_CALL(MPI_Imrecv(buf, cnt, MPI_BYTE, &msg, &r));
            if (how == 2) {
                MT_CALL(MPI_Wait(&r, &rst));
            } else {
                for (flag = 0; !flag;) {
                    MT_CALL(MPI_Test(&r, &flag, &rst));
                    if (!flag)
                        sched_yield();
                }
            }
        }
        MT_TRUE(msg == MPI_MESSAGE_NULL, "%s: message handle after the receive expected MPI_MESSAGE_NULL",
                names[how]);
        struct hdr h = check_msg(names[how], buf, &pst, &rst);
        long *l = &last[h.origin * nsend + h.thread];
        if (h.seq <= *l)
            MT_FAIL("%s: message (origin %d, thread %d) seq expected after %ld (matched earlier by this thread) "
                    "got %d", names[how], h.origin, h.thread, *l, h.seq);
        *l = h.seq;
        free(buf);
    }
    free(last);
}

static void probe_receiver(int j)
{
    static const char *names[] = {"Probe+Recv", "Iprobe+Recv"};
    long *next = mt_malloc(sizeof(long) * mt_size * nsend);
    long left = 0;
    for (int o = 0; o < mt_size; o++)
        for (int u = 0; u < nsend; u++) {
            next[o * nsend + u] = -1;
            for (long i = 0; o != mt_rank && i < n_msgs; i++)
                if (msg_tag(1, u, i) == j) {
                    if (next[o * nsend + u] < 0)
                        next[o * nsend + u] = i;
                    left++;
                }
        }
    for (long it = 0; left > 0; it++, left--) {
        int how = (int)(it % 2), flag = 0;
        MPI_Status pst, rst;
        mtt_at("part 2: probe for tag %ld, %ld messages left", j, left);
        if (how == 0) {
            MT_CALL(MPI_Probe(MPI_ANY_SOURCE, j, comm[1], &pst));
        } else {
            while (!flag) {
                MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, j, comm[1], &flag, &pst));
                if (!flag)
                    sched_yield();
            }
        }
        int cnt = -1;
        MT_CALL(MPI_Get_count(&pst, MPI_BYTE, &cnt));
        MT_EQ("part 2: probed tag", j, pst.MPI_TAG);
        MT_TRUE(cnt >= 0 && cnt <= MAXSZ, "%s: probed count expected 0..%d got %d", names[how], MAXSZ, cnt);
        uint8_t *buf = mt_malloc(cnt);
        mtt_at("part 2: Recv of the probed message from rank %ld, tag %ld", pst.MPI_SOURCE, j);
        MT_CALL(MPI_Recv(buf, cnt, MPI_BYTE, pst.MPI_SOURCE, j, comm[1], &rst));
        struct hdr h = check_msg(names[how], buf, &pst, &rst);
        long *nx = &next[h.origin * nsend + h.thread];
        if (h.seq != *nx)
            MT_FAIL("%s: tag %d from (origin %d, thread %d) seq expected %ld got %d", names[how], j, h.origin,
                    h.thread, *nx, h.seq);
        do
            ++*nx;
        while (*nx < n_msgs && msg_tag(1, h.thread, *nx) != j);
        free(buf);
    }
    for (int o = 0; o < mt_size; o++)
        for (int u = 0; o != mt_rank && u < nsend; u++)
            if (next[o * nsend + u] >= 0 && next[o * nsend + u] < n_msgs)
                MT_FAIL("part 2: tag %d from (origin %d, thread %d) expected all received got seq %ld next", j, o,
                        u, next[o * nsend + u]);
    free(next);
}

static void worker(int t, void *arg)
{
    if (t < nsend)
        sender(t);
    else if (part == 0)
        mprobe_receiver(t - nsend);
    else
        probe_receiver(t - nsend);
}

int main(int argc, char **argv)
{
    long nums[1] = {500};
    mtt_args(argc, argv, nums, 1);
    n_msgs = nums[0];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2, "run with at least 2 ranks");
    MT_TRUE(mtt_nthreads >= 2, "--threads expected at least 2 got %d", mtt_nthreads);
    MT_TRUE(n_msgs >= 1 && n_msgs < (1L << 30), "message count expected >= 1 got %ld", n_msgs);
    nsend = mtt_nthreads / 2;
    nrecv = mtt_nthreads - nsend;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]));
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm[1]));
    size_t nseen = (size_t)mt_size * nsend * n_msgs;
    seen = mt_malloc(nseen);
    for (part = 0; part < 2; part++) {
        for (size_t k = 0; k < nseen; k++)
            atomic_store_explicit(&seen[k], 0, memory_order_relaxed);
        long want = (long)(mt_size - 1) * nsend * n_msgs;
        atomic_store(&claims, want);
        atomic_store(&delivered, 0);
        mtt_run(mtt_nthreads, worker, NULL);
        MT_EQ(part == 0 ? "part 1: messages delivered" : "part 2: messages delivered", want, atomic_load(&delivered));
        for (int o = 0; o < mt_size; o++)
            for (int u = 0; o != mt_rank && u < nsend; u++)
                for (long i = 0; i < n_msgs; i++)
                    if (atomic_load(&seen[((size_t)o * nsend + u) * n_msgs + i]) != 1)
                        MT_FAIL("part %d: message (origin %d, thread %d, seq %ld) expected delivered once got %d "
                                "times", part + 1, o, u, i, atomic_load(&seen[((size_t)o * nsend + u) * n_msgs + i]));
        mtt_at("MPI_Barrier after part %ld%.0ld", part + 1, 0);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_CALL(MPI_Comm_free(&comm[0]));
    MT_CALL(MPI_Comm_free(&comm[1]));
    free((void *)seen);
    return mtt_finish("mt_probe");
}
