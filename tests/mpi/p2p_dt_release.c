/* Premature release: MPI_Type_free and MPI_Comm_free while requests that use the objects are
 * pending. The requests must complete with the right data (the objects live until they are done),
 * and the freed handles must give MPI_ERR_TYPE / MPI_ERR_COMM under MPI_ERRORS_RETURN.
 *
 * The datatypes are indexed types of many irregular blocks, so their flattened form lives in
 * memory of its own that freeing the type would release (a use after free shows under ASan, and
 * in other builds as wrong data once new types reuse the memory). After each free the program
 * creates and frees more such types: object creation runs the collector's cycles.
 *
 * Cases, each at an eager and a rendezvous size, each rank with its partner (rank ^ 1, itself with
 * one rank) and with itself:
 *   1. Irecv and Isend with user types; both types freed before the waits.
 *   2. Irecv and Isend on a duplicated communicator; the communicator freed before the waits.
 *   3. Both at once.
 *   4. Persistent Send_init / Recv_init: the types freed after init; started and waited 3 times.
 *   5. Blocking MPI_Send / MPI_Recv on a user communicator and user types (pooled requests).
 * argv: [--weft]. Runs under any MPI (validated with MPICH). */
#include "mpitest.h"

#include <stdbool.h>

#define NBLK 7
static const int blens[NBLK] = { 3, 1, 4, 1, 5, 2, 6 };       /* doubles */
static const int disps[NBLK] = { 30, 0, 10, 25, 16, 5, 40 };  /* in doubles, out of order */
#define EXTENT_D 48                                          /* doubles per element (resized) */
#define PER_ELEM 22                                          /* doubles of data per element */

static int partner;

static MPI_Datatype make_type(void)
{
    MPI_Datatype t, r;
    MT_CALL(MPI_Type_indexed(NBLK, blens, disps, MPI_DOUBLE, &t));
    MT_CALL(MPI_Type_create_resized(t, 0, EXTENT_D * 8, &r));
    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Type_commit(&r));
    return r;
}

/* Object churn: the collector runs when objects are created. */
static void churn(void)
{
    MPI_Datatype t[8];
    for (int i = 0; i < 8; i++)
        t[i] = make_type();
    for (int i = 0; i < 8; i++)
        MT_CALL(MPI_Type_free(&t[i]));
    MPI_Comm c;
    MT_CALL(MPI_Comm_dup(MPI_COMM_SELF, &c));
    MT_CALL(MPI_Comm_free(&c));
}

static double val(long elem, int d, int seed)
{
    return (double)(seed * 1000003L + elem * 64 + d) + 0.25;
}

static double *make_buf(long count, int seed, bool fill_data)
{
    size_t n = (size_t)count * EXTENT_D;
    double *b = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        b[i] = -1.0;
    if (fill_data)
        for (long e = 0; e < count; e++)
            for (int k = 0; k < NBLK; k++)
                for (int j = 0; j < blens[k]; j++)
                    b[e * EXTENT_D + disps[k] + j] = val(e, disps[k] + j, seed);
    return b;
}

static void check_buf(const char *what, const double *b, long count, int seed)
{
    double *exp = make_buf(count, seed, true);
    for (size_t i = 0; i < (size_t)count * EXTENT_D; i++)
        if (exp[i] != b[i])
            MT_FAIL("%s: element %zu of the receive buffer (%ld elements) expected %.2f got %.2f",
                    what, i, count, exp[i], b[i]);
    free(exp);
}

static void check_freed_type(MPI_Datatype t, MPI_Comm comm)
{
    double x[EXTENT_D];
    MT_CLASS_EQ("MPI_Send with a freed datatype", MPI_ERR_TYPE,
                MPI_Send(x, 1, t, mt_rank, 0, comm));
    MPI_Request r;
    MT_CLASS_EQ("MPI_Irecv with a freed datatype", MPI_ERR_TYPE,
                MPI_Irecv(x, 1, t, mt_rank, 0, comm, &r));
}

static void check_freed_comm(MPI_Comm c)
{
    int x = 0;
    MT_CLASS_EQ("MPI_Send on a freed communicator", MPI_ERR_COMM,
                MPI_Send(&x, 1, MPI_INT, 0, 0, c));
    MPI_Request r;
    MT_CLASS_EQ("MPI_Irecv on a freed communicator", MPI_ERR_COMM,
                MPI_Irecv(&x, 1, MPI_INT, 0, 0, c, &r));
}

/* Cases 1-3: free_type / free_comm after the Isend and Irecv are started. */
static void isend_irecv(long count, int peer, bool free_type, bool free_comm, int seed)
{
    MPI_Comm c;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Datatype st = make_type(), rt = make_type();
    double *sbuf = make_buf(count, seed + mt_rank, true), *rbuf = make_buf(count, 0, false);
    MPI_Request req[2];
    MT_CALL(MPI_Irecv(rbuf, (int)count, rt, peer, seed, c, &req[0]));
    MT_CALL(MPI_Isend(sbuf, (int)count, st, peer, seed, c, &req[1]));
    MPI_Datatype st_h = st, rt_h = rt;
    MPI_Comm c_h = c;
    if (free_type) {
        MT_CALL(MPI_Type_free(&st));
        MT_CALL(MPI_Type_free(&rt));
    }
    if (free_comm)
        MT_CALL(MPI_Comm_free(&c));
    churn();
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    churn();
    MPI_Status stat[2];
    MT_CALL(MPI_Waitall(2, req, stat));
    char what[128];
    snprintf(what, sizeof(what), "Isend/Irecv of %ld elements with %s%s freed", count,
             free_type ? "the types" : "", free_comm ? (free_type ? " and the communicator" :
                                                        "the communicator") : "");
    check_buf(what, rbuf, count, seed + peer);
    MT_EQ(what, peer, stat[0].MPI_SOURCE);
    int n;
    MT_CALL(MPI_Get_count(&stat[0], MPI_DOUBLE, &n));
    MT_EQ(what, count * PER_ELEM, n);
    /* Using a freed handle is erroneous; Weft reports it (docs/objects.md), others may crash. */
    if (free_type && mt_weft)
        check_freed_type(st_h, MPI_COMM_WORLD);
    else if (!free_type) {
        MT_CALL(MPI_Type_free(&st));
        MT_CALL(MPI_Type_free(&rt));
    }
    if (free_comm && mt_weft)
        check_freed_comm(c_h);
    else if (!free_comm)
        MT_CALL(MPI_Comm_free(&c));
    (void)rt_h;
    free(sbuf);
    free(rbuf);
}

/* Case 4: persistent requests outlive their freed types. */
static void persistent(long count, int peer, int seed)
{
    MPI_Datatype st = make_type(), rt = make_type();
    double *sbuf = make_buf(count, seed + mt_rank, true), *rbuf = make_buf(count, 0, false);
    MPI_Request req[2];
    MT_CALL(MPI_Recv_init(rbuf, (int)count, rt, peer, seed, MPI_COMM_WORLD, &req[0]));
    MT_CALL(MPI_Send_init(sbuf, (int)count, st, peer, seed, MPI_COMM_WORLD, &req[1]));
    MT_CALL(MPI_Type_free(&st));
    MT_CALL(MPI_Type_free(&rt));
    for (int it = 0; it < 3; it++) {
        churn();
        for (size_t i = 0; i < (size_t)count * EXTENT_D; i++)
            rbuf[i] = -1.0;
        MT_CALL(MPI_Startall(2, req));
        MT_CALL(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        check_buf("persistent requests with their types freed", rbuf, count, seed + peer);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_CALL(MPI_Request_free(&req[0]));
    MT_CALL(MPI_Request_free(&req[1]));
    free(sbuf);
    free(rbuf);
}

/* Case 5: blocking calls on user objects. */
static void blocking(long count, int peer, int seed)
{
    MPI_Comm c;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_Datatype t = make_type();
    double *sbuf = make_buf(count, seed + mt_rank, true), *rbuf = make_buf(count, 0, false);
    MPI_Status st;
    if (peer == mt_rank) {
        MPI_Request r;
        MT_CALL(MPI_Irecv(rbuf, (int)count, t, peer, seed, c, &r));
        MT_CALL(MPI_Send(sbuf, (int)count, t, peer, seed, c));
        MT_CALL(MPI_Wait(&r, &st));
    } else if (mt_rank < peer) {
        MT_CALL(MPI_Send(sbuf, (int)count, t, peer, seed, c));
        MT_CALL(MPI_Recv(rbuf, (int)count, t, peer, seed, c, &st));
    } else {
        MT_CALL(MPI_Recv(rbuf, (int)count, t, peer, seed, c, &st));
        MT_CALL(MPI_Send(sbuf, (int)count, t, peer, seed, c));
    }
    check_buf("blocking Send/Recv on a user communicator and datatype", rbuf, count, seed + peer);
    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Comm_free(&c));
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    partner = mt_size == 1 ? 0 : (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    long counts[] = { 4, 2000 };   /* 704 bytes (eager), 352 000 bytes (rendezvous) */
    int seed = 1;
    for (int self = 0; self < 2; self++) {
        int peer = self ? mt_rank : partner;
        for (int z = 0; z < 2; z++) {
            isend_irecv(counts[z], peer, true, false, seed++);
            isend_irecv(counts[z], peer, false, true, seed++);
            isend_irecv(counts[z], peer, true, true, seed++);
            persistent(counts[z], peer, seed++);
            blocking(counts[z], peer, seed++);
        }
    }
    if (mt_rank == 0)
        printf("p2p_dt_release: passed on %d ranks\n", mt_size);
    MPI_Finalize();
    return 0;
}
