/* Argument checks shared by the point-to-point calls. */
#include "mpi/wm_internal.h"

int wm_check_buffer_args_full(wm_comm_t *c, const char *func, const void *buf, MPI_Count count,
                              MPI_Datatype type, const wm_datatype_t **ti_p)
{
    if (WU_UNLIKELY(count < 0))
        return wm_error(c, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    if (WU_UNLIKELY(buf == MPI_IN_PLACE))
        return wm_error(c, MPI_ERR_BUFFER, func,
                        "buffer is MPI_IN_PLACE (only collectives accept it)");
    const wm_datatype_t *ti = wm_type_get(type);
    if (WU_UNLIKELY(!ti))
        return wm_error(c, MPI_ERR_TYPE, func, "invalid datatype %p", (void *)type);
    if (WU_UNLIKELY(!ti->committed))
        return wm_error(c, MPI_ERR_TYPE, func, "datatype %p is not committed", (void *)type);
    /* one compare on the fast path: the count's bytes fit, and so do the type's (max_count 0) */
    if (WU_UNLIKELY((uint64_t)count > ti->max_count)) {
        if (ti->size_overflow || ti->bounds_overflow)
            return wm_error(c, MPI_ERR_TYPE, func, "the %s of datatype %p does not fit in "
                            "MPI_Count", ti->size_overflow ? "size" : "extent", (void *)type);
        return wm_error(c, MPI_ERR_COUNT, func, "count %lld of a %llu-byte datatype is more than "
                        "%lld bytes", (long long)count, (unsigned long long)ti->size,
                        (long long)INT64_MAX);
    }
    /* NULL is MPI_BOTTOM: a derived type may hold absolute addresses */
    if (WU_UNLIKELY(!buf && count > 0 && ti->size > 0 && ti->obj.predefined))
        return wm_error(c, MPI_ERR_BUFFER, func, "buffer is NULL with count %lld",
                        (long long)count);
    *ti_p = ti;
    return MPI_SUCCESS;
}
