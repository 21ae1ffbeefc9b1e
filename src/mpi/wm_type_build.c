/* The flattening of derived datatypes (see wm_type_build.h, docs/datatypes.md) and the type
 * objects it produces: segment lists, bounds, contents, creation, destruction, cloning. */
#include "mpi/wm_type_build.h"

#include <stdlib.h>
#include <string.h>

/* ---- segment lists ---------------------------------------------------------------------------- */

/* A flat layout has no loop nest: an irregular type repeated many times takes one segment per
 * block. Past this many segments (1.3 GB) the constructor fails with MPI_ERR_NO_MEM instead of
 * letting an overcommitting kernel kill the process later. */
#define WM_SEGS_MAX (1ull << 25)

static bool wm_segbuf_grow(wm_segbuf_t *b)
{
    uint64_t cap = b->cap ? b->cap * 2 : 8;
    if (cap > WM_SEGS_MAX) {
        b->oom = true;
        return false;
    }
    wc_dtype_seg_t *s = realloc(b->segs, cap * sizeof(*s));
    if (!s) {
        b->oom = true;
        return false;
    }
    b->segs = s;
    b->cap = cap;
    return true;
}

/* A dense series (stride == blocklen) is one block, unless that block's length would not fit
 * (the type's size then overflows too: wm_type_derive says so). */
static inline void wm_seg_normalize(wc_dtype_seg_t *s)
{
    uint64_t len;
    if (s->count > 1 && s->stride == (int64_t)s->blocklen &&
        !__builtin_mul_overflow(s->blocklen, s->count, &len)) {
        s->blocklen = len;
        s->count = 1;
    }
    if (s->count == 1)
        s->stride = (int64_t)s->blocklen;
}

/* Merge n into p if together they are one run or one constant-stride series. */
static bool wm_seg_merge(wc_dtype_seg_t *p, const wc_dtype_seg_t *n)
{
    if (p->unit != n->unit || p->swap != n->swap)
        return false;
    /* every quantity below fits, or the two are not merged (the type is then too large to use
     * anyway, and the overflow is found by wm_type_derive and the bounds) */
    int64_t p_end, b_end, gap, before;   /* next block of p's series, end of p's block */
    uint64_t sum;
    if (p->blocklen > (uint64_t)INT64_MAX ||
        __builtin_mul_overflow((int64_t)p->count, p->stride, &p_end) ||
        __builtin_add_overflow(p_end, p->disp, &p_end) ||
        __builtin_add_overflow(p->disp, (int64_t)p->blocklen, &b_end) ||
        __builtin_sub_overflow(n->disp, p->disp, &gap) ||
        __builtin_sub_overflow(n->disp, n->stride, &before) ||
        __builtin_add_overflow(p->count, n->count, &sum) ||
        __builtin_add_overflow(p->blocklen, n->blocklen, &sum))
        return false;
    if (p->count == 1 && n->count == 1 && n->disp == b_end) {
        p->blocklen += n->blocklen;                               /* adjacent runs */
    } else if (n->blocklen != p->blocklen) {
        return false;
    } else if (p->count == 1 && n->count == 1) {
        p->stride = gap;                                          /* two equal blocks */
        p->count = 2;
    } else if (p->count == 1) {
        if (before != p->disp)                                    /* block, then its series */
            return false;
        p->stride = n->stride;
        p->count = n->count + 1;
    } else if (n->count == 1 || n->stride == p->stride) {
        if (n->disp != p_end)                                     /* the series goes on */
            return false;
        p->count += n->count;
    } else {
        return false;
    }
    wm_seg_normalize(p);
    return true;
}

void wm_segbuf_append(wm_segbuf_t *b, int64_t disp, uint64_t count, uint64_t blocklen,
                      int64_t stride, uint32_t unit, uint32_t swap)
{
    if (!count || !blocklen || b->oom)
        return;
    wc_dtype_seg_t s = { .disp = disp, .count = count, .blocklen = blocklen, .stride = stride,
                         .unit = unit, .swap = swap };
    wm_seg_normalize(&s);
    if (b->n && wm_seg_merge(&b->segs[b->n - 1], &s))
        return;
    if (b->n == b->cap && !wm_segbuf_grow(b))
        return;
    b->segs[b->n++] = s;
}

void wm_segbuf_rep(wm_segbuf_t *b, const wc_dtype_seg_t *s, uint64_t n, uint64_t reps,
                   int64_t disp0, int64_t step)
{
    if (!reps || !n)
        return;
    /* Displacements wrap (unsigned) instead of overflowing: a type whose bounds do not fit is
     * marked by its bounds (wm_bounds_add) and never used for data. */
    int64_t span, d0 = (int64_t)((uint64_t)disp0 + (uint64_t)s->disp);
    uint64_t total;
    if (n == 1 && s->count == 1) {                 /* a block repeated: one strided segment */
        wm_segbuf_append(b, d0, reps, s->blocklen, step, s->unit, s->swap);
        return;
    }
    if (n == 1 && !__builtin_mul_overflow((int64_t)s->count, s->stride, &span) && span == step &&
        !__builtin_mul_overflow(reps, s->count, &total)) {   /* a series continued */
        wm_segbuf_append(b, d0, total, s->blocklen, s->stride, s->unit, s->swap);
        return;
    }
    for (uint64_t r = 0; r < reps && !b->oom; r++)
        for (uint64_t i = 0; i < n; i++)
            wm_segbuf_append(b, (int64_t)((uint64_t)disp0 + r * (uint64_t)step +
                                          (uint64_t)s[i].disp),
                             s[i].count, s[i].blocklen, s[i].stride, s[i].unit, s[i].swap);
}

void wm_segbuf_free(wm_segbuf_t *b)
{
    free(b->segs);
    *b = (wm_segbuf_t){ 0 };
}

/* ---- bounds ----------------------------------------------------------------------------------- */

void wm_bounds_add(wm_bounds_t *bd, const wm_datatype_t *t, int64_t disp, uint64_t blocklen)
{
    if (!blocklen)
        return;
    int64_t span, lo, hi;
    if (t->bounds_overflow || blocklen - 1 > (uint64_t)INT64_MAX ||
        __builtin_mul_overflow((int64_t)(blocklen - 1), t->extent, &span) ||
        __builtin_add_overflow(disp, t->lb, &lo) ||
        __builtin_add_overflow(lo, t->extent, &hi) ||
        __builtin_add_overflow(lo, span < 0 ? span : 0, &lo) ||
        __builtin_add_overflow(hi, span > 0 ? span : 0, &hi)) {
        bd->overflow = true;
        return;
    }
    if (!bd->any) {
        bd->lo = lo;
        bd->hi = hi;
        bd->any = true;
    } else {
        bd->lo = lo < bd->lo ? lo : bd->lo;
        bd->hi = hi > bd->hi ? hi : bd->hi;
    }
    if (t->sticky_lb) {
        bd->slo = !bd->any_slb || lo < bd->slo ? lo : bd->slo;
        bd->any_slb = true;
    }
    if (t->sticky_ub) {
        bd->shi = !bd->any_sub || hi > bd->shi ? hi : bd->shi;
        bd->any_sub = true;
    }
    if (t->align > bd->align)
        bd->align = t->align;
}

/* ---- contents --------------------------------------------------------------------------------- */

wm_type_contents_t *wm_contents_new(int nints, int naddrs, int nlarge, int ntypes)
{
    size_t off_a = (sizeof(wm_type_contents_t) + (size_t)nints * sizeof(int) + 7) & ~(size_t)7;
    size_t off_l = off_a + (size_t)naddrs * sizeof(MPI_Aint);
    size_t off_t = off_l + (size_t)nlarge * sizeof(MPI_Count);
    size_t total = off_t + (size_t)ntypes * sizeof(MPI_Datatype);
    char *m = calloc(1, total);
    if (!m)
        return NULL;
    wm_type_contents_t *c = (wm_type_contents_t *)m;
    c->nints = nints;
    c->naddrs = naddrs;
    c->nlarge = nlarge;
    c->ntypes = ntypes;
    c->ints = (int *)(m + sizeof(*c));
    c->addrs = (MPI_Aint *)(m + off_a);
    c->large = (MPI_Count *)(m + off_l);
    c->types = (MPI_Datatype *)(m + off_t);
    return c;
}

static wm_obj_t *wm_contents_obj(MPI_Datatype t)
{
    if ((uintptr_t)t - WM_TYPE_BASE < WM_TYPE_COUNT)
        return NULL;                                  /* predefined: never counted */
    return (wm_obj_t *)((uintptr_t)t & ~(uintptr_t)WM_OBJ_GEN_MASK);
}

void wm_contents_retain(wm_type_contents_t *c)
{
    for (int i = 0; i < c->ntypes; i++) {
        wm_obj_t *o = wm_contents_obj(c->types[i]);
        if (o)
            wm_obj_retain(o);
    }
    c->retained = true;
}

void wm_contents_free(wm_type_contents_t *c)
{
    if (!c)
        return;
    if (c->retained) {
        for (int i = 0; i < c->ntypes; i++) {
            wm_obj_t *o = wm_contents_obj(c->types[i]);
            if (o)
                wm_obj_release(o);
        }
    }
    free(c);
}

/* ---- type objects ----------------------------------------------------------------------------- */

static void wm_type_destroy(wm_obj_t *o)
{
    wm_datatype_t *t = (wm_datatype_t *)o;
    wm_contents_free(t->contents);
    t->contents = NULL;
    if (t->layout.segs != t->inline_segs)
        free(t->layout.segs);
    t->layout.segs = NULL;
}

/* size, elements, true bounds and contiguity from the segments and the extent. */
void wm_type_derive(wm_datatype_t *t)
{
    wc_dtype_t *l = &t->layout;
    uint64_t size = 0, elements = 0, bytes;
    int64_t tlo = 0, thi = 0;
    bool run = true, size_over = false, bounds_over = false;
    for (uint64_t i = 0; i < l->nsegs; i++) {
        const wc_dtype_seg_t *s = &l->segs[i];
        if (__builtin_mul_overflow(s->count, s->blocklen, &bytes) ||
            __builtin_add_overflow(size, bytes, &size))
            size_over = true;
        elements += s->count * (s->blocklen / s->unit);   /* meaningless once size_over */
        int64_t span, lo, hi;
        if (__builtin_mul_overflow((int64_t)(s->count - 1), s->stride, &span) ||
            __builtin_add_overflow(s->disp, span < 0 ? span : 0, &lo) ||
            __builtin_add_overflow(s->disp, span > 0 ? span : 0, &hi) ||
            s->blocklen > (uint64_t)INT64_MAX ||
            __builtin_add_overflow(hi, (int64_t)s->blocklen, &hi)) {
            bounds_over = true;
            continue;
        }
        tlo = i == 0 || lo < tlo ? lo : tlo;
        thi = i == 0 || hi > thi ? hi : thi;
        if (s->count != 1 || (i > 0 && s->disp != l->segs[i - 1].disp + (int64_t)l->segs[i - 1].blocklen))
            run = false;
    }
    size_over |= size > (uint64_t)INT64_MAX;
    if (size_over)
        size = 0;   /* never used: a send is refused, the queries say MPI_UNDEFINED */
    l->size = size;
    l->extent = t->extent;
    t->size = size;
    t->size_overflow = size_over;
    t->elements = elements;
    t->true_lb = tlo;
    bounds_over |= __builtin_sub_overflow(thi, tlo, &t->true_extent);
    t->bounds_overflow |= bounds_over;
    t->max_count = size_over || t->bounds_overflow ? 0
                   : size ? (uint64_t)INT64_MAX / size : (uint64_t)INT64_MAX;
    l->contig = size == 0 || (run && (int64_t)size == t->extent);
    l->contig_off = l->nsegs ? l->segs[0].disp : 0;
}

/* Give t the segments of b (b is emptied). */
static void wm_type_take_segs(wm_datatype_t *t, wm_segbuf_t *b)
{
    t->layout.nsegs = b->n;
    if (b->n <= WM_TYPE_INLINE_SEGS) {
        if (b->n)
            memcpy(t->inline_segs, b->segs, b->n * sizeof(*b->segs));
        t->layout.segs = t->inline_segs;
        wm_segbuf_free(b);
    } else {
        wc_dtype_seg_t *s = realloc(b->segs, b->n * sizeof(*s));
        t->layout.segs = s ? s : b->segs;
        *b = (wm_segbuf_t){ 0 };
    }
}

static int wm_type_make(const char *fn, wm_segbuf_t *b, int64_t lb, int64_t extent, bool slb,
                        bool sub, bool bounds_over, uint16_t align, int combiner,
                        wm_type_contents_t *ct, MPI_Datatype *newtype)
{
    wm_datatype_t *t = NULL;
    if (!b->oom)
        t = wm_obj_create(WM_OBJ_TYPE, sizeof(*t), wm_type_destroy);
    if (!t) {
        wm_segbuf_free(b);
        wm_contents_free(ct);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "out of memory building the datatype");
    }
    wm_type_take_segs(t, b);
    t->lb = lb;
    t->extent = extent;
    t->bounds_overflow = bounds_over;
    t->sticky_lb = slb;
    t->sticky_ub = sub;
    t->align = align ? align : 1;
    t->combiner = combiner;
    t->contents = ct;
    wm_type_derive(t);
    *newtype = (MPI_Datatype)t->obj.handle;
    return MPI_SUCCESS;
}

int wm_type_finish(const char *fn, wm_segbuf_t *b, const wm_bounds_t *bd, bool pad, int combiner,
                   wm_type_contents_t *contents, MPI_Datatype *newtype)
{
    int64_t lb = 0, ub = 0;
    if (bd->any) {
        lb = bd->any_slb ? bd->slo : bd->lo;
        ub = bd->any_sub ? bd->shi : bd->hi;
    }
    int64_t extent;
    bool over = bd->overflow || __builtin_sub_overflow(ub, lb, &extent);
    if (over)
        lb = extent = 0;   /* the queries say MPI_UNDEFINED */
    if (pad && !bd->any_sub && bd->align > 1 && extent > 0 && extent % bd->align &&
        __builtin_add_overflow(extent, bd->align - extent % bd->align, &extent))
        over = true;
    return wm_type_make(fn, b, lb, extent, bd->any_slb, bd->any_sub, over, bd->align, combiner,
                        contents, newtype);
}

int wm_type_finish_resized(const char *fn, wm_segbuf_t *b, int64_t lb, int64_t extent,
                           uint16_t align, int combiner, wm_type_contents_t *contents,
                           MPI_Datatype *newtype)
{
    return wm_type_make(fn, b, lb, extent, true, true, false, align, combiner, contents, newtype);
}

wm_datatype_t *wm_type_clone(const wm_datatype_t *ti)
{
    wm_type_contents_t *ct = NULL;
    if (ti->contents) {
        const wm_type_contents_t *c = ti->contents;
        ct = wm_contents_new(c->nints, c->naddrs, c->nlarge, c->ntypes);
        if (!ct)
            return NULL;
        memcpy(ct->ints, c->ints, (size_t)c->nints * sizeof(int));
        memcpy(ct->addrs, c->addrs, (size_t)c->naddrs * sizeof(MPI_Aint));
        memcpy(ct->large, c->large, (size_t)c->nlarge * sizeof(MPI_Count));
        memcpy(ct->types, c->types, (size_t)c->ntypes * sizeof(MPI_Datatype));
    }
    wc_dtype_seg_t *segs = NULL;
    if (ti->layout.nsegs > WM_TYPE_INLINE_SEGS) {
        segs = malloc(ti->layout.nsegs * sizeof(*segs));
        if (!segs) {
            free(ct);
            return NULL;
        }
        memcpy(segs, ti->layout.segs, ti->layout.nsegs * sizeof(*segs));
    }
    wm_datatype_t *t = wm_obj_create(WM_OBJ_TYPE, sizeof(*t), wm_type_destroy);
    if (!t) {
        free(segs);
        free(ct);
        return NULL;
    }
    memcpy((char *)t + sizeof(wm_obj_t), (const char *)ti + sizeof(wm_obj_t),
           sizeof(*t) - sizeof(wm_obj_t));
    t->layout.segs = segs ? segs : t->inline_segs;
    if (ct)
        wm_contents_retain(ct);
    t->contents = ct;
    return t;
}
