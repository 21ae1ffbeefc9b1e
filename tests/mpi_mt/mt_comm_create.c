/* Threads creating and freeing communicators concurrently while other threads communicate.
 * The main thread duplicates MPI_COMM_WORLD once per worker (same order on every rank); thread t
 * then works on its duplicate only, so the ranks call collectives on different parents in
 * different orders:
 * - even threads, round k, make a communicator from their parent by Comm_dup, Comm_idup,
 *   Comm_split (parity, reversed), Comm_create (the even ranks), Comm_create_group (reversed, the
 *   thread's tag), Comm_split_type(SHARED) or an intercommunicator (Intercomm_create between the
 *   two halves, then Intercomm_merge), check its size, rank and members, pass a ring of messages on
 *   it (every message checked: thread, round, origin), and free it; with --free-pending, every
 *   fourth round the free comes while a receive and a send on it are still pending;
 * - odd threads pass rings of messages on their parent all the while, same checks;
 * then every thread calls Comm_create_group on MPI_COMM_WORLD at once, each with its own tag.
 * Arguments: n (rounds per thread, default 60), --free-pending, --no-create-group (for MPICH
 * 4.0.2, whose Comm_create_group crashes on a duplicated parent), --threads=T. */
#include "mttest.h"

static long n_rounds = 60;
static int free_pending; /* --free-pending */
static int no_create_group; /* --no-create-group: MPICH 4.0.2 crashes in Comm_create_group on a
                               duplicate of MPI_COMM_WORLD (even single-threaded) */
static MPI_Comm parents[MTT_MAX_THREADS];
static MPI_Group world_group;

struct msg {
    int32_t thread, round, world, magic;
};

/* One message around the ring of c (ranks' world ranks in want[]), tag `tag`, checked. With
 * free_early, the communicator is freed while the receive and the send are pending. */
static void ring(const char *what, MPI_Comm *c, int t, long k, const int *want, int tag, int free_early)
{
    int rank = -1, size = -1;
    MT_CALL(MPI_Comm_rank(*c, &rank));
    MT_CALL(MPI_Comm_size(*c, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    struct msg out = {t, (int)k, mt_rank, 0x5eed}, in = {-1, -1, -1, -1};
    MPI_Request rq[2];
    MPI_Status st[2];
    MT_CALL(MPI_Irecv(&in, sizeof in, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, *c, &rq[0]));
    MT_CALL(MPI_Isend(&out, sizeof out, MPI_BYTE, right, tag, *c, &rq[1]));
    if (free_early)
        MT_CALL(MPI_Comm_free(c));
    mtt_at("ring: waiting, round %ld, tag %ld", k, tag);
    MT_CALL(MPI_Waitall(2, rq, st));
    if (st[0].MPI_SOURCE != left || st[0].MPI_TAG != tag || in.thread != t || in.round != (int)k ||
        in.world != want[left] || in.magic != 0x5eed)
        MT_FAIL("%s round %ld: message expected (source %d, tag %d, thread %d, round %ld, world %d) got (%d, %d, %d, "
                "%d, %d)", what, k, left, tag, t, k, want[left], st[0].MPI_SOURCE, st[0].MPI_TAG, in.thread,
                in.round, in.world);
    mtt_count(1);
}

/* c must hold want[0..n) (world ranks) in order. */
static void check_members(const char *what, MPI_Comm c, const int *want, int n, long k)
{
    int size = -1, rank = -1, idx[MTT_MAX_THREADS], got[MTT_MAX_THREADS];
    MT_CALL(MPI_Comm_size(c, &size));
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_TRUE(size == n && rank >= 0 && rank < n && want[rank] == mt_rank,
            "%s round %ld: size %d rank %d expected size %d", what, k, size, rank, n);
    MPI_Group g;
    MT_CALL(MPI_Comm_group(c, &g));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MT_CALL(MPI_Group_translate_ranks(g, n, idx, world_group, got));
    MT_CALL(MPI_Group_free(&g));
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            MT_FAIL("%s round %ld: member %d expected world rank %d got %d", what, k, i, want[i], got[i]);
}

static void creator(int t, MPI_Comm parent)
{
    int n = mt_size, want[MTT_MAX_THREADS], all[MTT_MAX_THREADS];
    for (int i = 0; i < n; i++)
        all[i] = i;
    for (long k = 0; k < n_rounds; k++) {
        MPI_Comm c = MPI_COMM_NULL;
        int op = (int)(k % 7), free_early = free_pending && k % 4 == 3, nw = n;
        const char *what = "?";
        memcpy(want, all, sizeof(int) * n);
        mtt_at("creating a communicator, op %ld round %ld", op, k);
        switch (op) {
        case 0:
            what = "Comm_dup";
            MT_CALL(MPI_Comm_dup(parent, &c));
            break;
        case 1: {
            what = "Comm_idup";
            MPI_Request rq;
            MT_CALL(MPI_Comm_idup(parent, &c, &rq));
            ring("parent during Comm_idup", &parent, t, k, all, 1, 0);
            MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            break;
        }
        case 2:
            what = "Comm_split";
            MT_CALL(MPI_Comm_split(parent, mt_rank % 2, -mt_rank, &c));
            nw = 0;
            for (int i = n - 1; i >= 0; i--)
                if (i % 2 == mt_rank % 2)
                    want[nw++] = i;
            break;
        case 3: {
            what = "Comm_create";
            MPI_Group g;
            int r[1][3] = {{0, n - 1, 2}};
            MT_CALL(MPI_Group_range_incl(world_group, 1, r, &g));
            MT_CALL(MPI_Comm_create(parent, g, &c));
            MT_CALL(MPI_Group_free(&g));
            nw = 0;
            for (int i = 0; i < n; i += 2)
                want[nw++] = i;
            break;
        }
        case 4: {
            if (no_create_group) {
                what = "Comm_dup instead of Comm_create_group";
                MT_CALL(MPI_Comm_dup(parent, &c));
                break;
            }
            what = "Comm_create_group";
            MPI_Group g;
            int r[1][3] = {{n - 1, 0, -1}};
            MT_CALL(MPI_Group_range_incl(world_group, 1, r, &g));
            MT_CALL(MPI_Comm_create_group(parent, g, t, &c));
            MT_CALL(MPI_Group_free(&g));
            for (int i = 0; i < n; i++)
                want[i] = n - 1 - i;
            break;
        }
        case 5:
            what = "Comm_split_type";
            MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c));
            nw = 0;   /* the ranks of this node, in world order (equal keys) */
            for (int i = 0; i < n; i++)
                if (mt_same_node(i, mt_rank))
                    want[nw++] = i;
            break;
        case 6: {
            /* intercommunicator between the halves, messages across, then merged (upper half high) */
            what = "Intercomm_merge";
            int nlow = n / 2, low = mt_rank < nlow;
            MPI_Comm half, ic;
            MT_CALL(MPI_Comm_split(parent, low, 0, &half));
            MT_CALL(MPI_Intercomm_create(half, 0, parent, low ? nlow : 0, 100 + t, &ic));
            int rsize = -1, lrank = -1, lsize = -1;
            MT_CALL(MPI_Comm_remote_size(ic, &rsize));
            MT_CALL(MPI_Comm_rank(ic, &lrank));
            MT_CALL(MPI_Comm_size(ic, &lsize));
            MT_TRUE(rsize == (low ? n - nlow : nlow) && lsize == (low ? nlow : n - nlow),
                    "Intercomm_create round %ld: sizes %d/%d", k, lsize, rsize);
            struct msg out = {t, (int)k, mt_rank, 0x1c}, in;
            MPI_Request rq;
            MT_CALL(MPI_Isend(&out, sizeof out, MPI_BYTE, lrank % rsize, 2, ic, &rq));
            for (int s = 0; s < rsize; s++) {
                if (s % lsize != lrank)
                    continue;
                MPI_Status st;
                MT_CALL(MPI_Recv(&in, sizeof in, MPI_BYTE, s, 2, ic, &st));
                int w = low ? nlow + s : s;
                MT_TRUE(in.thread == t && in.round == (int)k && in.world == w && in.magic == 0x1c,
                        "across the intercommunicator round %ld: from %d got (%d, %d, %d)", k, w, in.thread,
                        in.round, in.world);
            }
            MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MT_CALL(MPI_Intercomm_merge(ic, !low, &c));
            MT_CALL(MPI_Comm_free(&ic));
            MT_CALL(MPI_Comm_free(&half));
            break;
        }
        }
        if (c == MPI_COMM_NULL) {
            MT_TRUE(op == 3 && mt_rank % 2, "%s round %ld: MPI_COMM_NULL unexpected", what, k);
            continue;
        }
        check_members(what, c, want, nw, k);
        mtt_at("ring on a new communicator, op %ld round %ld", op, k);
        ring(what, &c, t, k, want, 3, free_early);
        if (!free_early)
            MT_CALL(MPI_Comm_free(&c));
        MT_TRUE(c == MPI_COMM_NULL, "Comm_free expected MPI_COMM_NULL");
    }
}

static void worker(int t, void *arg)
{
    int all[MTT_MAX_THREADS];
    for (int i = 0; i < mt_size; i++)
        all[i] = i;
    if (t % 2 == 0)
        creator(t, parents[t]);
    else
        for (long k = 0; k < 4 * n_rounds; k++)
            ring("parent", &parents[t], t, k, all, (int)(k % 5), 0);
    MT_CALL(MPI_Comm_free(&parents[t]));
}

/* Second phase: every thread calls Comm_create_group on MPI_COMM_WORLD itself, concurrently with
 * the others, told apart only by its tag (the thread number); the group is the world reversed for
 * even threads and the world for odd ones, so a mixed-up context id would show in the members. */
static void same_parent(int t, void *arg)
{
    int n = mt_size, want[MTT_MAX_THREADS];
    for (int i = 0; i < n; i++)
        want[i] = t % 2 ? i : n - 1 - i;
    MPI_Group g;
    int r[1][3] = {{t % 2 ? 0 : n - 1, t % 2 ? n - 1 : 0, t % 2 ? 1 : -1}};
    MT_CALL(MPI_Group_range_incl(world_group, 1, r, &g));
    for (long k = 0; k < n_rounds / 4 + 1; k++) {
        MPI_Comm c;
        mtt_at("Comm_create_group on MPI_COMM_WORLD, round %ld, tag %ld", k, t);
        MT_CALL(MPI_Comm_create_group(MPI_COMM_WORLD, g, t, &c));
        check_members("Comm_create_group on a shared parent", c, want, n, k);
        ring("Comm_create_group on a shared parent", &c, t, k, want, 4, 0);
        MT_CALL(MPI_Comm_free(&c));
    }
    MT_CALL(MPI_Group_free(&g));
}

int main(int argc, char **argv)
{
    long nums[1] = {60};
    mtt_args(argc, argv, nums, 1);
    n_rounds = nums[0];
    free_pending = mtt_flag(argc, argv, "--free-pending");
    no_create_group = mtt_flag(argc, argv, "--no-create-group");
    mtt_init(&argc, &argv);
    mt_nodes_init();
    MT_TRUE(mt_size >= 2 && mt_size <= MTT_MAX_THREADS, "run with 2..%d ranks", MTT_MAX_THREADS);
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &parents[t]));
    mtt_run(mtt_nthreads, worker, NULL);
    if (!no_create_group)
        mtt_run(mtt_nthreads, same_parent, NULL);
    MT_CALL(MPI_Group_free(&world_group));
    return mtt_finish("mt_comm_create");
}
