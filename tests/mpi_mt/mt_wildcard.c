/* Wildcard receives shared among threads. In phase R, every worker thread of every other rank sends
 * n messages to rank R, and all worker threads of rank R receive them from a common pool:
 * - pool A, on its own duplicate of MPI_COMM_WORLD: receives with MPI_ANY_SOURCE and MPI_ANY_TAG;
 * - pool B, on a second duplicate: MPI_ANY_SOURCE with a specific tag;
 * - pool C, on a third duplicate: a specific source with MPI_ANY_TAG.
 * A receiving thread first claims one message of a pool (and of a tag or source for B and C) from
 * shared counters, then receives (Recv, Irecv+Wait or Irecv+Test), so exactly as many receives are
 * posted as there are messages and none can wait forever.
 * Senders use Isend and Issend, all started before waiting.
 * Every message carries its origin (rank, thread, seq); the status must describe it, its payload
 * must match its pattern, it must arrive on the pool it was sent to, and every message must be
 * delivered exactly once. Order across receiving threads is not defined, but receives of one thread
 * with the same matching criteria must see each sending thread's messages in increasing seq.
 * Arguments: n (messages per sending thread and phase, default 500), --threads=T. */
#include "mttest.h"

#include <sched.h>

#define NTAG 6
#define NPOOL 3

static const int sizes[] = {24, 31, 100, 1000, 8192, 16383, 16384, 16385, 40000, 70000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSZ 70000

struct hdr {
    int32_t origin, thread, seq, tag, size, pool;
};

static long n_msgs = 500;
static MPI_Comm pool_comm[NPOOL];
static const char *pool_names[NPOOL] = {"pool A (ANY_SOURCE, ANY_TAG)", "pool B (ANY_SOURCE, tag)",
                                        "pool C (source, ANY_TAG)"};

static int msg_pool(int u, long i) { return (int)((i + u) % NPOOL); }
static int msg_tag(int u, long i) { return (int)((i * 7 + u) % NTAG); }
static int msg_size(int origin, int u, long i) { return sizes[mtt_seed(origin, u, i, 1) % NSIZES]; }
static uint64_t msg_seed(int origin, int u, long i) { return mtt_seed(origin, u, i, 2); }

/* ---- state of the receiving rank in one phase ---- */
static _Atomic long claim_a;                          /* pool A: messages left to claim */
static _Atomic long claim_b[NTAG];                    /* pool B: per tag */
static _Atomic long claim_c[MTT_MAX_THREADS];         /* pool C: per source rank */
static _Atomic unsigned char *seen;                   /* [origin][thread][seq]: deliveries */
static _Atomic long received;

static int claim(_Atomic long *c)
{
    long v = atomic_load(c);
    while (v > 0)
        if (atomic_compare_exchange_weak(c, &v, v - 1))
            return 1;
    return 0;
}

/* All sends of a phase are started before any is waited for: a blocking send could wait for a
 * receive that no receiving thread can post before it gets messages queued behind that send (the
 * claims say how many messages a pool will get, not in which order they come). */
static void sender(int u, int dest)
{
    size_t off = 0;
    for (long i = 0; i < n_msgs; i++)
        off += msg_size(mt_rank, u, i);
    uint8_t *bufs = mt_malloc(off);
    MPI_Request *req = mt_malloc(sizeof(MPI_Request) * n_msgs);
    off = 0;
    for (long i = 0; i < n_msgs; i++) {
        struct hdr h = {mt_rank, u, (int)i, msg_tag(u, i), msg_size(mt_rank, u, i), msg_pool(u, i)};
        uint8_t *b = bufs + off;
        off += h.size;
        mtt_fill(b, h.size, msg_seed(mt_rank, u, i));
        memcpy(b, &h, sizeof h);
        mtt_at("sending message %ld to rank %ld", i, dest);
        if (i % 4 == 3)
            MT_CALL(MPI_Issend(b, h.size, MPI_BYTE, dest, h.tag, pool_comm[h.pool], &req[i]));
        else
            MT_CALL(MPI_Isend(b, h.size, MPI_BYTE, dest, h.tag, pool_comm[h.pool], &req[i]));
        mtt_count(1);
    }
    mtt_at("MPI_Waitall over %ld sends to rank %ld", n_msgs, dest);
    MT_CALL(MPI_Waitall((int)n_msgs, req, MPI_STATUSES_IGNORE));
    free(req);
    free(bufs);
}

/* Per receiving thread: the last seq seen from each (origin, sending thread) under each matching
 * criteria: [0] pool A, [1 + tag] pool B, [1 + NTAG] pool C. */
typedef struct {
    long last[NTAG + 2][MTT_MAX_THREADS][MTT_MAX_THREADS];
} order_t;

static void check_msg(int pool, int key, const uint8_t *buf, const MPI_Status *st, order_t *ord)
{
    struct hdr h;
    int cnt = -1;
    MT_CALL(MPI_Get_count(st, MPI_BYTE, &cnt));
    MT_TRUE(cnt >= (int)sizeof h, "%s: count expected at least a header (%d) got %d", pool_names[pool],
            (int)sizeof h, cnt);
    memcpy(&h, buf, sizeof h);
    MT_TRUE(h.origin >= 0 && h.origin < mt_size && h.origin != mt_rank && h.thread >= 0 &&
                h.thread < mtt_nthreads && h.seq >= 0 && h.seq < n_msgs,
            "%s: header expected a sent message got (origin %d, thread %d, seq %d)", pool_names[pool], h.origin,
            h.thread, h.seq);
    if (h.size != msg_size(h.origin, h.thread, h.seq) || h.tag != msg_tag(h.thread, h.seq) ||
        h.pool != msg_pool(h.thread, h.seq))
        MT_FAIL("%s: header of (origin %d, thread %d, seq %d) expected (size %d, tag %d, pool %d) got (%d, %d, %d)",
                pool_names[pool], h.origin, h.thread, h.seq, msg_size(h.origin, h.thread, h.seq),
                msg_tag(h.thread, h.seq), msg_pool(h.thread, h.seq), h.size, h.tag, h.pool);
    MT_TRUE(h.pool == pool, "%s: message (origin %d, thread %d, seq %d) sent to pool %d expected on its own "
            "communicator got on this one", pool_names[pool], h.origin, h.thread, h.seq, h.pool);
    MTT_STATUS(pool_names[pool], h.origin, h.seq, *st, h.origin, h.tag, h.size);
    if (pool == 1)
        MT_EQ("pool B: tag of the message against the tag received", key, h.tag);
    if (pool == 2)
        MT_EQ("pool C: origin of the message against the source received", key, h.origin);
    mtt_check_from(buf, sizeof h, h.size, msg_seed(h.origin, h.thread, h.seq), "payload of (origin, seq)",
                   h.origin, h.seq);
    int crit = pool == 0 ? 0 : pool == 1 ? 1 + key : 1 + NTAG;
    long *last = &ord->last[crit][h.origin][h.thread];
    if (h.seq <= *last)
        MT_FAIL("%s: message (origin %d, thread %d) seq expected after %ld (received earlier by this thread "
                "with the same criteria) got %d", pool_names[pool], h.origin, h.thread, *last, h.seq);
    *last = h.seq;
    unsigned char before = atomic_fetch_add(&seen[((size_t)h.origin * mtt_nthreads + h.thread) * n_msgs + h.seq], 1);
    MT_TRUE(before == 0, "%s: message (origin %d, thread %d, seq %d) expected delivered once got a second time",
            pool_names[pool], h.origin, h.thread, h.seq);
    atomic_fetch_add(&received, 1);
    mtt_count(1);
}

static void receiver(int t)
{
    uint8_t *buf = mt_malloc(MAXSZ);
    order_t *ord = mt_malloc(sizeof *ord);
    for (int c = 0; c < NTAG + 2; c++)
        for (int o = 0; o < MTT_MAX_THREADS; o++)
            for (int u = 0; u < MTT_MAX_THREADS; u++)
                ord->last[c][o][u] = -1;
    uint64_t rnd = mtt_seed(mt_rank, t, 77, 3) | 1;
    for (long it = 0;; it++) {
        int pool = -1, key = -1, src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG;
        for (int j = 0; j < NPOOL && pool < 0; j++) {
            int p = (int)((it + t + j) % NPOOL);
            if (p == 0 && claim(&claim_a)) {
                pool = 0;
            } else if (p == 1) {
                int k0 = (int)(mtt_rand(&rnd) % NTAG);
                for (int k = 0; k < NTAG && pool < 0; k++)
                    if (claim(&claim_b[(k0 + k) % NTAG]))
                        pool = 1, key = tag = (k0 + k) % NTAG;
            } else if (p == 2) {
                int s0 = (int)(mtt_rand(&rnd) % mt_size);
                for (int k = 0; k < mt_size && pool < 0; k++)
                    if (claim(&claim_c[(s0 + k) % mt_size]))
                        pool = 2, key = src = (s0 + k) % mt_size;
            }
        }
        if (pool < 0)
            break; /* every message is claimed */
        MPI_Status st;
        MPI_Request r;
        mtt_at(pool == 0 ? "pool A: receive (ANY_SOURCE, ANY_TAG)%.0ld%.0ld"
               : pool == 1 ? "pool B: receive (ANY_SOURCE, tag %ld)%.0ld"
                           : "pool C: receive (source %ld, ANY_TAG)%.0ld",
               key < 0 ? 0 : key, 0);
        switch (it % 3) {
        case 0: MT_CALL(MPI_Recv(buf, MAXSZ, MPI_BYTE, src, tag, pool_comm[pool], &st)); break;
        case 1:
            MT_CALL(MPI_Irecv(buf, MAXSZ, MPI_BYTE, src, tag, pool_comm[pool], &r));
            MT_CALL(MPI_Wait(&r, &st));
            break;
        case 2: {
            int flag = 0;
            MT_CALL(MPI_Irecv(buf, MAXSZ, MPI_BYTE, src, tag, pool_comm[pool], &r));
            while (!flag) {
                MT_CALL(MPI_Test(&r, &flag, &st));
                if (!flag)
                    sched_yield();
            }
            break;
        }
        }
        check_msg(pool, key, buf, &st, ord);
    }
    free(ord);
    free(buf);
}

static int phase_root;

static void worker(int t, void *arg)
{
    if (mt_rank == phase_root)
        receiver(t);
    else
        sender(t, phase_root);
}

int main(int argc, char **argv)
{
    long nums[1] = {500};
    mtt_args(argc, argv, nums, 1);
    n_msgs = nums[0];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2 && mt_size <= MTT_MAX_THREADS, "run with 2..%d ranks", MTT_MAX_THREADS);
    MT_TRUE(n_msgs >= 1 && n_msgs < (1L << 30), "message count expected >= 1 got %ld", n_msgs);
    for (int p = 0; p < NPOOL; p++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &pool_comm[p]));
    size_t nseen = (size_t)mt_size * mtt_nthreads * n_msgs;
    seen = mt_malloc(nseen);

    for (phase_root = 0; phase_root < mt_size; phase_root++) {
        if (mt_rank == phase_root) {
            /* how many messages each pool, tag and source will get */
            long a = 0, b[NTAG] = {0}, c[MTT_MAX_THREADS] = {0};
            for (int o = 0; o < mt_size; o++)
                for (int u = 0; o != mt_rank && u < mtt_nthreads; u++)
                    for (long i = 0; i < n_msgs; i++) {
                        int p = msg_pool(u, i);
                        if (p == 0)
                            a++;
                        else if (p == 1)
                            b[msg_tag(u, i)]++;
                        else
                            c[o]++;
                    }
            atomic_store(&claim_a, a);
            for (int k = 0; k < NTAG; k++)
                atomic_store(&claim_b[k], b[k]);
            for (int o = 0; o < mt_size; o++)
                atomic_store(&claim_c[o], c[o]);
            for (size_t j = 0; j < nseen; j++)
                atomic_store_explicit(&seen[j], 0, memory_order_relaxed);
            atomic_store(&received, 0);
        }
        mtt_run(mtt_nthreads, worker, NULL);
        if (mt_rank == phase_root) {
            long want = (long)(mt_size - 1) * mtt_nthreads * n_msgs;
            MT_EQ("messages received in this phase", want, atomic_load(&received));
            for (int o = 0; o < mt_size; o++)
                for (int u = 0; o != mt_rank && u < mtt_nthreads; u++)
                    for (long i = 0; i < n_msgs; i++)
                        if (atomic_load_explicit(&seen[((size_t)o * mtt_nthreads + u) * n_msgs + i],
                                                 memory_order_relaxed) != 1)
                            MT_FAIL("message (origin %d, thread %d, seq %ld) expected delivered once got %d times",
                                    o, u, i, atomic_load(&seen[((size_t)o * mtt_nthreads + u) * n_msgs + i]));
        }
        mtt_at("MPI_Barrier after phase %ld%.0ld", phase_root, 0);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int p = 0; p < NPOOL; p++)
        MT_CALL(MPI_Comm_free(&pool_comm[p]));
    free((void *)seen);
    return mtt_finish("mt_wildcard");
}
