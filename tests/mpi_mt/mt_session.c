/* Communicators from a session's groups made by several threads at once (MPI_THREAD_MULTIPLE):
 * thread t of every rank calls MPI_Comm_create_from_group on the mpi://WORLD group of a shared
 * session with its own stringtag ("t<t>.r<i>": distinct across threads, each round new), and on
 * even rounds a second time with the thread's fixed tag "t<t>" (the same tag and group again,
 * one call after the other). Each communicator carries a ring of messages whose payload names the
 * thread and round, and an Allreduce, before it is freed: two communicators given the same context
 * id by mistake would cross their messages. The threads of a rank finish their rounds in any
 * order relative to the other ranks' threads. Half the threads also open and finalize a session of
 * their own each round. Arguments: rounds (default 20), --threads=T. */
#include "mttest.h"

static long rounds = 20;
static MPI_Session shared;

static void ring(MPI_Comm c, int t, long i, const char *what)
{
    int n, r;
    MT_CALL(MPI_Comm_size(c, &n));
    MT_CALL(MPI_Comm_rank(c, &r));
    MT_EQ(what, mt_rank, r);
    long out[3] = { r, t, i }, in[3] = { -1, -1, -1 };
    MT_CALL(MPI_Sendrecv(out, 3, MPI_LONG, (r + 1) % n, t, in, 3, MPI_LONG, (r + n - 1) % n, t, c,
                         MPI_STATUS_IGNORE));
    MT_EQ(what, (r + n - 1) % n, in[0]);
    MT_EQ(what, t, in[1]);
    MT_EQ(what, i, in[2]);
    long sum = -1, v = (long)t * 1000 + i;
    MT_CALL(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
    MT_EQ(what, v * n, sum);
}

static void worker(int t, void *arg)
{
    (void)arg;
    for (long i = 0; i < rounds; i++) {
        MPI_Session own = MPI_SESSION_NULL, s = shared;
        if (t % 2) {
            mtt_at("Session_init, round %ld%.0ld", i, 0);
            MT_CALL(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &own));
            s = own;
        }
        MPI_Group g;
        MT_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        char tag[64];
        snprintf(tag, sizeof(tag), "org.weft.mt_session.t%d.r%ld", t, i);
        MPI_Comm c, d = MPI_COMM_NULL;
        mtt_at("Comm_create_from_group, round %ld%.0ld", i, 0);
        MT_CALL(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        if (i % 2 == 0) {
            snprintf(tag, sizeof(tag), "org.weft.mt_session.t%d", t);
            MT_CALL(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &d));
        }
        MT_CALL(MPI_Group_free(&g));
        mtt_at("ring, round %ld%.0ld", i, 0);
        if (d != MPI_COMM_NULL) {
            ring(d, t + 100, i, "ring on the thread's fixed-tag communicator");
        }
        ring(c, t, i, "ring on the thread's communicator");
        MT_CALL(MPI_Comm_free(&c));
        if (d != MPI_COMM_NULL)
            MT_CALL(MPI_Comm_free(&d));
        if (own != MPI_SESSION_NULL)
            MT_CALL(MPI_Session_finalize(&own));
        mtt_count(1);
    }
}

int main(int argc, char **argv)
{
    long nums[1] = { rounds };
    mtt_args(argc, argv, nums, 1);
    rounds = nums[0];
    mtt_init(&argc, &argv);
    MT_CALL(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &shared));
    mtt_run(mtt_nthreads, worker, NULL);
    MT_CALL(MPI_Session_finalize(&shared));
    return mtt_finish("mt_session");
}
