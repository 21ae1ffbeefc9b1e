/* Barriers and messages of several threads at once, each thread on its own communicator.
 * The main thread duplicates MPI_COMM_WORLD once per worker thread, in the same order on every rank
 * (Comm_dup is collective on MPI_COMM_WORLD); then each thread t uses its duplicate only, with the
 * same tags as every other thread:
 * - every iteration: MPI_Barrier, then a message to every other rank and as many receives with
 *   MPI_ANY_SOURCE/MPI_ANY_TAG, another MPI_Barrier (the ring's messages must not meet the
 *   wildcard receives of a slower rank), then a Sendrecv and a Sendrecv_replace around the ring.
 *   A message
 *   must come from thread t's communicator (no traffic crosses communicators) and from this very
 *   iteration: a peer's message of the next iteration cannot exist before this rank has entered the
 *   next barrier, which it does only after receiving everything of this one;
 * - barrier timing: on one host, CLOCK_MONOTONIC is common to all ranks, so no rank may leave a
 *   barrier before the last one entered it (checked when all ranks share a processor name).
 * With --dup-in-threads, each thread also duplicates its own communicator and frees the copy,
 * again and again, while the other threads do the same on theirs: collective calls on different
 * communicators from different threads, in an order that differs between ranks. The copy must work
 * like the original. At the end, the threads free their communicators concurrently.
 * Arguments: n (iterations, default 500), d (dups per thread with --dup-in-threads, default 20),
 * --threads=T. */
#include "mttest.h"

#define NSTAMP 64 /* iterations whose barrier times are checked */

struct hdr {
    int32_t thread, iter, rank, kind;
};

static long n_iter = 500, n_dup = 20;
static int dup_in_threads, same_host;
static MPI_Comm comms[MTT_MAX_THREADS];

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Checks a message received on thread t's communicator in iteration it. */
static void check_hdr(const char *what, const struct hdr *h, int t, long it, int src, int kind)
{
    if (h->thread != t || h->iter != it || h->rank != src || h->kind != kind)
        MT_FAIL("%s: message expected (thread %d, iteration %ld, rank %d, kind %d) got (%d, %d, %d, %d)", what, t,
                it, src, kind, h->thread, h->iter, h->rank, h->kind);
}

/* One iteration of thread t on communicator c. stamps: [2 * it] barrier entry, [2 * it + 1] exit. */
static void iteration(int t, MPI_Comm c, long it, int64_t *stamps)
{
    int rank = -1, size = -1;
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_CALL(MPI_Comm_size(c, &size));
    MT_EQ("MPI_Comm_rank of a duplicate", mt_rank, rank);
    MT_EQ("MPI_Comm_size of a duplicate", mt_size, size);

    mtt_at("iteration %ld: MPI_Barrier%.0ld", it, 0);
    int64_t t0 = now_ns();
    MT_CALL(MPI_Barrier(c));
    int64_t t1 = now_ns();
    if (stamps && it < NSTAMP) {
        stamps[2 * it] = t0;
        stamps[2 * it + 1] = t1;
    }

    /* everyone to everyone, received with both wildcards */
    struct hdr out = {t, (int)it, mt_rank, 1}, in[MTT_MAX_THREADS];
    MPI_Request req[MTT_MAX_THREADS];
    int nreq = 0;
    for (int p = 0; p < size; p++)
        if (p != rank)
            MT_CALL(MPI_Isend(&out, sizeof out, MPI_BYTE, p, (int)(it % 3), c, &req[nreq++]));
    int from[MTT_MAX_THREADS] = {0};
    for (int k = 0; k < size - 1; k++) {
        MPI_Status st;
        mtt_at("iteration %ld: wildcard receive %ld", it, k);
        MT_CALL(MPI_Recv(&in[0], sizeof in[0], MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
        MT_TRUE(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size && st.MPI_SOURCE != rank,
                "iteration %ld: wildcard receive source expected another rank got %d", it, st.MPI_SOURCE);
        MTT_STATUS("wildcard receive (iteration, source)", it, st.MPI_SOURCE, st, st.MPI_SOURCE, (int)(it % 3),
                   sizeof(struct hdr));
        check_hdr("wildcard receive", &in[0], t, it, st.MPI_SOURCE, 1);
        MT_EQ("messages from that source in this iteration, before this one", 0, from[st.MPI_SOURCE]);
        from[st.MPI_SOURCE]++;
    }
    mtt_at("iteration %ld: MPI_Waitall over %ld sends", it, nreq);
    MT_CALL(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
    /* a second barrier keeps the ring's messages from the wildcard receives of slower ranks */
    mtt_at("iteration %ld: second MPI_Barrier%.0ld", it, 0);
    MT_CALL(MPI_Barrier(c));

    /* around the ring: Sendrecv, then Sendrecv_replace, same tag 0 everywhere */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    struct hdr s2 = {t, (int)it, rank, 2}, r2;
    MPI_Status st;
    mtt_at("iteration %ld: MPI_Sendrecv around the ring%.0ld", it, 0);
    MT_CALL(MPI_Sendrecv(&s2, sizeof s2, MPI_BYTE, next, 0, &r2, sizeof r2, MPI_BYTE, prev, 0, c, &st));
    MTT_STATUS("Sendrecv (iteration, source)", it, prev, st, prev, 0, sizeof r2);
    check_hdr("Sendrecv", &r2, t, it, prev, 2);
    struct hdr s3 = {t, (int)it, rank, 3};
    mtt_at("iteration %ld: MPI_Sendrecv_replace around the ring%.0ld", it, 0);
    MT_CALL(MPI_Sendrecv_replace(&s3, sizeof s3, MPI_BYTE, prev, 0, next, 0, c, &st));
    MTT_STATUS("Sendrecv_replace (iteration, source)", it, next, st, next, 0, sizeof s3);
    check_hdr("Sendrecv_replace", &s3, t, it, next, 3);
    mtt_count(1);
}

/* No rank leaves barrier `it` before every rank entered it: max(entry) <= min(exit). */
static void check_stamps(int t, MPI_Comm c, const int64_t *mine, long n)
{
    int64_t *all = mt_malloc(sizeof(int64_t) * 2 * NSTAMP * mt_size);
    MPI_Request req[2 * MTT_MAX_THREADS];
    int nreq = 0;
    for (int p = 0; p < mt_size; p++) {
        if (p == mt_rank) {
            memcpy(all + (size_t)2 * NSTAMP * p, mine, sizeof(int64_t) * 2 * NSTAMP);
            continue;
        }
        MT_CALL(MPI_Irecv(all + (size_t)2 * NSTAMP * p, 2 * NSTAMP, MPI_INT64_T, p, 9, c, &req[nreq++]));
        MT_CALL(MPI_Isend(mine, 2 * NSTAMP, MPI_INT64_T, p, 9, c, &req[nreq++]));
    }
    mtt_at("exchanging barrier times, %ld requests%.0ld", nreq, 0);
    MT_CALL(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
    for (long it = 0; it < n && it < NSTAMP; it++) {
        int first_out = 0, last_in = 0;
        for (int p = 1; p < mt_size; p++) {
            if (all[(size_t)2 * NSTAMP * p + 2 * it + 1] < all[(size_t)2 * NSTAMP * first_out + 2 * it + 1])
                first_out = p;
            if (all[(size_t)2 * NSTAMP * p + 2 * it] > all[(size_t)2 * NSTAMP * last_in + 2 * it])
                last_in = p;
        }
        int64_t in = all[(size_t)2 * NSTAMP * last_in + 2 * it], out = all[(size_t)2 * NSTAMP * first_out + 2 * it + 1];
        if (out < in)
            MT_FAIL("barrier %ld of thread %d's communicator: rank %d left it %lld ns before rank %d entered it", it,
                    t, first_out, (long long)(in - out), last_in);
    }
    free(all);
}

static void worker(int t, void *arg)
{
    MPI_Comm c = comms[t];
    int64_t *stamps = mt_malloc(sizeof(int64_t) * 2 * NSTAMP);
    memset(stamps, 0, sizeof(int64_t) * 2 * NSTAMP);
    for (long it = 0; it < n_iter; it++)
        iteration(t, c, it, stamps);
    if (same_host)
        check_stamps(t, c, stamps, n_iter);
    free(stamps);

    if (dup_in_threads) {
        for (long k = 0; k < n_dup; k++) {
            MPI_Comm d = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
            mtt_at("MPI_Comm_dup of this thread's communicator, %ld of %ld", k, n_dup);
            MT_CALL(MPI_Comm_dup(c, &d));
            MT_TRUE(d != MPI_COMM_NULL && d != c, "Comm_dup in a thread expected a new communicator");
            for (long it = 0; it < 3; it++)
                iteration(t, d, it, NULL);
            if (k % 4 == 3) { /* a dup of the dup, freed first */
                mtt_at("MPI_Comm_dup of a duplicate made in this thread, %ld of %ld", k, n_dup);
                MT_CALL(MPI_Comm_dup(d, &d2));
                iteration(t, d2, 0, NULL);
                iteration(t, d, 3, NULL);
                MT_CALL(MPI_Comm_free(&d2));
                MT_TRUE(d2 == MPI_COMM_NULL, "Comm_free expected MPI_COMM_NULL in its argument");
            }
            iteration(t, c, n_iter + k, NULL); /* the original still works, beside the copy */
            mtt_at("MPI_Comm_free of a duplicate made in this thread, %ld of %ld", k, n_dup);
            MT_CALL(MPI_Comm_free(&d));
            MT_TRUE(d == MPI_COMM_NULL, "Comm_free expected MPI_COMM_NULL in its argument");
        }
    }
    mtt_at("MPI_Barrier before freeing this thread's communicator%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Barrier(c));
    mtt_at("MPI_Comm_free of this thread's communicator%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Comm_free(&comms[t]));
    MT_TRUE(comms[t] == MPI_COMM_NULL, "Comm_free expected MPI_COMM_NULL in its argument");
}

/* True when every rank runs on the host of rank 0 (CLOCK_MONOTONIC is then shared). */
static int all_on_one_host(void)
{
    char name[MPI_MAX_PROCESSOR_NAME] = "", other[MPI_MAX_PROCESSOR_NAME];
    int len = 0, same = 1;
    MT_CALL(MPI_Get_processor_name(name, &len));
    for (int p = 1; p < mt_size; p++) {
        if (mt_rank == 0) {
            MT_CALL(MPI_Recv(other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, p, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            same &= strcmp(name, other) == 0;
        } else if (mt_rank == p) {
            MT_CALL(MPI_Send(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 5, MPI_COMM_WORLD));
        }
    }
    for (int p = 1; p < mt_size; p++) {
        if (mt_rank == 0)
            MT_CALL(MPI_Send(&same, 1, MPI_INT, p, 6, MPI_COMM_WORLD));
        else if (mt_rank == p)
            MT_CALL(MPI_Recv(&same, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    return same;
}

int main(int argc, char **argv)
{
    long nums[2] = {500, 20};
    mtt_args(argc, argv, nums, 2);
    n_iter = nums[0];
    n_dup = nums[1];
    dup_in_threads = mtt_flag(argc, argv, "--dup-in-threads");
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2 && mt_size <= MTT_MAX_THREADS, "run with 2..%d ranks", MTT_MAX_THREADS);
    MT_TRUE(n_iter >= 1 && n_iter < (1L << 30) && n_dup >= 0, "counts expected n >= 1, d >= 0");
    same_host = all_on_one_host();
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    mtt_run(mtt_nthreads, worker, NULL);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_TRUE(comms[t] == MPI_COMM_NULL, "communicator of thread %d after Comm_free expected MPI_COMM_NULL", t);
    if (mt_rank == 0 && !same_host)
        printf("mt_comm: ranks on several hosts: barrier times not checked\n");
    return mtt_finish(dup_in_threads ? "mt_comm --dup-in-threads" : "mt_comm");
}
