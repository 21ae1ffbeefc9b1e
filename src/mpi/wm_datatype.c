/* Datatypes: the predefined table, the queries (size, extent, true extent, name), commit, dup,
 * free, and the counts of a status (MPI_Get_count, MPI_Get_elements, MPI_Status_set_elements).
 * Constructors are in wm_type_ctor.c and wm_type_array.c, the layout building in wm_type_build.c. */
#include "mpi/wm_type_build.h"

#include <complex.h>
#include <float.h>
#include <limits.h>
#include <stdalign.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

wm_datatype_t wm_type_table[WM_TYPE_COUNT];

#define WM_PAIR(a, b) struct { a x; b y; }

/* A predefined type: the segments of one element (one or two members), named. */
static void wm_type_set(MPI_Datatype h, const char *name, size_t extent, size_t align,
                        size_t size_a, uint32_t swap_a, size_t off_b, size_t size_b)
{
    wm_datatype_t *t = &wm_type_table[(uintptr_t)h - WM_TYPE_BASE];
    wm_segbuf_t b = { 0 };
    wm_segbuf_append(&b, 0, 1, size_a, (int64_t)size_a, (uint32_t)size_a, swap_a);
    if (size_b)
        wm_segbuf_append(&b, (int64_t)off_b, 1, size_b, (int64_t)size_b, (uint32_t)size_b,
                         (uint32_t)size_b);
    memcpy(t->inline_segs, b.segs, b.n * sizeof(*b.segs));
    t->layout.segs = t->inline_segs;
    t->layout.nsegs = b.n;
    wm_segbuf_free(&b);
    t->extent = (int64_t)extent;
    t->lb = 0;
    t->align = (uint16_t)align;
    t->committed = true;
    t->combiner = MPI_COMBINER_NAMED;
    wm_type_derive(t);
    strncpy(t->name, name, sizeof(t->name) - 1);
    wm_obj_init_predefined(&t->obj, WM_OBJ_TYPE, (uintptr_t)h, NULL);
}

/* The `swap` of a member of C type ctype: its byte-swap unit and its external32 conversion. */
#define WM_SW(ctype, conv) ((uint32_t)sizeof(ctype) | (uint32_t)(conv) << WM_EXT32_SHIFT)
#define WM_LONG_CONV (sizeof(long) == 4 ? WM_EXT32_SAME : WM_EXT32_LONG)
#define WM_ULONG_CONV (sizeof(long) == 4 ? WM_EXT32_SAME : WM_EXT32_ULONG)
#define WM_WCHAR_CONV (sizeof(wchar_t) == 2 ? WM_EXT32_SAME : WM_EXT32_WCHAR)
#define WM_LDOUBLE_CONV (LDBL_MANT_DIG == 113 ? WM_EXT32_SAME : WM_EXT32_LDOUBLE)
#define WM_TX(h, ctype, conv) \
    wm_type_set(h, #h, sizeof(ctype), alignof(ctype), sizeof(ctype), WM_SW(ctype, conv), 0, 0)

#define WM_T(h, ctype) wm_type_set(h, #h, sizeof(ctype), alignof(ctype), sizeof(ctype), sizeof(ctype), 0, 0)
#define WM_C(h, ctype) wm_type_set(h, #h, sizeof(ctype), alignof(ctype), sizeof(ctype), sizeof(ctype) / 2, 0, 0)
#define WM_N(h, n) wm_type_set(h, #h, n, (n) > 8 ? 8 : (n), n, n, 0, 0)
#define WM_NC(h, n) wm_type_set(h, #h, n, (n) > 16 ? 8 : (n) / 2, n, (n) / 2, 0, 0)
#define WM_P(h, a, b)                                                                         \
    wm_type_set(h, #h, sizeof(WM_PAIR(a, b)), alignof(WM_PAIR(a, b)), sizeof(a), sizeof(a),   \
                offsetof(WM_PAIR(a, b), y), sizeof(b))
#define WM_P2(h, n) wm_type_set(h, #h, 2 * (n), n, n, n, n, n)

void wm_datatype_init(void)
{
    WM_T(MPI_AINT, MPI_Aint);
    WM_T(MPI_COUNT, MPI_Count);
    WM_T(MPI_OFFSET, MPI_Offset);
    WM_N(MPI_PACKED, 1);
    WM_T(MPI_SHORT, short);
    WM_T(MPI_INT, int);
    WM_TX(MPI_LONG, long, WM_LONG_CONV);
    WM_T(MPI_LONG_LONG, long long);
    WM_T(MPI_UNSIGNED_SHORT, unsigned short);
    WM_T(MPI_UNSIGNED, unsigned);
    WM_TX(MPI_UNSIGNED_LONG, unsigned long, WM_ULONG_CONV);
    WM_T(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    WM_T(MPI_FLOAT, float);
    WM_C(MPI_C_FLOAT_COMPLEX, float _Complex);
    WM_C(MPI_CXX_FLOAT_COMPLEX, float _Complex);
    WM_T(MPI_DOUBLE, double);
    WM_C(MPI_C_DOUBLE_COMPLEX, double _Complex);
    WM_C(MPI_CXX_DOUBLE_COMPLEX, double _Complex);
    WM_N(MPI_LOGICAL, 4);
    WM_N(MPI_INTEGER, 4);
    WM_N(MPI_REAL, 4);
    WM_NC(MPI_COMPLEX, 8);
    WM_N(MPI_DOUBLE_PRECISION, 8);
    WM_NC(MPI_DOUBLE_COMPLEX, 16);
    WM_TX(MPI_LONG_DOUBLE, long double, WM_LDOUBLE_CONV);
    wm_type_set(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex),
                alignof(long double _Complex), sizeof(long double _Complex),
                WM_SW(long double, WM_LDOUBLE_CONV), 0, 0);
    wm_type_set(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX",
                sizeof(long double _Complex), alignof(long double _Complex),
                sizeof(long double _Complex), WM_SW(long double, WM_LDOUBLE_CONV), 0, 0);
    WM_P(MPI_FLOAT_INT, float, int);
    WM_P(MPI_DOUBLE_INT, double, int);
    wm_type_set(MPI_LONG_INT, "MPI_LONG_INT", sizeof(WM_PAIR(long, int)), alignof(WM_PAIR(long, int)),
                sizeof(long), WM_SW(long, WM_LONG_CONV), offsetof(WM_PAIR(long, int), y), sizeof(int));
    WM_P(MPI_2INT, int, int);
    WM_P(MPI_SHORT_INT, short, int);
    wm_type_set(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(WM_PAIR(long double, int)),
                alignof(WM_PAIR(long double, int)), sizeof(long double),
                WM_SW(long double, WM_LDOUBLE_CONV), offsetof(WM_PAIR(long double, int), y),
                sizeof(int));
    WM_P2(MPI_2REAL, 4);
    WM_P2(MPI_2DOUBLE_PRECISION, 8);
    WM_P2(MPI_2INTEGER, 4);
    WM_T(MPI_C_BOOL, _Bool);
    WM_T(MPI_CXX_BOOL, _Bool);
    WM_TX(MPI_WCHAR, wchar_t, WM_WCHAR_CONV);
    WM_N(MPI_INT8_T, 1);
    WM_N(MPI_UINT8_T, 1);
    WM_T(MPI_CHAR, char);
    WM_T(MPI_SIGNED_CHAR, signed char);
    WM_T(MPI_UNSIGNED_CHAR, unsigned char);
    WM_N(MPI_BYTE, 1);
    WM_N(MPI_INT16_T, 2);
    WM_N(MPI_UINT16_T, 2);
    WM_N(MPI_INT32_T, 4);
    WM_N(MPI_UINT32_T, 4);
    WM_N(MPI_INT64_T, 8);
    WM_N(MPI_UINT64_T, 8);
    WM_N(MPI_LOGICAL1, 1);
    WM_N(MPI_INTEGER1, 1);
    WM_N(MPI_CHARACTER, 1);
    WM_N(MPI_LOGICAL2, 2);
    WM_N(MPI_INTEGER2, 2);
    WM_N(MPI_REAL2, 2);
    WM_N(MPI_LOGICAL4, 4);
    WM_N(MPI_INTEGER4, 4);
    WM_N(MPI_REAL4, 4);
    WM_NC(MPI_COMPLEX4, 4);
    WM_N(MPI_LOGICAL8, 8);
    WM_N(MPI_INTEGER8, 8);
    WM_N(MPI_REAL8, 8);
    WM_NC(MPI_COMPLEX8, 8);
    WM_N(MPI_LOGICAL16, 16);
    WM_N(MPI_INTEGER16, 16);
    WM_N(MPI_REAL16, 16);
    WM_NC(MPI_COMPLEX16, 16);
    WM_NC(MPI_COMPLEX32, 32);
}

const wm_datatype_t *wm_type_arg(const char *fn, MPI_Datatype t, int *rc_p)
{
    if (WU_UNLIKELY(!wm_type_table[(uintptr_t)MPI_INT - WM_TYPE_BASE].extent))
        wm_datatype_init();   /* usable before MPI_Init */
    const wm_datatype_t *ti = wm_type_get(t);
    if (!ti)
        *rc_p = wm_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype %p", (void *)t);
    return ti;
}

/* The standard's predefined types: the named ones (the static table) and those of
 * MPI_Type_create_f90_* (wm_type_is_f90). The user may not free them; they need no commit. */
static bool wm_type_predefined(MPI_Datatype t, const wm_datatype_t *ti)
{
    return (uintptr_t)t - WM_TYPE_BASE < WM_TYPE_COUNT || wm_type_is_f90(ti);
}

#define WM_TYPE_ARG(fn, t, ti)                          \
    int rc_ = MPI_SUCCESS;                              \
    const wm_datatype_t *ti = wm_type_arg(fn, t, &rc_); \
    if (!ti)                                            \
        return rc_

#define WM_OUT_CHECK(fn, p)                                                          \
    if (!(p))                                                                        \
        return wm_error(NULL, MPI_ERR_ARG, fn, "output argument %s is NULL", #p)

/* Type_size, Type_get_extent and Type_get_true_extent: one helper each for the int form, its _c
 * twin (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h) and the _x form. A value the output cannot
 * hold is MPI_UNDEFINED. */
static inline int wm_type_size(const char *fn, MPI_Datatype datatype, wm_ints_out_t size)
{
    WM_TYPE_ARG(fn, datatype, ti);
    if (!size.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "output argument size is NULL");
    bool fits = !ti->size_overflow && ti->size <= INT64_MAX &&
                wm_ints_fits(size, (int64_t)ti->size);
    wm_ints_set(size, 0, fits ? (int64_t)ti->size : MPI_UNDEFINED);
    return MPI_SUCCESS;
}

static inline int wm_type_extent(const char *fn, MPI_Datatype datatype, wm_ints_out_t lb,
                                 wm_ints_out_t extent, bool true_bounds)
{
    WM_TYPE_ARG(fn, datatype, ti);
    if (!lb.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "output argument %s is NULL",
                        true_bounds ? "true_lb" : "lb");
    if (!extent.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "output argument %s is NULL",
                        true_bounds ? "true_extent" : "extent");
    int64_t l = true_bounds ? (int64_t)ti->true_lb : (int64_t)ti->lb;
    int64_t e = true_bounds ? (int64_t)ti->true_extent : (int64_t)ti->extent;
    bool undef = ti->bounds_overflow || !wm_ints_fits(lb, l) || !wm_ints_fits(extent, e);
    wm_ints_set(lb, 0, undef ? MPI_UNDEFINED : l);
    wm_ints_set(extent, 0, undef ? MPI_UNDEFINED : e);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Type_size(wm_type_size)
WM_TWINS_MPI_Type_get_extent(wm_type_extent, false)
WM_TWINS_MPI_Type_get_true_extent(wm_type_extent, true)

int wm_impl_MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return wm_type_size("MPI_Type_size_x", datatype, WM_INTS_OUT(size));
}

int wm_impl_MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return wm_type_extent("MPI_Type_get_extent_x", datatype, WM_INTS_OUT(lb), WM_INTS_OUT(extent),
                          false);
}

int wm_impl_MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb,
                                       MPI_Count *true_extent)
{
    return wm_type_extent("MPI_Type_get_true_extent_x", datatype, WM_INTS_OUT(true_lb),
                          WM_INTS_OUT(true_extent), true);
}

int wm_impl_MPI_Get_address(const void *location, MPI_Aint *address)
{
    WM_OUT_CHECK("MPI_Get_address", address);
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Type_commit(MPI_Datatype *datatype)
{
    WM_OUT_CHECK("MPI_Type_commit", datatype);
    WM_TYPE_ARG("MPI_Type_commit", *datatype, ti);
    if (!wm_type_predefined(*datatype, ti))   /* predefined ones are shared: never written */
        ((wm_datatype_t *)ti)->committed = true;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Type_free(MPI_Datatype *datatype)
{
    WM_OUT_CHECK("MPI_Type_free", datatype);
    WM_TYPE_ARG("MPI_Type_free", *datatype, ti);
    if (wm_type_predefined(*datatype, ti)) {
        char made[64];
        if (!wm_type_is_f90(ti))
            return wm_error(NULL, MPI_ERR_TYPE, "MPI_Type_free",
                            "%s is predefined and cannot be freed", ti->name);
        wm_type_f90_describe(ti, made, sizeof made);
        return wm_error(NULL, MPI_ERR_TYPE, "MPI_Type_free",
                        "the datatype returned by %s is predefined and cannot be freed", made);
    }
    wm_datatype_t *t = (wm_datatype_t *)ti;
    int rc = wm_attr_delete_all(&t->obj);
    if (rc)
        return wm_error_raise(NULL, rc);
    wm_obj_user_free(&t->obj);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    WM_TYPE_ARG("MPI_Type_dup", oldtype, ti);
    WM_OUT_CHECK("MPI_Type_dup", newtype);
    wm_type_contents_t *ct = wm_contents_new(0, 0, 0, 1);
    wm_datatype_t *t = ct ? wm_type_clone(ti) : NULL;
    if (!t) {
        wm_contents_free(ct);
        return wm_error(NULL, MPI_ERR_NO_MEM, "MPI_Type_dup", "out of memory");
    }
    wm_contents_free(t->contents);
    ct->types[0] = oldtype;
    wm_contents_retain(ct);
    t->contents = ct;
    t->combiner = MPI_COMBINER_DUP;
    t->name[0] = '\0';
    int rc = wm_attr_copy_all((wm_obj_t *)&ti->obj, &t->obj);
    if (rc) {
        wm_obj_user_free(&t->obj);
        return wm_error_raise(NULL, rc);
    }
    *newtype = (MPI_Datatype)t->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    WM_TYPE_ARG("MPI_Type_set_name", datatype, ti);
    if (!type_name)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_set_name", "type_name is NULL");
    wm_datatype_t *t = (wm_datatype_t *)ti;
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(t->name, type_name, n);
    t->name[n] = '\0';
    return MPI_SUCCESS;
}

/* MPI 4.1 (section 5.1.15, change B.1.2 item 18): MPI_DATATYPE_NULL is a valid argument, named
 * "MPI_DATATYPE_NULL"; any other invalid handle is MPI_ERR_TYPE. */
int wm_impl_MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    if (datatype == MPI_DATATYPE_NULL) {
        WM_CHECK_INIT("MPI_Type_get_name");
        if (!type_name || !resultlen)
            return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_get_name", "%s is NULL",
                            type_name ? "resultlen" : "type_name");
        strcpy(type_name, "MPI_DATATYPE_NULL");
        *resultlen = (int)strlen(type_name);
        return MPI_SUCCESS;
    }
    WM_TYPE_ARG("MPI_Type_get_name", datatype, ti);
    if (!type_name || !resultlen)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_get_name", "%s is NULL",
                        type_name ? "resultlen" : "type_name");
    size_t n = strnlen(ti->name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, ti->name, n);
    type_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

/* ---- counts of a status ----------------------------------------------------------------------- */

int64_t wm_type_elements(const wm_datatype_t *ti, uint64_t bytes)
{
    if (!ti->size)
        return 0;
    uint64_t rem = bytes % ti->size;
    int64_t n = (int64_t)(bytes / ti->size * ti->elements);
    for (uint64_t i = 0; rem && i < ti->layout.nsegs; i++) {
        const wc_dtype_seg_t *s = &ti->layout.segs[i];
        uint64_t sb = s->count * s->blocklen, take = rem < sb ? rem : sb;
        if (take % s->unit)
            return -1;
        n += (int64_t)(take / s->unit);
        rem -= take;
    }
    return n;
}

/* Packed bytes holding n basic elements of ti (inverse of wm_type_elements). */
static uint64_t wm_type_elements_bytes(const wm_datatype_t *ti, uint64_t n)
{
    if (!ti->elements)
        return 0;
    uint64_t bytes = n / ti->elements * ti->size, rem = n % ti->elements;
    for (uint64_t i = 0; rem && i < ti->layout.nsegs; i++) {
        const wc_dtype_seg_t *s = &ti->layout.segs[i];
        uint64_t se = s->count * (s->blocklen / s->unit), take = rem < se ? rem : se;
        bytes += take * s->unit;
        rem -= take;
    }
    return bytes;
}

static int wm_status_count(const char *fn, const MPI_Status *status, MPI_Datatype t, bool elements,
                           MPI_Count *count_p)
{
    WM_TYPE_ARG(fn, t, ti);
    if (status == MPI_STATUS_IGNORE)
        return wm_error(NULL, MPI_ERR_ARG, fn, "status is MPI_STATUS_IGNORE");
    uint64_t bytes = (uint64_t)wm_status_bytes(status);
    MPI_Count n;
    if (elements) {
        int64_t e = wm_type_elements(ti, bytes);
        n = e < 0 ? MPI_UNDEFINED : e;
    } else if (!ti->size) {
        n = 0;
    } else {
        n = bytes % ti->size ? MPI_UNDEFINED : (MPI_Count)(bytes / ti->size);
    }
    *count_p = n;
    return MPI_SUCCESS;
}

/* Get_count and Get_elements: one helper for the int form, its _c twin (WM_TWINS_MPI_X of
 * src/mpi/gen/wm_entry.h) and Get_elements_x. A count the output cannot hold is MPI_UNDEFINED. */
static inline int wm_get_count(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                               wm_ints_out_t count, bool elements)
{
    MPI_Count n = 0;
    if (!count.p)
        return wm_error(NULL, MPI_ERR_ARG, fn, "count is NULL");
    int rc = wm_status_count(fn, status, datatype, elements, &n);
    if (rc)
        return rc;
    wm_ints_set(count, 0, wm_ints_fits(count, n) ? n : MPI_UNDEFINED);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Get_count(wm_get_count, false)
WM_TWINS_MPI_Get_elements(wm_get_count, true)

int wm_impl_MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return wm_get_count("MPI_Get_elements_x", status, datatype, WM_INTS_OUT(count), true);
}

/* Status_set_elements, its _c twin (WM_TWINS_MPI_X of src/mpi/gen/wm_entry.h) and its _x form. */
static inline int wm_status_set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype,
                                         MPI_Count count)
{
    WM_TYPE_ARG(fn, datatype, ti);
    if (status == MPI_STATUS_IGNORE)
        return wm_error(NULL, MPI_ERR_ARG, fn, "status is MPI_STATUS_IGNORE");
    if (count < 0)
        return wm_error(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    wm_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR,
                  (MPI_Count)wm_type_elements_bytes(ti, (uint64_t)count), status->MPI_internal[2]);
    return MPI_SUCCESS;
}

WM_TWINS_MPI_Status_set_elements(wm_status_set_elements)

int wm_impl_MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return wm_status_set_elements("MPI_Status_set_elements_x", status, datatype, count);
}

#define WM_STATUS_SET(NAME, FIELD)                                          \
    int wm_impl_##NAME(MPI_Status *status, int v)                           \
    {                                                                       \
        if (status == MPI_STATUS_IGNORE)                                    \
            return wm_error(NULL, MPI_ERR_ARG, #NAME, "status is NULL");    \
        status->FIELD = v;                                                  \
        return MPI_SUCCESS;                                                 \
    }
#define WM_STATUS_GET(NAME, FIELD)                                          \
    int wm_impl_##NAME(const MPI_Status *status, int *v)                    \
    {                                                                       \
        if (status == MPI_STATUS_IGNORE || !v)                              \
            return wm_error(NULL, MPI_ERR_ARG, #NAME, "%s is NULL",         \
                            v ? "status" : "the output argument");          \
        *v = status->FIELD;                                                 \
        return MPI_SUCCESS;                                                 \
    }

WM_STATUS_SET(MPI_Status_set_source, MPI_SOURCE)
WM_STATUS_SET(MPI_Status_set_tag, MPI_TAG)
WM_STATUS_SET(MPI_Status_set_error, MPI_ERROR)
WM_STATUS_GET(MPI_Status_get_source, MPI_SOURCE)
WM_STATUS_GET(MPI_Status_get_tag, MPI_TAG)
WM_STATUS_GET(MPI_Status_get_error, MPI_ERROR)

/* For the query_fn of generalized requests (MPI 4.1 section 13.3): MPI_Test_cancelled then
 * answers flag. */
int wm_impl_MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (status == MPI_STATUS_IGNORE)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "status is NULL");
    status->MPI_internal[2] = flag != 0;
    return MPI_SUCCESS;
}
