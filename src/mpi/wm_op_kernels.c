/* Kernels of the predefined reduction operations (see wm_op_kernels.h).
 *
 * Each kernel is one loop over plain arrays with restrict pointers and a branch-free body, so the
 * compiler vectorises it. The build's -O2 of GCC 12 vectorises only loops whose trip count is a
 * known multiple of the vector width; this file asks for the dynamic cost model instead.
 * Signed integer SUM and PROD go through the unsigned type: overflow wraps (the standard leaves
 * the result undefined; wrapping is what every peer does) instead of being undefined behaviour.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif
#include "mpi/wm_op_kernels.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if defined(__FLT16_MAX__)
#define WM_HAVE_F16 1
typedef _Float16 wm_f16_t;
typedef _Complex float __attribute__((mode(HC))) wm_c16_t;
#endif
#if defined(__SIZEOF_FLOAT128__)
#define WM_HAVE_F128 1
typedef __float128 wm_f128_t;
typedef _Complex float __attribute__((mode(TC))) wm_c128_t;
#endif
typedef __int128 wm_i128_t;
typedef unsigned __int128 wm_u128_t;

#define WM_KERNEL(NAME, T, EXPR)                                                               \
    static void NAME(const void *in_, void *inout_, size_t n)                                  \
    {                                                                                          \
        const T *restrict a = in_;                                                             \
        T *restrict b = inout_;                                                                \
        for (size_t i = 0; i < n; i++) {                                                       \
            T x = a[i], y = b[i];                                                              \
            b[i] = (EXPR);                                                                     \
        }                                                                                      \
    }

/* x is the left operand (in), y the right one (inout). */
#define WM_INT_KERNELS(S, T, UT)                                                               \
    WM_KERNEL(wm_sum_##S, T, (T)((UT)x + (UT)y))                                               \
    WM_KERNEL(wm_prod_##S, T, (T)((UT)x * (UT)y))                                              \
    WM_KERNEL(wm_min_##S, T, x < y ? x : y)                                                    \
    WM_KERNEL(wm_max_##S, T, x > y ? x : y)                                                    \
    WM_KERNEL(wm_band_##S, T, x & y)                                                           \
    WM_KERNEL(wm_bor_##S, T, x | y)                                                            \
    WM_KERNEL(wm_bxor_##S, T, x ^ y)                                                           \
    WM_KERNEL(wm_land_##S, T, (T)((x != 0) & (y != 0)))                                        \
    WM_KERNEL(wm_lor_##S, T, (T)((x != 0) | (y != 0)))                                         \
    WM_KERNEL(wm_lxor_##S, T, (T)((x != 0) ^ (y != 0)))

#define WM_FLOAT_KERNELS(S, T)                                                                 \
    WM_KERNEL(wm_sum_##S, T, x + y)                                                            \
    WM_KERNEL(wm_prod_##S, T, x * y)                                                           \
    WM_KERNEL(wm_min_##S, T, x < y ? x : y)                                                    \
    WM_KERNEL(wm_max_##S, T, x > y ? x : y)

#define WM_COMPLEX_KERNELS(S, T)                                                               \
    WM_KERNEL(wm_sum_##S, T, x + y)                                                            \
    WM_KERNEL(wm_prod_##S, T, x * y)

WM_INT_KERNELS(i8, int8_t, uint8_t)
WM_INT_KERNELS(u8, uint8_t, uint8_t)
WM_INT_KERNELS(i16, int16_t, uint16_t)
WM_INT_KERNELS(u16, uint16_t, uint16_t)
WM_INT_KERNELS(i32, int32_t, uint32_t)
WM_INT_KERNELS(u32, uint32_t, uint32_t)
WM_INT_KERNELS(i64, int64_t, uint64_t)
WM_INT_KERNELS(u64, uint64_t, uint64_t)
WM_INT_KERNELS(i128, wm_i128_t, wm_u128_t)
WM_FLOAT_KERNELS(f32, float)
WM_FLOAT_KERNELS(f64, double)
WM_FLOAT_KERNELS(fld, long double)
WM_COMPLEX_KERNELS(c32, float _Complex)
WM_COMPLEX_KERNELS(c64, double _Complex)
WM_COMPLEX_KERNELS(cld, long double _Complex)
#ifdef WM_HAVE_F16
WM_FLOAT_KERNELS(f16, wm_f16_t)
WM_COMPLEX_KERNELS(c16, wm_c16_t)
#endif
#ifdef WM_HAVE_F128
WM_FLOAT_KERNELS(f128, wm_f128_t)
WM_COMPLEX_KERNELS(c128, wm_c128_t)
#endif

/* MINLOC/MAXLOC: the winner's value and index; on equal values the lower index (MPI 4.1 6.9.4). */
#define WM_PAIR_KERNELS(S, VT, IT)                                                             \
    static void wm_minloc_##S(const void *in_, void *inout_, size_t n, size_t stride,          \
                              size_t ioff)                                                     \
    {                                                                                          \
        const char *a = in_;                                                                   \
        char *b = inout_;                                                                      \
        for (size_t i = 0; i < n; i++, a += stride, b += stride) {                             \
            VT av, bv;                                                                         \
            IT ai, bi;                                                                         \
            memcpy(&av, a, sizeof av);                                                         \
            memcpy(&bv, b, sizeof bv);                                                         \
            memcpy(&ai, a + ioff, sizeof ai);                                                  \
            memcpy(&bi, b + ioff, sizeof bi);                                                  \
            if (av < bv || (av == bv && ai < bi)) {                                            \
                memcpy(b, &av, sizeof av);                                                     \
                memcpy(b + ioff, &ai, sizeof ai);                                              \
            }                                                                                  \
        }                                                                                      \
    }                                                                                          \
    static void wm_maxloc_##S(const void *in_, void *inout_, size_t n, size_t stride,          \
                              size_t ioff)                                                     \
    {                                                                                          \
        const char *a = in_;                                                                   \
        char *b = inout_;                                                                      \
        for (size_t i = 0; i < n; i++, a += stride, b += stride) {                             \
            VT av, bv;                                                                         \
            IT ai, bi;                                                                         \
            memcpy(&av, a, sizeof av);                                                         \
            memcpy(&bv, b, sizeof bv);                                                         \
            memcpy(&ai, a + ioff, sizeof ai);                                                  \
            memcpy(&bi, b + ioff, sizeof bi);                                                  \
            if (av > bv || (av == bv && ai < bi)) {                                            \
                memcpy(b, &av, sizeof av);                                                     \
                memcpy(b + ioff, &ai, sizeof ai);                                              \
            }                                                                                  \
        }                                                                                      \
    }

WM_PAIR_KERNELS(float_int, float, int)
WM_PAIR_KERNELS(double_int, double, int)
WM_PAIR_KERNELS(long_int, long, int)
WM_PAIR_KERNELS(2int, int, int)
WM_PAIR_KERNELS(short_int, short, int)
WM_PAIR_KERNELS(ldouble_int, long double, int)
WM_PAIR_KERNELS(2float, float, float)
WM_PAIR_KERNELS(2double, double, double)

#define WM_INT_ROW(S) \
    [WM_OPK_SUM] = wm_sum_##S, [WM_OPK_PROD] = wm_prod_##S, [WM_OPK_MIN] = wm_min_##S,        \
    [WM_OPK_MAX] = wm_max_##S, [WM_OPK_BAND] = wm_band_##S, [WM_OPK_BOR] = wm_bor_##S,        \
    [WM_OPK_BXOR] = wm_bxor_##S, [WM_OPK_LAND] = wm_land_##S, [WM_OPK_LOR] = wm_lor_##S,      \
    [WM_OPK_LXOR] = wm_lxor_##S

const wm_op_kernel_fn_t wm_op_kernels[WM_K_COUNT][WM_OPK_REPLACE] = {
    [WM_K_I8] = { WM_INT_ROW(i8) },     [WM_K_U8] = { WM_INT_ROW(u8) },
    [WM_K_I16] = { WM_INT_ROW(i16) },   [WM_K_U16] = { WM_INT_ROW(u16) },
    [WM_K_I32] = { WM_INT_ROW(i32) },   [WM_K_U32] = { WM_INT_ROW(u32) },
    [WM_K_I64] = { WM_INT_ROW(i64) },   [WM_K_U64] = { WM_INT_ROW(u64) },
    [WM_K_I128] = { WM_INT_ROW(i128) },
#define WM_FLOAT_ROW(S) \
    { [WM_OPK_SUM] = wm_sum_##S, [WM_OPK_PROD] = wm_prod_##S, [WM_OPK_MIN] = wm_min_##S,      \
      [WM_OPK_MAX] = wm_max_##S }
#define WM_COMPLEX_ROW(S) { [WM_OPK_SUM] = wm_sum_##S, [WM_OPK_PROD] = wm_prod_##S }
    [WM_K_F32] = WM_FLOAT_ROW(f32),     [WM_K_F64] = WM_FLOAT_ROW(f64),
    [WM_K_FLD] = WM_FLOAT_ROW(fld),
    [WM_K_C32] = WM_COMPLEX_ROW(c32),   [WM_K_C64] = WM_COMPLEX_ROW(c64),
    [WM_K_CLD] = WM_COMPLEX_ROW(cld),
#ifdef WM_HAVE_F16
    [WM_K_F16] = WM_FLOAT_ROW(f16),     [WM_K_C16] = WM_COMPLEX_ROW(c16),
#endif
#ifdef WM_HAVE_F128
    [WM_K_F128] = WM_FLOAT_ROW(f128),   [WM_K_C128] = WM_COMPLEX_ROW(c128),
#endif
};


#define WM_PAIR_ROW(S) { wm_minloc_##S, wm_maxloc_##S }
const wm_op_pair_fn_t wm_op_pair_kernels[WM_K_COUNT - WM_K_FIRST_PAIR][2] = {
    [WM_K_P_FLOAT_INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(float_int),
    [WM_K_P_DOUBLE_INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(double_int),
    [WM_K_P_LONG_INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(long_int),
    [WM_K_P_2INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(2int),
    [WM_K_P_SHORT_INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(short_int),
    [WM_K_P_LDOUBLE_INT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(ldouble_int),
    [WM_K_P_2FLOAT - WM_K_FIRST_PAIR] = WM_PAIR_ROW(2float),
    [WM_K_P_2DOUBLE - WM_K_FIRST_PAIR] = WM_PAIR_ROW(2double),
};

#define WM_PAIR(VT, IT) struct { VT v; IT i; }
#define WM_PAIR_SIZES(K, VT, IT) \
    [K] = sizeof(VT) + sizeof(IT)
const uint8_t wm_kind_size[WM_K_COUNT] = {
    [WM_K_I8] = 1, [WM_K_U8] = 1, [WM_K_I16] = 2, [WM_K_U16] = 2, [WM_K_I32] = 4, [WM_K_U32] = 4,
    [WM_K_I64] = 8, [WM_K_U64] = 8, [WM_K_I128] = 16, [WM_K_F16] = 2, [WM_K_F32] = 4,
    [WM_K_F64] = 8, [WM_K_FLD] = sizeof(long double), [WM_K_F128] = 16, [WM_K_C16] = 4,
    [WM_K_C32] = 8, [WM_K_C64] = 16, [WM_K_CLD] = sizeof(long double _Complex), [WM_K_C128] = 32,
    WM_PAIR_SIZES(WM_K_P_FLOAT_INT, float, int), WM_PAIR_SIZES(WM_K_P_DOUBLE_INT, double, int),
    WM_PAIR_SIZES(WM_K_P_LONG_INT, long, int), WM_PAIR_SIZES(WM_K_P_2INT, int, int),
    WM_PAIR_SIZES(WM_K_P_SHORT_INT, short, int),
    WM_PAIR_SIZES(WM_K_P_LDOUBLE_INT, long double, int),
    WM_PAIR_SIZES(WM_K_P_2FLOAT, float, float), WM_PAIR_SIZES(WM_K_P_2DOUBLE, double, double),
};

#define WM_PAIR_ALIGN(K, VT, IT) [K] = _Alignof(WM_PAIR(VT, IT))
const uint8_t wm_kind_align[WM_K_COUNT] = {
    [WM_K_I8] = 1, [WM_K_U8] = 1, [WM_K_I16] = 2, [WM_K_U16] = 2, [WM_K_I32] = 4, [WM_K_U32] = 4,
    [WM_K_I64] = 8, [WM_K_U64] = 8, [WM_K_I128] = _Alignof(wm_i128_t), [WM_K_F16] = 2,
    [WM_K_F32] = 4, [WM_K_F64] = 8, [WM_K_FLD] = _Alignof(long double), [WM_K_F128] = 16,
    [WM_K_C16] = 2, [WM_K_C32] = 4, [WM_K_C64] = 8, [WM_K_CLD] = _Alignof(long double _Complex),
    [WM_K_C128] = 16,
    WM_PAIR_ALIGN(WM_K_P_FLOAT_INT, float, int), WM_PAIR_ALIGN(WM_K_P_DOUBLE_INT, double, int),
    WM_PAIR_ALIGN(WM_K_P_LONG_INT, long, int), WM_PAIR_ALIGN(WM_K_P_2INT, int, int),
    WM_PAIR_ALIGN(WM_K_P_SHORT_INT, short, int),
    WM_PAIR_ALIGN(WM_K_P_LDOUBLE_INT, long double, int),
    WM_PAIR_ALIGN(WM_K_P_2FLOAT, float, float), WM_PAIR_ALIGN(WM_K_P_2DOUBLE, double, double),
};

#define WM_PAIR_VSIZE(K, VT, IT) [K] = sizeof(VT)
const uint8_t wm_kind_pair_vsize[WM_K_COUNT] = {
    WM_PAIR_VSIZE(WM_K_P_FLOAT_INT, float, int), WM_PAIR_VSIZE(WM_K_P_DOUBLE_INT, double, int),
    WM_PAIR_VSIZE(WM_K_P_LONG_INT, long, int), WM_PAIR_VSIZE(WM_K_P_2INT, int, int),
    WM_PAIR_VSIZE(WM_K_P_SHORT_INT, short, int),
    WM_PAIR_VSIZE(WM_K_P_LDOUBLE_INT, long double, int),
    WM_PAIR_VSIZE(WM_K_P_2FLOAT, float, float), WM_PAIR_VSIZE(WM_K_P_2DOUBLE, double, double),
};

#define WM_PAIR_IOFF(K, VT, IT) [K] = offsetof(WM_PAIR(VT, IT), i)
const uint8_t wm_kind_pair_ioff[WM_K_COUNT] = {
    WM_PAIR_IOFF(WM_K_P_FLOAT_INT, float, int), WM_PAIR_IOFF(WM_K_P_DOUBLE_INT, double, int),
    WM_PAIR_IOFF(WM_K_P_LONG_INT, long, int), WM_PAIR_IOFF(WM_K_P_2INT, int, int),
    WM_PAIR_IOFF(WM_K_P_SHORT_INT, short, int),
    WM_PAIR_IOFF(WM_K_P_LDOUBLE_INT, long double, int),
    WM_PAIR_IOFF(WM_K_P_2FLOAT, float, float), WM_PAIR_IOFF(WM_K_P_2DOUBLE, double, double),
};
