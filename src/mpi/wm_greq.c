/* Generalized requests (MPI 4.1 section 13.2): MPI_Grequest_start, MPI_Grequest_complete,
 * MPI_Status_set_cancelled, and what the wait/test family does with them (wm_request.h).
 *
 * A generalized request is a pooled wm_request_t of kind WM_REQ_GREQ whose core request is never
 * given to the core: MPI_Grequest_complete completes it the way the core completes its own (one
 * atomic exchange of the state, then a wake-up of the thread sleeping in a wait, if any), so the
 * waits need nothing special: a waiter polls, then sleeps on its wait object with a time-out
 * (wc_wait.c), and the completing thread wakes it. The callbacks and extra_state live in a
 * wm_greq_t (r->ext). When the request is done, the wait or test calls query_fn for the status,
 * then free_fn, then frees the request; MPI_Request_get_status calls query_fn only.
 *
 * MPI_Request_free before MPI_Grequest_complete: free_fn runs in whichever of the two comes last
 * (the standard's rule). The core state decides it: MPI_Request_free swaps PENDING for DETACHED
 * and MPI_Grequest_complete swaps in COMPLETE; the call that finds the other's mark runs free_fn
 * and frees the request. The handle stays valid meanwhile, so the application can still pass its
 * copy to MPI_Grequest_complete.
 *
 * Concurrency contract: MPI_Grequest_complete may be called from any thread, once, concurrently
 * with a wait, test or MPI_Request_free of the request in another thread; after its exchange it
 * touches the request only if it won it (DETACHED). Everything else is the owner's, one thread at
 * a time (MPI's rule for a request).
 */
#include "mpi/wm_internal.h"
#include "core/wc_wait.h"

#include <stdlib.h>

typedef struct wm_greq {
    MPI_Grequest_query_function  *query_fn;
    MPI_Grequest_free_function   *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void                         *extra_state;
} wm_greq_t;

static int wm_greq_call_free(wm_request_t *r)
{
    wm_greq_t *g = r->ext;
    int rc = g->free_fn ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    r->ext = NULL;
    wm_request_release(r);
    return rc;
}

static void wm_greq_detached(wc_request_t *core)
{
    /* not reached: MPI_Grequest_complete frees a detached request itself (it needs free_fn's
     * error code); set so that a completion by any other path is still safe */
    wm_greq_call_free(WU_CONTAINER_OF(core, wm_request_t, core));
}

int wm_greq_query(wm_request_t *r, MPI_Status *status)
{
    wm_greq_t *g = r->ext;
    MPI_Status tmp;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &tmp : status;
    /* what query_fn does not set reads as an empty status; MPI_ERROR stays the caller's */
    wm_status_fill(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
    if (st == &tmp)
        tmp.MPI_ERROR = MPI_SUCCESS;
    return g->query_fn ? g->query_fn(g->extra_state, st) : MPI_SUCCESS;
}

int wm_greq_finish(wm_request_t *r, MPI_Request *h, MPI_Status *status)
{
    int rc = wm_greq_query(r, status);
    int rc2 = wm_greq_call_free(r);
    *h = MPI_REQUEST_NULL;
    return rc != MPI_SUCCESS ? rc : rc2;
}

int wm_greq_free(wm_request_t *r)
{
    r->core.on_complete = wm_greq_detached;
    uintptr_t expect = WC_REQ_PENDING;
    if (atomic_compare_exchange_strong_explicit(&r->core.state, &expect, WC_REQ_DETACHED,
                                                memory_order_acq_rel, memory_order_acquire))
        return MPI_SUCCESS;   /* MPI_Grequest_complete will free it */
    return wm_greq_call_free(r);
}

int wm_greq_cancel(wm_request_t *r)
{
    wm_greq_t *g = r->ext;
    int complete = wc_request_is_complete(&r->core);
    return g->cancel_fn ? g->cancel_fn(g->extra_state, complete) : MPI_SUCCESS;
}

int wm_impl_MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                               MPI_Grequest_free_function *free_fn,
                               MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                               MPI_Request *request)
{
    static const char fn[] = "MPI_Grequest_start";
    WM_CHECK_INIT(fn);
    if (!request)
        return wm_error(NULL, MPI_ERR_ARG, fn, "request is NULL");
    wm_greq_t *g = malloc(sizeof(*g));
    wm_request_t *r = g ? wm_request_alloc() : NULL;
    if (!r) {
        free(g);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for a generalized request");
    }
    *g = (wm_greq_t){ query_fn, free_fn, cancel_fn, extra_state };
    r->kind = WM_REQ_GREQ;
    r->comm = &wm_comm_self;   /* errors of its completion go where errors of no object go */
    r->peer = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->ext = g;
    r->active = true;
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Grequest_complete(MPI_Request request)
{
    static const char fn[] = "MPI_Grequest_complete";
    WM_CHECK_INIT(fn);
    wm_request_t *r = wm_request_get(request);
    if (!r || r->kind != WM_REQ_GREQ)
        return wm_error(NULL, MPI_ERR_REQUEST, fn, "%p is not a generalized request",
                        (void *)request);
    /* always the atomic exchange: the completing thread is often not the one waiting */
    uintptr_t old = atomic_exchange_explicit(&r->core.state, WC_REQ_COMPLETE, memory_order_acq_rel);
    if (old == WC_REQ_COMPLETE)
        return wm_error(NULL, MPI_ERR_REQUEST, fn, "the generalized request %p is complete already",
                        (void *)request);
    if (old == WC_REQ_PENDING)
        return MPI_SUCCESS;
    if (old == WC_REQ_DETACHED) {   /* freed by the user before: free_fn runs now */
        int rc = wm_greq_call_free(r);
        return rc ? wm_error_raise(NULL, rc) : MPI_SUCCESS;
    }
    wc_waiter_wake(old);   /* a thread sleeps in a wait for it */
    return MPI_SUCCESS;
}
