/* Datatype constructors checked byte by byte: every type is also built here as an explicit type
 * map (a list of (displacement, size) entries, composed the way the standard defines each
 * constructor), and MPI_Pack / MPI_Unpack must agree with packing that map by hand. Also size,
 * extent, true extent, MPI_Get_elements / MPI_Get_count and the envelope. Runs on any rank count
 * (each rank checks the same things locally). */
#include "mpitest.h"

typedef struct {
    long n, cap;
    long *disp;
    int *size;
    long lb, ub;
    int align;
} tmap;

static void tm_push(tmap *t, long d, int s)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->disp = realloc(t->disp, t->cap * sizeof(long));
        t->size = realloc(t->size, t->cap * sizeof(int));
    }
    t->disp[t->n] = d;
    t->size[t->n++] = s;
}
static void tm_free(tmap *t) { free(t->disp); free(t->size); }
static long tm_extent(const tmap *t) { return t->ub - t->lb; }

static tmap tm_basic(int size)
{
    tmap t = { 0 };
    tm_push(&t, 0, size);
    t.ub = size;
    t.align = size > 8 ? 8 : size;
    return t;
}

/* block i: bl[i] copies of *olds[i] at byte displacement d[i]; bounds from the old bounds. */
static tmap tm_blocks(long count, const long *bl, const long *d, const tmap *const *olds, int pad)
{
    tmap t = { 0 };
    int any = 0;
    for (long i = 0; i < count; i++) {
        const tmap *o = olds[i];
        long e = tm_extent(o);
        for (long k = 0; k < bl[i]; k++)
            for (long j = 0; j < o->n; j++)
                tm_push(&t, d[i] + k * e + o->disp[j], o->size[j]);
        if (bl[i] > 0) {
            long lo = d[i] + o->lb + (e < 0 ? (bl[i] - 1) * e : 0);
            long hi = d[i] + o->ub + (e > 0 ? (bl[i] - 1) * e : 0);
            if (!any || lo < t.lb) t.lb = lo;
            if (!any || hi > t.ub) t.ub = hi;
            any = 1;
        }
        if (o->align > t.align) t.align = o->align;
    }
    if (pad && t.align > 1 && (t.ub - t.lb) % t.align)
        t.ub += t.align - (t.ub - t.lb) % t.align;
    return t;
}

static tmap tm_vector(long count, long bl, long stride_bytes, const tmap *o)
{
    long *b = malloc((count + 1) * sizeof(long)), *d = malloc((count + 1) * sizeof(long));
    const tmap **os = malloc((count + 1) * sizeof(*os));
    for (long i = 0; i < count; i++) { b[i] = bl; d[i] = i * stride_bytes; os[i] = o; }
    tmap t = tm_blocks(count, b, d, os, 0);
    free(b); free(d); free(os);
    return t;
}

static tmap tm_resized(const tmap *o, long lb, long extent)
{
    tmap t = { 0 };
    for (long j = 0; j < o->n; j++)
        tm_push(&t, o->disp[j], o->size[j]);
    t.lb = lb;
    t.ub = lb + extent;
    t.align = o->align;
    return t;
}

/* Subarray: the box's elements in the array's order, each a copy of o; lb 0, whole extent. */
static tmap tm_subarray(int nd, const int *sizes, const int *sub, const int *start, int order,
                        const tmap *o)
{
    tmap t = { 0 };
    long e = tm_extent(o), total = 1;
    int idx[8] = { 0 };
    long nelem = 1;
    for (int i = 0; i < nd; i++) { nelem *= sub[i]; total *= sizes[i]; }
    for (long k = 0; k < nelem; k++) {
        long lin = 0;   /* linear index in the full array */
        for (int i = 0; i < nd; i++) {
            int dd = order == MPI_ORDER_C ? i : nd - 1 - i;
            lin = lin * sizes[dd] + start[dd] + idx[dd];
        }
        for (long j = 0; j < o->n; j++)
            tm_push(&t, lin * e + o->disp[j], o->size[j]);
        for (int i = nd - 1; i >= 0; i--) {   /* next index, fastest dimension first */
            int dd = order == MPI_ORDER_C ? i : nd - 1 - i;
            if (++idx[dd] < sub[dd]) break;
            idx[dd] = 0;
        }
    }
    t.lb = 0;
    t.ub = total * e;
    t.align = o->align;
    return t;
}

/* Darray: walk the global array in its order; keep the elements this rank owns in every
 * dimension (block: index / darg, cyclic: (index / darg) % p). */
static tmap tm_darray(int size, int rank, int nd, const int *g, const int *dist, const int *darg,
                      const int *p, int order, const tmap *o)
{
    int coords[8];
    for (int i = nd - 1, r = rank; i >= 0; i--) { coords[i] = r % p[i]; r /= p[i]; }
    (void)size;
    tmap t = { 0 };
    long e = tm_extent(o), total = 1;
    for (int i = 0; i < nd; i++) total *= g[i];
    int idx[8] = { 0 };
    for (long k = 0; k < total; k++) {
        long lin = 0;
        int mine = 1;
        for (int i = 0; i < nd; i++) {
            int dd = order == MPI_ORDER_C ? i : nd - 1 - i;
            lin = lin * g[dd] + idx[dd];
            int owner = 0;
            if (dist[dd] == MPI_DISTRIBUTE_BLOCK) {
                int b = darg[dd] == MPI_DISTRIBUTE_DFLT_DARG ? (g[dd] + p[dd] - 1) / p[dd] : darg[dd];
                owner = idx[dd] / b;
            } else if (dist[dd] == MPI_DISTRIBUTE_CYCLIC) {
                int b = darg[dd] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[dd];
                owner = (idx[dd] / b) % p[dd];
            }
            if (dist[dd] != MPI_DISTRIBUTE_NONE && owner != coords[dd]) mine = 0;
        }
        if (mine)
            for (long j = 0; j < o->n; j++)
                tm_push(&t, lin * e + o->disp[j], o->size[j]);
        for (int i = nd - 1; i >= 0; i--) {
            int dd = order == MPI_ORDER_C ? i : nd - 1 - i;
            if (++idx[dd] < g[dd]) break;
            idx[dd] = 0;
        }
    }
    t.lb = 0;
    t.ub = total * e;
    t.align = o->align;
    return t;
}

/* ---- the check ---- */

/* Darrays under another MPI: MPICH 4.0 asserts in MPI_Get_elements on some, and gives a true lb
 * one element low for some cyclic ones (Fortran order), so those checks are Weft-only. */
static int skip_elements;


/* Rebuild a derived type from its envelope and contents with the constructor they name; NULL
 * type for a named one. The derived types the contents hand back are freed here. */
static MPI_Datatype rebuild(const char *name, MPI_Datatype dt)
{
    int ni, na, nd, comb;
    MPI_Count cni, cna, cnl, cnd;
    MT_CALL(MPI_Type_get_envelope_c(dt, &cni, &cna, &cnl, &cnd, &comb));
    if (comb == MPI_COMBINER_NAMED || cnl > 0)   /* large-count forms: not rebuilt here */
        return MPI_DATATYPE_NULL;
    MT_CALL(MPI_Type_get_envelope(dt, &ni, &na, &nd, &comb));
    int *in = mt_malloc((ni + 1) * sizeof(int));
    MPI_Aint *ad = mt_malloc((na + 1) * sizeof(MPI_Aint));
    MPI_Datatype *ty = mt_malloc((nd + 1) * sizeof(MPI_Datatype)), nt = MPI_DATATYPE_NULL;
    MT_CALL(MPI_Type_get_contents(dt, ni, na, nd, in, ad, ty));
    int n = ni ? in[0] : 0;
    switch (comb) {
    case MPI_COMBINER_DUP: MT_CALL(MPI_Type_dup(ty[0], &nt)); break;
    case MPI_COMBINER_CONTIGUOUS: MT_CALL(MPI_Type_contiguous(in[0], ty[0], &nt)); break;
    case MPI_COMBINER_VECTOR: MT_CALL(MPI_Type_vector(in[0], in[1], in[2], ty[0], &nt)); break;
    case MPI_COMBINER_HVECTOR: MT_CALL(MPI_Type_create_hvector(in[0], in[1], ad[0], ty[0], &nt)); break;
    case MPI_COMBINER_INDEXED: MT_CALL(MPI_Type_indexed(n, in + 1, in + 1 + n, ty[0], &nt)); break;
    case MPI_COMBINER_HINDEXED: MT_CALL(MPI_Type_create_hindexed(n, in + 1, ad, ty[0], &nt)); break;
    case MPI_COMBINER_INDEXED_BLOCK:
        MT_CALL(MPI_Type_create_indexed_block(n, in[1], in + 2, ty[0], &nt));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        MT_CALL(MPI_Type_create_hindexed_block(n, in[1], ad, ty[0], &nt));
        break;
    case MPI_COMBINER_STRUCT: MT_CALL(MPI_Type_create_struct(n, in + 1, ad, ty, &nt)); break;
    case MPI_COMBINER_SUBARRAY:
        MT_CALL(MPI_Type_create_subarray(n, in + 1, in + 1 + n, in + 1 + 2 * n, in[1 + 3 * n], ty[0], &nt));
        break;
    case MPI_COMBINER_DARRAY: {
        int nd2 = in[2];
        MT_CALL(MPI_Type_create_darray(in[0], in[1], nd2, in + 3, in + 3 + nd2, in + 3 + 2 * nd2,
                                       in + 3 + 3 * nd2, in[3 + 4 * nd2], ty[0], &nt));
        break;
    }
    case MPI_COMBINER_RESIZED: MT_CALL(MPI_Type_create_resized(ty[0], ad[0], ad[1], &nt)); break;
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    case MPI_COMBINER_VALUE_INDEX: MT_CALL(MPI_Type_get_value_index(ty[0], ty[1], &nt)); break;
#endif
    default: MT_FAIL("%s: unexpected combiner %d", name, comb);
    }
    for (int k = 0; k < nd; k++) {
        int a, b, c, cb;
        MT_CALL(MPI_Type_get_envelope(ty[k], &a, &b, &c, &cb));
        if (cb != MPI_COMBINER_NAMED)
            MT_CALL(MPI_Type_free(&ty[k]));
    }
    MT_CALL(MPI_Type_commit(&nt));
    free(in); free(ad); free(ty);
    return nt;
}

static void check_type(const char *name, MPI_Datatype dt, const tmap *t, int count)
{
    long size = 0, tlo = 0, thi = 0;
    for (long j = 0; j < t->n; j++) {
        size += t->size[j];
        long lo = t->disp[j], hi = lo + t->size[j];
        if (j == 0 || lo < tlo) tlo = lo;
        if (j == 0 || hi > thi) thi = hi;
    }
    char what[200];
    int isz;
    MPI_Aint lb, ext, tlb, text;
    MT_CALL(MPI_Type_size(dt, &isz));
    snprintf(what, sizeof what, "%s: MPI_Type_size", name);
    MT_EQ(what, size, isz);
    MT_CALL(MPI_Type_get_extent(dt, &lb, &ext));
    snprintf(what, sizeof what, "%s: lb", name);
    MT_EQ(what, t->lb, lb);
    snprintf(what, sizeof what, "%s: extent", name);
    MT_EQ(what, tm_extent(t), ext);
    MT_CALL(MPI_Type_get_true_extent(dt, &tlb, &text));
    if (!skip_elements) {
        snprintf(what, sizeof what, "%s: true lb", name);
        MT_EQ(what, tlo, tlb);
        snprintf(what, sizeof what, "%s: true extent", name);
        MT_EQ(what, thi - tlo, text);
    }
    MPI_Count csz, clb, cext;
    MT_CALL(MPI_Type_size_c(dt, &csz));
    MT_CALL(MPI_Type_get_extent_c(dt, &clb, &cext));
    snprintf(what, sizeof what, "%s: MPI_Type_size_c / get_extent_c", name);
    MT_TRUE(csz == size && clb == lb && cext == ext, "%s disagree with the int forms", what);

    /* memory: every element's entries, with a margin of guard bytes either side */
    long e = tm_extent(t), lo = 0, hi = 1;
    for (int i = 0; i < count; i++)
        for (long j = 0; j < t->n; j++) {
            long a = i * e + t->disp[j];
            if (a < lo) lo = a;
            if (a + t->size[j] > hi) hi = a + t->size[j];
        }
    long span = hi - lo + 64;
    unsigned char *mem = mt_malloc(span), *base = mem + 32 - lo;
    mt_fill(mem, span, 7);
    long nbytes = size * count;
    unsigned char *ref = mt_malloc(nbytes + 1), *got = mt_malloc(nbytes + 1);
    long p = 0;
    for (int i = 0; i < count; i++)
        for (long j = 0; j < t->n; j++) {
            memcpy(ref + p, base + i * e + t->disp[j], t->size[j]);
            p += t->size[j];
        }
    int psize = -1, pos = 0;
    MT_CALL(MPI_Pack_size(count, dt, MPI_COMM_WORLD, &psize));
    snprintf(what, sizeof what, "%s: MPI_Pack_size", name);
    MT_TRUE(psize >= nbytes, "%s expected >= %ld got %d", what, nbytes, psize);
    unsigned char *pk = mt_malloc(psize + 1);
    MT_CALL(MPI_Pack(base, count, dt, pk, psize, &pos, MPI_COMM_WORLD));
    /* the type rebuilt from its contents packs the same bytes */
    MPI_Datatype rb = rebuild(name, dt);
    if (rb != MPI_DATATYPE_NULL) {
        unsigned char *pk2 = mt_malloc(psize + 1);
        int pos2 = 0, rsz;
        MPI_Aint rlb, rext;
        MT_CALL(MPI_Type_size(rb, &rsz));
        MT_CALL(MPI_Type_get_extent(rb, &rlb, &rext));
        MT_TRUE(rsz == size && rlb == t->lb && rext == tm_extent(t),
                "%s rebuilt from its contents: size/lb/extent expected %ld/%ld/%ld got %d/%ld/%ld",
                name, size, t->lb, tm_extent(t), rsz, (long)rlb, (long)rext);
        MT_CALL(MPI_Pack(base, count, rb, pk2, psize, &pos2, MPI_COMM_WORLD));
        MT_TRUE(pos2 == pos && memcmp(pk, pk2, pos) == 0,
                "%s rebuilt from its contents packs differently", name);
        MT_CALL(MPI_Type_free(&rb));
        free(pk2);
    }
    /* unpack into a poisoned copy: must rebuild exactly the entries, nothing else */
    unsigned char *mem2 = mt_malloc(span), *base2 = mem2 + 32 - lo;
    memset(mem2, 0xEE, span);
    int upos = 0;
    MT_CALL(MPI_Unpack(pk, psize, &upos, base2, count, dt, MPI_COMM_WORLD));
    snprintf(what, sizeof what, "%s: MPI_Unpack position", name);
    MT_EQ(what, pos, upos);
    if (mt_weft) {   /* Weft's packed format is the data itself */
        snprintf(what, sizeof what, "%s: MPI_Pack position", name);
        MT_EQ(what, nbytes, pos);
        for (long k = 0; k < nbytes; k++)
            if (pk[k] != ref[k])
                MT_FAIL("%s: packed byte %ld of %ld expected %u got %u", name, k, nbytes, ref[k],
                        pk[k]);
    }
    unsigned char *exp = mt_malloc(span);
    memset(exp, 0xEE, span);
    for (int i = 0; i < count; i++)
        for (long j = 0; j < t->n; j++) {
            long a = i * e + t->disp[j] + 32 - lo;
            memcpy(exp + a, mem + a, t->size[j]);
        }
    for (long k = 0; k < span; k++)
        if (mem2[k] != exp[k])
            MT_FAIL("%s: unpacked byte %ld (offset %ld) expected %u got %u", name, k, k - 32 + lo,
                    exp[k], mem2[k]);

    /* elements and count of a status holding the packed bytes */
    MPI_Status st;
    int n = -1;
    MT_CALL(MPI_Status_set_elements(&st, MPI_BYTE, (int)nbytes));
    if (!skip_elements) {
        MT_CALL(MPI_Get_elements(&st, dt, &n));
        snprintf(what, sizeof what, "%s: MPI_Get_elements", name);
        MT_EQ(what, t->n * count, n);
    }
    MT_CALL(MPI_Get_count(&st, dt, &n));
    snprintf(what, sizeof what, "%s: MPI_Get_count", name);
    MT_EQ(what, size ? count : 0, n);
    if (t->n && count && mt_weft) {   /* MPICH 4.0 asserts on some partial darray elements */
        int last = t->size[t->n - 1];
        MT_CALL(MPI_Status_set_elements(&st, MPI_BYTE, (int)nbytes - last));
        MT_CALL(MPI_Get_elements(&st, dt, &n));
        snprintf(what, sizeof what, "%s: MPI_Get_elements of a partial element", name);
        MT_EQ(what, t->n * count - 1, n);
        MT_CALL(MPI_Get_count(&st, dt, &n));
        snprintf(what, sizeof what, "%s: MPI_Get_count of a partial element", name);
        MT_EQ(what, MPI_UNDEFINED, n);
    }
    free(mem); free(mem2); free(exp); free(ref); free(got); free(pk);
}

static void check_envelope(const char *name, MPI_Datatype dt, int comb, int ni, int na, int nd)
{
    int i, a, d, c;
    MT_CALL(MPI_Type_get_envelope(dt, &i, &a, &d, &c));
    if (c != comb || i != ni || a != na || d != nd)
        MT_FAIL("%s: envelope expected (combiner %d, %d ints, %d addrs, %d types) got (%d, %d, %d, %d)",
                name, comb, ni, na, nd, c, i, a, d);
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MT_CALL(MPI_Type_commit(&t));
    return t;
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    tmap tint = tm_basic(sizeof(int)), tdbl = tm_basic(8), tshort = tm_basic(2),
         tchar = tm_basic(1), tflt = tm_basic(4);
    MPI_Datatype t, t2, t3;

    /* contiguous */
    t = commit((MPI_Type_contiguous(5, MPI_INT, &t), t));
    { tmap r = tm_vector(1, 5, 0, &tint); check_type("contiguous(5,int)", t, &r, 3); tm_free(&r); }
    check_envelope("contiguous", t, MPI_COMBINER_CONTIGUOUS, 1, 0, 1);
    MT_CALL(MPI_Type_free(&t));
    MT_EQ("MPI_Type_free sets MPI_DATATYPE_NULL", 1, t == MPI_DATATYPE_NULL);

    /* vector, positive and negative stride, and stride == blocklength */
    t = commit((MPI_Type_vector(4, 2, 3, MPI_INT, &t), t));
    tmap rv = tm_vector(4, 2, 3 * sizeof(int), &tint);
    check_type("vector(4,2,3,int)", t, &rv, 3);
    check_envelope("vector", t, MPI_COMBINER_VECTOR, 3, 0, 1);
    {
        int ints[3]; MPI_Aint ad[1]; MPI_Datatype ty[1];
        MT_CALL(MPI_Type_get_contents(t, 3, 0, 1, ints, ad, ty));
        MT_TRUE(ints[0] == 4 && ints[1] == 2 && ints[2] == 3 && ty[0] == MPI_INT,
                "vector contents expected (4,2,3,MPI_INT) got (%d,%d,%d)", ints[0], ints[1], ints[2]);
    }
    MPI_Datatype vec = t;   /* kept for nesting */
    t = commit((MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t), t));
    { tmap r = tm_vector(3, 1, -16, &tdbl); check_type("vector(3,1,-2,double)", t, &r, 4); tm_free(&r); }
    MT_CALL(MPI_Type_free(&t));
    t = commit((MPI_Type_vector(6, 2, 2, MPI_FLOAT, &t), t));
    { tmap r = tm_vector(6, 2, 8, &tflt); check_type("vector(6,2,2,float)", t, &r, 2); tm_free(&r); }
    MT_CALL(MPI_Type_free(&t));
    t = commit((MPI_Type_vector(0, 2, 2, MPI_FLOAT, &t), t));
    { tmap r = tm_vector(0, 2, 8, &tflt); check_type("vector(0,...)", t, &r, 2); tm_free(&r); }
    MT_CALL(MPI_Type_free(&t));

    /* hvector, hvector of a vector */
    t = commit((MPI_Type_create_hvector(3, 2, 20, MPI_SHORT, &t), t));
    { tmap r = tm_vector(3, 2, 20, &tshort); check_type("hvector(3,2,20,short)", t, &r, 3); tm_free(&r); }
    check_envelope("hvector", t, MPI_COMBINER_HVECTOR, 2, 1, 1);
    MT_CALL(MPI_Type_free(&t));
    t = commit((MPI_Type_create_hvector(3, 1, 100, vec, &t), t));
    { tmap r = tm_vector(3, 1, 100, &rv); check_type("hvector(3,1,100,vector)", t, &r, 2); tm_free(&r); }
    MT_CALL(MPI_Type_free(&t));

    /* indexed family */
    {
        int bl[3] = { 2, 1, 3 }, di[3] = { 0, 5, 2 };
        long lbl[3] = { 2, 1, 3 }, ld[3] = { 0, 5 * 4, 2 * 4 };
        const tmap *os[3] = { &tint, &tint, &tint };
        t = commit((MPI_Type_indexed(3, bl, di, MPI_INT, &t), t));
        tmap r = tm_blocks(3, lbl, ld, os, 0);
        check_type("indexed", t, &r, 3);
        check_envelope("indexed", t, MPI_COMBINER_INDEXED, 7, 0, 1);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
        MPI_Aint hd[2] = { 16, -8 };
        int hbl[2] = { 1, 2 };
        long lhbl[2] = { 1, 2 }, lhd[2] = { 16, -8 };
        const tmap *od[2] = { &tdbl, &tdbl };
        t = commit((MPI_Type_create_hindexed(2, hbl, hd, MPI_DOUBLE, &t), t));
        r = tm_blocks(2, lhbl, lhd, od, 0);
        check_type("hindexed", t, &r, 3);
        check_envelope("hindexed", t, MPI_COMBINER_HINDEXED, 3, 2, 1);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
        int ib[3] = { 1, 4, 7 };
        long lib[3] = { 2, 2, 2 }, lid[3] = { 4, 16, 28 };
        const tmap *of[3] = { &tflt, &tflt, &tflt };
        t = commit((MPI_Type_create_indexed_block(3, 2, ib, MPI_FLOAT, &t), t));
        r = tm_blocks(3, lib, lid, of, 0);
        check_type("indexed_block", t, &r, 2);
        check_envelope("indexed_block", t, MPI_COMBINER_INDEXED_BLOCK, 5, 0, 1);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
        MPI_Aint hb[2] = { 0, 40 };
        long lhb[2] = { 3, 3 }, lhbd[2] = { 0, 40 };
        const tmap *osh[2] = { &tshort, &tshort };
        t = commit((MPI_Type_create_hindexed_block(2, 3, hb, MPI_SHORT, &t), t));
        r = tm_blocks(2, lhb, lhbd, osh, 0);
        check_type("hindexed_block", t, &r, 3);
        check_envelope("hindexed_block", t, MPI_COMBINER_HINDEXED_BLOCK, 2, 2, 1);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
    }

    /* struct: padding to the alignment, adjacent fields, derived members */
    {
        int bl[3] = { 1, 1, 3 };
        MPI_Aint d[3] = { 0, 8, 16 };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
        long lbl[3] = { 1, 1, 3 }, ld[3] = { 0, 8, 16 };
        const tmap *os[3] = { &tint, &tdbl, &tchar };
        t = commit((MPI_Type_create_struct(3, bl, d, ty, &t), t));
        tmap r = tm_blocks(3, lbl, ld, os, 1);
        check_type("struct{int,double,char[3]}", t, &r, 3);
        check_envelope("struct", t, MPI_COMBINER_STRUCT, 4, 3, 3);
        {
            int ints[4]; MPI_Aint ad[3]; MPI_Datatype tys[3];
            MT_CALL(MPI_Type_get_contents(t, 4, 3, 3, ints, ad, tys));
            MT_TRUE(ints[0] == 3 && ints[3] == 3 && ad[1] == 8 && ad[2] == 16 && tys[1] == MPI_DOUBLE,
                    "struct contents wrong");
        }
        /* contiguous of the struct: gaps between elements */
        t2 = commit((MPI_Type_contiguous(2, t, &t2), t2));
        tmap r2 = tm_vector(1, 2, 0, &r);
        check_type("contiguous(2,struct)", t2, &r2, 2);
        MT_CALL(MPI_Type_free(&t2));
        tm_free(&r2);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
        /* adjacent fields: no gap */
        int bl2[2] = { 2, 1 };
        MPI_Aint d2[2] = { 0, 8 };
        MPI_Datatype ty2[2] = { MPI_INT, MPI_DOUBLE };
        long lbl2[2] = { 2, 1 }, ld2[2] = { 0, 8 };
        const tmap *os2[2] = { &tint, &tdbl };
        t = commit((MPI_Type_create_struct(2, bl2, d2, ty2, &t), t));
        r = tm_blocks(2, lbl2, ld2, os2, 1);
        check_type("struct{int[2],double}", t, &r, 4);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
        /* struct of derived types, one resized with a negative lb */
        t3 = commit((MPI_Type_create_resized(vec, -4, 64, &t3), t3));
        tmap rr = tm_resized(&rv, -4, 64);
        check_type("resized(vector,-4,64)", t3, &rr, 3);
        check_envelope("resized", t3, MPI_COMBINER_RESIZED, 0, 2, 1);
        int bl3[2] = { 2, 1 };
        MPI_Aint d3[2] = { 8, 200 };
        MPI_Datatype ty3[2] = { t3, MPI_SHORT };
        long lbl3[2] = { 2, 1 }, ld3[2] = { 8, 200 };
        const tmap *os3[2] = { &rr, &tshort };
        t = commit((MPI_Type_create_struct(2, bl3, d3, ty3, &t), t));
        r = tm_blocks(2, lbl3, ld3, os3, 0);
        /* The standard: the resized member's lb / ub markers are explicit, so the struct's ub is
         * the largest explicit ub and the short past it does not count. MPICH 4.0 ignores that
         * rule (extent 200), hence a Weft-only check. */
        r.ub = 8 + 64 * 2 - 4;
        if (mt_weft)
            check_type("struct{resized[2],short}", t, &r, 2);
        MT_CALL(MPI_Type_free(&t));
        MT_CALL(MPI_Type_free(&t3));
        tm_free(&r);
        tm_free(&rr);
    }

    /* subarrays: 3-D faces and a box, C and Fortran order */
    {
        int sizes[3] = { 6, 5, 7 };
        struct { int sub[3], start[3]; } cases[] = {
            { { 1, 5, 7 }, { 2, 0, 0 } }, { { 6, 1, 7 }, { 0, 3, 0 } }, { { 6, 5, 1 }, { 0, 0, 6 } },
            { { 3, 2, 4 }, { 1, 2, 3 } }, { { 6, 5, 7 }, { 0, 0, 0 } },
        };
        for (int order = 0; order < 2; order++)
            for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
                int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
                t = commit((MPI_Type_create_subarray(3, sizes, cases[k].sub, cases[k].start, o,
                                                     MPI_DOUBLE, &t), t));
                tmap r = tm_subarray(3, sizes, cases[k].sub, cases[k].start, o, &tdbl);
                char nm[64];
                snprintf(nm, sizeof nm, "subarray case %u order %d", k, o);
                check_type(nm, t, &r, 2);
                check_envelope(nm, t, MPI_COMBINER_SUBARRAY, 11, 0, 1);
                MT_CALL(MPI_Type_free(&t));
                tm_free(&r);
            }
    }

    /* darrays: every rank of a 2x3 grid, block / cyclic / none, both orders */
    {
        int g[3] = { 7, 10, 3 }, p[3] = { 2, 3, 1 };
        int dist[3][3] = { { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE },
                           { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK },
                           { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC } };
        int darg[3][3] = { { MPI_DISTRIBUTE_DFLT_DARG, 2, MPI_DISTRIBUTE_DFLT_DARG },
                           { 3, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG },
                           { MPI_DISTRIBUTE_DFLT_DARG, 4, 1 } };
        skip_elements = !mt_weft;
        for (int c = 0; c < 3; c++)
            for (int order = 0; order < 2; order++)
                for (int rank = 0; rank < 6; rank++) {
                    int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
                    t = commit((MPI_Type_create_darray(6, rank, 3, g, dist[c], darg[c], p, o,
                                                       MPI_INT, &t), t));
                    tmap r = tm_darray(6, rank, 3, g, dist[c], darg[c], p, o, &tint);
                    char nm[64];
                    snprintf(nm, sizeof nm, "darray case %d order %d rank %d", c, o, rank);
                    check_type(nm, t, &r, 1);
                    MT_CALL(MPI_Type_free(&t));
                    tm_free(&r);
                }
        skip_elements = 0;
    }

    /* pair types: no padding in the packed form */
    {
        struct { double d; int i; } di;
        (void)di;
        long bl[2] = { 1, 1 }, d[2] = { 0, 8 };
        const tmap *os[2] = { &tdbl, &tint };
        tmap r = tm_blocks(2, bl, d, os, 1);
        check_type("MPI_DOUBLE_INT", MPI_DOUBLE_INT, &r, 5);
        tm_free(&r);
        long d2[2] = { 0, 4 };
        const tmap *os2[2] = { &tshort, &tint };
        r = tm_blocks(2, bl, d2, os2, 1);
        check_type("MPI_SHORT_INT", MPI_SHORT_INT, &r, 3);
        tm_free(&r);
    }

    /* dup keeps the layout; contents of a type whose old type the user freed */
    MT_CALL(MPI_Type_dup(vec, &t));
    check_type("dup(vector)", t, &rv, 3);
    check_envelope("dup", t, MPI_COMBINER_DUP, 0, 0, 1);
    t2 = commit((MPI_Type_contiguous(2, vec, &t2), t2));
    MT_CALL(MPI_Type_free(&vec));
    {
        int ints[1]; MPI_Aint ad[1]; MPI_Datatype ty[1];
        MT_CALL(MPI_Type_get_contents(t2, 1, 0, 1, ints, ad, ty));
        MT_EQ("contents of contiguous(2, freed vector): count", 2, ints[0]);
        check_type("type from get_contents", ty[0], &rv, 2);
        check_envelope("type from get_contents", ty[0], MPI_COMBINER_VECTOR, 3, 0, 1);
        MT_CALL(MPI_Type_free(&ty[0]));
        tmap r = tm_vector(1, 2, 0, &rv);
        check_type("contiguous(2, freed vector)", t2, &r, 2);
        tm_free(&r);
    }
    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Type_free(&t2));

    /* large-count forms and their envelope */
    {
        MPI_Count cnt = 3, bl = 2, st = 5;
        t = commit((MPI_Type_vector_c(cnt, bl, st, MPI_INT, &t), t));
        tmap r = tm_vector(3, 2, 20, &tint);
        check_type("vector_c", t, &r, 2);
        MPI_Count ni, na, nl, nd;
        int comb;
        MT_CALL(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb));
        MT_TRUE(comb == MPI_COMBINER_VECTOR && ni == 0 && na == 0 && nl == 3 && nd == 1,
                "vector_c envelope expected (VECTOR,0,0,3,1) got (%d,%lld,%lld,%lld,%lld)", comb,
                (long long)ni, (long long)na, (long long)nl, (long long)nd);
        MT_CALL(MPI_Type_free(&t));
        tm_free(&r);
    }

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* value-index pairs: the predefined ones, MPI_DATATYPE_NULL for the others (MPI 4.1) */
    {
        MT_CALL(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
        MT_EQ("MPI_Type_get_value_index(double, int) is MPI_DOUBLE_INT", 1, t == MPI_DOUBLE_INT);
        MT_CALL(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &t));
        MT_EQ("MPI_Type_get_value_index(short, int) is MPI_SHORT_INT", 1, t == MPI_SHORT_INT);
        MT_CALL(MPI_Type_get_value_index(MPI_DOUBLE, MPI_SHORT, &t));
        MT_EQ("MPI_Type_get_value_index(double, short) is MPI_DATATYPE_NULL", 1, t == MPI_DATATYPE_NULL);
        MT_CALL(MPI_Type_get_value_index(MPI_INT, MPI_FLOAT, &t));
        MT_EQ("MPI_Type_get_value_index(int, float) is MPI_DATATYPE_NULL", 1, t == MPI_DATATYPE_NULL);
    }
#endif
    {
        MT_CALL(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
        int s8;
        MT_CALL(MPI_Type_size(t, &s8));
        MT_EQ("MPI_Type_match_size(REAL, 8): size", 8, s8);
        MT_CALL(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
        MT_CALL(MPI_Type_size(t, &s8));
        MT_EQ("MPI_Type_match_size(INTEGER, 4): size", 4, s8);
    }

    /* names */
    {
        char nm[MPI_MAX_OBJECT_NAME];
        int len;
        MT_CALL(MPI_Type_get_name(MPI_DOUBLE, nm, &len));
        MT_TRUE(strcmp(nm, "MPI_DOUBLE") == 0, "name of MPI_DOUBLE expected MPI_DOUBLE got %s", nm);
        t = commit((MPI_Type_contiguous(2, MPI_INT, &t), t));
        MT_CALL(MPI_Type_set_name(t, "pair of ints"));
        MT_CALL(MPI_Type_get_name(t, nm, &len));
        MT_TRUE(strcmp(nm, "pair of ints") == 0 && len == 12, "type name expected 'pair of ints' got '%s'", nm);
        MT_CALL(MPI_Type_free(&t));
    }
    tm_free(&tint); tm_free(&tdbl); tm_free(&tshort); tm_free(&tchar); tm_free(&tflt); tm_free(&rv);
    return mt_finish("dtype_layout");
}
