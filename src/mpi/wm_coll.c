/* Collectives. This version: the barrier (dissemination), used by MPI_Finalize too. */
#include "mpi/wm_internal.h"

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

