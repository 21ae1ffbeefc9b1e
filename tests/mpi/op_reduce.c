/* Every predefined operation on every predefined type through MPI_Reduce_local, against a
 * reference computed here from the standard's table (MPI 4.1 6.9.2): the result of each defined
 * (op, type) pair is checked element by element; with --weft, undefined pairs must fail with
 * MPI_ERR_OP (other implementations accept more pairs than the standard defines, or abort).
 * OP_TRACE=1 in the environment prints each case before it runs.
 * Values are small integers, so floating-point sums and products are exact.
 * MINLOC/MAXLOC run on the pair types with equal values in both index orders (the lower index
 * wins). MPI_REPLACE and MPI_NO_OP are checked with --weft only (they are for accumulate
 * functions; Weft's MPI_Reduce_local accepts them).
 */
#include "mpitest.h"

#include <complex.h>
#include <stddef.h>

#if defined(__FLT16_MAX__)
#define HAVE_F16 1
typedef _Float16 f16_t;
typedef _Complex float __attribute__((mode(HC))) c16_t;
#endif
#if defined(__SIZEOF_FLOAT128__)
#define HAVE_F128 1
typedef __float128 f128_t;
typedef _Complex float __attribute__((mode(TC))) c128_t;
#endif

/* Optional types (MPI 4.1) an implementation may lack (or define as MPI_DATATYPE_NULL): skipped. */
#ifndef MPI_REAL2
#define MPI_REAL2 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX4
#define MPI_COMPLEX4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_LOGICAL1
#define MPI_LOGICAL1 MPI_DATATYPE_NULL
#endif
#ifndef MPI_LOGICAL2
#define MPI_LOGICAL2 MPI_DATATYPE_NULL
#endif
#ifndef MPI_LOGICAL4
#define MPI_LOGICAL4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_LOGICAL8
#define MPI_LOGICAL8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_LOGICAL16
#define MPI_LOGICAL16 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER1
#define MPI_INTEGER1 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER2
#define MPI_INTEGER2 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER4
#define MPI_INTEGER4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER8
#define MPI_INTEGER8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_INTEGER16
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#endif
#ifndef MPI_REAL4
#define MPI_REAL4 MPI_DATATYPE_NULL
#endif
#ifndef MPI_REAL8
#define MPI_REAL8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_REAL16
#define MPI_REAL16 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX8
#define MPI_COMPLEX8 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX16
#define MPI_COMPLEX16 MPI_DATATYPE_NULL
#endif
#ifndef MPI_COMPLEX32
#define MPI_COMPLEX32 MPI_DATATYPE_NULL
#endif

enum repr { I8, U8, I16, U16, I32, U32, I64, U64, I128, F16, F32, F64, FLD, F128,
            C16, C32, C64, CLD, C128, NREPR };
static const size_t repr_size[NREPR] = { 1, 1, 2, 2, 4, 4, 8, 8, 16, 2, 4, 8, sizeof(long double),
                                         16, 4, 8, 16, sizeof(long double _Complex), 32 };

enum { CINT = 1, FINT = 2, FLOAT = 4, COMPLEX = 8, LOGICAL = 16, BYTE = 32, MULTI = 64 };

struct type { MPI_Datatype t; const char *name; int cls; enum repr r; };
#define T(h, c, r) { h, #h, c, r }
static const struct type types[] = {
    T(MPI_AINT, MULTI, I64), T(MPI_COUNT, MULTI, I64), T(MPI_OFFSET, MULTI, I64),
    T(MPI_SHORT, CINT, I16), T(MPI_INT, CINT, I32), T(MPI_LONG, CINT, I64),
    T(MPI_LONG_LONG, CINT, I64), T(MPI_LONG_LONG_INT, CINT, I64),
    T(MPI_UNSIGNED_SHORT, CINT, U16), T(MPI_UNSIGNED, CINT, U32),
    T(MPI_UNSIGNED_LONG, CINT, U64), T(MPI_UNSIGNED_LONG_LONG, CINT, U64),
    T(MPI_SIGNED_CHAR, CINT, I8), T(MPI_UNSIGNED_CHAR, CINT, U8),
    T(MPI_INT8_T, CINT, I8), T(MPI_UINT8_T, CINT, U8), T(MPI_INT16_T, CINT, I16),
    T(MPI_UINT16_T, CINT, U16), T(MPI_INT32_T, CINT, I32), T(MPI_UINT32_T, CINT, U32),
    T(MPI_INT64_T, CINT, I64), T(MPI_UINT64_T, CINT, U64),
    T(MPI_INTEGER, FINT, I32), T(MPI_INTEGER1, FINT, I8), T(MPI_INTEGER2, FINT, I16),
    T(MPI_INTEGER4, FINT, I32), T(MPI_INTEGER8, FINT, I64), T(MPI_INTEGER16, FINT, I128),
    T(MPI_FLOAT, FLOAT, F32), T(MPI_DOUBLE, FLOAT, F64), T(MPI_LONG_DOUBLE, FLOAT, FLD),
    T(MPI_REAL, FLOAT, F32), T(MPI_DOUBLE_PRECISION, FLOAT, F64), T(MPI_REAL2, FLOAT, F16),
    T(MPI_REAL4, FLOAT, F32), T(MPI_REAL8, FLOAT, F64), T(MPI_REAL16, FLOAT, F128),
    T(MPI_C_FLOAT_COMPLEX, COMPLEX, C32), T(MPI_C_COMPLEX, COMPLEX, C32),
    T(MPI_C_DOUBLE_COMPLEX, COMPLEX, C64), T(MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX, CLD),
    T(MPI_CXX_FLOAT_COMPLEX, COMPLEX, C32), T(MPI_CXX_DOUBLE_COMPLEX, COMPLEX, C64),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, COMPLEX, CLD), T(MPI_COMPLEX, COMPLEX, C32),
    T(MPI_DOUBLE_COMPLEX, COMPLEX, C64), T(MPI_COMPLEX4, COMPLEX, C16),
    T(MPI_COMPLEX8, COMPLEX, C32), T(MPI_COMPLEX16, COMPLEX, C64),
    T(MPI_COMPLEX32, COMPLEX, C128),
    T(MPI_C_BOOL, LOGICAL, U8), T(MPI_CXX_BOOL, LOGICAL, U8), T(MPI_LOGICAL, LOGICAL, U32),
    T(MPI_LOGICAL1, LOGICAL, U8), T(MPI_LOGICAL2, LOGICAL, U16), T(MPI_LOGICAL4, LOGICAL, U32),
    T(MPI_LOGICAL8, LOGICAL, U64), T(MPI_LOGICAL16, LOGICAL, I128),
    T(MPI_BYTE, BYTE, U8),
    /* MPI_CHAR and MPI_CHARACTER reduce as C integers in MPICH and Open MPI, and so in Weft */
    T(MPI_CHAR, CINT, I8), T(MPI_CHARACTER, CINT, U8),
    /* wide characters and packed data: no reduction at all */
    T(MPI_WCHAR, 0, I32), T(MPI_PACKED, 0, U8),
};

enum { SUM, PROD, MIN, MAX, LAND, LOR, LXOR, BAND, BOR, BXOR, REPLACE, NO_OP, NOPS };
static const struct { MPI_Op op; const char *name; int classes; } ops[NOPS] = {
    [SUM] = { MPI_SUM, "MPI_SUM", CINT | FINT | FLOAT | COMPLEX | MULTI },
    [PROD] = { MPI_PROD, "MPI_PROD", CINT | FINT | FLOAT | COMPLEX | MULTI },
    [MIN] = { MPI_MIN, "MPI_MIN", CINT | FINT | FLOAT | MULTI },
    [MAX] = { MPI_MAX, "MPI_MAX", CINT | FINT | FLOAT | MULTI },
    /* logical on MULTI (MPI_AINT, ...): beyond the standard's table, as MPICH and Open MPI */
    [LAND] = { MPI_LAND, "MPI_LAND", CINT | LOGICAL | MULTI },
    [LOR] = { MPI_LOR, "MPI_LOR", CINT | LOGICAL | MULTI },
    [LXOR] = { MPI_LXOR, "MPI_LXOR", CINT | LOGICAL | MULTI },
    [BAND] = { MPI_BAND, "MPI_BAND", CINT | FINT | BYTE | MULTI },
    [BOR] = { MPI_BOR, "MPI_BOR", CINT | FINT | BYTE | MULTI },
    [BXOR] = { MPI_BXOR, "MPI_BXOR", CINT | FINT | BYTE | MULTI },
    [REPLACE] = { MPI_REPLACE, "MPI_REPLACE", 0xff },
    [NO_OP] = { MPI_NO_OP, "MPI_NO_OP", 0xff },
};

static int is_unsigned(enum repr r) { return r == U8 || r == U16 || r == U32 || r == U64; }
static int is_complex(enum repr r) { return r >= C16; }
static int is_float(enum repr r) { return r >= F16; }

static void store(enum repr r, void *p, long long re, long long im)
{
    switch (r) {
    case I8: *(int8_t *)p = (int8_t)re; break;
    case U8: *(uint8_t *)p = (uint8_t)re; break;
    case I16: *(int16_t *)p = (int16_t)re; break;
    case U16: *(uint16_t *)p = (uint16_t)re; break;
    case I32: *(int32_t *)p = (int32_t)re; break;
    case U32: *(uint32_t *)p = (uint32_t)re; break;
    case I64: *(int64_t *)p = (int64_t)re; break;
    case U64: *(uint64_t *)p = (uint64_t)re; break;
    case I128: *(__int128 *)p = (__int128)re; break;
    case F32: *(float *)p = (float)re; break;
    case F64: *(double *)p = (double)re; break;
    case FLD: memset(p, 0, sizeof(long double)); *(long double *)p = (long double)re; break;
    case C32: *(float _Complex *)p = (float)re + (float)im * I; break;
    case C64: *(double _Complex *)p = (double)re + (double)im * I; break;
    case CLD:
        memset(p, 0, sizeof(long double _Complex));
        *(long double _Complex *)p = (long double)re + (long double)im * I;
        break;
#ifdef HAVE_F16
    case F16: *(f16_t *)p = (f16_t)re; break;
    case C16: { f16_t v[2] = { (f16_t)re, (f16_t)im }; memcpy(p, v, 4); } break;
#endif
#ifdef HAVE_F128
    case F128: *(f128_t *)p = (f128_t)re; break;
    case C128: { f128_t v[2] = { (f128_t)re, (f128_t)im }; memcpy(p, v, 32); } break;
#endif
    default: MT_FAIL("representation %d not available in this test build", (int)r);
    }
}

static void load(enum repr r, const void *p, long long *re, long long *im)
{
    *im = 0;
    switch (r) {
    case I8: *re = *(const int8_t *)p; break;
    case U8: *re = *(const uint8_t *)p; break;
    case I16: *re = *(const int16_t *)p; break;
    case U16: *re = *(const uint16_t *)p; break;
    case I32: *re = *(const int32_t *)p; break;
    case U32: *re = *(const uint32_t *)p; break;
    case I64: *re = *(const int64_t *)p; break;
    case U64: *re = (long long)*(const uint64_t *)p; break;
    case I128: *re = (long long)*(const __int128 *)p; break;
    case F32: *re = (long long)*(const float *)p; break;
    case F64: *re = (long long)*(const double *)p; break;
    case FLD: *re = (long long)*(const long double *)p; break;
    case C32: *re = (long long)crealf(*(const float _Complex *)p);
              *im = (long long)cimagf(*(const float _Complex *)p); break;
    case C64: *re = (long long)creal(*(const double _Complex *)p);
              *im = (long long)cimag(*(const double _Complex *)p); break;
    case CLD: *re = (long long)creall(*(const long double _Complex *)p);
              *im = (long long)cimagl(*(const long double _Complex *)p); break;
#ifdef HAVE_F16
    case F16: *re = (long long)*(const f16_t *)p; break;
    case C16: { f16_t v[2]; memcpy(v, p, 4); *re = (long long)v[0]; *im = (long long)v[1]; } break;
#endif
#ifdef HAVE_F128
    case F128: *re = (long long)*(const f128_t *)p; break;
    case C128: { f128_t v[2]; memcpy(v, p, 32); *re = (long long)v[0]; *im = (long long)v[1]; } break;
#endif
    default: MT_FAIL("representation %d not available in this test build", (int)r);
    }
}

/* Operand values: small, signed unless the representation is not; logical operations get many
 * zeros; booleans are 0 or 1. */
static long long value(const struct type *ty, int op, size_t i, int side)
{
    long long v = (long long)((i * 7 + (size_t)side * 13 + i / 5) % 41) - 20;
    if (ty->cls == LOGICAL)
        return (v & 4) != 0;
    if (op == LAND || op == LOR || op == LXOR)
        v %= 3;
    if (is_unsigned(ty->r))
        v = v < 0 ? -v : v;
    return v;
}

/* The reference: in op inout, in 64-bit integers (stored back, so integer overflow wraps). */
static void reference(int op, enum repr r, long long ar, long long ai, long long br,
                      long long bi, long long *cr, long long *ci)
{
    *ci = 0;
    switch (op) {
    case SUM: *cr = ar + br; *ci = ai + bi; break;
    case PROD:
        *cr = ar * br - ai * bi;
        *ci = ar * bi + ai * br;
        break;
    case MIN: *cr = ar < br ? ar : br; break;
    case MAX: *cr = ar > br ? ar : br; break;
    case LAND: *cr = ar && br; break;
    case LOR: *cr = ar || br; break;
    case LXOR: *cr = !ar != !br; break;
    case BAND: *cr = ar & br; break;
    case BOR: *cr = ar | br; break;
    case BXOR: *cr = ar ^ br; break;
    case REPLACE: *cr = ar; *ci = ai; break;
    case NO_OP: *cr = br; *ci = bi; break;
    }
    (void)r;
}

static int available(enum repr r)
{
#ifndef HAVE_F16
    if (r == F16 || r == C16)
        return 0;
#endif
#ifndef HAVE_F128
    if (r == F128 || r == C128)
        return 0;
#endif
    return 1;
}

static int checked, rejected, skipped;

static void check_pair(const struct type *ty, int op, size_t n)
{
    size_t es = repr_size[ty->r];
    int size = 0;
    MT_CALL(MPI_Type_size(ty->t, &size));
    if ((size_t)size != es)
        MT_FAIL("MPI_Type_size(%s) expected %zu got %d", ty->name, es, size);
    unsigned char *a = mt_malloc(n * es), *b = mt_malloc(n * es), *c = mt_malloc(es);
    for (size_t i = 0; i < n; i++) {
        store(ty->r, a + i * es, value(ty, op, i, 0), is_complex(ty->r) ? value(ty, op, i + 5, 1) % 5 : 0);
        store(ty->r, b + i * es, value(ty, op, i, 1), is_complex(ty->r) ? value(ty, op, i + 3, 2) % 5 : 0);
    }
    int defined = op == REPLACE || op == NO_OP || (ops[op].classes & ty->cls) != 0;
    if (!defined && !mt_weft) {
        /* MPICH 4.0 asserts on some undefined pairs (MPI_LAND on MPI_FLOAT) instead of failing */
        free(a), free(b), free(c);
        return;
    }
    if (getenv("OP_TRACE"))
        fprintf(stderr, "%s %s %zu\n", ops[op].name, ty->name, n);
    int rc = MPI_Reduce_local(a, b, (int)n, ty->t, ops[op].op);
    if (!defined) {
        if (mt_weft && mt_class(rc) != MPI_ERR_OP)
            MT_FAIL("MPI_Reduce_local(%s, %s), undefined, expected MPI_ERR_OP got %s", ops[op].name,
                    ty->name, mt_class_name(mt_class(rc)));
        if (rc != MPI_SUCCESS)
            rejected++;
        free(a), free(b), free(c);
        return;
    }
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        MT_FAIL("MPI_Reduce_local(%s, %s) expected MPI_SUCCESS got %s: %s", ops[op].name, ty->name,
                mt_class_name(mt_class(rc)), msg);
    }
    for (size_t i = 0; i < n; i++) {
        long long ar = value(ty, op, i, 0), br = value(ty, op, i, 1);
        long long ai = is_complex(ty->r) ? value(ty, op, i + 5, 1) % 5 : 0;
        long long bi = is_complex(ty->r) ? value(ty, op, i + 3, 2) % 5 : 0;
        long long er, ei, gr, gi;
        reference(op, ty->r, ar, ai, br, bi, &er, &ei);
        store(ty->r, c, er, ei);   /* wrap like the type */
        load(ty->r, c, &er, &ei);
        load(ty->r, b + i * es, &gr, &gi);
        if (er != gr || ei != gi)
            MT_FAIL("%s(%s) element %zu of %zu: in=(%lld,%lld) inout=(%lld,%lld) expected "
                    "(%lld,%lld) got (%lld,%lld)", ops[op].name, ty->name, i, n, ar, ai, br, bi,
                    er, ei, gr, gi);
        (void)is_float;
    }
    checked++;
    free(a), free(b), free(c);
}

/* MINLOC and MAXLOC on the pair types. */
#define PAIR_TEST(H, VT, IT) pair_test(H, #H, sizeof(struct { VT v; IT i; }),                   \
                                       offsetof(struct { VT v; IT i; }, i), sizeof(VT),        \
                                       sizeof(IT), pair_##VT##_##IT)
typedef void (*pair_rw_fn)(void *p, int write, long long *v, long long *i);
#define PAIR_RW(VT, IT)                                                                      \
    static void pair_##VT##_##IT(void *p, int write, long long *v, long long *i)              \
    {                                                                                         \
        struct { VT v; IT i; } *s = p;                                                        \
        if (write) {                                                                          \
            s->v = (VT)*v;                                                                    \
            s->i = (IT)*i;                                                                    \
        } else {                                                                              \
            *v = (long long)s->v;                                                             \
            *i = (long long)s->i;                                                             \
        }                                                                                     \
    }
typedef long double ldouble;
PAIR_RW(float, int) PAIR_RW(double, int) PAIR_RW(long, int) PAIR_RW(int, int)
PAIR_RW(short, int) PAIR_RW(ldouble, int) PAIR_RW(float, float) PAIR_RW(double, double)

static void pair_test(MPI_Datatype t, const char *name, size_t es, size_t ioff, size_t vs,
                      size_t is, pair_rw_fn rw)
{
    enum { N = 53 };
    for (int maxloc = 0; maxloc < 2; maxloc++) {
        unsigned char *a = mt_malloc(N * es), *b = mt_malloc(N * es);
        memset(a, 0, N * es);
        memset(b, 0, N * es);
        for (long long k = 0; k < N; k++) {
            /* values collide often; indexes make both orders of a tie appear */
            long long av = (k * 5) % 7 - 3, bv = (k * 3) % 7 - 3;
            long long ai = 2 * k + (k & 1), bi = 2 * k + 1 - (k & 1);
            rw(a + k * es, 1, &av, &ai);
            rw(b + k * es, 1, &bv, &bi);
        }
        MT_CALL(MPI_Reduce_local(a, b, N, t, maxloc ? MPI_MAXLOC : MPI_MINLOC));
        for (long long k = 0; k < N; k++) {
            long long av = (k * 5) % 7 - 3, bv = (k * 3) % 7 - 3;
            long long ai = 2 * k + (k & 1), bi = 2 * k + 1 - (k & 1);
            long long ev, ei, gv, gi;
            int a_wins = maxloc ? av > bv : av < bv;
            if (av == bv) {
                ev = av;
                ei = ai < bi ? ai : bi;
            } else {
                ev = a_wins ? av : bv;
                ei = a_wins ? ai : bi;
            }
            rw(b + k * es, 0, &gv, &gi);
            if (gv != ev || gi != ei)
                MT_FAIL("%s(%s) element %lld: in=(%lld,%lld) inout=(%lld,%lld) expected "
                        "(%lld,%lld) got (%lld,%lld)", maxloc ? "MPI_MAXLOC" : "MPI_MINLOC",
                        name, k, av, ai, bv, bi, ev, ei, gv, gi);
        }
        checked++;
        free(a);
        free(b);
    }
    (void)ioff, (void)vs, (void)is;
    /* the other operations are not defined on pairs */
    if (mt_weft) {
        char buf[64] = { 0 }, buf2[64] = { 0 };
        MT_CLASS_EQ("MPI_SUM on a pair type", MPI_ERR_OP, MPI_Reduce_local(buf, buf2, 1, t, MPI_SUM));
        rejected++;
    }
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    size_t counts[] = { 1, 37, 1000 };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const struct type *ty = &types[ti];
        /* MPICH 4.0 takes MPI_REAL16 for a long double, not gfortran's REAL*16 (__float128) */
        int f128 = ty->r == F128 || ty->r == C128;
        if (ty->t == MPI_DATATYPE_NULL || !available(ty->r) || (f128 && !mt_weft)) {
            skipped++;   /* optional type this implementation or compiler lacks */
            continue;
        }
        for (int op = 0; op < NOPS; op++) {
            if ((op == REPLACE || op == NO_OP) && !mt_weft)
                continue;
            if (ty->cls == 0 && !(op == REPLACE || op == NO_OP) && !mt_weft)
                continue;
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                check_pair(ty, op, counts[c]);
        }
    }
    PAIR_TEST(MPI_FLOAT_INT, float, int);
    PAIR_TEST(MPI_DOUBLE_INT, double, int);
    PAIR_TEST(MPI_LONG_INT, long, int);
    PAIR_TEST(MPI_2INT, int, int);
    PAIR_TEST(MPI_SHORT_INT, short, int);
    PAIR_TEST(MPI_LONG_DOUBLE_INT, ldouble, int);
    PAIR_TEST(MPI_2REAL, float, float);
    PAIR_TEST(MPI_2DOUBLE_PRECISION, double, double);
    PAIR_TEST(MPI_2INTEGER, int, int);

    /* a long vector: the vectorised kernels and their tails */
    {
        enum { N = 100003 };
        double *a = mt_malloc(N * sizeof(double)), *b = mt_malloc(N * sizeof(double));
        int32_t *x = mt_malloc(N * sizeof(int32_t)), *y = mt_malloc(N * sizeof(int32_t));
        for (int i = 0; i < N; i++) {
            a[i] = i % 1000;
            b[i] = (i * 3) % 1001;
            x[i] = (int32_t)(i * 2654435761u);
            y[i] = (int32_t)(i * 40503u);
        }
        MT_CALL(MPI_Reduce_local(a, b, N, MPI_DOUBLE, MPI_SUM));
        MT_CALL(MPI_Reduce_local(x, y, N, MPI_INT32_T, MPI_SUM));
        for (int i = 0; i < N; i++) {
            if (b[i] != (double)(i % 1000 + (i * 3) % 1001))
                MT_FAIL("long MPI_SUM(MPI_DOUBLE) element %d expected %d got %g", i,
                        i % 1000 + (i * 3) % 1001, b[i]);
            int32_t e = (int32_t)((uint32_t)(i * 2654435761u) + (uint32_t)(i * 40503u));
            MT_EQ("long MPI_SUM(MPI_INT32_T) with overflow", e, y[i]);
        }
        /* unaligned buffers */
        char *ua = mt_malloc(8 * 64 + 1), *ub = mt_malloc(8 * 64 + 1);
        for (int i = 0; i < 64; i++) {
            double va = i, vb = 2 * i;
            memcpy(ua + 1 + 8 * i, &va, 8);
            memcpy(ub + 1 + 8 * i, &vb, 8);
        }
        MT_CALL(MPI_Reduce_local(ua + 1, ub + 1, 64, MPI_DOUBLE, MPI_MAX));
        for (int i = 0; i < 64; i++) {
            double g;
            memcpy(&g, ub + 1 + 8 * i, 8);
            if (g != 2 * i)
                MT_FAIL("unaligned MPI_MAX(MPI_DOUBLE) element %d expected %d got %g", i, 2 * i, g);
        }
        free(a), free(b), free(x), free(y), free(ua), free(ub);
    }
    /* count 0 with NULL buffers is fine */
    MT_CALL(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
    if (mt_rank == 0)
        printf("op_reduce: %d (op, type, count) cases checked, %d rejected, %d types skipped\n",
               checked, rejected, skipped);
    return mt_finish("op_reduce");
}
