/* Reduction operations (see wm_op.h): which (operation, type) pairs the standard defines, applying
 * them to typed buffers, user operations, MPI_Reduce_local.
 *
 * A predefined type has a class (the standard's groups: C integer, Fortran integer, floating
 * point, complex, logical, byte, multi-language, pair) and a C representation (its kernel kind,
 * wm_op_kernels.h). An operation is defined on a type if the standard's table lists the class for
 * it; the kernel is then the one of (operation, kind). A derived type is reduced as its basic
 * elements, which must all be one predefined type (MPI 4.1 6.9.2).
 */
#include "mpi/wm_op.h"
#include "mpi/wm_internal.h"
#include "mpi/wm_op_kernels.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- types ------------------------------------------------------------------------------------ */

enum {
    WM_C_CINT = 1 << 0, WM_C_FINT = 1 << 1, WM_C_FLOAT = 1 << 2, WM_C_COMPLEX = 1 << 3,
    WM_C_LOGICAL = 1 << 4, WM_C_BYTE = 1 << 5, WM_C_MULTI = 1 << 6, WM_C_PAIR = 1 << 7,
};

typedef struct wm_op_type {
    const char *name;
    uint8_t cls;     /* WM_C_*; 0: no reduction (characters, MPI_PACKED) */
    uint8_t kind;    /* wm_kind_t */
} wm_op_type_t;

_Static_assert(sizeof(long) == 8 && sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8 &&
                   sizeof(MPI_Offset) == 8 && sizeof(short) == 2 && sizeof(int) == 4,
               "the type table below assumes LP64");

#define WM_TY(h, c, k) [(uintptr_t)(h) - WM_TYPE_BASE] = { #h, c, k }
static const wm_op_type_t wm_op_types[WM_TYPE_COUNT] = {
    WM_TY(MPI_AINT, WM_C_MULTI, WM_K_I64), WM_TY(MPI_COUNT, WM_C_MULTI, WM_K_I64),
    WM_TY(MPI_OFFSET, WM_C_MULTI, WM_K_I64), WM_TY(MPI_PACKED, 0, WM_K_U8),
    WM_TY(MPI_SHORT, WM_C_CINT, WM_K_I16), WM_TY(MPI_INT, WM_C_CINT, WM_K_I32),
    WM_TY(MPI_LONG, WM_C_CINT, WM_K_I64), WM_TY(MPI_LONG_LONG, WM_C_CINT, WM_K_I64),
    WM_TY(MPI_UNSIGNED_SHORT, WM_C_CINT, WM_K_U16), WM_TY(MPI_UNSIGNED, WM_C_CINT, WM_K_U32),
    WM_TY(MPI_UNSIGNED_LONG, WM_C_CINT, WM_K_U64),
    WM_TY(MPI_UNSIGNED_LONG_LONG, WM_C_CINT, WM_K_U64),
    WM_TY(MPI_FLOAT, WM_C_FLOAT, WM_K_F32), WM_TY(MPI_DOUBLE, WM_C_FLOAT, WM_K_F64),
    WM_TY(MPI_LONG_DOUBLE, WM_C_FLOAT, WM_K_FLD),
    WM_TY(MPI_C_FLOAT_COMPLEX, WM_C_COMPLEX, WM_K_C32),
    WM_TY(MPI_CXX_FLOAT_COMPLEX, WM_C_COMPLEX, WM_K_C32),
    WM_TY(MPI_C_DOUBLE_COMPLEX, WM_C_COMPLEX, WM_K_C64),
    WM_TY(MPI_CXX_DOUBLE_COMPLEX, WM_C_COMPLEX, WM_K_C64),
    WM_TY(MPI_C_LONG_DOUBLE_COMPLEX, WM_C_COMPLEX, WM_K_CLD),
    WM_TY(MPI_CXX_LONG_DOUBLE_COMPLEX, WM_C_COMPLEX, WM_K_CLD),
    WM_TY(MPI_LOGICAL, WM_C_LOGICAL, WM_K_U32), WM_TY(MPI_INTEGER, WM_C_FINT, WM_K_I32),
    WM_TY(MPI_REAL, WM_C_FLOAT, WM_K_F32), WM_TY(MPI_COMPLEX, WM_C_COMPLEX, WM_K_C32),
    WM_TY(MPI_DOUBLE_PRECISION, WM_C_FLOAT, WM_K_F64),
    WM_TY(MPI_DOUBLE_COMPLEX, WM_C_COMPLEX, WM_K_C64),
    WM_TY(MPI_CHARACTER, WM_C_CINT, WM_K_U8),   /* as MPICH and Open MPI: see wm_op_classes */
    WM_TY(MPI_FLOAT_INT, WM_C_PAIR, WM_K_P_FLOAT_INT),
    WM_TY(MPI_DOUBLE_INT, WM_C_PAIR, WM_K_P_DOUBLE_INT),
    WM_TY(MPI_LONG_INT, WM_C_PAIR, WM_K_P_LONG_INT), WM_TY(MPI_2INT, WM_C_PAIR, WM_K_P_2INT),
    WM_TY(MPI_SHORT_INT, WM_C_PAIR, WM_K_P_SHORT_INT),
    WM_TY(MPI_LONG_DOUBLE_INT, WM_C_PAIR, WM_K_P_LDOUBLE_INT),
    WM_TY(MPI_2REAL, WM_C_PAIR, WM_K_P_2FLOAT),
    WM_TY(MPI_2DOUBLE_PRECISION, WM_C_PAIR, WM_K_P_2DOUBLE),
    WM_TY(MPI_2INTEGER, WM_C_PAIR, WM_K_P_2INT),
    WM_TY(MPI_C_BOOL, WM_C_LOGICAL, WM_K_U8), WM_TY(MPI_CXX_BOOL, WM_C_LOGICAL, WM_K_U8),
    WM_TY(MPI_WCHAR, 0, WM_K_U32),
    WM_TY(MPI_INT8_T, WM_C_CINT, WM_K_I8), WM_TY(MPI_UINT8_T, WM_C_CINT, WM_K_U8),
    WM_TY(MPI_CHAR, WM_C_CINT, WM_K_I8), WM_TY(MPI_SIGNED_CHAR, WM_C_CINT, WM_K_I8),
    WM_TY(MPI_UNSIGNED_CHAR, WM_C_CINT, WM_K_U8), WM_TY(MPI_BYTE, WM_C_BYTE, WM_K_U8),
    WM_TY(MPI_INT16_T, WM_C_CINT, WM_K_I16), WM_TY(MPI_UINT16_T, WM_C_CINT, WM_K_U16),
    WM_TY(MPI_INT32_T, WM_C_CINT, WM_K_I32), WM_TY(MPI_UINT32_T, WM_C_CINT, WM_K_U32),
    WM_TY(MPI_INT64_T, WM_C_CINT, WM_K_I64), WM_TY(MPI_UINT64_T, WM_C_CINT, WM_K_U64),
    WM_TY(MPI_LOGICAL1, WM_C_LOGICAL, WM_K_U8), WM_TY(MPI_INTEGER1, WM_C_FINT, WM_K_I8),
    WM_TY(MPI_LOGICAL2, WM_C_LOGICAL, WM_K_U16), WM_TY(MPI_INTEGER2, WM_C_FINT, WM_K_I16),
    WM_TY(MPI_REAL2, WM_C_FLOAT, WM_K_F16),
    WM_TY(MPI_LOGICAL4, WM_C_LOGICAL, WM_K_U32), WM_TY(MPI_INTEGER4, WM_C_FINT, WM_K_I32),
    WM_TY(MPI_REAL4, WM_C_FLOAT, WM_K_F32), WM_TY(MPI_COMPLEX4, WM_C_COMPLEX, WM_K_C16),
    WM_TY(MPI_LOGICAL8, WM_C_LOGICAL, WM_K_U64), WM_TY(MPI_INTEGER8, WM_C_FINT, WM_K_I64),
    WM_TY(MPI_REAL8, WM_C_FLOAT, WM_K_F64), WM_TY(MPI_COMPLEX8, WM_C_COMPLEX, WM_K_C32),
    WM_TY(MPI_LOGICAL16, WM_C_LOGICAL, WM_K_I128), WM_TY(MPI_INTEGER16, WM_C_FINT, WM_K_I128),
    WM_TY(MPI_REAL16, WM_C_FLOAT, WM_K_F128), WM_TY(MPI_COMPLEX16, WM_C_COMPLEX, WM_K_C64),
    WM_TY(MPI_COMPLEX32, WM_C_COMPLEX, WM_K_C128),
};

static const wm_op_type_t *wm_op_type(MPI_Datatype t)
{
    uintptr_t i = (uintptr_t)t - WM_TYPE_BASE;
    return i < WM_TYPE_COUNT && wm_op_types[i].name ? &wm_op_types[i] : NULL;
}

/* The type object of a handle held in another type's contents: found even after the user freed
 * the handle (contents retain their types, wm_datatype.h). */
static const wm_datatype_t *wm_op_contents_type(MPI_Datatype t)
{
    if ((uintptr_t)t - WM_TYPE_BASE < WM_TYPE_COUNT)
        return wm_type_get(t);
    return (const wm_datatype_t *)((uintptr_t)t & ~(uintptr_t)WM_OBJ_GEN_MASK);
}

/* The predefined type all basic elements of dt are (a pair type counts as one element), or
 * MPI_DATATYPE_NULL if they are of several types. A walk of the construction tree through the
 * contents the constructors keep: no allocation, a few loads per constructor level. */
static MPI_Datatype wm_op_basic_of(const wm_datatype_t *dt, int depth)
{
    if (dt->obj.predefined)
        return wm_op_type((MPI_Datatype)dt->obj.handle) ? (MPI_Datatype)dt->obj.handle
                                                         : MPI_DATATYPE_NULL;
    const wm_type_contents_t *c = dt->contents;
    if (!c || depth > 64)
        return MPI_DATATYPE_NULL;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    for (int i = 0; i < c->ntypes; i++) {
        /* A struct's blocks of length 0 hold no element: their type does not count. */
        if (dt->combiner == MPI_COMBINER_STRUCT &&
            ((c->nints > i + 1 && c->ints[i + 1] == 0) || (c->nlarge > i + 1 && c->large[i + 1] == 0)))
            continue;
        const wm_datatype_t *sub = wm_op_contents_type(c->types[i]);
        MPI_Datatype b = sub ? wm_op_basic_of(sub, depth + 1) : MPI_DATATYPE_NULL;
        if (b == MPI_DATATYPE_NULL || (basic != MPI_DATATYPE_NULL && b != basic))
            return MPI_DATATYPE_NULL;
        basic = b;
    }
    return basic;
}

/* ---- operations -------------------------------------------------------------------------------- */

#define WM_OP_HANDLE_BASE 0x21
#define WM_OP_HANDLE_END 0x3e
static const char *const wm_op_names[WM_OPK_COUNT] = {
    "MPI_SUM", "MPI_MIN", "MPI_MAX", "MPI_PROD", "MPI_BAND", "MPI_BOR", "MPI_BXOR",
    "MPI_LAND", "MPI_LOR", "MPI_LXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE", "MPI_NO_OP",
};
/* The classes each predefined operation is defined on (MPI 4.1 6.9.2; REPLACE and NO_OP: every
 * predefined type, in accumulate functions), widened where MPICH and Open MPI both accept more, so
 * that programs written against them run unchanged: MPI_CHAR and MPI_CHARACTER reduce as C
 * integers (OSU's benchmarks sum MPI_CHAR), and the multi-language types (MPI_AINT, MPI_OFFSET,
 * MPI_COUNT) also take the logical operations. Pairs either peer rejects stay rejected (MPI_WCHAR,
 * logical operations on floating point, arithmetic on MPI_C_BOOL and MPI_BYTE). */
static const uint8_t wm_op_classes[WM_OPK_COUNT] = {
    [WM_OPK_SUM] = WM_C_CINT | WM_C_FINT | WM_C_FLOAT | WM_C_MULTI | WM_C_COMPLEX,
    [WM_OPK_PROD] = WM_C_CINT | WM_C_FINT | WM_C_FLOAT | WM_C_MULTI | WM_C_COMPLEX,
    [WM_OPK_MIN] = WM_C_CINT | WM_C_FINT | WM_C_FLOAT | WM_C_MULTI,
    [WM_OPK_MAX] = WM_C_CINT | WM_C_FINT | WM_C_FLOAT | WM_C_MULTI,
    [WM_OPK_LAND] = WM_C_CINT | WM_C_LOGICAL | WM_C_MULTI,
    [WM_OPK_LOR] = WM_C_CINT | WM_C_LOGICAL | WM_C_MULTI,
    [WM_OPK_LXOR] = WM_C_CINT | WM_C_LOGICAL | WM_C_MULTI,
    [WM_OPK_BAND] = WM_C_CINT | WM_C_FINT | WM_C_BYTE | WM_C_MULTI,
    [WM_OPK_BOR] = WM_C_CINT | WM_C_FINT | WM_C_BYTE | WM_C_MULTI,
    [WM_OPK_BXOR] = WM_C_CINT | WM_C_FINT | WM_C_BYTE | WM_C_MULTI,
    [WM_OPK_MINLOC] = WM_C_PAIR, [WM_OPK_MAXLOC] = WM_C_PAIR,
    [WM_OPK_REPLACE] = 0xff, [WM_OPK_NO_OP] = 0xff,
};

static wm_op_t wm_ops[WM_OPK_COUNT];
static const uint8_t wm_op_handle_index[WM_OP_HANDLE_END - WM_OP_HANDLE_BASE] = {
    [0x21 - WM_OP_HANDLE_BASE] = WM_OPK_SUM + 1, [0x22 - WM_OP_HANDLE_BASE] = WM_OPK_MIN + 1,
    [0x23 - WM_OP_HANDLE_BASE] = WM_OPK_MAX + 1, [0x24 - WM_OP_HANDLE_BASE] = WM_OPK_PROD + 1,
    [0x28 - WM_OP_HANDLE_BASE] = WM_OPK_BAND + 1, [0x29 - WM_OP_HANDLE_BASE] = WM_OPK_BOR + 1,
    [0x2a - WM_OP_HANDLE_BASE] = WM_OPK_BXOR + 1, [0x30 - WM_OP_HANDLE_BASE] = WM_OPK_LAND + 1,
    [0x31 - WM_OP_HANDLE_BASE] = WM_OPK_LOR + 1, [0x32 - WM_OP_HANDLE_BASE] = WM_OPK_LXOR + 1,
    [0x38 - WM_OP_HANDLE_BASE] = WM_OPK_MINLOC + 1, [0x39 - WM_OP_HANDLE_BASE] = WM_OPK_MAXLOC + 1,
    [0x3c - WM_OP_HANDLE_BASE] = WM_OPK_REPLACE + 1, [0x3d - WM_OP_HANDLE_BASE] = WM_OPK_NO_OP + 1,
};
static const MPI_Op wm_op_handles[WM_OPK_COUNT] = {
    MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR,
    MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP,
};
static pthread_once_t wm_ops_once = PTHREAD_ONCE_INIT;

static void wm_ops_init(void)
{
    for (int k = 0; k < WM_OPK_COUNT; k++) {
        wm_obj_init_predefined(&wm_ops[k].obj, WM_OBJ_OP, (uintptr_t)wm_op_handles[k], NULL);
        wm_ops[k].builtin = k;
        /* REPLACE and NO_OP: the result depends on which operand is which */
        wm_ops[k].commute = k != WM_OPK_REPLACE && k != WM_OPK_NO_OP;
    }
}

const wm_op_t *wm_op_get(MPI_Op h)
{
    uintptr_t i = (uintptr_t)h - WM_OP_HANDLE_BASE;
    if (i < WM_OP_HANDLE_END - WM_OP_HANDLE_BASE) {
        if (!wm_op_handle_index[i])
            return NULL;
        pthread_once(&wm_ops_once, wm_ops_init);
        return &wm_ops[wm_op_handle_index[i] - 1];
    }
    return (const wm_op_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_OP);
}

const char *wm_op_name(const wm_op_t *op)
{
    return op->builtin >= 0 ? wm_op_names[op->builtin] : "a user operation";
}

static const char *wm_op_type_name(const wm_datatype_t *dt)
{
    const wm_op_type_t *ty = wm_op_type((MPI_Datatype)dt->obj.handle);
    if (ty)
        return ty->name;
    return dt->name[0] ? dt->name : "a derived datatype";
}

/* Why op is not defined on basic type b (NULL: it is). */
static const char *wm_op_check_basic(int k, MPI_Datatype b)
{
    const wm_op_type_t *ty = wm_op_type(b);
    if (!ty)
        return "its elements are not all of one predefined type";
    if (k >= WM_OPK_REPLACE)
        return NULL;
    if (!(wm_op_classes[k] & ty->cls))
        return "the standard does not define the operation on this type";
    if (k < WM_OPK_REPLACE && !(ty->cls & WM_C_PAIR) && !wm_op_kernels[ty->kind][k])
        return "this build has no arithmetic for this type";
    return NULL;
}

static __thread char wm_op_why[MPI_MAX_ERROR_STRING];

static bool wm_op_valid_common(const wm_op_t *op, const wm_datatype_t *dt, bool rma,
                               const char **why_p)
{
    if (op->builtin < 0)
        return true;
    int k = op->builtin;
    if (!rma && k >= WM_OPK_REPLACE) {
        snprintf(wm_op_why, sizeof wm_op_why,
                 "%s is only for accumulate functions, not for reductions", wm_op_names[k]);
        *why_p = wm_op_why;
        return false;
    }
    MPI_Datatype b = wm_op_basic_of(dt, 0);
    const char *why = wm_op_check_basic(k, b);
    if (!why)
        return true;
    if (b != MPI_DATATYPE_NULL && b != (MPI_Datatype)dt->obj.handle)
        snprintf(wm_op_why, sizeof wm_op_why, "%s is not defined on %s (elements %s): %s",
                 wm_op_names[k], wm_op_type_name(dt), wm_op_type(b)->name, why);
    else
        snprintf(wm_op_why, sizeof wm_op_why, "%s is not defined on %s: %s", wm_op_names[k],
                 wm_op_type_name(dt), why);
    *why_p = wm_op_why;
    return false;
}

bool wm_op_valid(const wm_op_t *op, const wm_datatype_t *dt, const char **why_p)
{
    return wm_op_valid_common(op, dt, false, why_p);
}

bool wm_op_valid_rma(const wm_op_t *op, const wm_datatype_t *dt, const char **why_p)
{
    return wm_op_valid_common(op, dt, true, why_p);
}

/* ---- applying ------------------------------------------------------------------------------- */

/* How to reduce n basic elements of one kind stored back to back (stride esize). */
typedef struct wm_op_plan {
    int k;                      /* operation */
    wm_op_kernel_fn_t fn;       /* non-pair kinds */
    wm_op_pair_fn_t pair_fn;    /* pair kinds */
    size_t esize;               /* bytes per element in the stream or block */
    size_t ioff;                /* pairs: offset of the index */
    size_t align;
} wm_op_plan_t;

static inline void wm_op_plan_run(const wm_op_plan_t *p, const void *in, void *inout, size_t n)
{
    if (p->k == WM_OPK_REPLACE)
        memcpy(inout, in, n * p->esize);
    else if (p->fn)
        p->fn(in, inout, n);
    else if (p->pair_fn)
        p->pair_fn(in, inout, n, p->esize, p->ioff);
}

/* Derived or misaligned data: pack both operands into aligned bounce buffers, reduce, unpack. */
static void wm_op_apply_packed(const wm_op_plan_t *p, const void *in, void *inout,
                               MPI_Count count, const wc_dtype_t *layout)
{
    enum { CHUNK = 8192 };
    _Alignas(64) char a[CHUNK], b[CHUNK];
    uint64_t chunk = CHUNK / p->esize * p->esize;
    if (layout->contig) {
        /* contiguous but misaligned: the cursor needs segments, a contiguous layout has none */
        const char *x = (const char *)in + layout->contig_off;
        char *y = (char *)inout + layout->contig_off;
        for (uint64_t left = (uint64_t)count * layout->size, n; left; left -= n, x += n, y += n) {
            n = left < chunk ? left : chunk;
            memcpy(a, x, n);
            memcpy(b, y, n);
            wm_op_plan_run(p, a, b, n / p->esize);
            memcpy(y, b, n);
        }
        return;
    }
    wc_dtype_cursor_t ci, cio_in, cio_out;
    wc_dtype_cursor_init(&ci, layout, in, (uint64_t)count);
    wc_dtype_cursor_init(&cio_in, layout, inout, (uint64_t)count);
    wc_dtype_cursor_init(&cio_out, layout, inout, (uint64_t)count);
    for (;;) {
        uint64_t n = wc_dtype_pack(&ci, a, chunk);
        if (!n)
            break;
        wc_dtype_pack(&cio_in, b, n);
        wm_op_plan_run(p, a, b, n / p->esize);
        wc_dtype_unpack(&cio_out, b, n);
    }
}

/* The plan of predefined op k (not NO_OP) on elements of basic type bt (ty its class, bdt its
 * datatype), as stored packed. */
static wm_op_plan_t wm_op_plan_of(int k, const wm_op_type_t *ty, const wm_datatype_t *bdt)
{
    wm_op_plan_t p = { .k = k, .esize = bdt->layout.size, .align = wm_kind_align[ty->kind] };
    if (ty->cls & WM_C_PAIR) {
        /* the packed form of a pair either keeps the C struct's padding or drops it */
        p.ioff = bdt->layout.size == (uint64_t)bdt->extent ? wm_kind_pair_ioff[ty->kind]
                                                            : wm_kind_pair_vsize[ty->kind];
        if (k < WM_OPK_REPLACE)
            p.pair_fn = wm_op_pair_kernels[ty->kind - WM_K_FIRST_PAIR][k - WM_OPK_MINLOC];
    } else if (k < WM_OPK_REPLACE) {
        p.fn = wm_op_kernels[ty->kind][k];
        p.esize = wm_kind_size[ty->kind];
    }
    return p;
}

void wm_op_apply(const wm_op_t *op, const void *in, void *inout, MPI_Count count,
                 const wm_datatype_t *dt, MPI_Datatype type)
{
    if (count <= 0)
        return;
    if (op->builtin < 0) {
        /* user function: inout = in op inout, in calls of at most INT_MAX elements for the
         * int-count form */
        if (op->fn_c) {
            MPI_Count n = count;
            op->fn_c((void *)in, inout, &n, &type);
            return;
        }
        const char *a = in;
        char *b = inout;
        while (count > 0) {
            int n = count > INT_MAX ? INT_MAX : (int)count;
            op->fn((void *)a, b, &n, &type);
            a += (int64_t)n * dt->extent;
            b += (int64_t)n * dt->extent;
            count -= n;
        }
        return;
    }
    int k = op->builtin;
    if (k == WM_OPK_NO_OP)
        return;
    MPI_Datatype bt = wm_op_basic_of(dt, 0);
    const wm_op_type_t *ty = wm_op_type(bt);
    if (!ty)
        wc_abort(MPI_ERR_OP, "wm_op_apply: datatype without a single basic type");
    const wm_datatype_t *bdt = wm_type_get(bt);
    wm_op_plan_t p = wm_op_plan_of(k, ty, bdt);
    const wc_dtype_t *l = &dt->layout;
    if (p.pair_fn && dt == bdt) {
        /* the pair type itself: C structs, padding included, in the user's buffer */
        p.pair_fn(in, inout, (size_t)count, (size_t)dt->extent, wm_kind_pair_ioff[ty->kind]);
        return;
    }
    if (l->contig) {
        const char *a = (const char *)in + l->contig_off;
        char *b = (char *)inout + l->contig_off;
        size_t n = (size_t)count * l->size / p.esize;
        if ((((uintptr_t)a | (uintptr_t)b) & (p.align - 1)) == 0) {
            wm_op_plan_run(&p, a, b, n);
            return;
        }
    } else if (!p.pair_fn) {
        /* walk the blocks of the layout in place; a block holds whole elements of one type */
        bool aligned = true;
        for (uint64_t s = 0; s < l->nsegs && aligned; s++) {
            const wc_dtype_seg_t *g = &l->segs[s];
            aligned = ((uint64_t)g->disp | g->blocklen | (uint64_t)g->stride |
                       (uint64_t)dt->extent | (uintptr_t)in | (uintptr_t)inout) %
                          p.align == 0 && g->blocklen % p.esize == 0;
        }
        if (aligned) {
            for (MPI_Count e = 0; e < count; e++) {
                int64_t eo = e * dt->extent;
                for (uint64_t s = 0; s < l->nsegs; s++) {
                    const wc_dtype_seg_t *g = &l->segs[s];
                    for (uint64_t blk = 0; blk < g->count; blk++) {
                        int64_t o = eo + g->disp + (int64_t)blk * g->stride;
                        wm_op_plan_run(&p, (const char *)in + o, (char *)inout + o,
                                       g->blocklen / p.esize);
                    }
                }
            }
            return;
        }
    }
    wm_op_apply_packed(&p, in, inout, count, l);
}

/* ---- accumulates by CPU atomics ------------------------------------------------------------ */

bool wm_op_atomic_plan(const wm_op_t *op, const wm_datatype_t *dt, wc_rma_atomic_t *a_p)
{
    const wm_op_type_t *ty = wm_op_type(wm_op_basic_of(dt, 0));
    if (!ty || ty->cls & WM_C_PAIR)
        return false;
    int kind = ty->kind;
    bool integer = kind >= WM_K_I8 && kind <= WM_K_U64;
    if (!integer && kind != WM_K_F32 && kind != WM_K_F64)
        return false;
    wc_rma_atomic_t a = { .esize = wm_kind_size[kind], .op = WC_RMA_A_FN, .fn = NULL };
    if (op) {
        int k = op->builtin;
        if (k < 0)
            return false;   /* refused before: user ops are not allowed in accumulates */
        switch (k) {
        case WM_OPK_NO_OP: a.op = WC_RMA_A_LOAD; break;
        case WM_OPK_REPLACE: a.op = WC_RMA_A_SWAP; break;
        case WM_OPK_SUM: if (integer) a.op = WC_RMA_A_ADD; break;
        case WM_OPK_BAND: if (integer) a.op = WC_RMA_A_AND; break;
        case WM_OPK_BOR: if (integer) a.op = WC_RMA_A_OR; break;
        case WM_OPK_BXOR: if (integer) a.op = WC_RMA_A_XOR; break;
        default: break;
        }
        if (a.op == WC_RMA_A_FN) {
            a.fn = k < WM_OPK_REPLACE ? wm_op_kernels[kind][k] : NULL;
            if (!a.fn)   /* an op the type does not take: refused before (wm_op_valid_rma) */
                return false;
        }
    }
    *a_p = a;
    return true;
}

MPI_Datatype wm_op_basic(const wm_datatype_t *dt)
{
    return wm_op_basic_of(dt, 0);
}

bool wm_op_reduce_stream(uint64_t oph, uint64_t basic, const void *in, void *inout,
                         uint64_t bytes)
{
    const wm_op_t *op = wm_op_get((MPI_Op)(uintptr_t)oph);
    const wm_op_type_t *ty = wm_op_type((MPI_Datatype)(uintptr_t)basic);
    const wm_datatype_t *bdt = wm_type_get((MPI_Datatype)(uintptr_t)basic);
    if (!op || op->builtin < 0 || !ty || !bdt || !bdt->layout.size)
        wc_abort(MPI_ERR_INTERN, "RMA: an accumulate from another node names an op or a type "
                 "this process does not know");
    int k = op->builtin;
    if (k == WM_OPK_NO_OP)
        return true;
    wm_op_plan_t p = wm_op_plan_of(k, ty, bdt);
    /* the stream is packed elements of one basic type, both buffers malloc'd (aligned) */
    wm_op_plan_run(&p, in, inout, (size_t)(bytes / p.esize));
    return true;
}

/* ---- user operations and MPI_Reduce_local -------------------------------------------------- */

static int wm_op_create(const char *fn, MPI_User_function *f, MPI_User_function_c *fc,
                        int commute, MPI_Op *op)
{
    WM_CHECK_INIT(fn);
    if (!f && !fc)
        return wm_error(NULL, MPI_ERR_ARG, fn, "user_fn is NULL");
    if (!op)
        return wm_error(NULL, MPI_ERR_ARG, fn, "op is NULL");
    wm_op_t *o = wm_obj_create(WM_OBJ_OP, sizeof(wm_op_t), NULL);
    if (!o)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for a new operation");
    o->fn = f;
    o->fn_c = fc;
    o->commute = commute != 0;
    o->builtin = -1;
    *op = (MPI_Op)o->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return wm_op_create("MPI_Op_create", user_fn, NULL, commute, op);
}

int wm_impl_MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return wm_op_create("MPI_Op_create_c", NULL, user_fn, commute, op);
}

int wm_impl_MPI_Op_free(MPI_Op *op)
{
    WM_CHECK_INIT("MPI_Op_free");
    if (!op)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Op_free", "op is NULL");
    const wm_op_t *o = wm_op_get(*op);
    if (!o)
        return wm_error(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid operation %p", (void *)*op);
    if (o->obj.predefined)
        return wm_error(NULL, MPI_ERR_OP, "MPI_Op_free", "%s is predefined and cannot be freed",
                        wm_op_name(o));
    wm_obj_user_free((wm_obj_t *)&o->obj);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Op_commutative(MPI_Op op, int *commute)
{
    WM_CHECK_INIT("MPI_Op_commutative");
    const wm_op_t *o = wm_op_get(op);
    if (!o)
        return wm_error(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %p",
                        (void *)op);
    if (!commute)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
    *commute = o->commute;
    return MPI_SUCCESS;
}

static int wm_reduce_local(const char *fn, const void *in, void *inout, MPI_Count count,
                           MPI_Datatype type, MPI_Op op)
{
    WM_CHECK_INIT(fn);
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    const wm_datatype_t *dt = wm_type_get(type);
    if (!dt || type == MPI_DATATYPE_NULL)
        return wm_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype %p", (void *)type);
    if (!dt->committed)
        return wm_error(NULL, MPI_ERR_TYPE, fn, "datatype %s is not committed", wm_op_type_name(dt));
    const wm_op_t *o = wm_op_get(op);
    if (!o)
        return wm_error(NULL, MPI_ERR_OP, fn, "invalid operation %p", (void *)op);
    if (in == MPI_IN_PLACE || inout == MPI_IN_PLACE)
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
    const char *why;
    if (!wm_op_valid_rma(o, dt, &why))
        return wm_error(NULL, MPI_ERR_OP, fn, "%s", why);
    /* NULL is MPI_BOTTOM: valid with a derived type of absolute addresses */
    if (count > 0 && dt->size > 0 && dt->obj.predefined && (!in || !inout))
        return wm_error(NULL, MPI_ERR_BUFFER, fn, "%s is NULL", in ? "inoutbuf" : "inbuf");
    wm_op_apply(o, in, inout, count, dt, type);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Reduce_local(wm_reduce_local)

