/* Communicators and datatypes created and freed by several threads at once while requests that use
 * them are pending (the "premature release" cases of the MPICH garbage-collection paper, with threads).
 *
 * Phase 1, per thread t (each on its own duplicate parent[t] of MPI_COMM_WORLD, made in the same order
 * on every rank): every round duplicates parent[t] (and every 4th round also splits it by rank parity),
 * builds a strided datatype (vector or indexed, sizes changing by round, every 8th round large enough
 * for the rendezvous protocol), posts a receive from the left neighbour and a send to the right one on
 * the new communicator with the new datatype, frees the communicator(s) and the datatype at once, and
 * only then waits. The data must arrive exactly where the type map says, and nothing else of the
 * receive buffer may change.
 * Phase 2, objects shared by the threads of a rank: the main thread duplicates MPI_COMM_WORLD and
 * builds a contiguous and a vector type; every thread posts receives and sends with them (tag = its
 * number); once all have posted, thread 0 frees the shared communicator and types while the other
 * threads' requests are still pending; then everybody waits and checks.
 * Arguments: rounds (default 200), shared rounds (default 50), --threads=T. */
#include "mttest.h"

static long n_rounds = 200, n_shared = 50;
static MPI_Comm parent[MTT_MAX_THREADS];
static pthread_barrier_t tbar;

#define MARK ((int32_t)0x5a5a5a5a)

static int32_t value(int rank, int t, long round, size_t i)
{
    return (int32_t)(mtt_seed((uint64_t)rank, (uint64_t)t, (uint64_t)round, 7) ^ (i * 2654435761u));
}

/* The layout of round r: a vector or an indexed type of MPI_INT; n_p receives its element count.
 * disp[] (in ints) lists the type map of one element, its length is returned. */
static int make_type(long r, MPI_Datatype *type, int *disp, int *extent_ints)
{
    int big = (r % 8) == 7;
    int count = big ? 4096 : 8 + (int)(r % 13);
    int bl = 1 + (int)(r % 3);
    int stride = bl + 1 + (int)(r % 2);
    int n = 0;
    if (r % 2 == 0) {
        MT_CALL(MPI_Type_vector(count, bl, stride, MPI_INT, type));
        for (int b = 0; b < count; b++)
            for (int k = 0; k < bl; k++)
                disp[n++] = b * stride + k;
        *extent_ints = (count - 1) * stride + bl;
    } else {
        /* blocks of growing length with growing gaps */
        int lens[4096], offs[4096], pos = 0;
        for (int b = 0; b < count; b++) {
            lens[b] = 1 + (b % 3);
            offs[b] = pos;
            for (int k = 0; k < lens[b]; k++)
                disp[n++] = pos + k;
            pos += lens[b] + 1 + (b % 2);
        }
        MT_CALL(MPI_Type_indexed(count, lens, offs, MPI_INT, type));
        *extent_ints = offs[count - 1] + lens[count - 1];
    }
    MT_CALL(MPI_Type_commit(type));
    return n;
}

/* Sends n elements of the type map disp[] and receives them; buffers are checked after the wait. */
typedef struct {
    int32_t *sbuf, *rbuf;
    size_t ints;
    int left;
} xfer_t;

static void xfer_prepare(xfer_t *x, int t, long r, int ext, int nelem, int left)
{
    x->ints = (size_t)ext * (size_t)nelem;
    x->sbuf = malloc(x->ints * sizeof(int32_t));
    x->rbuf = malloc(x->ints * sizeof(int32_t));
    MT_TRUE(x->sbuf && x->rbuf, "malloc of %zu ints expected memory got NULL", x->ints);
    for (size_t i = 0; i < x->ints; i++) {
        x->sbuf[i] = value(mt_rank, t, r, i);
        x->rbuf[i] = MARK;
    }
    x->left = left;
}

/* The receive buffer holds the left neighbour's values at the type map's positions, MARK elsewhere. */
static void xfer_check(xfer_t *x, int t, long r, const int *disp, int nd, int ext, int nelem,
                       const char *what)
{
    char *hit = calloc(x->ints, 1);
    MT_TRUE(hit != NULL, "calloc expected memory got NULL");
    for (int e = 0; e < nelem; e++)
        for (int k = 0; k < nd; k++)
            hit[(size_t)e * (size_t)ext + (size_t)disp[k]] = 1;
    for (size_t i = 0; i < x->ints; i++) {
        int32_t expect = hit[i] ? value(x->left, t, r, i) : MARK;
        if (x->rbuf[i] != expect)
            MT_FAIL("%s round %ld: int %zu of %zu (%s) expected %d got %d", what, r, i, x->ints,
                    hit[i] ? "in the type map" : "a gap", expect, x->rbuf[i]);
    }
    free(hit);
    free(x->sbuf);
    free(x->rbuf);
}

static void per_thread(int t, void *arg)
{
    (void)arg;
    int *disp = malloc(sizeof(int) * 4096 * 3);
    MT_TRUE(disp != NULL, "malloc expected memory got NULL");
    for (long r = 0; r < n_rounds; r++) {
        MPI_Comm c, s = MPI_COMM_NULL;
        mtt_at("round %ld: MPI_Comm_dup%.0ld", r, 0);
        MT_CALL(MPI_Comm_dup(parent[t], &c));
        int split = (r % 4) == 3;
        if (split) {
            mtt_at("round %ld: MPI_Comm_split%.0ld", r, 0);
            MT_CALL(MPI_Comm_split(parent[t], mt_rank % 2, mt_size - mt_rank, &s));
        }
        MPI_Datatype type;
        int ext = 0;
        int nd = make_type(r, &type, disp, &ext);
        int nelem = 1 + (int)(r % 3 == 0);
        if ((r % 8) == 7)
            nelem = 1;
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        xfer_t x, y;
        xfer_prepare(&x, t, r, ext, nelem, left);
        MPI_Request req[4];
        int nreq = 0;
        MT_CALL(MPI_Irecv(x.rbuf, nelem, type, left, (int)(r & 0x7fff), c, &req[nreq++]));
        MT_CALL(MPI_Isend(x.sbuf, nelem, type, right, (int)(r & 0x7fff), c, &req[nreq++]));
        int ssize = 0, srank = 0;
        if (split) {
            /* the split communicator: ranks of one parity, ordered by descending world rank */
            MT_CALL(MPI_Comm_size(s, &ssize));
            MT_CALL(MPI_Comm_rank(s, &srank));
            int members = (mt_size + 1 - mt_rank % 2) / 2;
            MT_EQ("size of the split communicator", members, ssize);
            int sr = (srank + 1) % ssize, sl = (srank + ssize - 1) % ssize;
            /* world rank of split rank k: parity members in descending order */
            int top = (mt_size - 1) - ((mt_size - 1 - mt_rank % 2) % 2);
            int sleft_world = top - 2 * sl;
            xfer_prepare(&y, t, r + 1000000, ext, nelem, sleft_world);
            MT_CALL(MPI_Irecv(y.rbuf, nelem, type, sl, 5, s, &req[nreq++]));
            MT_CALL(MPI_Isend(y.sbuf, nelem, type, sr, 5, s, &req[nreq++]));
            MT_CALL(MPI_Comm_free(&s));
            MT_EQ("MPI_Comm_free sets the handle to MPI_COMM_NULL", 1, s == MPI_COMM_NULL);
        }
        /* premature release: the requests still use c and type */
        MT_CALL(MPI_Comm_free(&c));
        MT_CALL(MPI_Type_free(&type));
        MT_EQ("MPI_Type_free sets the handle to MPI_DATATYPE_NULL", 1, type == MPI_DATATYPE_NULL);
        mtt_at("round %ld: MPI_Waitall of %ld requests", r, nreq);
        MT_CALL(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
        xfer_check(&x, t, r, disp, nd, ext, nelem, "dup communicator");
        if (split)
            xfer_check(&y, t, r + 1000000, disp, nd, ext, nelem, "split communicator");
        mtt_count(1);
    }
    free(disp);
}

/* Phase 2: the objects are shared; thread 0 frees them while all threads' requests are pending. */
static MPI_Comm shared_comm;
static MPI_Datatype shared_contig, shared_vec;

static void shared_phase(int t, void *arg)
{
    (void)arg;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int disp[64 * 2];
    for (int b = 0, n = 0; b < 64; b++)
        for (int k = 0; k < 2; k++)
            disp[n++] = b * 3 + k;
    int cdisp[5] = {0, 1, 2, 3, 4};
    for (long r = 0; r < n_shared; r++) {
        if (t == 0) {
            MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &shared_comm));
            MT_CALL(MPI_Type_contiguous(5, MPI_INT, &shared_contig));
            MT_CALL(MPI_Type_commit(&shared_contig));
            MT_CALL(MPI_Type_vector(64, 2, 3, MPI_INT, &shared_vec));
            MT_CALL(MPI_Type_commit(&shared_vec));
        }
        mtt_at("shared round %ld: thread barrier (objects made)%.0ld", r, 0);
        mtt_barrier_wait(&tbar);
        xfer_t a, b;
        xfer_prepare(&a, t, r + 2000000, 5, 3, left);
        xfer_prepare(&b, t, r + 3000000, 64 * 3 - 1, 2, left);
        MPI_Request req[4];
        MT_CALL(MPI_Irecv(a.rbuf, 3, shared_contig, left, t, shared_comm, &req[0]));
        MT_CALL(MPI_Irecv(b.rbuf, 2, shared_vec, left, t + 1000, shared_comm, &req[1]));
        MT_CALL(MPI_Isend(a.sbuf, 3, shared_contig, right, t, shared_comm, &req[2]));
        MT_CALL(MPI_Isend(b.sbuf, 2, shared_vec, right, t + 1000, shared_comm, &req[3]));
        mtt_at("shared round %ld: thread barrier (posted)%.0ld", r, 0);
        mtt_barrier_wait(&tbar);
        if (t == 0) {
            MT_CALL(MPI_Comm_free(&shared_comm));
            MT_CALL(MPI_Type_free(&shared_contig));
            MT_CALL(MPI_Type_free(&shared_vec));
        }
        mtt_at("shared round %ld: MPI_Waitall%.0ld", r, 0);
        MT_CALL(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
        xfer_check(&a, t, r + 2000000, cdisp, 5, 5, 3, "shared contiguous type");
        xfer_check(&b, t, r + 3000000, disp, 128, 64 * 3 - 1, 2, "shared vector type");
        /* nobody makes the next round's objects before every thread is done with this round's */
        mtt_barrier_wait(&tbar);
        mtt_count(1);
    }
}

int main(int argc, char **argv)
{
    long nums[2] = {n_rounds, n_shared};
    mtt_args(argc, argv, nums, 2);
    n_rounds = nums[0];
    n_shared = nums[1];
    mtt_init(&argc, &argv);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]));
    mtt_run(mtt_nthreads, per_thread, NULL);
    mtt_barrier_init(&tbar, mtt_nthreads);
    mtt_run(mtt_nthreads, shared_phase, NULL);
    for (int t = 0; t < mtt_nthreads; t++)
        MT_CALL(MPI_Comm_free(&parent[t]));
    return mtt_finish("mt_objects");
}
