/* Predefined datatypes (contiguous data): size, extent and basic elements per element, indexed by
 * the standard ABI's handle value. Derived datatypes come with the datatype engine. */
#include "mpi/wm_internal.h"

#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

wm_datatype_t wm_type_table[WM_TYPE_COUNT];

#define WM_PAIR(a, b) struct { a x; b y; }

static void wm_type_set(MPI_Datatype t, size_t size, size_t extent, int elements)
{
    wm_datatype_t *ti = &wm_type_table[(uintptr_t)t - WM_TYPE_BASE];
    ti->size = size;
    ti->extent = (int64_t)extent;
    ti->elements = (uint8_t)elements;
    /* Pair types keep their padding in the packed form for now (contiguous, extent bytes). */
    ti->layout = (wc_dtype_t){ .size = extent, .extent = (int64_t)extent, .contig = true };
    wm_obj_init_predefined(&ti->obj, WM_OBJ_TYPE, (uintptr_t)t, NULL);
}

#define WM_T(h, ctype) wm_type_set(h, sizeof(ctype), sizeof(ctype), 1)
#define WM_N(h, n) wm_type_set(h, n, n, 1)
#define WM_P(h, a, b) \
    wm_type_set(h, sizeof(a) + sizeof(b), sizeof(WM_PAIR(a, b)), 2)

void wm_datatype_init(void)
{
    WM_T(MPI_AINT, MPI_Aint);
    WM_T(MPI_COUNT, MPI_Count);
    WM_T(MPI_OFFSET, MPI_Offset);
    WM_N(MPI_PACKED, 1);
    WM_T(MPI_SHORT, short);
    WM_T(MPI_INT, int);
    WM_T(MPI_LONG, long);
    WM_T(MPI_LONG_LONG, long long);
    WM_T(MPI_UNSIGNED_SHORT, unsigned short);
    WM_T(MPI_UNSIGNED, unsigned);
    WM_T(MPI_UNSIGNED_LONG, unsigned long);
    WM_T(MPI_UNSIGNED_LONG_LONG, unsigned long long);
    WM_T(MPI_FLOAT, float);
    WM_T(MPI_C_FLOAT_COMPLEX, float _Complex);
    WM_T(MPI_CXX_FLOAT_COMPLEX, float _Complex);
    WM_T(MPI_DOUBLE, double);
    WM_T(MPI_C_DOUBLE_COMPLEX, double _Complex);
    WM_T(MPI_CXX_DOUBLE_COMPLEX, double _Complex);
    WM_N(MPI_LOGICAL, 4);
    WM_N(MPI_INTEGER, 4);
    WM_N(MPI_REAL, 4);
    WM_N(MPI_COMPLEX, 8);
    WM_N(MPI_DOUBLE_PRECISION, 8);
    WM_N(MPI_DOUBLE_COMPLEX, 16);
    WM_T(MPI_LONG_DOUBLE, long double);
    WM_T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
    WM_T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex);
    WM_P(MPI_FLOAT_INT, float, int);
    WM_P(MPI_DOUBLE_INT, double, int);
    WM_P(MPI_LONG_INT, long, int);
    WM_P(MPI_2INT, int, int);
    WM_P(MPI_SHORT_INT, short, int);
    WM_P(MPI_LONG_DOUBLE_INT, long double, int);
    wm_type_set(MPI_2REAL, 8, 8, 2);
    wm_type_set(MPI_2DOUBLE_PRECISION, 16, 16, 2);
    wm_type_set(MPI_2INTEGER, 8, 8, 2);
    WM_T(MPI_C_BOOL, _Bool);
    WM_T(MPI_CXX_BOOL, _Bool);
    WM_T(MPI_WCHAR, wchar_t);
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
    WM_N(MPI_COMPLEX4, 4);
    WM_N(MPI_LOGICAL8, 8);
    WM_N(MPI_INTEGER8, 8);
    WM_N(MPI_REAL8, 8);
    WM_N(MPI_COMPLEX8, 8);
    WM_N(MPI_LOGICAL16, 16);
    WM_N(MPI_INTEGER16, 16);
    WM_N(MPI_REAL16, 16);
    WM_N(MPI_COMPLEX16, 16);
    WM_N(MPI_COMPLEX32, 32);
}

static int wm_type_check(const char *fn, MPI_Datatype t, const wm_datatype_t **ti_p)
{
    if (!wm_type_table[(uintptr_t)MPI_INT - WM_TYPE_BASE].extent)
        wm_datatype_init();   /* usable before MPI_Init */
    const wm_datatype_t *ti = wm_type_get(t);
    if (!ti)
        return wm_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype %p", (void *)t);
    *ti_p = ti;
    return MPI_SUCCESS;
}

WM_API int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    const wm_datatype_t *ti = NULL;
    int rc = wm_type_check("MPI_Type_size", datatype, &ti);
    if (rc)
        return rc;
    if (!size)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
    *size = (int)ti->size;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Type_size)

/* Count of whole elements in the status, or MPI_UNDEFINED if the bytes are not a multiple. */
static int wm_status_count(const char *fn, const MPI_Status *status, MPI_Datatype t, bool elements,
                           MPI_Count *count_p)
{
    const wm_datatype_t *ti = NULL;
    int rc = wm_type_check(fn, t, &ti);
    if (rc)
        return rc;
    if (status == MPI_STATUS_IGNORE)
        return wm_error(NULL, MPI_ERR_ARG, fn, "status is MPI_STATUS_IGNORE");
    MPI_Count bytes = wm_status_bytes(status);
    MPI_Count n;
    if (!elements || ti->elements == 1) {
        if (ti->extent == 0)
            n = 0;
        else if (bytes % ti->extent)
            n = elements && ti->elements == 1 && bytes % ti->size == 0 ? bytes / ti->size
                                                                      : MPI_UNDEFINED;
        else
            n = bytes / ti->extent * (elements ? ti->elements : 1);
    } else {
        /* pair types: count whole pairs, plus the first member of a trailing partial pair */
        MPI_Count pairs = bytes / ti->extent;
        n = pairs * 2 + (bytes % ti->extent ? 1 : 0);
    }
    *count_p = n;
    return MPI_SUCCESS;
}

#define WM_COUNT_FN(NAME, CT, ELEMENTS)                                                        \
    WM_API int P##NAME(const MPI_Status *status, MPI_Datatype datatype, CT *count)             \
    {                                                                                           \
        MPI_Count n;                                                                            \
        if (!count)                                                                             \
            return wm_error(NULL, MPI_ERR_ARG, #NAME, "count is NULL");                         \
        int rc = wm_status_count(#NAME, status, datatype, ELEMENTS, &n);                       \
        if (rc)                                                                                 \
            return rc;                                                                          \
        if (sizeof(CT) < sizeof(MPI_Count) && n > 0x7fffffff)                                  \
            n = MPI_UNDEFINED;                                                                  \
        *count = (CT)n;                                                                         \
        return MPI_SUCCESS;                                                                     \
    }                                                                                           \
    WM_ALIAS(NAME)

WM_COUNT_FN(MPI_Get_count, int, false)
WM_COUNT_FN(MPI_Get_count_c, MPI_Count, false)
WM_COUNT_FN(MPI_Get_elements, int, true)
WM_COUNT_FN(MPI_Get_elements_c, MPI_Count, true)
WM_COUNT_FN(MPI_Get_elements_x, MPI_Count, true)

#define WM_STATUS_SET(NAME, FIELD)                                          \
    WM_API int P##NAME(MPI_Status *status, int v)                           \
    {                                                                       \
        if (status == MPI_STATUS_IGNORE)                                    \
            return wm_error(NULL, MPI_ERR_ARG, #NAME, "status is NULL");    \
        status->FIELD = v;                                                  \
        return MPI_SUCCESS;                                                 \
    }                                                                       \
    WM_ALIAS(NAME)
#define WM_STATUS_GET(NAME, FIELD)                                          \
    WM_API int P##NAME(const MPI_Status *status, int *v)                    \
    {                                                                       \
        if (status == MPI_STATUS_IGNORE || !v)                              \
            return wm_error(NULL, MPI_ERR_ARG, #NAME, "%s is NULL",         \
                            v ? "status" : "the output argument");          \
        *v = status->FIELD;                                                 \
        return MPI_SUCCESS;                                                 \
    }                                                                       \
    WM_ALIAS(NAME)

WM_STATUS_SET(MPI_Status_set_source, MPI_SOURCE)
WM_STATUS_SET(MPI_Status_set_tag, MPI_TAG)
WM_STATUS_SET(MPI_Status_set_error, MPI_ERROR)
WM_STATUS_GET(MPI_Status_get_source, MPI_SOURCE)
WM_STATUS_GET(MPI_Status_get_tag, MPI_TAG)
WM_STATUS_GET(MPI_Status_get_error, MPI_ERROR)
