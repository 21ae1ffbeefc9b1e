/* Reduction operations: the predefined ones (MPI_SUM ... MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP) with a
 * kernel per (operation, basic type), and user operations (MPI_Op_create), which are objects of the
 * arena (wm_object.h) named by the requests of nonblocking collectives that use them.
 * Concurrency contract: an op is immutable once created; any thread may apply it.
 */
#ifndef WM_OP_H
#define WM_OP_H

#include <mpi.h>
#include <stdbool.h>
#include "core/wc_rma_atomic_inl.h"
#include "mpi/wm_datatype.h"
#include "mpi/wm_object.h"

typedef struct wm_op {
    wm_obj_t             obj;       /* first: lifetime and handle */
    MPI_User_function   *fn;        /* user op (int count), or NULL */
    MPI_User_function_c *fn_c;      /* user op (MPI_Count), or NULL */
    bool                 commute;
    int                  builtin;   /* predefined: index of the kernel table, else -1 */
} wm_op_t;

/* The op of handle h, or NULL if h is not a valid op. */
const wm_op_t *wm_op_get(MPI_Op h);

/* Whether op may be applied to type (predefined ops: the standard's table of op x basic type,
 * derived types whose elements are all one basic type included; user ops: any type). On false,
 * *why_p says why, for the error message. */
bool wm_op_valid(const wm_op_t *op, const wm_datatype_t *dt, const char **why_p);
/* The same for accumulate functions (and MPI_Reduce_local): also MPI_REPLACE and MPI_NO_OP, on
 * any predefined type or a derived type of one predefined type. *why_p stays valid until the
 * calling thread's next call. */
bool wm_op_valid_rma(const wm_op_t *op, const wm_datatype_t *dt, const char **why_p);

/* Accumulates by CPU atomics (core/wc_rma_atomic_inl.h): true if dt's basic type is one whose
 * every accumulate goes through them (1, 2, 4 or 8 bytes: integers, logicals, bytes, float,
 * double; not the pairs), with *a_p set for op (NULL: Compare_and_swap, only esize is set). The
 * answer for a type never depends on op, so that all accumulates to one location agree. The
 * caller has checked wm_op_valid_rma. */
bool wm_op_atomic_plan(const wm_op_t *op, const wm_datatype_t *dt, wc_rma_atomic_t *a_p);

/* "MPI_SUM", ... or "a user operation": for error messages. */
const char *wm_op_name(const wm_op_t *op);

/* inout[i] = in[i] op inout[i] for count elements of type (the standard's order: in is the left
 * operand). Both buffers are laid out by the datatype (user buffers, not packed streams).
 * Predefined ops: the kernel of the basic type, in place block by block for a derived layout
 * (through aligned bounce buffers for pairs and misaligned data). User ops: the user's function
 * on the whole buffer (int-count functions in pieces of INT_MAX elements). The caller has
 * checked wm_op_valid(_rma); `type` is the handle passed to user functions. */
void wm_op_apply(const wm_op_t *op, const void *in, void *inout, MPI_Count count,
                 const wm_datatype_t *dt, MPI_Datatype type);

/* The one predefined type a (derived) type is made of, or MPI_DATATYPE_NULL. */
MPI_Datatype wm_op_basic(const wm_datatype_t *dt);
/* inout = in op inout over bytes of a packed stream of elements of the predefined type basic
 * (handles as integers: wc_rma_reduce_fn_t, for accumulates from another node); both buffers
 * aligned for the type. The origin checked the pair with wm_op_valid_rma. */
bool wm_op_reduce_stream(uint64_t op, uint64_t basic, const void *in, void *inout,
                         uint64_t bytes);

#endif
