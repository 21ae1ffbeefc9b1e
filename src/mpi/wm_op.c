/* Reduction operations (see wm_op.h). Placeholder until the kernels land: no op is valid. */
#include "mpi/wm_op.h"
#include "mpi/wm_internal.h"

const wm_op_t *wm_op_get(MPI_Op h)
{
    (void)h;
    return NULL;
}

bool wm_op_valid(const wm_op_t *op, const wm_datatype_t *dt, const char **why_p)
{
    *why_p = "reduction operations are not implemented yet";
    return false;
}

void wm_op_apply(const wm_op_t *op, const void *in, void *inout, MPI_Count count,
                 const wm_datatype_t *dt, MPI_Datatype type)
{
    wc_abort(1, "wm_op_apply: reduction operations are not implemented yet");
}
