/* The collectives that go hierarchical across nodes (Barrier, Bcast, Reduce, Allreduce,
 * Allgather), blocking and nonblocking, checked against values every rank computes on its own:
 * several counts, int / double / a strided derived type, every root, MPI_IN_PLACE, a commutative
 * and a non-commutative (2x2 matrix product) user op; on MPI_COMM_WORLD, on a communicator with
 * the ranks in reverse order (nodes still consecutive blocks) and on one with the ranks dealt
 * round-robin (nodes interleaved). Argument: the largest count. tests/ofi/coll_hier.sh checks from
 * WEFT_DEBUG's log that the hierarchical path ran (or did not). */
#include "mpitest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_nb;   /* nonblocking forms */

static int val(int rank, int i, int salt)
{
    return (rank + 1) * 1000 + i * 7 + salt;
}

static void wait_or(MPI_Request *r)
{
    if (g_nb)
        MT_CALL(MPI_Wait(r, MPI_STATUS_IGNORE));
}

/* ---- bcast: int, double, strided vector; every root ---- */
static void t_bcast(MPI_Comm c, int count)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    MPI_Datatype vec;
    MT_CALL(MPI_Type_vector(count ? count : 1, 1, 2, MPI_INT, &vec));
    MT_CALL(MPI_Type_commit(&vec));
    int *ib = malloc(sizeof(int) * (size_t)(2 * count + 2));
    double *db = malloc(sizeof(double) * (size_t)(count + 1));
    for (int root = 0; root < n; root++) {
        MPI_Request r;
        for (int i = 0; i < count; i++)
            ib[i] = me == root ? val(root, i, 1) : -1;
        if (g_nb) MT_CALL(MPI_Ibcast(ib, count, MPI_INT, root, c, &r)); else MT_CALL(MPI_Bcast(ib, count, MPI_INT, root, c));
        wait_or(&r);
        for (int i = 0; i < count; i++)
            MT_EQ("bcast int", val(root, i, 1), ib[i]);
        for (int i = 0; i < count; i++)
            db[i] = me == root ? val(root, i, 2) + 0.5 : -1;
        if (g_nb) MT_CALL(MPI_Ibcast(db, count, MPI_DOUBLE, root, c, &r)); else MT_CALL(MPI_Bcast(db, count, MPI_DOUBLE, root, c));
        wait_or(&r);
        for (int i = 0; i < count; i++)
            MT_TRUE(db[i] == val(root, i, 2) + 0.5, "bcast double [%d] = %g", i, db[i]);
        if (count) {
            for (int i = 0; i < 2 * count; i++)
                ib[i] = me == root ? val(root, i, 3) : -1;
            if (g_nb) MT_CALL(MPI_Ibcast(ib, 1, vec, root, c, &r)); else MT_CALL(MPI_Bcast(ib, 1, vec, root, c));
            wait_or(&r);
            for (int i = 0; i < 2 * count; i++)
                MT_EQ("bcast vector", i % 2 == 0 || me == root ? val(root, i, 3) : -1, ib[i]);
        }
    }
    MT_CALL(MPI_Type_free(&vec));
    free(ib);
    free(db);
}

/* ---- reductions: sum (int, double), a non-commutative user op ---- */

/* 2x2 matrices of unsigned (mod 2^32), 4 elements each: inout = in x inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int m = 0; m + 3 < *len; m += 4) {
        unsigned r0 = a[m] * b[m] + a[m + 1] * b[m + 2], r1 = a[m] * b[m + 1] + a[m + 1] * b[m + 3];
        unsigned r2 = a[m + 2] * b[m] + a[m + 3] * b[m + 2];
        unsigned r3 = a[m + 2] * b[m + 1] + a[m + 3] * b[m + 3];
        b[m] = r0, b[m + 1] = r1, b[m + 2] = r2, b[m + 3] = r3;
    }
}

static void mat_of(int rank, int m, unsigned *x)
{
    x[0] = (unsigned)(rank + 2);
    x[1] = (unsigned)(m + 1);
    x[2] = (unsigned)(rank * 3 + 1);
    x[3] = (unsigned)(m % 5);
}

static void t_reduce(MPI_Comm c, int count, MPI_Op noncomm)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int *in = malloc(sizeof(int) * (size_t)(count + 1)), *out = malloc(sizeof(int) * (size_t)(count + 1));
    double *din = malloc(sizeof(double) * (size_t)(count + 1)), *dout = malloc(sizeof(double) * (size_t)(count + 1));
    int mc = (count / 4) * 4;   /* matrices */
    unsigned *uin = malloc(sizeof(unsigned) * (size_t)(mc + 4)), *uout = malloc(sizeof(unsigned) * (size_t)(mc + 4));
    unsigned *uexp = malloc(sizeof(unsigned) * (size_t)(mc + 4));
    for (int m = 0; m < mc; m += 4) {   /* expected: rank 0's x rank 1's x ... */
        mat_of(0, m, &uexp[m]);
        for (int r = 1; r < n; r++) {
            unsigned x[4], t[4];
            mat_of(r, m, x);
            memcpy(t, &uexp[m], sizeof(t));
            int four = 4;
            memcpy(&uexp[m], x, sizeof(x));
            matmul(t, &uexp[m], &four, NULL);   /* uexp = t x x */
        }
    }
    long long isum_base = 0;
    for (int r = 0; r < n; r++)
        isum_base += (r + 1) * 1000;
    MPI_Request rq;
    for (int root = 0; root < n; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            /* Reduce, int sum */
            for (int i = 0; i < count; i++)
                in[i] = val(me, i, 0), out[i] = -1;
            const void *sb = in;
            if (inplace && me == root) {
                memcpy(out, in, sizeof(int) * (size_t)count);
                sb = MPI_IN_PLACE;
            }
            if (g_nb) MT_CALL(MPI_Ireduce(sb, out, count, MPI_INT, MPI_SUM, root, c, &rq)); else MT_CALL(MPI_Reduce(sb, out, count, MPI_INT, MPI_SUM, root, c));
            wait_or(&rq);
            if (me == root)
                for (int i = 0; i < count; i++)
                    MT_EQ("reduce int sum", isum_base + (long long)n * i * 7, out[i]);
            /* Reduce, non-commutative */
            for (int m = 0; m < mc; m += 4)
                mat_of(me, m, &uin[m]);
            const void *usb = uin;
            if (inplace && me == root) {
                memcpy(uout, uin, sizeof(unsigned) * (size_t)mc);
                usb = MPI_IN_PLACE;
            }
            if (g_nb) MT_CALL(MPI_Ireduce(usb, uout, mc, MPI_UNSIGNED, noncomm, root, c, &rq)); else MT_CALL(MPI_Reduce(usb, uout, mc, MPI_UNSIGNED, noncomm, root, c));
            wait_or(&rq);
            if (me == root)
                for (int i = 0; i < mc; i++)
                    MT_TRUE(uout[i] == uexp[i], "reduce matrix product [%d]: expected %u got %u (%d ranks, root %d)", i, uexp[i], uout[i], n, root);
        }
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < count; i++)
            din[i] = val(me, i, 0) * 0.25, dout[i] = -1;
        if (inplace)
            memcpy(dout, din, sizeof(double) * (size_t)count);
        if (g_nb) MT_CALL(MPI_Iallreduce(inplace ? MPI_IN_PLACE : din, dout, count, MPI_DOUBLE, MPI_SUM, c, &rq)); else MT_CALL(MPI_Allreduce(inplace ? MPI_IN_PLACE : din, dout, count, MPI_DOUBLE, MPI_SUM, c));
        wait_or(&rq);
        for (int i = 0; i < count; i++)
            MT_TRUE(dout[i] == (isum_base + (double)n * i * 7) * 0.25, "allreduce double [%d] = %g", i, dout[i]);
        for (int i = 0; i < count; i++)
            in[i] = val(me, i, 0), out[i] = -1;
        if (inplace)
            memcpy(out, in, sizeof(int) * (size_t)count);
        if (g_nb) MT_CALL(MPI_Iallreduce(inplace ? MPI_IN_PLACE : in, out, count, MPI_INT, MPI_MAX, c, &rq)); else MT_CALL(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, count, MPI_INT, MPI_MAX, c));
        wait_or(&rq);
        for (int i = 0; i < count; i++)
            MT_EQ("allreduce int max", val(n - 1, i, 0), out[i]);
        for (int m = 0; m < mc; m += 4)
            mat_of(me, m, &uin[m]);
        if (inplace)
            memcpy(uout, uin, sizeof(unsigned) * (size_t)mc);
        if (g_nb) MT_CALL(MPI_Iallreduce(inplace ? MPI_IN_PLACE : uin, uout, mc, MPI_UNSIGNED, noncomm, c, &rq)); else MT_CALL(MPI_Allreduce(inplace ? MPI_IN_PLACE : uin, uout, mc, MPI_UNSIGNED, noncomm, c));
        wait_or(&rq);
        for (int i = 0; i < mc; i++)
            MT_TRUE(uout[i] == uexp[i], "allreduce matrix product [%d]: expected %u got %u", i, uexp[i], uout[i]);
    }
    free(in); free(out); free(din); free(dout); free(uin); free(uout); free(uexp);
}

/* ---- allgather: int blocks, in place, and a strided receive type ---- */
static void t_allgather(MPI_Comm c, int count)
{
    int n, me;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    int *sb = malloc(sizeof(int) * (size_t)(count + 1));
    int *rb = malloc(sizeof(int) * (size_t)(2 * n * count + 2));
    MPI_Request rq;
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < count; i++)
            sb[i] = val(me, i, 5);
        for (int i = 0; i < n * count; i++)
            rb[i] = -1;
        if (inplace)
            memcpy(rb + (size_t)me * count, sb, sizeof(int) * (size_t)count);
        if (g_nb) MT_CALL(MPI_Iallgather(inplace ? MPI_IN_PLACE : sb, count, MPI_INT, rb, count, MPI_INT, c, &rq)); else MT_CALL(MPI_Allgather(inplace ? MPI_IN_PLACE : sb, count, MPI_INT, rb, count, MPI_INT, c));
        wait_or(&rq);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < count; i++)
                MT_EQ("allgather block", val(r, i, 5), rb[r * count + i]);
    }
    if (count) {
        /* received every other int: a vector of count ints, stride 2, resized to 2 * count ints */
        MPI_Datatype v, vr;
        MT_CALL(MPI_Type_vector(count, 1, 2, MPI_INT, &v));
        MT_CALL(MPI_Type_create_resized(v, 0, (MPI_Aint)(sizeof(int) * 2 * (size_t)count), &vr));
        MT_CALL(MPI_Type_commit(&vr));
        for (int i = 0; i < 2 * n * count; i++)
            rb[i] = -1;
        if (g_nb) MT_CALL(MPI_Iallgather(sb, count, MPI_INT, rb, 1, vr, c, &rq)); else MT_CALL(MPI_Allgather(sb, count, MPI_INT, rb, 1, vr, c));
        wait_or(&rq);
        for (int r = 0; r < n; r++)
            for (int i = 0; i < 2 * count; i++)
                MT_EQ("allgather strided", i % 2 ? -1 : val(r, i / 2, 5), rb[r * 2 * count + i]);
        MT_CALL(MPI_Type_free(&v));
        MT_CALL(MPI_Type_free(&vr));
    }
    free(sb);
    free(rb);
}

static void t_all(MPI_Comm c, int maxcount, MPI_Op noncomm)
{
    MPI_Request rq;
    for (int count = 0; count <= maxcount; count = count ? count * 8 : 1) {
        if (g_nb) MT_CALL(MPI_Ibarrier(c, &rq)); else MT_CALL(MPI_Barrier(c));
        wait_or(&rq);
        t_bcast(c, count);
        t_reduce(c, count, noncomm);
        t_allgather(c, count);
    }
    if (maxcount > 0 && maxcount % 8) {
        t_bcast(c, maxcount);
        t_reduce(c, maxcount, noncomm);
        t_allgather(c, maxcount);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int maxcount = (int)mt_init_args(argc, argv, 4096);
    MPI_Op noncomm;
    MT_CALL(MPI_Op_create(matmul, 0, &noncomm));
    MPI_Comm rev, rr;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &rev));
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, (mt_rank % 2) * mt_size + mt_rank, &rr));
    MPI_Comm comms[] = { MPI_COMM_WORLD, rev, rr };
    for (g_nb = 0; g_nb < 2; g_nb++)
        for (int k = 0; k < 3; k++)
            t_all(comms[k], maxcount, noncomm);
    MT_CALL(MPI_Comm_free(&rev));
    MT_CALL(MPI_Comm_free(&rr));
    MT_CALL(MPI_Op_free(&noncomm));
    return mt_finish("coll_hier");
}
