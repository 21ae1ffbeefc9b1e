/* Persistent collectives (MPI 4.0, MPI_Barrier_init .. MPI_Neighbor_alltoallw_init): the entry
 * points of each family (wm_coll*.c) check their arguments as the nonblocking form does and build
 * the same schedule (wm_coll_run with wm_coll_args_t.persist), which becomes an inactive persistent
 * request here. MPI_Start reruns that schedule (wc_sched_start_persistent): no building, no
 * allocation, the same temporaries; the wait/test family completes it like a nonblocking
 * collective, and MPI_Request_free of an inactive one frees the schedule.
 *
 * Tags. The request takes its tag from the communicator's sequence number once, at
 * initialization: MPI orders the initialization calls (they are collective) alike on every
 * member, so every member gives the request the same tag, distinct from every nonblocking call's
 * and every other persistent request's. The starts of one request reuse the tag: a rank starts the
 * next run only after completing its part of the last one, so what it sends to a peer in the next
 * run follows what it sent in the last, and the peer receives them in that order (messages of one
 * (context, source, tag) do not overtake), as for the blocking calls (docs/collectives.md).
 *
 * Concurrency contract: a persistent request is started, completed and freed by the application
 * as MPI says (one thread at a time per request); while active, its schedule belongs to the engine
 * (wc_sched.h).
 */
#include "mpi/wm_coll.h"

int wm_coll_persist_new(const char *fn, wm_comm_t *c, wc_sched_t *s, MPI_Request *request,
                        wm_obj_t *obj1, wm_obj_t *obj2)
{
    wm_request_t *r = wm_request_alloc();
    if (!r) {
        wc_sched_discard(s);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    }
    r->kind = WM_REQ_COLL;
    r->comm = c;
    r->peer = MPI_ANY_SOURCE;
    r->tag = MPI_ANY_TAG;
    r->persistent = true;
    r->active = false;
    r->sched = s;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    if (obj1)
        wm_request_use(r, WM_REQ_OBJ_TYPE, obj1);
    if (obj2)
        wm_request_use(r, WM_REQ_OBJ_OP, obj2);
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

int wm_coll_persist_start(wm_request_t *r, const char *func)
{
    (void)func;
    r->active = true;
    r->proc_null = false;
    wc_sched_start_persistent(r->sched, &r->core);
    return MPI_SUCCESS;
}

void wm_coll_persist_free(wm_request_t *r)
{
    if (r->sched) {
        wc_sched_destroy(r->sched);
        r->sched = NULL;
    }
}
