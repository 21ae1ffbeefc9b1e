/* Communicators of this version: MPI_COMM_WORLD, MPI_COMM_SELF and duplicates of them;
 * rank, size, dup, free, barrier. */
#include "mpi/wm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

wm_comm_t wm_comm_world, wm_comm_self;

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

/* A context id for a new communicator derived from c, the same on every member: rank 0 of c takes
 * two ids (point-to-point and collective) from the job-wide counter and sends it to the others on
 * c's collective context. Collective calls on one communicator are ordered alike on every member,
 * and messages on one (context, source, tag) do not overtake, so each member receives the id of
 * this very call, whatever other threads do on other communicators at the same time. */
#define WM_TAG_CTXID (WM_TAG_COMM_BASE + 1)
uint32_t wm_ctx_agree(wm_comm_t *c)
{
    uint32_t ctx = 0;
    uint32_t coll = c->ctx | WM_CTX_COLL;
    if (c->rank == 0) {
        ctx = wc_ctx_alloc(2);
        for (int r = 1; r < c->size; r++) {
            wc_request_t s;
            wc_isend(&s, &ctx, sizeof(ctx), wm_comm_world_rank(c, r), WM_TAG_CTXID, coll,
                     WC_SEND_STANDARD);
            wc_wait(&s);
        }
    } else {
        wc_request_t r;
        wc_irecv(&r, &ctx, sizeof(ctx), wm_comm_world_rank(c, 0), WM_TAG_CTXID, coll);
        wc_wait(&r);
    }
    return ctx;
}

WM_API int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_dup";
    WM_COMM_CHECK(fn, comm, c);
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    uint32_t ctx = wm_ctx_agree(c);
    wm_comm_t *d = wm_obj_create(WM_OBJ_COMM, sizeof(*d), NULL);
    if (!d)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    wm_obj_t hdr = d->obj;
    *d = *c;
    d->obj = hdr;
    d->ctx = ctx;
    snprintf(d->name, sizeof(d->name), "%.100s (dup)", c->name);
    wm_errh_ref(d->errh);
    int rc = wm_attr_copy_all(&c->obj, &d->obj);
    if (rc != MPI_SUCCESS) {
        wm_errh_unref(d->errh);
        wm_obj_user_free(&d->obj);
        return wm_error_raise(c, rc);
    }
    *newcomm = wm_comm_handle(d);
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
    if (c->obj.predefined)
        return wm_error(c, MPI_ERR_COMM, fn, "%s cannot be freed", c->name);
    int rc = wm_attr_delete_all(&c->obj);
    if (rc != MPI_SUCCESS)
        return wm_error_raise(c, rc);
    wm_errh_unref(c->errh);
    c->errh = MPI_ERRORS_ARE_FATAL;
    wm_obj_user_free(&c->obj);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_free)
