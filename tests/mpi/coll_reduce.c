/* Reductions against a reference computed with point-to-point: Reduce (every root), Allreduce,
 * Reduce_scatter_block, Reduce_scatter, Scan, Exscan, blocking and nonblocking (overlapped with
 * computation, and many outstanding at once), in place and not, for the predefined operations on
 * the types they are defined for, MINLOC/MAXLOC on pair types, and user operations (a commutative
 * one and a non-commutative one: 2x2 integer matrix products, whose order the result shows).
 *
 * The reference: every rank sends its input to every other rank (MPI_Isend/MPI_Irecv on another
 * communicator), then folds the inputs in rank order with MPI_Reduce_local. Values are small
 * integers, so floating-point results are exact whatever the algorithm's order.
 *
 * Usage: coll_reduce [max_count] [--weft] */
#include "mpitest.h"

#include <stdbool.h>

#define MAXN 64
#define FILL 0x5A

static MPI_Comm comm, refcomm;
static int me, np;

enum { R_REDUCE, R_ALLREDUCE, R_RSB, R_RS, R_SCAN, R_EXSCAN, R_COUNT };
static const char *rname[] = { "reduce", "allreduce", "reduce_scatter_block", "reduce_scatter",
                               "scan", "exscan" };

/* user ops */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* inout = in x inout for 2x2 matrices of ints (mod 2^32) */
static void user_matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    unsigned *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        unsigned r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        unsigned r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
    }
}

typedef struct {
    const char *name;
    MPI_Op op;
    MPI_Datatype type;
    int esize;      /* extent */
    int kind;       /* how to fill: 0 int-like, 1 float, 2 double, 3 logical 0/1, 4 pair float/double+int, 5 matrix, 6 2int */
} opt_t;

static MPI_Op op_usum, op_matmul;
static MPI_Datatype t_mat;

static void fill(const opt_t *o, void *buf, int count, int rank, int salt)
{
    for (int i = 0; i < count; i++) {
        int v = (int)((rank * 7 + i * 3 + salt) % 5) + 1;   /* 1 .. 5 */
        switch (o->kind) {
        case 0: {
            if (o->esize == 1) ((unsigned char *)buf)[i] = (unsigned char)(v * 17 + rank);
            else if (o->esize == 8) ((long long *)buf)[i] = v * 1000 + rank;
            else ((int *)buf)[i] = v * 1000 + rank * 3 + i % 11;
            break;
        }
        case 1: ((float *)buf)[i] = (float)(v % 3 + 1); break;
        case 2: ((double *)buf)[i] = (double)(v % 2 ? v : -v); break;
        case 3: ((int *)buf)[i] = (rank + i) % 3 == 0; break;
        case 4: {
            struct { float v; int k; } *p = buf;
            p[i].v = (float)((rank * 5 + i) % 4);
            p[i].k = rank;
            break;
        }
        case 5: {
            unsigned *m = (unsigned *)buf + 4 * (size_t)i;
            m[0] = (unsigned)v, m[1] = (unsigned)rank + 1, m[2] = (unsigned)i % 7, m[3] = 1;
            break;
        }
        case 6: ((int *)buf)[2 * i] = (rank * 5 + i) % 4, ((int *)buf)[2 * i + 1] = rank; break;
        }
    }
}

typedef struct {
    int coll, root, in_place, count;   /* count: elements of this rank's result (reduce: all) */
    const opt_t *o;
    int counts[MAXN];                   /* reduce_scatter: per rank */
    int total;                          /* elements of the input */
    char *in, *out, *orig;
    MPI_Request req;
} rcase_t;

static void rc_setup(rcase_t *k, int salt)
{
    int n = np, cnt = k->count;
    k->total = cnt;
    if (k->coll == R_RSB)
        k->total = cnt * n;
    if (k->coll == R_RS) {
        k->total = 0;
        for (int p = 0; p < n; p++)
            k->counts[p] = cnt + (p % 3) - 1 > 0 ? cnt + (p % 3) - 1 : 0, k->total += k->counts[p];
    }
    size_t es = (size_t)k->o->esize;
    k->in = mt_malloc((size_t)k->total * es + 16);
    k->orig = mt_malloc((size_t)k->total * es + 16);
    k->out = mt_malloc((size_t)k->total * es + 16);
    fill(k->o, k->in, k->total, me, salt);
    memcpy(k->orig, k->in, (size_t)k->total * es);
    memset(k->out, FILL, (size_t)k->total * es + 16);
    if (k->in_place)
        memcpy(k->out, k->in, (size_t)k->total * es);
}

static void rc_free(rcase_t *k)
{
    free(k->in);
    free(k->orig);
    free(k->out);
}

static int my_count(const rcase_t *k)
{
    return k->coll == R_RS ? k->counts[me] : k->count;
}

static int verbose;
static void rc_run(rcase_t *k, MPI_Request *req)
{
    const opt_t *o = k->o;
    if (verbose)
        fprintf(stderr, "rank %d: %s %s %s count %d root %d in_place %d\n", me, req ? "start" : "run",
                rname[k->coll], o->name, k->count, k->root, k->in_place);
    const void *sb = k->in_place ? MPI_IN_PLACE : k->in;
    switch (k->coll) {
    case R_REDUCE: {
        const void *s = me == k->root ? sb : k->in;
        MT_CALL(req ? MPI_Ireduce(s, k->out, k->count, o->type, o->op, k->root, comm, req)
                    : MPI_Reduce(s, k->out, k->count, o->type, o->op, k->root, comm));
        break;
    }
    case R_ALLREDUCE:
        MT_CALL(req ? MPI_Iallreduce(sb, k->out, k->count, o->type, o->op, comm, req)
                    : MPI_Allreduce(sb, k->out, k->count, o->type, o->op, comm));
        break;
    case R_RSB:
        MT_CALL(req ? MPI_Ireduce_scatter_block(sb, k->out, k->count, o->type, o->op, comm, req)
                    : MPI_Reduce_scatter_block(sb, k->out, k->count, o->type, o->op, comm));
        break;
    case R_RS:
        MT_CALL(req ? MPI_Ireduce_scatter(sb, k->out, k->counts, o->type, o->op, comm, req)
                    : MPI_Reduce_scatter(sb, k->out, k->counts, o->type, o->op, comm));
        break;
    case R_SCAN:
        MT_CALL(req ? MPI_Iscan(sb, k->out, k->count, o->type, o->op, comm, req)
                    : MPI_Scan(sb, k->out, k->count, o->type, o->op, comm));
        break;
    case R_EXSCAN:
        MT_CALL(req ? MPI_Iexscan(sb, k->out, k->count, o->type, o->op, comm, req)
                    : MPI_Exscan(sb, k->out, k->count, o->type, o->op, comm));
        break;
    }
}

static void rc_check(rcase_t *k, const char *mode)
{
    const opt_t *o = k->o;
    size_t es = (size_t)o->esize, len = (size_t)k->total * es;
    char *all = mt_malloc(len * (size_t)np + 16);
    MPI_Request rq[2 * MAXN];
    int nr = 0;
    for (int p = 0; p < np; p++) {
        if (p == me) {
            memcpy(all + (size_t)p * len, k->orig, len);
            continue;
        }
        MT_CALL(MPI_Irecv(all + (size_t)p * len, (int)len, MPI_BYTE, p, 9, refcomm, &rq[nr++]));
        MT_CALL(MPI_Isend(k->orig, (int)len, MPI_BYTE, p, 9, refcomm, &rq[nr++]));
    }
    MT_CALL(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    /* fold ranks [0, upto) in order: acc = acc op in[r] */
    int upto = k->coll == R_SCAN ? me + 1 : k->coll == R_EXSCAN ? me : np;
    char *acc = mt_malloc(len + 16), *tmp = mt_malloc(len + 16);
    if (upto > 0)
        memcpy(acc, all, len);
    for (int p = 1; p < upto; p++) {
        memcpy(tmp, all + (size_t)p * len, len);
        if (k->total)
            MT_CALL(MPI_Reduce_local(acc, tmp, k->total, o->type, o->op));
        memcpy(acc, tmp, len);
    }
    /* which part of the result this rank holds */
    size_t off = 0, n = (size_t)my_count(k) * es;
    if (k->coll == R_RSB)
        off = (size_t)me * (size_t)k->count * es;
    if (k->coll == R_RS)
        for (int p = 0; p < me; p++)
            off += (size_t)k->counts[p] * es;
    bool check = !(k->coll == R_REDUCE && me != k->root) && !(k->coll == R_EXSCAN && me == 0);
    if (check) {
        for (size_t i = 0; i < n; i++)
            if ((uint8_t)k->out[i] != (uint8_t)acc[off + i])
                MT_FAIL("%s %s: %s count %d root %d in_place %d: byte %zu of %zu expected %u got %u",
                        mode, rname[k->coll], o->name, k->count, k->root, k->in_place, i, n,
                        (uint8_t)acc[off + i], (uint8_t)k->out[i]);
        /* bytes past the result stay untouched (not in place: the buffer is larger) */
        if (!k->in_place)
            for (size_t i = n; i < n + 16; i++)
                if ((uint8_t)k->out[i] != FILL)
                    MT_FAIL("%s %s: %s count %d: byte %zu past the result was written", mode,
                            rname[k->coll], o->name, k->count, i);
    }
    if (memcmp(k->in, k->orig, len) != 0)
        MT_FAIL("%s %s: %s: the send buffer changed", mode, rname[k->coll], o->name);
    free(all);
    free(acc);
    free(tmp);
}

static volatile double sink;
static void compute(int us)
{
    double t0 = MPI_Wtime(), x = 1.0;
    while ((MPI_Wtime() - t0) * 1e6 < us)
        for (int i = 0; i < 100; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long max_count = mt_init_args(argc, argv, 200000);
    me = mt_rank;
    verbose = getenv("COLL_VERBOSE") != NULL;
    np = mt_size;
    MT_TRUE(np <= MAXN, "at most %d ranks expected got %d", MAXN, np);
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &refcomm));
    MT_CALL(MPI_Op_create(user_sum, 1, &op_usum));
    MT_CALL(MPI_Op_create(user_matmul, 0, &op_matmul));
    MT_CALL(MPI_Type_contiguous(4, MPI_UNSIGNED, &t_mat));
    MT_CALL(MPI_Type_commit(&t_mat));

    opt_t ops[] = {
        { "MPI_SUM/MPI_INT", MPI_SUM, MPI_INT, 4, 0 },
        { "MPI_SUM/MPI_DOUBLE", MPI_SUM, MPI_DOUBLE, 8, 2 },
        { "MPI_PROD/MPI_FLOAT", MPI_PROD, MPI_FLOAT, 4, 1 },
        { "MPI_MAX/MPI_LONG_LONG", MPI_MAX, MPI_LONG_LONG, 8, 0 },
        { "MPI_MIN/MPI_DOUBLE", MPI_MIN, MPI_DOUBLE, 8, 2 },
        { "MPI_BAND/MPI_UNSIGNED_CHAR", MPI_BAND, MPI_UNSIGNED_CHAR, 1, 0 },
        { "MPI_BOR/MPI_INT", MPI_BOR, MPI_INT, 4, 0 },
        { "MPI_BXOR/MPI_INT", MPI_BXOR, MPI_INT, 4, 0 },
        { "MPI_LAND/MPI_INT", MPI_LAND, MPI_INT, 4, 3 },
        { "MPI_LOR/MPI_INT", MPI_LOR, MPI_INT, 4, 3 },
        { "MPI_LXOR/MPI_INT", MPI_LXOR, MPI_INT, 4, 3 },
        { "MPI_MAXLOC/MPI_FLOAT_INT", MPI_MAXLOC, MPI_FLOAT_INT, 8, 4 },
        { "MPI_MINLOC/MPI_2INT", MPI_MINLOC, MPI_2INT, 8, 6 },
        { "user sum/MPI_INT", op_usum, MPI_INT, 4, 0 },
        { "user matmul (non-commutative)", op_matmul, t_mat, 16, 5 },
    };
    int nops = (int)(sizeof(ops) / sizeof(ops[0]));
    static const int counts[] = { 0, 1, 5, 64, 1000, 10000, 70000, 200000 };
    long ncases = 0;
    for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
        int cnt = counts[ci];
        if (cnt > max_count)
            continue;
        rcase_t *batch = calloc((size_t)R_COUNT * 2 * (size_t)nops * MAXN, sizeof(rcase_t));
        int nb = 0;
        for (int oi = 0; oi < nops; oi++) {
            /* large counts: a few operations only */
            if (cnt >= 10000 && oi % 4 != (int)(ci % 4) && oi != 1 && oi != nops - 1)
                continue;
            if (cnt * ops[oi].esize * (np > 4 ? 4 : np) > 8 * 1000 * 1000)
                continue;
            for (int coll = 0; coll < R_COUNT; coll++) {
                for (int ip = 0; ip < 2; ip++) {
                    for (int root = 0; root < (coll == R_REDUCE ? np : 1); root++) {
                        if (coll == R_REDUCE && cnt > 1000 && root != 0 && root != np - 1)
                            continue;
                        /* MPICH 4.0.2 crashes in MPI_Reduce in place at a root other than 0 from
                         * ~1000 ints on (a copy to address -1): left out when validating */
                        if (!mt_weft && coll == R_REDUCE && ip && root != 0 && cnt >= 1000)
                            continue;
                        for (int mode = 0; mode < 2; mode++) {
                            rcase_t k = { .coll = coll, .root = root, .in_place = ip,
                                          .count = cnt, .o = &ops[oi] };
                            rc_setup(&k, (int)ncases % 13);
                            if (mode == 0) {
                                rc_run(&k, NULL);
                            } else {
                                int flag = 0;
                                rc_run(&k, &k.req);
                                for (int it = 0; it < 20 && !flag; it++) {
                                    compute(20);
                                    MT_CALL(MPI_Test(&k.req, &flag, MPI_STATUS_IGNORE));
                                }
                                if (!flag)
                                    MT_CALL(MPI_Wait(&k.req, MPI_STATUS_IGNORE));
                            }
                            rc_check(&k, mode ? "nonblocking" : "blocking");
                            rc_free(&k);
                            ncases++;
                        }
                        if (cnt <= 10000)
                            batch[nb++] = (rcase_t){ .coll = coll, .root = root, .in_place = ip,
                                                     .count = cnt, .o = &ops[oi] };
                    }
                }
            }
        }
        MPI_Request *reqs = calloc((size_t)nb + 1, sizeof(MPI_Request));
        for (int i = 0; i < nb; i++) {
            rc_setup(&batch[i], i % 13);
            rc_run(&batch[i], &reqs[i]);
        }
        compute(200);
        MT_CALL(MPI_Waitall(nb, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < nb; i++) {
            rc_check(&batch[i], "batch");
            rc_free(&batch[i]);
        }
        ncases += nb;
        free(reqs);
        free(batch);
    }
    MT_CALL(MPI_Op_free(&op_usum));
    MT_CALL(MPI_Op_free(&op_matmul));
    MT_CALL(MPI_Type_free(&t_mat));
    MT_CALL(MPI_Comm_free(&comm));
    MT_CALL(MPI_Comm_free(&refcomm));
    if (me == 0)
        printf("coll_reduce: %ld cases\n", ncases);
    return mt_finish("coll_reduce");
}
