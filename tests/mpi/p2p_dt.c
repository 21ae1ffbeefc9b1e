/* Derived datatypes through point-to-point: vector (resized), indexed, struct (two layouts of one
 * signature) against each other and against contiguous basic types, at three sizes (small eager,
 * near the eager limit, rendezvous), with every send and receive call: Send, Ssend, Rsend, Bsend,
 * Isend, Issend, Send_c/Isend_c, persistent Send_init/Recv_init/Bsend_init, Recv, Irecv, Recv_c,
 * Mprobe+Mrecv, Improbe+Imrecv, posted or unexpected, ANY_SOURCE, truncation; Sendrecv and
 * Sendrecv_replace. Each rank exchanges with a partner (rank ^ 1; itself with 1 rank) and also with
 * itself. Every byte of every receive buffer is checked against a reference computed here from the
 * type maps written out by hand, gaps included (they must keep their fill byte).
 *
 * argv: [--weft]. Runs under any MPI (validated with MPICH). */
#include "mpitest.h"

typedef struct {
    const char *name;
    MPI_Datatype t;
    int extent;
    int nblk;
    struct { int off, len; } blk[8];   /* the type map of one element as byte runs, in order */
} ty_t;

static ty_t T_vec = { "vector(3,2,5,double) resized to 120", 0, 120, 3,
                      { { 0, 16 }, { 40, 16 }, { 80, 16 } } };
static ty_t T_dbl = { "MPI_DOUBLE", 0, 8, 1, { { 0, 8 } } };
static ty_t T_idx = { "indexed({2,1,3},{4,0,8},int)", 0, 44, 3, { { 16, 8 }, { 0, 4 }, { 32, 12 } } };
static ty_t T_int = { "MPI_INT", 0, 4, 1, { { 0, 4 } } };
static ty_t T_st = { "struct{int@0,double@8,short[2]@20} resized to 32", 0, 32, 3,
                     { { 0, 4 }, { 8, 8 }, { 20, 4 } } };
static ty_t T_st2 = { "struct{int@24,double@0,short[2]@8} resized to 40", 0, 40, 3,
                      { { 24, 4 }, { 0, 8 }, { 8, 4 } } };

/* Blocks of 1280 bytes: a receiver the single copy (CMA) scatters into. */
static ty_t T_big = { "vector(2,160,200,double)", 0, 2880, 2, { { 0, 1280 }, { 1600, 1280 } } };

static int ty_size(const ty_t *t)
{
    int s = 0;
    for (int i = 0; i < t->nblk; i++)
        s += t->blk[i].len;
    return s;
}

static void build_types(void)
{
    MPI_Datatype v, s;
    MT_CALL(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &v));
    MT_CALL(MPI_Type_create_resized(v, 0, 120, &T_vec.t));
    MT_CALL(MPI_Type_free(&v));
    MT_CALL(MPI_Type_vector(2, 160, 200, MPI_DOUBLE, &T_big.t));
    T_dbl.t = MPI_DOUBLE;
    int bl[3] = { 2, 1, 3 }, dp[3] = { 4, 0, 8 };
    MT_CALL(MPI_Type_indexed(3, bl, dp, MPI_INT, &T_idx.t));
    T_int.t = MPI_INT;
    int sbl[3] = { 1, 1, 2 };
    MPI_Datatype sty[3] = { MPI_INT, MPI_DOUBLE, MPI_SHORT };
    MPI_Aint sd1[3] = { 0, 8, 20 }, sd2[3] = { 24, 0, 8 };
    MT_CALL(MPI_Type_create_struct(3, sbl, sd1, sty, &s));
    MT_CALL(MPI_Type_create_resized(s, 0, 32, &T_st.t));
    MT_CALL(MPI_Type_free(&s));
    MT_CALL(MPI_Type_create_struct(3, sbl, sd2, sty, &s));
    MT_CALL(MPI_Type_create_resized(s, 0, 40, &T_st2.t));
    MT_CALL(MPI_Type_free(&s));
    ty_t *all[] = { &T_vec, &T_idx, &T_st, &T_st2, &T_big };
    for (int i = 0; i < 5; i++) {
        MT_CALL(MPI_Type_commit(&all[i]->t));
        int size;
        MPI_Aint lb, ext;
        MT_CALL(MPI_Type_size(all[i]->t, &size));
        MT_CALL(MPI_Type_get_extent(all[i]->t, &lb, &ext));
        MT_EQ(all[i]->name, ty_size(all[i]), size);
        MT_EQ(all[i]->name, all[i]->extent, ext);
    }
}

/* Buffer offset of packed byte k of count elements. */
static long *ty_map(const ty_t *t, long count)
{
    long n = count * ty_size(t), k = 0;
    long *off = malloc(sizeof(*off) * (size_t)(n + 1));
    for (long e = 0; e < count; e++)
        for (int b = 0; b < t->nblk; b++)
            for (int i = 0; i < t->blk[b].len; i++)
                off[k++] = e * t->extent + t->blk[b].off + i;
    return off;
}

static size_t ty_span(const ty_t *t, long count)
{
    return (size_t)(count * t->extent + 64);
}

static unsigned char pat(long k, int seed)
{
    return (unsigned char)(k * 131 + seed * 7 + (k >> 8) * 17 + 1);
}

static unsigned char *make_send(const ty_t *t, long count, int seed)
{
    size_t n = ty_span(t, count);
    unsigned char *b = malloc(n);
    memset(b, 0x5A, n);
    long *off = ty_map(t, count);
    for (long k = 0; k < count * ty_size(t); k++)
        b[off[k]] = pat(k, seed);
    free(off);
    return b;
}

/* buf must hold the first `delivered` packed bytes of the stream of `seed`, `fill` elsewhere. */
static void check_buf(const char *what, const ty_t *t, long count, const unsigned char *buf,
                      int seed, long delivered, unsigned char fill)
{
    size_t n = ty_span(t, count);
    unsigned char *exp = malloc(n);
    memset(exp, fill, n);
    long *off = ty_map(t, count);
    for (long k = 0; k < delivered; k++)
        exp[off[k]] = pat(k, seed);
    for (size_t i = 0; i < n; i++)
        if (exp[i] != buf[i])
            MT_FAIL("%s: byte %zu of the %s receive buffer (%ld elements, %ld bytes delivered) "
                    "expected 0x%02x got 0x%02x", what, i, t->name, count, delivered, exp[i], buf[i]);
    free(exp);
    free(off);
}

enum {
    POSTED = 1, ANYSRC = 2, SELF = 4, TRUNC = 8,
};
enum { S_SEND, S_SSEND, S_RSEND, S_BSEND, S_SEND_C, S_ISEND, S_ISSEND, S_ISEND_C, S_IBSEND, S_PERSIST,
       S_BPERSIST };
enum { R_RECV, R_IRECV, R_RECV_C, R_IRECV_C, R_MPROBE, R_IMPROBE, R_PERSIST };

static MPI_Comm comm;   /* a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
static int partner;

static void xfer(const char *what, const ty_t *st, const ty_t *rt, long bytes, int flags, int sk,
                 int rk, int seed)
{
    int peer = flags & SELF ? mt_rank : partner;
    long sc = bytes / ty_size(st), rc = bytes / ty_size(rt);
    if (flags & TRUNC)
        rc = rc * 2 / 3;
    long cap = rc * ty_size(rt), delivered = bytes < cap ? bytes : cap;
    unsigned char *sbuf = make_send(st, sc, seed);
    size_t rn = ty_span(rt, rc);
    unsigned char *rbuf = malloc(rn);
    memset(rbuf, 0xEE, rn);
    int src = flags & ANYSRC ? MPI_ANY_SOURCE : peer;
    MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
    MPI_Status status;
    int rcode = MPI_SUCCESS;

    if (flags & POSTED) {
        if (rk == R_IRECV)
            MT_CALL(MPI_Irecv(rbuf, (int)rc, rt->t, src, seed, comm, &rreq));
        else if (rk == R_IRECV_C)
            MT_CALL(MPI_Irecv_c(rbuf, rc, rt->t, src, seed, comm, &rreq));
        else if (rk == R_PERSIST) {
            MT_CALL(MPI_Recv_init(rbuf, (int)rc, rt->t, src, seed, comm, &rreq));
            MT_CALL(MPI_Start(&rreq));
        } else
            MT_FAIL("%s: receive kind %d cannot be posted first", what, rk);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    switch (sk) {
    case S_SEND:    MT_CALL(MPI_Send(sbuf, (int)sc, st->t, peer, seed, comm)); break;
    case S_SSEND:   MT_CALL(MPI_Ssend(sbuf, (int)sc, st->t, peer, seed, comm)); break;
    case S_RSEND:   MT_CALL(MPI_Rsend(sbuf, (int)sc, st->t, peer, seed, comm)); break;
    case S_BSEND:   MT_CALL(MPI_Bsend(sbuf, (int)sc, st->t, peer, seed, comm)); break;
    case S_SEND_C:  MT_CALL(MPI_Send_c(sbuf, sc, st->t, peer, seed, comm)); break;
    case S_ISEND:   MT_CALL(MPI_Isend(sbuf, (int)sc, st->t, peer, seed, comm, &sreq)); break;
    case S_ISSEND:  MT_CALL(MPI_Issend(sbuf, (int)sc, st->t, peer, seed, comm, &sreq)); break;
    case S_ISEND_C: MT_CALL(MPI_Isend_c(sbuf, sc, st->t, peer, seed, comm, &sreq)); break;
    case S_IBSEND:  MT_CALL(MPI_Ibsend(sbuf, (int)sc, st->t, peer, seed, comm, &sreq)); break;
    case S_PERSIST:
    case S_BPERSIST:
        if (sk == S_PERSIST)
            MT_CALL(MPI_Send_init(sbuf, (int)sc, st->t, peer, seed, comm, &sreq));
        else
            MT_CALL(MPI_Bsend_init(sbuf, (int)sc, st->t, peer, seed, comm, &sreq));
        MT_CALL(MPI_Start(&sreq));
        break;
    }
    if (!(flags & POSTED)) {
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MPI_Message msg;
        switch (rk) {
        case R_RECV:   rcode = MPI_Recv(rbuf, (int)rc, rt->t, src, seed, comm, &status); break;
        case R_RECV_C: rcode = MPI_Recv_c(rbuf, rc, rt->t, src, seed, comm, &status); break;
        case R_IRECV:
            MT_CALL(MPI_Irecv(rbuf, (int)rc, rt->t, src, seed, comm, &rreq));
            break;
        case R_MPROBE:
            MT_CALL(MPI_Mprobe(src, seed, comm, &msg, &status));
            {
                int n;
                MT_CALL(MPI_Get_count(&status, MPI_BYTE, &n));
                MT_EQ("probed bytes", bytes, n);
            }
            rcode = MPI_Mrecv(rbuf, (int)rc, rt->t, &msg, &status);
            break;
        case R_IMPROBE: {
            int flag = 0;
            while (!flag)
                MT_CALL(MPI_Improbe(src, seed, comm, &flag, &msg, &status));
            MT_CALL(MPI_Imrecv(rbuf, (int)rc, rt->t, &msg, &rreq));
            break;
        }
        default:
            MT_FAIL("%s: receive kind %d needs a posted receive", what, rk);
        }
    }
    if (rreq != MPI_REQUEST_NULL) {
        rcode = MPI_Wait(&rreq, &status);
        if (rk == R_PERSIST)
            MT_CALL(MPI_Request_free(&rreq));
    }
    if (sreq != MPI_REQUEST_NULL) {
        MT_CALL(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        if (sk == S_PERSIST || sk == S_BPERSIST)
            MT_CALL(MPI_Request_free(&sreq));
    }
    char label[256];
    snprintf(label, sizeof(label), "%s (seed %d, %s -> %s, %ld bytes)", what, seed, st->name,
             rt->name, bytes);
    MT_CLASS_EQ(label, bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS, rcode);
    MT_EQ(label, peer, status.MPI_SOURCE);
    MT_EQ(label, seed, status.MPI_TAG);
    /* A truncated receive's count and data are implementation-defined: Weft delivers what fits
     * and counts it. */
    if (bytes <= cap || mt_weft) {
        int n;
        MT_CALL(MPI_Get_count(&status, MPI_BYTE, &n));
        MT_EQ(label, delivered, n);
        MT_CALL(MPI_Get_count(&status, rt->t, &n));
        MT_EQ(label, delivered % ty_size(rt) ? MPI_UNDEFINED : delivered / ty_size(rt), n);
        check_buf(label, rt, rc, rbuf, seed, delivered, 0xEE);
    }
    free(sbuf);
    free(rbuf);
}

static long lcm(long a, long b)
{
    long x = a, y = b;
    while (y) {
        long t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

static void sendrecv_tests(int seed)
{
    /* Sendrecv: vector out, indexed in (the same byte count: 480 = 10 x 48 = 20 x 24). */
    unsigned char *sbuf = make_send(&T_vec, 10, seed + mt_rank);
    size_t rn = ty_span(&T_idx, 20);
    unsigned char *rbuf = malloc(rn);
    memset(rbuf, 0xEE, rn);
    MPI_Status st;
    MT_CALL(MPI_Sendrecv(sbuf, 10, T_vec.t, partner, seed, rbuf, 20, T_idx.t, partner, seed, comm,
                         &st));
    check_buf("MPI_Sendrecv", &T_idx, 20, rbuf, seed + partner, 480, 0xEE);
    free(sbuf);
    free(rbuf);
    /* Sendrecv_replace at every size: the gaps keep this rank's own fill. */
    long counts[] = { 10, 250, 2000 };
    for (int i = 0; i < 3; i++) {
        unsigned char *buf = make_send(&T_vec, counts[i], seed + i * 16 + mt_rank);
        MT_CALL(MPI_Sendrecv_replace(buf, (int)counts[i], T_vec.t, partner, seed + i, partner,
                                     seed + i, comm, &st));
        check_buf("MPI_Sendrecv_replace", &T_vec, counts[i], buf, seed + i * 16 + partner,
                  counts[i] * 48, 0x5A);
        int n;
        MT_CALL(MPI_Get_count(&st, T_vec.t, &n));
        MT_EQ("MPI_Sendrecv_replace count", counts[i], n);
        free(buf);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_init_args(argc, argv, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    partner = mt_size == 1 ? 0 : (mt_rank ^ 1) < mt_size ? mt_rank ^ 1 : mt_rank;
    build_types();
    int bsize = 4 * (96000 + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MT_CALL(MPI_Buffer_attach(battach, bsize));

    struct { const ty_t *s, *r; } pairs[] = {
        { &T_vec, &T_dbl }, { &T_dbl, &T_vec }, { &T_vec, &T_vec }, { &T_idx, &T_int },
        { &T_int, &T_idx }, { &T_st, &T_st2 }, { &T_st2, &T_st }, { &T_idx, &T_vec },
        { &T_dbl, &T_big }, { &T_big, &T_dbl },
    };
    /* send kind, receive kind, flags */
    struct { const char *what; int sk, rk, flags; } variants[] = {
        { "Send/Irecv posted", S_SEND, R_IRECV, POSTED },
        { "Ssend/Irecv ANY_SOURCE", S_SSEND, R_IRECV, POSTED | ANYSRC },
        { "Rsend/Recv_init", S_RSEND, R_PERSIST, POSTED },
        { "Send_c/Irecv_c truncated", S_SEND_C, R_IRECV_C, POSTED | TRUNC },
        { "Bsend/Irecv", S_BSEND, R_IRECV, POSTED },
        { "Isend/Recv unexpected", S_ISEND, R_RECV, 0 },
        { "Issend/Mprobe+Mrecv", S_ISSEND, R_MPROBE, 0 },
        { "Isend_c/Improbe+Imrecv", S_ISEND_C, R_IMPROBE, 0 },
        { "Ibsend/Recv_c truncated", S_IBSEND, R_RECV_C, TRUNC },
        { "Send_init/Irecv unexpected ANY_SOURCE", S_PERSIST, R_IRECV, ANYSRC },
        { "Bsend_init/Recv truncated", S_BPERSIST, R_RECV, TRUNC },
        { "Isend/Recv unexpected truncated", S_ISEND, R_RECV, TRUNC },
    };
    long sizes[] = { 480, 12000, 96000 };
    int seed = 0, n = 0;
    for (int self = 0; self < 2; self++)
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++)
            for (int z = 0; z < 3; z++)
                for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
                    /* the size class rounded to whole elements of both types */
                    long unit = lcm(ty_size(pairs[p].s), ty_size(pairs[p].r));
                    long sz = sizes[z] / unit ? sizes[z] / unit * unit : unit;
                    xfer(variants[v].what, pairs[p].s, pairs[p].r, sz,
                         variants[v].flags | (self ? SELF : 0), variants[v].sk, variants[v].rk,
                         ++seed);
                    n++;
                }
    sendrecv_tests(++seed);
    void *b;
    int bs;
    MT_CALL(MPI_Buffer_detach(&b, &bs));
    free(battach);
    ty_t *all[] = { &T_vec, &T_idx, &T_st, &T_st2, &T_big };
    for (int i = 0; i < 5; i++)
        MT_CALL(MPI_Type_free(&all[i]->t));
    MT_CALL(MPI_Comm_free(&comm));
    if (mt_rank == 0)
        printf("p2p_dt: %d transfers on %d ranks passed\n", n, mt_size);
    MPI_Finalize();
    return 0;
}
