/* Communicators of this version: MPI_COMM_WORLD, MPI_COMM_SELF and duplicates of them;
 * rank, size, dup, free, barrier. */
#include "mpi/wm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wm_comm_t wm_comm_world, wm_comm_self;

#define WM_COMM_CHECK(fn, comm, c)                                         \
    WM_CHECK_INIT(fn);                                                     \
    wm_comm_t *c = wm_comm_get(comm);                                      \
    if (WU_UNLIKELY(!c))                                                   \
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator %p", (void *)(comm))

WM_API int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    WM_COMM_CHECK("MPI_Comm_rank", comm, c);
    if (!rank)
        return wm_error(c, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_rank)

WM_API int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    WM_COMM_CHECK("MPI_Comm_size", comm, c);
    if (!size)
        return wm_error(c, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_size)

/* Dissemination barrier: ceil(log2 n) rounds of zero-byte messages on the collective context. */
int wm_barrier(wm_comm_t *c)
{
    int n = c->size, me = c->rank;
    char dummy;
    for (int d = 1, round = 0; d < n; d <<= 1, round++) {
        wc_request_t s = { 0 }, r = { 0 };
        int to = wm_comm_world_rank(c, (me + d) % n);
        int from = wm_comm_world_rank(c, (me - d + n) % n);
        wc_irecv(&r, &dummy, 0, from, round, c->ctx | WM_CTX_COLL);
        wc_isend(&s, &dummy, 0, to, round, c->ctx | WM_CTX_COLL, WC_SEND_STANDARD);
        wc_wait(&s);
        wc_wait(&r);
    }
    return MPI_SUCCESS;
}

WM_API int PMPI_Barrier(MPI_Comm comm)
{
    WM_COMM_CHECK("MPI_Barrier", comm, c);
    return wm_barrier(c);
}
WM_ALIAS(MPI_Barrier)

WM_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_dup";
    WM_COMM_CHECK(fn, comm, c);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    wm_comm_t *d = malloc(sizeof(*d));
    if (!d)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    *d = *c;
    d->predefined = false;
    /* Every member calls MPI_Comm_dup on its communicators in the same order, so a counter gives
     * the same context id everywhere for dups of the world. General agreement comes with issue 4. */
    d->ctx = atomic_fetch_add(&wm_state.next_ctx, 2);
    snprintf(d->name, sizeof(d->name), "%.100s (dup)", c->name);
    /* The barrier makes the new context usable on every member before anyone sends on it; not
     * strictly required (unexpected messages are kept), but it keeps dup collective as specified. */
    wm_barrier(c);
    *newcomm = (MPI_Comm)d;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_dup)

WM_API int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_free";
    WM_CHECK_INIT(fn);
    if (!comm)
        return wm_error(NULL, MPI_ERR_ARG, fn, "comm is NULL");
    wm_comm_t *c = wm_comm_get(*comm);
    if (!c)
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator %p", (void *)*comm);
    if (c->predefined)
        return wm_error(c, MPI_ERR_COMM, fn, "%s cannot be freed", c->name);
    c->magic = 0;
    free(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_free)
