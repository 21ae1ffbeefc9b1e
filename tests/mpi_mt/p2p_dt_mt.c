/* A thread frees the datatype and the communicator that another thread of the same rank is using,
 * inside a blocking MPI_Recv (docs/objects.md: blocking calls on user objects run on a request
 * that names them). Ranks work in pairs (rank ^ 1). In iteration i one rank of the pair is the
 * receiver R, the other the sender S (alternating):
 *   R thread 0: MPI_Recv(count elements of an indexed type T, from S, on a duplicate D)
 *   R thread 1: once thread 0 is about to call MPI_Recv, waits 50 ms, frees T and D, creates and
 *               frees more types (the collector runs), then tells S "go" on MPI_COMM_WORLD
 *   S thread 0: waits for "go", MPI_Send of its own T on its own D, then frees them
 * So the receive is pending in the library during the frees, and completes only after them, with
 * every element checked. Eager and rendezvous sizes alternate. Always 2 threads per rank.
 * Arguments: [iterations (default 8)] --weft --threads=T (ignored) --deadline=S. */
#include "mttest.h"

#define NBLK 7
static const int blens[NBLK] = { 3, 1, 4, 1, 5, 2, 6 };
static const int disps[NBLK] = { 30, 0, 10, 25, 16, 5, 40 };
#define EXTENT_D 48

static long n_iter = 8;
static int partner;
static MPI_Datatype cur_type;
static MPI_Comm cur_comm;
static long cur_count;
static int cur_seed;
static _Atomic int entering;

static MPI_Datatype make_type(void)
{
    MPI_Datatype t, r;
    MT_CALL(MPI_Type_indexed(NBLK, blens, disps, MPI_DOUBLE, &t));
    MT_CALL(MPI_Type_create_resized(t, 0, EXTENT_D * 8, &r));
    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Type_commit(&r));
    return r;
}

static double val(long e, int d, int seed)
{
    return (double)(seed * 1000003L + e * 64 + d) + 0.5;
}

static double *make_buf(long count, int seed, int fill)
{
    double *b = malloc(sizeof(double) * (size_t)count * EXTENT_D);
    for (long i = 0; i < count * EXTENT_D; i++)
        b[i] = -1.0;
    if (fill)
        for (long e = 0; e < count; e++)
            for (int k = 0; k < NBLK; k++)
                for (int j = 0; j < blens[k]; j++)
                    b[e * EXTENT_D + disps[k] + j] = val(e, disps[k] + j, seed);
    return b;
}

static void worker(int tid, void *arg)
{
    long it = (long)(intptr_t)arg;
    int receiver = (int)((mt_rank & 1) == (it & 1));
    if (receiver && tid == 0) {
        double *rbuf = make_buf(cur_count, 0, 0);
        MPI_Status st;
        MPI_Datatype t = cur_type;   /* the other thread frees its own copies of the handles */
        MPI_Comm c = cur_comm;
        mtt_at("MPI_Recv with a type freed meanwhile, iteration %ld%.0ld", it, 0);
        atomic_store(&entering, 1);
        MT_CALL(MPI_Recv(rbuf, (int)cur_count, t, partner, 7, c, &st));
        double *exp = make_buf(cur_count, cur_seed, 1);
        for (long i = 0; i < cur_count * EXTENT_D; i++)
            if (exp[i] != rbuf[i])
                MT_FAIL("iteration %ld: element %ld of %ld expected %.1f got %.1f", it, i,
                        cur_count * EXTENT_D, exp[i], rbuf[i]);
        free(exp);
        free(rbuf);
    } else if (receiver && tid == 1) {
        while (!atomic_load(&entering))
            usleep(1000);
        usleep(50000);
        mtt_at("freeing the type and communicator, iteration %ld%.0ld", it, 0);
        MPI_Datatype t = cur_type;
        MPI_Comm c = cur_comm;
        MT_CALL(MPI_Type_free(&t));
        MT_CALL(MPI_Comm_free(&c));
        for (int i = 0; i < 4; i++) {
            MPI_Datatype t = make_type();
            MT_CALL(MPI_Type_free(&t));
        }
        int go = 1;
        MT_CALL(MPI_Send(&go, 1, MPI_INT, partner, 8, MPI_COMM_WORLD));
    } else if (!receiver && tid == 0) {
        int go;
        mtt_at("waiting for go, iteration %ld%.0ld", it, 0);
        MT_CALL(MPI_Recv(&go, 1, MPI_INT, partner, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double *sbuf = make_buf(cur_count, cur_seed, 1);
        mtt_at("MPI_Send, iteration %ld%.0ld", it, 0);
        MT_CALL(MPI_Send(sbuf, (int)cur_count, cur_type, partner, 7, cur_comm));
        MT_CALL(MPI_Type_free(&cur_type));
        MT_CALL(MPI_Comm_free(&cur_comm));
        free(sbuf);
    }
}

int main(int argc, char **argv)
{
    long nums[1] = { 8 };
    mtt_args(argc, argv, nums, 1);
    n_iter = nums[0];
    mtt_init(&argc, &argv);
    MT_TRUE(mt_size % 2 == 0, "run with an even number of ranks (got %d)", mt_size);
    partner = mt_rank ^ 1;
    for (long it = 0; it < n_iter; it++) {
        cur_type = make_type();
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &cur_comm));
        cur_count = it % 2 ? 3000 : 4;   /* 528 000 bytes (rendezvous) or 704 (eager) */
        cur_seed = (int)it + 1;
        atomic_store(&entering, 0);
        mtt_run(2, worker, (void *)(intptr_t)it);
    }
    return mtt_finish("p2p_dt_mt");
}
