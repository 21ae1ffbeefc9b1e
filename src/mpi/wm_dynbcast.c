/* MPIX_Dynbcast and MPIX_Idynbcast (include/weft.h): the dynamic broadcast of NewMadeleine. The
 * core does the work (core/wc_dynbcast.h, docs/dynbcast.md); here the arguments are checked and the
 * destination list becomes world ranks. The communicator and datatype are not used after the call
 * starts (the core packs a non-contiguous buffer at once), so nothing else is kept.
 * No PMPIX_ names: the exported prefixes are MPI_, PMPI_, MPIX_ and weft_ (docs/design.md). */
#include "mpi/wm_internal.h"
#include "core/wc_dynbcast.h"
#include "mpi/wm_datatype.h"
#include "mpi/wm_request.h"
#include <weft.h>

#include <stdlib.h>

/* Check the arguments and translate the list: *world_p (malloc'd, or NULL when n is 0) gets the
 * world ranks of the destinations other than MPI_PROC_NULL, *n_p their number. */
static int wm_dynbcast_args(wm_comm_t *c, const char *fn, const void *buf, int count,
                            MPI_Datatype datatype, const int dests[], int ndests, int tag,
                            const wm_datatype_t **ti_p, int **world_p, int *n_p)
{
    if (WU_UNLIKELY(c->inter))
        return wm_error(c, MPI_ERR_COMM, fn, "%s is an intercommunicator", c->name);
    int rc = wm_check_buffer_args(c, fn, buf, count, datatype, ti_p);
    if (WU_UNLIKELY(rc))
        return rc;
    if (WU_UNLIKELY(tag < 0 || tag > WM_TAG_UB))
        return wm_error(c, MPI_ERR_TAG, fn, "invalid tag %d (valid: 0 to %d)", tag, WM_TAG_UB);
    if (WU_UNLIKELY(ndests < 0))
        return wm_error(c, MPI_ERR_ARG, fn, "invalid ndests %d", ndests);
    if (WU_UNLIKELY(ndests > 0 && !dests))
        return wm_error(c, MPI_ERR_ARG, fn, "dests is NULL with ndests %d", ndests);
    *world_p = NULL;
    *n_p = 0;
    if (ndests == 0)
        return MPI_SUCCESS;
    unsigned char *seen = calloc((size_t)c->size, 1);
    int *world = malloc((size_t)ndests * sizeof(int));
    if (!seen || !world) {
        free(seen);
        free(world);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d destinations", ndests);
    }
    int n = 0;
    for (int i = 0; i < ndests; i++) {
        int d = dests[i];
        if (d == MPI_PROC_NULL)
            continue;
        if (d < 0 || d >= c->size)
            rc = wm_error(c, MPI_ERR_RANK, fn, "invalid rank dests[%d] = %d (%s has %d ranks)", i,
                          d, c->name, c->size);
        else if (d == c->rank)
            rc = wm_error(c, MPI_ERR_RANK, fn, "dests[%d] = %d is the root itself", i, d);
        else if (seen[d])
            rc = wm_error(c, MPI_ERR_ARG, fn, "rank %d appears twice in dests (at index %d)", d, i);
        if (rc) {
            free(seen);
            free(world);
            return rc;
        }
        seen[d] = 1;
        world[n++] = wm_comm_world_rank(c, d);
    }
    free(seen);
    *world_p = world;
    *n_p = n;
    return MPI_SUCCESS;
}

WM_API int MPIX_Dynbcast(const void *buf, int count, MPI_Datatype datatype, const int dests[],
                          int ndests, int tag, MPI_Comm comm)
{
    static const char fn[] = "MPIX_Dynbcast";
    WM_COMM_CHECK(fn, comm, c);
    const wm_datatype_t *ti;
    int *world, n;
    int rc = wm_dynbcast_args(c, fn, buf, count, datatype, dests, ndests, tag, &ti, &world, &n);
    if (WU_UNLIKELY(rc))
        return rc;
    wc_request_t r;
    wu_status_t st = wc_idynbcast(wc_ep_default(), &r, buf, (uint64_t)count, &ti->layout, world, n, tag, c->ctx);
    free(world);
    if (st == WU_OK) {
        wc_wait(&r);
        st = (wu_status_t)r.error;
    }
    if (WU_UNLIKELY(st != WU_OK))
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    return MPI_SUCCESS;
}

WM_API int MPIX_Idynbcast(const void *buf, int count, MPI_Datatype datatype, const int dests[],
                           int ndests, int tag, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPIX_Idynbcast";
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(!request))
        return wm_error(c, MPI_ERR_ARG, fn, "request is NULL");
    const wm_datatype_t *ti;
    int *world, n;
    int rc = wm_dynbcast_args(c, fn, buf, count, datatype, dests, ndests, tag, &ti, &world, &n);
    if (WU_UNLIKELY(rc))
        return rc;
    wm_request_t *r = wm_request_alloc();
    if (!r) {
        free(world);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->kind = WM_REQ_SEND;
    r->comm = c;
    r->ti = ti;
    r->buf = (void *)buf;
    r->count = count;
    r->type = datatype;
    r->peer = MPI_PROC_NULL;
    r->tag = tag;
    r->mode = WC_SEND_STANDARD;
    r->active = true;
    /* like a send: the request keeps a user communicator and datatype alive (docs/objects.md) */
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, (wm_obj_t *)&ti->obj);
    wu_status_t st = wc_idynbcast(wc_ep_default(), &r->core, buf, (uint64_t)count, &ti->layout, world, n, tag,
                                  c->ctx);
    free(world);
    if (WU_UNLIKELY(st != WU_OK)) {
        wm_request_release(r);
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    }
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}
