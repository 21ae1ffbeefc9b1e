/* Premature release with nonblocking collectives: the communicator, the datatypes (one per peer for
 * MPI_Ialltoallw) and a user operation are freed right after the call and before the wait; other
 * objects are created meanwhile so the collector runs. The results must be exact. */
#include "mpitest.h"

#define B 8   /* ints per peer block: a 4-element vector of stride 2 spans 7 */

static void churn(void)
{
    for (int i = 0; i < 20; i++) {
        MPI_Datatype t;
        MT_CALL(MPI_Type_contiguous(i + 1, MPI_INT, &t));
        MT_CALL(MPI_Type_free(&t));
    }
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len * 2; i++)   /* the type is 2 ints */
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n = mt_size, me = mt_rank;
    for (int round = 0; round < 20; round++) {
        /* Ialltoallw: to peer p, p+1 ints taken every other int (a vector per peer) */
        MPI_Comm c;
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_Datatype *st = malloc(sizeof(*st) * n), *rt = malloc(sizeof(*rt) * n);
        int *sc = malloc(sizeof(int) * n), *rc = malloc(sizeof(int) * n);
        int *sd = malloc(sizeof(int) * n), *rd = malloc(sizeof(int) * n);
        int *sbuf = malloc(sizeof(int) * B * n), *rbuf = malloc(sizeof(int) * B * n);
        for (int p = 0; p < n; p++) {
            int len = (p + round) % 4 + 1;
            MT_CALL(MPI_Type_vector(len, 1, 2, MPI_INT, &st[p]));
            MT_CALL(MPI_Type_commit(&st[p]));
            int rlen = (me + round) % 4 + 1;   /* what peer p sends me */
            MT_CALL(MPI_Type_contiguous(rlen, MPI_INT, &rt[p]));
            MT_CALL(MPI_Type_commit(&rt[p]));
            sc[p] = rc[p] = 1;
            sd[p] = rd[p] = (int)(sizeof(int) * B * p);
        }
        for (int i = 0; i < B * n; i++) {
            sbuf[i] = me * 1000000 + round * 1000 + i;
            rbuf[i] = -1;
        }
        MPI_Request r;
        MT_CALL(MPI_Ialltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, c, &r));
        for (int p = 0; p < n; p++) {
            MT_CALL(MPI_Type_free(&st[p]));
            MT_CALL(MPI_Type_free(&rt[p]));
        }
        MT_CALL(MPI_Comm_free(&c));
        churn();
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int p = 0; p < n; p++) {
            int rlen = (me + round) % 4 + 1, base = B * p;
            for (int k = 0; k < B; k++) {
                /* peer p's elements for me start at its block `me`, every other int */
                int expect = k < rlen ? p * 1000000 + round * 1000 + B * me + 2 * k : -1;
                MT_EQ("Ialltoallw element", expect, rbuf[base + k]);
            }
        }
        free(st), free(rt), free(sc), free(rc), free(sd), free(rd), free(sbuf), free(rbuf);

        /* Iallreduce with a user op on a derived type, on a dup; all freed before the wait */
        MPI_Comm c2;
        MPI_Datatype pair;
        MPI_Op op;
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
        MT_CALL(MPI_Type_contiguous(2, MPI_INT, &pair));
        MT_CALL(MPI_Type_commit(&pair));
        MT_CALL(MPI_Op_create(sum_fn, 1, &op));
        int in[8], out[8];
        for (int i = 0; i < 8; i++)
            in[i] = me + i * round, out[i] = -7;
        MT_CALL(MPI_Iallreduce(in, out, 4, pair, op, c2, &r));
        MT_CALL(MPI_Op_free(&op));
        MT_CALL(MPI_Type_free(&pair));
        MT_CALL(MPI_Comm_free(&c2));
        churn();
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++)
            MT_EQ("Iallreduce with a freed user op", n * (n - 1) / 2 + n * i * round, out[i]);

        /* Ibcast of a vector type freed before the wait */
        MPI_Datatype v;
        MT_CALL(MPI_Type_vector(64, 3, 5, MPI_INT, &v));
        MT_CALL(MPI_Type_commit(&v));
        int buf[64 * 5];
        int root = round % n;
        for (int i = 0; i < 64 * 5; i++)
            buf[i] = me == root ? i + round : -1;
        MT_CALL(MPI_Ibcast(buf, 1, v, root, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Type_free(&v));
        churn();
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < 64 * 5; i++)
            MT_EQ("Ibcast element", (i % 5 < 3 && i < 63 * 5 + 3) || me == root ? i + round : -1, buf[i]);
    }
    MT_CALL(MPI_Finalize());
    return 0;
}
