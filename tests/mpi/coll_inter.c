/* Collectives on intercommunicators (issue 5): every collective the standard defines on an
 * intercommunicator, blocking and nonblocking (every case of a batch outstanding at once, with
 * computation before the wait), int and large-count (_c) forms, checked byte by byte against a
 * reference computed here (every process's contribution is a formula of its world rank).
 *
 * Intercommunicators: MPI_COMM_WORLD split into ranks 0..k-1 and k..n-1 for several k, and into
 * even and odd ranks. Counts 0, 1, a few KiB and one large case (argument: bytes per rank block,
 * default 256 KiB); the groups use different counts where the standard allows it (Allgather,
 * Alltoall: a group's send count is the other group's receive count). Every root in both groups.
 * Derived datatypes: an int every 8 bytes (resized) on the send or the receive side, per-peer types
 * in Alltoallw, and a two-int affine map with a non-commutative user operation.
 * Errors (MPI_ERRORS_RETURN): MPI_IN_PLACE, Scan/Exscan (MPI_ERR_COMM), invalid roots
 * (MPI_ERR_ROOT); with --weft, counts that disagree between the groups (MPI_ERR_TRUNCATE).
 * Finally MPI_Intercomm_merge still works. */
#include "mpitest.h"

enum { K_BARRIER, K_BCAST, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV,
       K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW, K_REDUCE, K_REDUCE_NC, K_ALLREDUCE, K_ALLREDUCE_NC,
       K_RSB, K_RS, K_N };
static const char *const knames[K_N] = {
    "Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
    "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Reduce(non-commutative)", "Allreduce",
    "Allreduce(non-commutative)", "Reduce_scatter_block", "Reduce_scatter",
};

static int rooted(int k)
{
    return k == K_BCAST || k == K_GATHER || k == K_GATHERV || k == K_SCATTER || k == K_SCATTERV ||
           k == K_REDUCE || k == K_REDUCE_NC;
}

typedef struct env {
    MPI_Comm ic;
    int g, r, n, rn, w;          /* my group, local rank, local size, remote size, world rank */
    int *L, *R;                  /* world ranks of the local and remote groups */
    const char *split;
} env_t;

static MPI_Datatype T_STRIDE;    /* an int every 8 bytes */
static MPI_Datatype T_AFF;       /* two unsigned ints (a, b): the map x -> a x + b */
static MPI_Op OP_AFF;            /* composition: non-commutative */

/* ---- values ---- */

static uint32_t h32(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + (i + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= x >> 31;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 29;
    return (uint32_t)x;
}

/* The seed of the data that world rank a sends to world rank b (-1: to everybody). */
static uint64_t sd(uint64_t seed, int a, int b)
{
    return seed * 0x100000001B3ull ^ ((uint64_t)(a + 1) << 24) ^ ((uint64_t)(b + 2) << 44);
}

static size_t esz(int strided)
{
    return strided ? 8 : 4;
}

/* c ints of seed at byte offset off, an int every esz(st) bytes. */
static void blk_put(uint8_t *buf, size_t off, MPI_Count c, int st, uint64_t seed)
{
    for (MPI_Count i = 0; i < c; i++) {
        uint32_t v = h32(seed, (uint64_t)i);
        memcpy(buf + off + (size_t)i * esz(st), &v, 4);
    }
}

static void put32(uint8_t *buf, size_t off, uint32_t v)
{
    memcpy(buf + off, &v, 4);
}

/* Reduction contributions: small, so that sums never overflow. */
static uint32_t rv(uint64_t seed, int a, uint64_t i)
{
    return h32(sd(seed, a, -1), i) & 0xFFFFF;
}

/* Affine contributions (a odd, b any) and their composition: x first, then y. */
typedef struct aff {
    uint32_t a, b;
} aff_t;

static aff_t av(uint64_t seed, int a, uint64_t i)
{
    return (aff_t){ h32(sd(seed, a, -2), i) | 1u, h32(sd(seed, a, -3), i) };
}

static aff_t compose(aff_t x, aff_t y)
{
    return (aff_t){ y.a * x.a, y.a * x.b + y.b };
}

static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    aff_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = compose(x[i], y[i]);   /* in: the lower ranks */
}

/* ---- counts of the v forms ---- */

static MPI_Count vcount(MPI_Count cnt, int j)
{
    return cnt == 0 ? 0 : (j % 3 == 1 ? 0 : cnt + j);
}

/* Pair counts of Alltoallv/w, from world rank a to world rank b. */
static MPI_Count pcount(MPI_Count cnt, int a, int b)
{
    return cnt == 0 || (a + b) % 4 == 0 ? 0 : cnt + (a * 7 + b * 3) % 5;
}

/* Each group's count of Allgather/Alltoall: they differ. */
static MPI_Count gcount(MPI_Count cnt, int g)
{
    return cnt ? cnt + g : 0;
}

/* ---- one collective call ---- */

typedef struct slot {
    int kind, rg, rr, root, dtm, use_c;
    MPI_Count cnt, scnt, rcnt;
    uint64_t seed;
    MPI_Datatype st, rt;
    uint8_t *sb, *rb, *img;
    size_t rbytes;
    int nv;                                     /* entries of the vectors */
    int *sc, *sdsp, *rc, *rdsp;
    MPI_Count *scc, *rcc;
    MPI_Aint *sda, *rda;
    MPI_Datatype *sts, *rts;
} slot_t;

static uint8_t *gbuf(size_t bytes)
{
    uint8_t *p = mt_malloc(bytes + 16);
    memset(p, 0xEE, bytes + 16);
    return p;
}

/* The v-form vectors: counts c (nv of them) laid out in order (forward) or reversed, with gaps;
 * returns the extent in elements. */
static size_t layout_v(int nv, const MPI_Count *c, int *cnt_i, int *dsp_i, MPI_Count *cnt_c,
                       MPI_Aint *dsp_a, int reversed, int gap)
{
    size_t d = 0;
    for (int k = 0; k < nv; k++) {
        int j = reversed ? nv - 1 - k : k;
        cnt_i[j] = (int)c[j];
        cnt_c[j] = c[j];
        dsp_i[j] = (int)d;
        dsp_a[j] = (MPI_Aint)d;
        d += (size_t)c[j] + (size_t)gap;
    }
    return d;
}

static void alloc_vecs(slot_t *s, int nv)
{
    s->nv = nv;
    s->sc = mt_malloc(sizeof(int) * (size_t)nv);
    s->sdsp = mt_malloc(sizeof(int) * (size_t)nv);
    s->rc = mt_malloc(sizeof(int) * (size_t)nv);
    s->rdsp = mt_malloc(sizeof(int) * (size_t)nv);
    s->scc = mt_malloc(sizeof(MPI_Count) * (size_t)nv);
    s->rcc = mt_malloc(sizeof(MPI_Count) * (size_t)nv);
    s->sda = mt_malloc(sizeof(MPI_Aint) * (size_t)nv);
    s->rda = mt_malloc(sizeof(MPI_Aint) * (size_t)nv);
    s->sts = mt_malloc(sizeof(MPI_Datatype) * (size_t)nv);
    s->rts = mt_malloc(sizeof(MPI_Datatype) * (size_t)nv);
}

static void slot_free(slot_t *s)
{
    free(s->sb);
    free(s->rb);
    free(s->img);
    free(s->sc);
    free(s->sdsp);
    free(s->rc);
    free(s->rdsp);
    free(s->scc);
    free(s->rcc);
    free(s->sda);
    free(s->rda);
    free(s->sts);
    free(s->rts);
}

/* Receive buffer of `bytes`, guard-filled, and its expected image (guard-filled too). */
static void recv_side(slot_t *s, size_t bytes)
{
    s->rbytes = bytes;
    s->rb = gbuf(bytes);
    s->img = gbuf(bytes);
}

/* The Reduce_scatter(_block) layout of a group of n: total T, block k at b[k] of c[k] elements. */
static MPI_Count rs_total(const env_t *e, MPI_Count cnt)
{
    MPI_Count nn = (MPI_Count)e->n * e->rn;
    return cnt ? nn * ((cnt + nn - 1) / nn) : 0;
}

static MPI_Count rs_bound(MPI_Count T, int n, int k, int block)
{
    if (block)
        return T / n * k;
    MPI_Count tri = (MPI_Count)n * (n + 1) / 2, tk = (MPI_Count)k * (k + 1) / 2;
    return T * tk / tri;
}

static void prep(const env_t *e, slot_t *s)
{
    int st = s->dtm == 1, rt = s->dtm == 2;
    s->st = st ? T_STRIDE : MPI_INT;
    s->rt = rt ? T_STRIDE : MPI_INT;
    int is_root = 0, idle = 0, rootw = -1;
    if (rooted(s->kind)) {
        if (e->g == s->rg) {
            is_root = e->r == s->rr;
            idle = !is_root;
            s->root = is_root ? MPI_ROOT : MPI_PROC_NULL;
            rootw = e->L[s->rr];
        } else {
            s->root = s->rr;
            rootw = e->R[s->rr];
        }
    }
    MPI_Count cnt = s->cnt;
    int rn = e->rn;
    switch (s->kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        s->rcnt = cnt;
        if (idle) {
            recv_side(s, 64);
        } else if (is_root) {
            s->rt = s->st;
            recv_side(s, (size_t)cnt * esz(st));
            blk_put(s->rb, 0, cnt, st, sd(s->seed, e->w, -1));
            memcpy(s->img, s->rb, s->rbytes);
        } else {
            recv_side(s, (size_t)cnt * esz(rt));
            blk_put(s->img, 0, cnt, rt, sd(s->seed, rootw, -1));
        }
        break;
    case K_GATHER:
        if (is_root) {
            s->rcnt = cnt;
            recv_side(s, (size_t)rn * (size_t)cnt * esz(rt));
            for (int j = 0; j < rn; j++)
                blk_put(s->img, (size_t)j * (size_t)cnt * esz(rt), cnt, rt,
                        sd(s->seed, e->R[j], -1));
        } else if (!idle) {
            s->scnt = cnt;
            s->sb = gbuf((size_t)cnt * esz(st));
            blk_put(s->sb, 0, cnt, st, sd(s->seed, e->w, -1));
        }
        break;
    case K_GATHERV:
        if (is_root) {
            alloc_vecs(s, rn);
            MPI_Count *c = mt_malloc(sizeof(MPI_Count) * (size_t)rn);
            for (int j = 0; j < rn; j++)
                c[j] = vcount(cnt, j);
            size_t ext = layout_v(rn, c, s->rc, s->rdsp, s->rcc, s->rda, 1, 2);
            recv_side(s, ext * esz(rt));
            for (int j = 0; j < rn; j++)
                blk_put(s->img, (size_t)s->rdsp[j] * esz(rt), c[j], rt, sd(s->seed, e->R[j], -1));
            free(c);
        } else if (!idle) {
            s->scnt = vcount(cnt, e->r);
            s->sb = gbuf((size_t)s->scnt * esz(st));
            blk_put(s->sb, 0, s->scnt, st, sd(s->seed, e->w, -1));
        }
        break;
    case K_SCATTER:
        if (is_root) {
            s->scnt = cnt;
            s->sb = gbuf((size_t)rn * (size_t)cnt * esz(st));
            for (int j = 0; j < rn; j++)
                blk_put(s->sb, (size_t)j * (size_t)cnt * esz(st), cnt, st,
                        sd(s->seed, e->w, e->R[j]));
        } else if (!idle) {
            s->rcnt = cnt;
            recv_side(s, (size_t)cnt * esz(rt));
            blk_put(s->img, 0, cnt, rt, sd(s->seed, rootw, e->w));
        }
        break;
    case K_SCATTERV:
        if (is_root) {
            alloc_vecs(s, rn);
            MPI_Count *c = mt_malloc(sizeof(MPI_Count) * (size_t)rn);
            for (int j = 0; j < rn; j++)
                c[j] = vcount(cnt, j);
            size_t ext = layout_v(rn, c, s->sc, s->sdsp, s->scc, s->sda, 1, 3);
            s->sb = gbuf(ext * esz(st));
            for (int j = 0; j < rn; j++)
                blk_put(s->sb, (size_t)s->sdsp[j] * esz(st), c[j], st, sd(s->seed, e->w, e->R[j]));
            free(c);
        } else if (!idle) {
            s->rcnt = vcount(cnt, e->r);
            recv_side(s, (size_t)s->rcnt * esz(rt));
            blk_put(s->img, 0, s->rcnt, rt, sd(s->seed, rootw, e->w));
        }
        break;
    case K_ALLGATHER:
        s->scnt = gcount(cnt, e->g);
        s->rcnt = gcount(cnt, 1 - e->g);
        s->sb = gbuf((size_t)s->scnt * esz(st));
        blk_put(s->sb, 0, s->scnt, st, sd(s->seed, e->w, -1));
        recv_side(s, (size_t)rn * (size_t)s->rcnt * esz(rt));
        for (int j = 0; j < rn; j++)
            blk_put(s->img, (size_t)j * (size_t)s->rcnt * esz(rt), s->rcnt, rt,
                    sd(s->seed, e->R[j], -1));
        break;
    case K_ALLGATHERV: {
        s->scnt = vcount(cnt, e->r);
        s->sb = gbuf((size_t)s->scnt * esz(st));
        blk_put(s->sb, 0, s->scnt, st, sd(s->seed, e->w, -1));
        alloc_vecs(s, rn);
        MPI_Count *c = mt_malloc(sizeof(MPI_Count) * (size_t)rn);
        for (int j = 0; j < rn; j++)
            c[j] = vcount(cnt, j);
        size_t ext = layout_v(rn, c, s->rc, s->rdsp, s->rcc, s->rda, 1, 2);
        recv_side(s, ext * esz(rt));
        for (int j = 0; j < rn; j++)
            blk_put(s->img, (size_t)s->rdsp[j] * esz(rt), c[j], rt, sd(s->seed, e->R[j], -1));
        free(c);
        break;
    }
    case K_ALLTOALL:
        s->scnt = gcount(cnt, e->g);
        s->rcnt = gcount(cnt, 1 - e->g);
        s->sb = gbuf((size_t)rn * (size_t)s->scnt * esz(st));
        recv_side(s, (size_t)rn * (size_t)s->rcnt * esz(rt));
        for (int j = 0; j < rn; j++) {
            blk_put(s->sb, (size_t)j * (size_t)s->scnt * esz(st), s->scnt, st,
                    sd(s->seed, e->w, e->R[j]));
            blk_put(s->img, (size_t)j * (size_t)s->rcnt * esz(rt), s->rcnt, rt,
                    sd(s->seed, e->R[j], e->w));
        }
        break;
    case K_ALLTOALLV: {
        alloc_vecs(s, rn);
        MPI_Count *c = mt_malloc(sizeof(MPI_Count) * (size_t)rn);
        for (int j = 0; j < rn; j++)
            c[j] = pcount(cnt, e->w, e->R[j]);
        size_t sext = layout_v(rn, c, s->sc, s->sdsp, s->scc, s->sda, 1, 1);
        for (int j = 0; j < rn; j++)
            c[j] = pcount(cnt, e->R[j], e->w);
        size_t rext = layout_v(rn, c, s->rc, s->rdsp, s->rcc, s->rda, 0, 3);
        s->sb = gbuf(sext * esz(st));
        recv_side(s, rext * esz(rt));
        for (int j = 0; j < rn; j++) {
            blk_put(s->sb, (size_t)s->sdsp[j] * esz(st), s->sc[j], st, sd(s->seed, e->w, e->R[j]));
            blk_put(s->img, (size_t)s->rdsp[j] * esz(rt), s->rc[j], rt, sd(s->seed, e->R[j], e->w));
        }
        free(c);
        break;
    }
    case K_ALLTOALLW: {
        /* per-peer types; byte displacements: sends reversed, receives forward with gaps */
        alloc_vecs(s, rn);
        size_t so = 0, ro = 0;
        for (int k = 0; k < rn; k++) {
            int j = rn - 1 - k;
            int sst = (j + e->w) % 2;
            s->sts[j] = sst ? T_STRIDE : MPI_INT;
            s->scc[j] = pcount(cnt, e->w, e->R[j]);
            s->sc[j] = (int)s->scc[j];
            s->sdsp[j] = (int)so;
            s->sda[j] = (MPI_Aint)so;
            so += (size_t)s->scc[j] * esz(sst) + 4;
        }
        for (int j = 0; j < rn; j++) {
            int rst = j % 2 == 0;
            s->rts[j] = rst ? T_STRIDE : MPI_INT;
            s->rcc[j] = pcount(cnt, e->R[j], e->w);
            s->rc[j] = (int)s->rcc[j];
            s->rdsp[j] = (int)ro;
            s->rda[j] = (MPI_Aint)ro;
            ro += (size_t)s->rcc[j] * esz(rst) + 8;
        }
        s->sb = gbuf(so);
        recv_side(s, ro);
        for (int j = 0; j < rn; j++) {
            blk_put(s->sb, (size_t)s->sdsp[j], s->scc[j], (j + e->w) % 2,
                    sd(s->seed, e->w, e->R[j]));
            blk_put(s->img, (size_t)s->rdsp[j], s->rcc[j], j % 2 == 0, sd(s->seed, e->R[j], e->w));
        }
        break;
    }
    case K_REDUCE:
    case K_ALLREDUCE:
        s->st = s->rt = MPI_INT;
        if (s->kind == K_ALLREDUCE || (!is_root && !idle)) {
            s->sb = gbuf((size_t)cnt * 4);
            for (MPI_Count i = 0; i < cnt; i++)
                put32(s->sb, (size_t)i * 4, rv(s->seed, e->w, (uint64_t)i));
        }
        if (s->kind == K_ALLREDUCE || is_root) {
            recv_side(s, (size_t)cnt * 4);
            for (MPI_Count i = 0; i < cnt; i++) {
                uint32_t sum = 0;
                for (int j = 0; j < rn; j++)
                    sum += rv(s->seed, e->R[j], (uint64_t)i);
                put32(s->img, (size_t)i * 4, sum);
            }
        }
        break;
    case K_REDUCE_NC:
    case K_ALLREDUCE_NC:
        s->st = s->rt = T_AFF;
        if (s->kind == K_ALLREDUCE_NC || (!is_root && !idle)) {
            s->sb = gbuf((size_t)cnt * 8);
            for (MPI_Count i = 0; i < cnt; i++) {
                aff_t x = av(s->seed, e->w, (uint64_t)i);
                memcpy(s->sb + (size_t)i * 8, &x, 8);
            }
        }
        if (s->kind == K_ALLREDUCE_NC || is_root) {
            recv_side(s, (size_t)cnt * 8);
            for (MPI_Count i = 0; i < cnt; i++) {
                aff_t acc = av(s->seed, e->R[0], (uint64_t)i);
                for (int j = 1; j < rn; j++)
                    acc = compose(acc, av(s->seed, e->R[j], (uint64_t)i));
                memcpy(s->img + (size_t)i * 8, &acc, 8);
            }
        }
        break;
    case K_RSB:
    case K_RS: {
        s->st = s->rt = MPI_INT;
        int block = s->kind == K_RSB;
        MPI_Count T = rs_total(e, cnt);
        s->sb = gbuf((size_t)T * 4);
        for (MPI_Count i = 0; i < T; i++)
            put32(s->sb, (size_t)i * 4, rv(s->seed, e->w, (uint64_t)i));
        if (!block) {
            alloc_vecs(s, e->n);
            for (int k = 0; k < e->n; k++) {
                s->rcc[k] = rs_bound(T, e->n, k + 1, 0) - rs_bound(T, e->n, k, 0);
                s->rc[k] = (int)s->rcc[k];
            }
        }
        MPI_Count lo = rs_bound(T, e->n, e->r, block), hi = rs_bound(T, e->n, e->r + 1, block);
        s->rcnt = block ? T / e->n : hi - lo;
        recv_side(s, (size_t)s->rcnt * 4);
        for (MPI_Count i = 0; i < s->rcnt; i++) {
            uint32_t sum = 0;
            for (int j = 0; j < rn; j++)
                sum += rv(s->seed, e->R[j], (uint64_t)(lo + i));
            put32(s->img, (size_t)i * 4, sum);
        }
        break;
    }
    }
}

/* Blocking when req is NULL. */
#define CALL(B, I, ...) (req ? I(__VA_ARGS__, req) : B(__VA_ARGS__))

static int start(const env_t *e, slot_t *s, MPI_Request *req)
{
    MPI_Comm ic = e->ic;
    int c = s->use_c;
    switch (s->kind) {
    case K_BARRIER:
        return CALL(MPI_Barrier, MPI_Ibarrier, ic);
    case K_BCAST:
        return c ? CALL(MPI_Bcast_c, MPI_Ibcast_c, s->rb, s->rcnt, s->rt, s->root, ic)
                 : CALL(MPI_Bcast, MPI_Ibcast, s->rb, (int)s->rcnt, s->rt, s->root, ic);
    case K_GATHER:
        return c ? CALL(MPI_Gather_c, MPI_Igather_c, s->sb, s->scnt, s->st, s->rb, s->rcnt, s->rt,
                        s->root, ic)
                 : CALL(MPI_Gather, MPI_Igather, s->sb, (int)s->scnt, s->st, s->rb, (int)s->rcnt,
                        s->rt, s->root, ic);
    case K_GATHERV:
        return c ? CALL(MPI_Gatherv_c, MPI_Igatherv_c, s->sb, s->scnt, s->st, s->rb, s->rcc,
                        s->rda, s->rt, s->root, ic)
                 : CALL(MPI_Gatherv, MPI_Igatherv, s->sb, (int)s->scnt, s->st, s->rb, s->rc,
                        s->rdsp, s->rt, s->root, ic);
    case K_SCATTER:
        return c ? CALL(MPI_Scatter_c, MPI_Iscatter_c, s->sb, s->scnt, s->st, s->rb, s->rcnt,
                        s->rt, s->root, ic)
                 : CALL(MPI_Scatter, MPI_Iscatter, s->sb, (int)s->scnt, s->st, s->rb, (int)s->rcnt,
                        s->rt, s->root, ic);
    case K_SCATTERV:
        return c ? CALL(MPI_Scatterv_c, MPI_Iscatterv_c, s->sb, s->scc, s->sda, s->st, s->rb,
                        s->rcnt, s->rt, s->root, ic)
                 : CALL(MPI_Scatterv, MPI_Iscatterv, s->sb, s->sc, s->sdsp, s->st, s->rb,
                        (int)s->rcnt, s->rt, s->root, ic);
    case K_ALLGATHER:
        return c ? CALL(MPI_Allgather_c, MPI_Iallgather_c, s->sb, s->scnt, s->st, s->rb, s->rcnt,
                        s->rt, ic)
                 : CALL(MPI_Allgather, MPI_Iallgather, s->sb, (int)s->scnt, s->st, s->rb,
                        (int)s->rcnt, s->rt, ic);
    case K_ALLGATHERV:
        return c ? CALL(MPI_Allgatherv_c, MPI_Iallgatherv_c, s->sb, s->scnt, s->st, s->rb, s->rcc,
                        s->rda, s->rt, ic)
                 : CALL(MPI_Allgatherv, MPI_Iallgatherv, s->sb, (int)s->scnt, s->st, s->rb, s->rc,
                        s->rdsp, s->rt, ic);
    case K_ALLTOALL:
        return c ? CALL(MPI_Alltoall_c, MPI_Ialltoall_c, s->sb, s->scnt, s->st, s->rb, s->rcnt,
                        s->rt, ic)
                 : CALL(MPI_Alltoall, MPI_Ialltoall, s->sb, (int)s->scnt, s->st, s->rb,
                        (int)s->rcnt, s->rt, ic);
    case K_ALLTOALLV:
        return c ? CALL(MPI_Alltoallv_c, MPI_Ialltoallv_c, s->sb, s->scc, s->sda, s->st, s->rb,
                        s->rcc, s->rda, s->rt, ic)
                 : CALL(MPI_Alltoallv, MPI_Ialltoallv, s->sb, s->sc, s->sdsp, s->st, s->rb, s->rc,
                        s->rdsp, s->rt, ic);
    case K_ALLTOALLW:
        return c ? CALL(MPI_Alltoallw_c, MPI_Ialltoallw_c, s->sb, s->scc, s->sda, s->sts, s->rb,
                        s->rcc, s->rda, s->rts, ic)
                 : CALL(MPI_Alltoallw, MPI_Ialltoallw, s->sb, s->sc, s->sdsp, s->sts, s->rb, s->rc,
                        s->rdsp, s->rts, ic);
    case K_REDUCE:
    case K_REDUCE_NC: {
        MPI_Op op = s->kind == K_REDUCE ? MPI_SUM : OP_AFF;
        /* sendbuf is not significant at MPI_ROOT, but MPICH 4.0 rejects NULL there */
        static uint64_t unused;
        const void *sb = s->root == MPI_ROOT ? (const void *)&unused : s->sb;
        return c ? CALL(MPI_Reduce_c, MPI_Ireduce_c, sb, s->rb, s->cnt, s->rt, op, s->root, ic)
                 : CALL(MPI_Reduce, MPI_Ireduce, sb, s->rb, (int)s->cnt, s->rt, op, s->root, ic);
    }
    case K_ALLREDUCE:
    case K_ALLREDUCE_NC: {
        MPI_Op op = s->kind == K_ALLREDUCE ? MPI_SUM : OP_AFF;
        return c ? CALL(MPI_Allreduce_c, MPI_Iallreduce_c, s->sb, s->rb, s->cnt, s->rt, op, ic)
                 : CALL(MPI_Allreduce, MPI_Iallreduce, s->sb, s->rb, (int)s->cnt, s->rt, op, ic);
    }
    case K_RSB:
        return c ? CALL(MPI_Reduce_scatter_block_c, MPI_Ireduce_scatter_block_c, s->sb, s->rb,
                        s->rcnt, MPI_INT, MPI_SUM, ic)
                 : CALL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, s->sb, s->rb,
                        (int)s->rcnt, MPI_INT, MPI_SUM, ic);
    case K_RS:
        return c ? CALL(MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, s->sb, s->rb, s->rcc, MPI_INT,
                        MPI_SUM, ic)
                 : CALL(MPI_Reduce_scatter, MPI_Ireduce_scatter, s->sb, s->rb, s->rc, MPI_INT,
                        MPI_SUM, ic);
    }
    return MPI_ERR_INTERN;
}

static void check(const env_t *e, const slot_t *s, int nb)
{
    if (!s->rb)
        return;
    if (memcmp(s->rb, s->img, s->rbytes + 16) == 0)
        return;
    size_t j = 0;
    while (s->rb[j] == s->img[j])
        j++;
    MT_FAIL("%s%s%s split %s (group %d rank %d) count %lld dtmode %d root (group %d, rank %d) "
            "as %d: byte %zu of %zu expected %u got %u",
            nb ? "I" : "", knames[s->kind], s->use_c ? "_c" : "", e->split, e->g, e->r,
            (long long)s->cnt, s->dtm, s->rg, s->rr, s->root, j, s->rbytes, s->img[j], s->rb[j]);
}

/* Busy work between start and wait (a nonblocking collective must not need it to finish). */
static volatile uint64_t sink;
static void compute(void)
{
    uint64_t x = 0;
    for (int i = 0; i < 200000; i++)
        x += h32(x, (uint64_t)i);
    sink = x;
}

static uint64_t batch_no;

/* Every collective once (rooted ones once per root in roots_all mode, else the first and last rank
 * of each group), all outstanding at once when nb. */
static void run_batch(const env_t *e, MPI_Count cnt, int dtm, int nb, int roots_all)
{
    slot_t *slots = mt_malloc(sizeof(slot_t) * 512);
    int ns = 0;
    uint64_t base = ++batch_no * 1024;
    for (int k = 0; k < K_N; k++) {
        if (dtm && (k >= K_REDUCE || k == K_BARRIER))
            continue;   /* the reductions' derived type is the affine one */
        /* Left out when validating under MPICH 4.0, which gets them wrong: Reduce_scatter with
         * zero counts on groups of different sizes (an assertion fails) */
        if (!mt_weft && k == K_RS && cnt == 0)
            continue;
        int nr = rooted(k) ? 2 : 1;
        for (int rg = 0; rg < nr; rg++) {
            int gsize = !rooted(k) ? 1 : (e->g == rg ? e->n : e->rn);
            for (int rr = 0; rr < gsize; rr++) {
                if (!roots_all && rr != 0 && rr != gsize - 1)
                    continue;
                /* MPICH 4.0: outstanding MPI_Ibcasts whose root is not its group's rank 0 deliver
                 * nothing (4 ranks, one Ibcast per root suffice) */
                if (!mt_weft && nb && k == K_BCAST && rr != 0)
                    continue;
                slot_t *s = &slots[ns];
                memset(s, 0, sizeof(*s));
                s->kind = k;
                s->rg = rg;
                s->rr = rr;
                s->cnt = cnt;
                s->dtm = dtm;
                s->use_c = (int)((batch_no + (uint64_t)ns) % 2);
                s->seed = base + (uint64_t)ns;
                prep(e, s);
                ns++;
            }
        }
    }
    if (getenv("COLL_INTER_VERBOSE") && mt_rank == 0)
        printf("split %s count %lld dtmode %d %s: %d calls\n", e->split, (long long)cnt, dtm,
               nb ? "nonblocking" : "blocking", ns);
    if (nb) {
        MPI_Request *reqs = mt_malloc(sizeof(MPI_Request) * (size_t)ns);
        for (int i = 0; i < ns; i++)
            MT_CALL(start(e, &slots[i], &reqs[i]));
        compute();
        MT_CALL(MPI_Waitall(ns, reqs, MPI_STATUSES_IGNORE));
        free(reqs);
    } else {
        for (int i = 0; i < ns; i++) {
            if (getenv("COLL_INTER_VERBOSE") && atoi(getenv("COLL_INTER_VERBOSE")) > 1)
                fprintf(stderr, "rank %d: %s root (%d, %d)\n", mt_rank, knames[slots[i].kind],
                        slots[i].rg, slots[i].rr);
            MT_CALL(start(e, &slots[i], NULL));
        }
    }
    for (int i = 0; i < ns; i++) {
        check(e, &slots[i], nb);
        slot_free(&slots[i]);
    }
    free(slots);
}

/* ---- errors ---- */

/* Only with --weft: MPICH 4.0 takes MPI_IN_PLACE on intercommunicators in some calls (erroneous
 * use, which the standard does not require it to detect); such a call is then not made at all. */
static void expect_inplace(const char *what, int rc)
{
    int cls = mt_class(rc);
    MT_TRUE(cls == MPI_ERR_ARG || cls == MPI_ERR_BUFFER,
            "%s with MPI_IN_PLACE on an intercommunicator expected MPI_ERR_ARG or MPI_ERR_BUFFER "
            "got %s", what, mt_class_name(cls));
}

static void errors(const env_t *e)
{
    MPI_Comm ec;
    MT_CALL(MPI_Comm_dup(e->ic, &ec));
    MT_CALL(MPI_Comm_set_errhandler(ec, MPI_ERRORS_RETURN));
    int in[64] = { 0 }, out[64], rn = e->rn;
    int cnts[64], dsp[64];
    MPI_Datatype types[64];
    for (int j = 0; j < 64; j++)
        cnts[j] = 1, dsp[j] = j, types[j] = MPI_INT;
    MPI_Request req;
    if (mt_weft) {
        expect_inplace("MPI_Allreduce", MPI_Allreduce(MPI_IN_PLACE, out, 2, MPI_INT, MPI_SUM, ec));
        expect_inplace("MPI_Iallreduce",
                       MPI_Iallreduce(MPI_IN_PLACE, out, 2, MPI_INT, MPI_SUM, ec, &req));
        expect_inplace("MPI_Allgather",
                       MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, ec));
        expect_inplace("MPI_Allgatherv",
                       MPI_Allgatherv(MPI_IN_PLACE, 1, MPI_INT, out, cnts, dsp, MPI_INT, ec));
        expect_inplace("MPI_Alltoall", MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, ec));
        expect_inplace("MPI_Alltoallv",
                       MPI_Alltoallv(MPI_IN_PLACE, cnts, dsp, MPI_INT, out, cnts, dsp, MPI_INT,
                                     ec));
        expect_inplace("MPI_Alltoallw", MPI_Alltoallw(MPI_IN_PLACE, cnts, dsp, types, out, cnts,
                                                      dsp, types, ec));
        expect_inplace("MPI_Reduce_scatter_block",
                       MPI_Reduce_scatter_block(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, ec));
        expect_inplace("MPI_Reduce_scatter",
                       MPI_Reduce_scatter(MPI_IN_PLACE, out, cnts, MPI_INT, MPI_SUM, ec));
    }
    /* Scan and Exscan are not defined on intercommunicators */
    MT_CLASS_EQ("MPI_Scan on an intercommunicator", MPI_ERR_COMM,
                MPI_Scan(in, out, 1, MPI_INT, MPI_SUM, ec));
    MT_CLASS_EQ("MPI_Exscan on an intercommunicator", MPI_ERR_COMM,
                MPI_Exscan(in, out, 1, MPI_INT, MPI_SUM, ec));
    MT_CLASS_EQ("MPI_Iscan on an intercommunicator", MPI_ERR_COMM,
                MPI_Iscan(in, out, 1, MPI_INT, MPI_SUM, ec, &req));
    MT_CLASS_EQ("MPI_Iexscan on an intercommunicator", MPI_ERR_COMM,
                MPI_Iexscan(in, out, 1, MPI_INT, MPI_SUM, ec, &req));
    MT_CLASS_EQ("MPI_Scan_c on an intercommunicator", MPI_ERR_COMM,
                MPI_Scan_c(in, out, 1, MPI_INT, MPI_SUM, ec));
    MT_CLASS_EQ("MPI_Exscan_c on an intercommunicator", MPI_ERR_COMM,
                MPI_Exscan_c(in, out, 1, MPI_INT, MPI_SUM, ec));
    /* roots that are neither MPI_ROOT, MPI_PROC_NULL nor a remote rank */
    int bad[2] = { rn, -1000 };
    for (int b = 0; b < 2; b++) {
        int br = bad[b];
        MT_CLASS_EQ("MPI_Bcast bad root", MPI_ERR_ROOT, MPI_Bcast(out, 1, MPI_INT, br, ec));
        MT_CLASS_EQ("MPI_Ibcast bad root", MPI_ERR_ROOT,
                    MPI_Ibcast(out, 1, MPI_INT, br, ec, &req));
        MT_CLASS_EQ("MPI_Gather bad root", MPI_ERR_ROOT,
                    MPI_Gather(in, 1, MPI_INT, out, 1, MPI_INT, br, ec));
        MT_CLASS_EQ("MPI_Gatherv bad root", MPI_ERR_ROOT,
                    MPI_Gatherv(in, 1, MPI_INT, out, cnts, dsp, MPI_INT, br, ec));
        MT_CLASS_EQ("MPI_Scatter bad root", MPI_ERR_ROOT,
                    MPI_Scatter(in, 1, MPI_INT, out, 1, MPI_INT, br, ec));
        MT_CLASS_EQ("MPI_Scatterv bad root", MPI_ERR_ROOT,
                    MPI_Scatterv(in, cnts, dsp, MPI_INT, out, 1, MPI_INT, br, ec));
        MT_CLASS_EQ("MPI_Reduce bad root", MPI_ERR_ROOT,
                    MPI_Reduce(in, out, 1, MPI_INT, MPI_SUM, br, ec));
        MT_CLASS_EQ("MPI_Ireduce_c bad root", MPI_ERR_ROOT,
                    MPI_Ireduce_c(in, out, 1, MPI_INT, MPI_SUM, br, ec, &req));
    }
    if (mt_weft) {
        /* arguments that are not significant at a process are not checked there: garbage at
         * MPI_PROC_NULL, the send side at the root of Gather/Reduce, the receive side of the
         * senders (root: group 1's rank 0) */
        int root = e->g == 1 ? (e->r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int v[64], x = 1000 + e->w;
        for (int j = 0; j < 64; j++)
            v[j] = -1;
        if (root == MPI_PROC_NULL) {
            MT_CALL(MPI_Bcast(NULL, -1, MPI_DATATYPE_NULL, root, ec));
            MT_CALL(MPI_Gather(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root, ec));
            MT_CALL(MPI_Reduce(NULL, NULL, -1, MPI_DATATYPE_NULL, MPI_OP_NULL, root, ec));
            MT_CALL(MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, NULL, -1, MPI_DATATYPE_NULL, root,
                                ec));
        } else if (root == MPI_ROOT) {
            v[0] = 4242;
            MT_CALL(MPI_Bcast(v, 1, MPI_INT, root, ec));
            MT_CALL(MPI_Gather(NULL, -1, MPI_DATATYPE_NULL, v, 1, MPI_INT, root, ec));
            for (int j = 0; j < rn; j++)
                MT_EQ("Gather at the root from remote rank j", 1000 + e->R[j], v[j]);
            MT_CALL(MPI_Reduce(NULL, &x, 1, MPI_INT, MPI_SUM, root, ec));
            int sum = 0;
            for (int j = 0; j < rn; j++)
                sum += 1000 + e->R[j];
            MT_EQ("Reduce at the root", sum, x);
            for (int j = 0; j < rn; j++)
                v[j] = 7000 + e->R[j];
            MT_CALL(MPI_Scatter(v, 1, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, ec));
        } else {
            MT_CALL(MPI_Bcast(v, 1, MPI_INT, root, ec));
            MT_EQ("Bcast from the remote root", 4242, v[0]);
            MT_CALL(MPI_Gather(&x, 1, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, ec));
            MT_CALL(MPI_Reduce(&x, NULL, 1, MPI_INT, MPI_SUM, root, ec));
            MT_CALL(MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, v, 1, MPI_INT, root, ec));
            MT_EQ("Scatter from the remote root", 7000 + e->w, v[0]);
        }
    }
    /* the communicator still works after the rejected calls */
    int one = 1, got = 0;
    MT_CALL(MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, ec));
    MT_EQ("Allreduce of ones over the remote group after the errors", rn, got);
    if (mt_weft) {
        /* counts that disagree between the groups: the receiving leader reports the truncation */
        int big[8] = { 0 };
        int bcroot = e->g == 0 ? (e->r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int rc = MPI_Bcast(big, bcroot == MPI_ROOT ? 8 : 4, MPI_INT, bcroot, ec);
        if (e->g == 1 && e->r == 0)
            MT_CLASS_EQ("Bcast of 8 ints received as 4 (receiving leader)", MPI_ERR_TRUNCATE, rc);
        rc = MPI_Allreduce(big, out, e->g == 0 ? 4 : 8, MPI_INT, MPI_SUM, ec);
        if (e->g == 0 && e->r == 0)
            MT_CLASS_EQ("Allreduce of 8 ints received as 4 (group 0's leader)", MPI_ERR_TRUNCATE,
                        rc);
        rc = MPI_Allgather(big, e->g == 0 ? 2 : 1, MPI_INT, out, 1, MPI_INT, ec);
        if (e->g == 1 && e->r == 0)
            MT_CLASS_EQ("Allgather of 2 ints received as 1 (group 1's leader)", MPI_ERR_TRUNCATE,
                        rc);
    }
    /* rooted: the sending group's send buffer, the root's receive buffer (root: group 0's rank
     * 0). Last: the idle processes succeed, so the communicator's processes no longer agree on
     * how many collectives ran on it (erroneous use: MPI leaves it undefined) */
    if (mt_weft) {
        int root = e->g == 0 ? (e->r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        if (root >= 0) {
            expect_inplace("MPI_Gather (sendbuf)",
                           MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, NULL, 0, MPI_INT, root, ec));
            expect_inplace("MPI_Reduce (sendbuf)",
                           MPI_Reduce(MPI_IN_PLACE, NULL, 1, MPI_INT, MPI_SUM, root, ec));
            expect_inplace("MPI_Scatter (recvbuf)",
                           MPI_Scatter(NULL, 0, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, ec));
        } else if (root == MPI_ROOT) {
            expect_inplace("MPI_Gather (recvbuf)",
                           MPI_Gather(NULL, 0, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, ec));
            expect_inplace("MPI_Reduce (recvbuf)",
                           MPI_Reduce(NULL, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, root, ec));
            expect_inplace("MPI_Scatter (sendbuf)",
                           MPI_Scatter(MPI_IN_PLACE, 1, MPI_INT, NULL, 0, MPI_INT, root, ec));
        } else {
            MT_CALL(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root, ec));
            MT_CALL(MPI_Reduce(NULL, NULL, 1, MPI_INT, MPI_SUM, root, ec));
            MT_CALL(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, root, ec));
        }
    }
    MT_CALL(MPI_Comm_free(&ec));
}

/* ---- merge ---- */

static void merge(const env_t *e)
{
    MPI_Comm m;
    MT_CALL(MPI_Intercomm_merge(e->ic, e->g, &m));
    int mr, ms;
    MT_CALL(MPI_Comm_rank(m, &mr));
    MT_CALL(MPI_Comm_size(m, &ms));
    MT_EQ("merged size", e->n + e->rn, ms);
    MT_EQ("merged rank (group 0 first)", e->g == 0 ? e->r : e->rn + e->r, mr);
    int s = 0;
    MT_CALL(MPI_Allreduce(&e->w, &s, 1, MPI_INT, MPI_SUM, m));
    MT_EQ("sum of world ranks over the merged communicator", mt_size * (mt_size - 1) / 2, s);
    MT_CALL(MPI_Comm_free(&m));
}

/* ---- driver ---- */

static void one_split(const char *name, int (*color)(int w, int k), int k, MPI_Count big)
{
    env_t e = { .split = name, .w = mt_rank };
    e.g = color(mt_rank, k);
    MPI_Comm local;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, e.g, mt_rank, &local));
    e.L = mt_malloc(sizeof(int) * (size_t)mt_size);
    e.R = mt_malloc(sizeof(int) * (size_t)mt_size);
    int rleader = -1;
    for (int w = 0; w < mt_size; w++) {
        if (color(w, k) == e.g)
            e.L[e.n++] = w;
        else {
            if (rleader < 0)
                rleader = w;
            e.R[e.rn++] = w;
        }
    }
    MT_CALL(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rleader, 77, &e.ic));
    MT_CALL(MPI_Comm_set_errhandler(e.ic, MPI_ERRORS_RETURN));
    int v;
    MT_CALL(MPI_Comm_rank(e.ic, &e.r));
    MT_EQ("local rank", e.L[e.r], mt_rank);
    MT_CALL(MPI_Comm_size(e.ic, &v));
    MT_EQ("local size", e.n, v);
    MT_CALL(MPI_Comm_remote_size(e.ic, &v));
    MT_EQ("remote size", e.rn, v);
    const MPI_Count counts[] = { 0, 1, 700, big };
    for (int ci = 0; ci < 4; ci++) {
        MPI_Count cnt = counts[ci];
        int large = ci == 3;
        for (int nb = 0; nb < 2; nb++) {
            run_batch(&e, cnt, 0, nb, !large || mt_size <= 4);
            if (ci == 2) {
                run_batch(&e, cnt, 1, nb, 1);
                run_batch(&e, cnt, 2, nb, 1);
            }
        }
    }
    errors(&e);
    merge(&e);
    MT_CALL(MPI_Comm_free(&e.ic));
    MT_CALL(MPI_Comm_free(&local));
    free(e.L);
    free(e.R);
}

static int color_low(int w, int k)
{
    return w >= k;
}

static int color_parity(int w, int k)
{
    (void)k;
    return w % 2;
}

int main(int argc, char **argv)
{
    long bytes = mt_init_args(argc, argv, 262144);
    mt_init(&argc, &argv);
    if (mt_size < 2) {
        if (mt_rank == 0)
            printf("coll_inter: needs 2 ranks or more, nothing to do\n");
        return mt_finish("coll_inter");
    }
    MT_CALL(MPI_Type_create_resized(MPI_INT, 0, 8, &T_STRIDE));
    MT_CALL(MPI_Type_commit(&T_STRIDE));
    MT_CALL(MPI_Type_contiguous(2, MPI_UNSIGNED, &T_AFF));
    MT_CALL(MPI_Type_commit(&T_AFF));
    MT_CALL(MPI_Op_create(aff_op, 0, &OP_AFF));
    MPI_Count big = bytes / 4;
    char name[64];
    for (int k = 1; k < mt_size; k++) {
        if (mt_size > 4 && k != 1 && k != 3)
            continue;
        snprintf(name, sizeof(name), "0..%d|%d..%d", k - 1, k, mt_size - 1);
        one_split(name, color_low, k, big);
    }
    if (mt_size > 2)
        one_split("even|odd", color_parity, 0, big);
    MT_CALL(MPI_Op_free(&OP_AFF));
    MT_CALL(MPI_Type_free(&T_AFF));
    MT_CALL(MPI_Type_free(&T_STRIDE));
    return mt_finish("coll_inter");
}
