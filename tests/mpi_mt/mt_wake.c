/* Waking the right thread when more threads wait than there are cores (docs/progress.md, "Waiting").
 * Ranks pair up (2p with 2p+1; an odd last rank only takes part in the barriers).
 * - 1toN: worker 0 of the even rank pings the T workers of the odd rank in turn (message k goes to
 *   worker k mod T on tag TAG + k mod T) and waits for each pong; the odd rank's T workers wait in
 *   MPI_Recv (or MPI_Irecv + MPI_Wait, alternately) for theirs, so T-1 of them are always waiting
 *   and the one a message is for must be found among them.
 * - NtoN: worker t of the even rank ping-pongs with worker t of the odd rank, all pairs at once.
 * Every 16th ping is sent after a pause of 0.2 to 2 ms, so waiters get past their spin and sleep
 * (on the doorbell, on their own wait object, handing the doorbell over) and must be woken.
 * Each ping carries its sequence number k; each pong is 3k + worker, checked by the pinging thread,
 * and every worker checks it gets its own pings in order and all of them.
 * Arguments: n (pings per phase, default 2000), --threads=T. Correctness only: no timing is checked. */
#include "mttest.h"

#include <time.h>

#define TAG 300

static long n_msgs = 2000;
static int partner = -1, pinger;   /* pinger: this rank sends the pings */

static void pause_some(uint64_t *rs, long k)
{
    if (k % 16 != 15)
        return;
    long us = 200 + (long)(mtt_rand(rs) % 1800);
    struct timespec ts = { 0, us * 1000 };
    nanosleep(&ts, NULL);
}

static void recv_one(long *v, int tag, long k)
{
    if (k & 1) {
        MPI_Request r;
        MT_CALL(MPI_Irecv(v, 1, MPI_LONG, partner, tag, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        MT_CALL(MPI_Recv(v, 1, MPI_LONG, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
}

/* The pinging side of messages k = first, first + step, ... < n_msgs, worker w of the peer. */
static void ping_loop(int tid, long first, long step, int fixed_w)
{
    uint64_t rs = mtt_seed((uint64_t)mt_rank, (uint64_t)tid, 7, 0) | 1;
    for (long k = first; k < n_msgs; k += step) {
        int w = fixed_w >= 0 ? fixed_w : (int)(k % mtt_nthreads);
        pause_some(&rs, k);
        long v = k, got = -1;
        mtt_at("ping %ld to worker %ld", k, w);
        MT_CALL(MPI_Send(&v, 1, MPI_LONG, partner, TAG + w, MPI_COMM_WORLD));
        mtt_at("pong %ld from worker %ld", k, w);
        recv_one(&got, TAG + w, k);
        MT_EQ("pong value (3 * ping + worker)", 3 * k + w, got);
        mtt_count(k);
    }
}

/* The echoing side: worker tid gets pings first, first + step, ... in order and answers each. */
static void echo_loop(int tid, long first, long step)
{
    for (long k = first; k < n_msgs; k += step) {
        long v = -1;
        mtt_at("waiting for ping %ld%.0ld", k, 0);
        recv_one(&v, TAG + tid, k);
        MT_EQ("ping sequence number", k, v);
        v = 3 * v + tid;
        MT_CALL(MPI_Send(&v, 1, MPI_LONG, partner, TAG + tid, MPI_COMM_WORLD));
        mtt_count(k);
    }
}

static void worker_1ton(int tid, void *arg)
{
    (void)arg;
    if (partner < 0)
        return;
    if (pinger) {
        if (tid == 0)
            ping_loop(tid, 0, 1, -1);
    } else {
        echo_loop(tid, tid, mtt_nthreads);
    }
}

static void worker_nton(int tid, void *arg)
{
    (void)arg;
    if (partner < 0)
        return;
    if (pinger)
        ping_loop(tid, 0, 1, tid);
    else
        echo_loop(tid, 0, 1);
}

int main(int argc, char **argv)
{
    long nums[1] = {2000};
    mtt_args(argc, argv, nums, 1);
    n_msgs = nums[0];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size >= 2, "run with at least 2 ranks");
    MT_TRUE(n_msgs >= 1 && n_msgs < (1L << 30), "ping count expected >= 1 got %ld", n_msgs);
    pinger = mt_rank % 2 == 0;
    partner = pinger ? mt_rank + 1 : mt_rank - 1;
    if (partner >= mt_size)
        partner = -1;
    mtt_run(mtt_nthreads, worker_1ton, NULL);
    mtt_at("MPI_Barrier after 1toN%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    mtt_run(mtt_nthreads, worker_nton, NULL);
    return mtt_finish("mt_wake");
}
