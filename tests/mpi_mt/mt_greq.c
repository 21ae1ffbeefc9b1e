/* Generalized requests completed from other threads (MPI 4.1 section 13.2): a worker starts a
 * generalized request, hands it to a "completer" thread that calls MPI_Grequest_complete after a
 * short delay, and waits for it with MPI_Wait, MPI_Waitall (with a point-to-point receive),
 * MPI_Waitany or a MPI_Test loop. The waiter must make progress and not hang: the waits sleep
 * (on an oversubscribed machine they must not burn a core either), and the completer's call must
 * wake them. Also MPI_Request_free racing with MPI_Grequest_complete: free_fn runs exactly once.
 * Arguments: [iterations per worker]. */
#include "mttest.h"

static long n_iter = 200;

typedef struct {
    _Atomic int queries, frees;
    int id;
} gstate_t;

static int q_fn(void *extra, MPI_Status *st)
{
    gstate_t *g = extra;
    atomic_fetch_add(&g->queries, 1);
    MPI_Status_set_source(st, g->id);
    MPI_Status_set_tag(st, 7);
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}

static int f_fn(void *extra)
{
    gstate_t *g = extra;
    atomic_fetch_add(&g->frees, 1);
    return MPI_SUCCESS;
}

static int c_fn(void *extra, int complete)
{
    return MPI_SUCCESS;
}

/* One pending completion: a worker posts it, its completer thread completes it. */
typedef struct {
    _Atomic(MPI_Request) req;   /* MPI_REQUEST_NULL: nothing to complete */
    _Atomic int delay_us;
    _Atomic int stop;
} mailbox_t;

static mailbox_t boxes[MTT_MAX_THREADS];

static void *completer_main(void *p)
{
    mailbox_t *b = p;
    mtt_tid = -3;
    for (;;) {
        MPI_Request r = atomic_load(&b->req);
        if (r == MPI_REQUEST_NULL) {
            if (atomic_load(&b->stop))
                return NULL;
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
            continue;
        }
        int us = atomic_load(&b->delay_us);
        if (us) {
            struct timespec ts = {0, (long)us * 1000};
            nanosleep(&ts, NULL);
        }
        atomic_store(&b->req, MPI_REQUEST_NULL);
        MT_CALL(MPI_Grequest_complete(r));
    }
}

static void post(mailbox_t *b, MPI_Request r, int delay_us)
{
    atomic_store(&b->delay_us, delay_us);
    atomic_store(&b->req, r);
}

static void worker(int tid, void *arg)
{
    mailbox_t *b = &boxes[tid];
    atomic_store(&b->req, MPI_REQUEST_NULL);   /* not 0 in the standard ABI */
    pthread_t th;
    MT_EQ("pthread_create", 0, pthread_create(&th, NULL, completer_main, b));
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Comm comm = ((MPI_Comm *)arg)[tid];
    for (long i = 0; i < n_iter; i++) {
        gstate_t g = {.id = tid};
        MPI_Request r[2];
        MPI_Status st[2];
        int delay = (int)(i % 4 == 0 ? 2000 : i % 7);   /* sometimes long enough to sleep */
        mtt_at("iteration %ld, kind %ld", i, i % 5);
        MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g, &r[0]));
        switch (i % 5) {
        case 0:
            post(b, r[0], delay);
            MT_CALL(MPI_Wait(&r[0], &st[0]));
            MT_EQ("status source from query_fn", tid, st[0].MPI_SOURCE);
            break;
        case 1: {
            int x = (int)i, y = -1;
            MT_CALL(MPI_Irecv(&y, 1, MPI_INT, left, (int)i, comm, &r[1]));
            post(b, r[0], delay);
            MT_CALL(MPI_Send(&x, 1, MPI_INT, right, (int)i, comm));
            MT_CALL(MPI_Waitall(2, r, st));
            MT_EQ("message in the Waitall", (int)i, y);
            MT_EQ("status tag from query_fn", 7, st[0].MPI_TAG);
            break;
        }
        case 2: {
            int idx = -1;
            post(b, r[0], delay);
            MT_CALL(MPI_Waitany(1, r, &idx, &st[0]));
            MT_EQ("Waitany index", 0, idx);
            break;
        }
        case 3: {
            int flag = 0;
            post(b, r[0], delay);
            while (!flag)
                MT_CALL(MPI_Test(&r[0], &flag, &st[0]));
            break;
        }
        default: {
            /* MPI_Request_free racing with the completion: free_fn once, no query */
            MPI_Request keep = r[0];
            post(b, keep, (int)(i % 3));
            MT_CALL(MPI_Request_free(&r[0]));
            while (atomic_load(&b->req) != MPI_REQUEST_NULL)
                sched_yield();
            /* the completer's call may still be returning: wait for free_fn */
            for (int k = 0; k < 100000 && atomic_load(&g.frees) == 0; k++)
                sched_yield();
            MT_EQ("free_fn calls (Request_free racing Grequest_complete)", 1, atomic_load(&g.frees));
            MT_EQ("query_fn calls of a freed request", 0, atomic_load(&g.queries));
            continue;
        }
        }
        MT_EQ("free_fn calls", 1, atomic_load(&g.frees));
        MT_EQ("query_fn calls", 1, atomic_load(&g.queries));
    }
    atomic_store(&b->stop, 1);
    pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
    long nums[1] = {n_iter};
    mtt_args(argc, argv, nums, 1);
    n_iter = nums[0];
    mtt_init(&argc, &argv);
    MPI_Comm comms[MTT_MAX_THREADS];
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    mtt_run(mtt_nthreads, worker, comms);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_free(&comms[t]));
    return mtt_finish("mt_greq");
}
