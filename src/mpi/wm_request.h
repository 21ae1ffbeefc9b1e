#ifndef WM_REQUEST_H
#define WM_REQUEST_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "mpi/wm_object.h"
#include "util/wu_compiler.h"
#include "mpi/wm_comm.h"

/* Requests of the MPI layer. */
/* ---- requests ---- */
#define WM_MAGIC_REQ 0x52657175u
typedef enum {
    WM_REQ_SEND = 1,
    WM_REQ_RECV,
    WM_REQ_DONE,       /* completed at start: MPI_PROC_NULL */
    WM_REQ_COLL,       /* a collective: core is completed by its schedule (wm_coll.h); persistent:
                        * `sched` is kept and rerun at every start (wm_coll_persist.c) */
    WM_REQ_PSEND,      /* partitioned send (wm_part.c): `part`; core completed by its task */
    WM_REQ_PRECV,      /* partitioned receive (wm_part.c) */
    WM_REQ_SENDRECV,   /* MPI_Isendrecv(_replace): core completed when both halves are; its
                          status fields are the receive's (wm_pt2pt.c) */
    WM_REQ_GREQ,       /* generalized request: core completed by MPI_Grequest_complete
                          (wm_greq.c) */
    WM_REQ_FLUSH,      /* MPI_Buffer_iflush & co: core completed when the buffered messages
                          it waits for have left (wm_bsend.c) */
} wm_req_kind_t;

typedef struct wm_request {
    /* 16 bytes read by every wait and test, then the core request (its hot part next). */
    uint32_t       magic;
    uint8_t        gen;              /* the handle's low bits (wm_request_get); kept across reuse */
    uint8_t        kind;
    bool           persistent : 1;
    bool           active : 1;       /* persistent: started and not yet completed by a wait/test */
    bool           proc_null : 1;
    union {
        wm_comm_t *comm;                 /* in use */
        struct wm_request *next_free;    /* in the pool */
    };
    wc_request_t   core;
    /* arguments, kept for persistent requests and for error messages */
    void          *buf;
    MPI_Count      count;
    MPI_Datatype   type;
    const struct wm_datatype *ti;   /* the datatype (named in objs[] if it is a user one) */
    int            peer;         /* communicator rank, or MPI_ANY_SOURCE / MPI_PROC_NULL */
    int            tag;
    wc_send_mode_t mode;
    union {
        void              *bsend_block;
        struct wc_sched   *sched;     /* persistent WM_REQ_COLL */
        struct wm_part    *part;      /* WM_REQ_PSEND, WM_REQ_PRECV */
    };
    /* More user objects than objs[] has slots for (the datatypes of MPI_Ialltoallw): the request
     * holds structural references on them (wm_obj_retain, taken once when it starts), dropped and
     * freed when it goes back to the pool. NULL: none. Owner only. */
    wm_obj_t     **held;
    uint32_t       nheld;
    /* The state of the kinds that need more (WM_REQ_SENDRECV: its halves' countdown, also the
     * outer request of a half; WM_REQ_GREQ: the callbacks); see their files. */
    union {
        void               *ext;
        struct wm_request *next_batch;   /* in the shared pool: the next batch (wm_request.c) */
    };
    /* The user objects this request uses (communicator, datatype, op; predefined ones are not
     * named), read by the collector's mark phase from any thread (wm_object.h). Set by the owner
     * while it starts the request, cleared when the request goes back to the pool. */
    _Atomic(wm_obj_t *) objs[3];
} wm_request_t;

#define WM_REQ_OBJ_COMM 0
#define WM_REQ_OBJ_TYPE 1
#define WM_REQ_OBJ_OP   2

/* r uses object o until it is released (not a reference count: see wm_object.h). */
static inline void wm_request_use(wm_request_t *r, int slot, wm_obj_t *o)
{
    if (o->predefined)
        return;
    wm_obj_req_ref(o);
    atomic_store_explicit(&r->objs[slot], o, memory_order_release);
}

/* The collector's mark phase: call mark(o, arg) for every object some request in any pool names. */
void wm_request_scan_objs(void (*mark)(wm_obj_t *o, void *arg), void *arg);

/* The process is leaving (`when`: "MPI_Finalize", or "exit without MPI_Finalize") and the core has
 * abandoned the pending operations (wc_quiesce): one warning on stderr per kind (sends, receives,
 * nonblocking collectives) with their number and the first few of them, e.g.
 *   [weft:0] warning: MPI_Finalize with 1 pending send (rank 0 → 1, tag 5, 8388608 bytes) not
 *   completed; its buffer is no longer read
 * A request counts when it is active, not complete and not freed (detached). Reads every request
 * of every pool: call after wc_quiesce with no other application thread in MPI; engine threads
 * may still run (MPI_Finalize), but they write only the state of requests that are not detached,
 * which is read first. */
void wm_request_warn_pending(const char *when);

/* A request of the calling thread's pool (NULL: no memory), magic set, every field zero but the
 * generation. */
wm_request_t *wm_request_alloc(void);
/* The same for a send or receive started by wm_request_start (wc_isend_dt / wc_irecv_dt), or a
 * blocking call's request named by wm_request_named: the core request is not zeroed (its start
 * sets every field the core and the MPI layer read afterwards, as for a blocking call's request on
 * the stack, which is never zeroed), which saves clearing ~450 bytes per message. Until the
 * request starts, only its MPI-layer fields may be read (a persistent request is inactive: the
 * wait/test family, MPI_Cancel, MPI_Request_free and the pending-request warning look at `active`
 * or `proc_null` before the core). */
wm_request_t *wm_request_alloc_pt2pt(void);
void wm_request_release(wm_request_t *r);

/* Request handles. Requests live in one reserved arena of WM_REQ_STRIDE-byte slots (virtual
 * memory, touched on use, never returned); a handle is the slot's address with a generation in its
 * low bits, bumped each time the request goes back to its pool (or is freed while active).
 * wm_request_get checks, with plain loads and no lock: the handle lies in the arena on a slot
 * boundary (a garbage value fails here), the slot holds a live request (a freed one has magic 0)
 * and the generation matches (a stale copy of a handle whose slot was reused fails, until the
 * generation wraps after 64 reuses of that slot). So MPI_Wait on a garbage, freed or stale
 * handle gives MPI_ERR_REQUEST instead of a crash. The arena is mapped once, by wm_request_init
 * (MPI_Init, before any other thread can hold a handle; idempotent). */
#define WM_REQ_STRIDE WU_ALIGN_UP(sizeof(wm_request_t), WU_CACHELINE)
#define WM_REQ_GEN_MASK 0x3fu
_Static_assert(WU_CACHELINE > WM_REQ_GEN_MASK, "slots are aligned past the generation bits");
extern uintptr_t wm_req_arena_base, wm_req_arena_end;

void wm_request_init(void);
/* How many request slots have been carved from the arena so far (for tests: a pattern that frees
 * requests in another thread than it allocates them must not make this grow for ever). */
size_t wm_request_carved(void);

static inline MPI_Request wm_request_handle(const wm_request_t *r)
{
    return (MPI_Request)((uintptr_t)r | r->gen);
}

/* The request of a handle already checked by wm_request_get. */
static inline wm_request_t *wm_request_ptr(MPI_Request h)
{
    return (wm_request_t *)((uintptr_t)h & ~(uintptr_t)WM_REQ_GEN_MASK);
}

static inline wm_request_t *wm_request_get(MPI_Request h)
{
    uintptr_t v = (uintptr_t)h, off = (v & ~(uintptr_t)WM_REQ_GEN_MASK) - wm_req_arena_base;
    if (WU_UNLIKELY(off >= wm_req_arena_end - wm_req_arena_base || off % WM_REQ_STRIDE != 0))
        return NULL;
    wm_request_t *r = wm_request_ptr(h);
    if (WU_UNLIKELY(r->magic != WM_MAGIC_REQ || r->gen != (v & WM_REQ_GEN_MASK)))
        return NULL;
    return r;
}

/* The user frees an active request (it completes later, detached): its handle is invalid now. */
static inline void wm_request_invalidate(wm_request_t *r)
{
    r->gen = (uint8_t)((r->gen + 1) & WM_REQ_GEN_MASK);
}

/* Generalized requests (wm_greq.c), called by the wait/test family for WM_REQ_GREQ requests. */
/* Complete a done generalized request as a wait or test does: status from query_fn, then free_fn,
 * then the request goes (*h = MPI_REQUEST_NULL). Returns the first error code of the two. */
int wm_greq_finish(wm_request_t *r, MPI_Request *h, MPI_Status *status);
/* MPI_Request_get_status of a done generalized request: status from query_fn; its error code. */
int wm_greq_query(wm_request_t *r, MPI_Status *status);
/* MPI_Request_free of a generalized request: free_fn runs now if it is complete, else when
 * MPI_Grequest_complete is called. Returns free_fn's error code or MPI_SUCCESS. */
int wm_greq_free(wm_request_t *r);
/* MPI_Cancel of a generalized request: calls cancel_fn(extra_state, complete). */
int wm_greq_cancel(wm_request_t *r);

/* Start (or restart) the operation described by r's arguments. Returns an MPI error code. */
int wm_request_start(wm_request_t *r, const char *func);
/* Persistent collectives and partitioned requests (wm_coll_persist.c, wm_part.c): start one
 * (MPI error code), free what an inactive one holds (before it goes back to the pool). */
int wm_coll_persist_start(wm_request_t *r, const char *func);
void wm_coll_persist_free(wm_request_t *r);
int wm_part_start(wm_request_t *r, const char *func);
void wm_part_free(wm_request_t *r);

/* Fill status (may be MPI_STATUS_IGNORE) from a completed request. */
void wm_request_status(const wm_request_t *r, MPI_Status *status);
/* MPI error code of a completed request (MPI_SUCCESS or a class with message), without invoking
 * the error handler. */
int wm_request_error(const wm_request_t *r, const char *func);
/* After a wait or test saw r complete: free a non-persistent request (*h = REQUEST_NULL),
 * deactivate a persistent one. */
void wm_request_retire(wm_request_t *r, MPI_Request *h);

void wm_bsend_init(void);
/* A communicator goes (its destroy): its attached buffer, if any, is forgotten. No message still
 * uses it (each names the communicator, which keeps it alive until it has left). */
void wm_bsend_comm_free(wm_comm_t *c);
/* A buffered send of checked arguments to communicator rank dest (not MPI_PROC_NULL): the data is
 * packed into the attached buffer and leaves from there. Returns an MPI error code (raised). */
int wm_bsend_post(wm_comm_t *c, const char *fn, const void *buf, MPI_Count count,
                  const struct wm_datatype *ti, int dest, int tag);

/* status helpers: bytes and cancelled flag live in MPI_internal[].
 * MPI_ERROR belongs to the caller except in the multiple-completion calls (Waitall, Testall,
 * Waitsome, Testsome, Request_get_status_all/some) when they return MPI_ERR_IN_STATUS (MPI 4.1
 * sections 3.2.5 and 3.7.5): every other call that fills a status uses wm_status_fill, which
 * leaves MPI_ERROR untouched. */
static inline void wm_status_fill(MPI_Status *s, int source, int tag, MPI_Count bytes,
                                  int cancelled)
{
    s->MPI_SOURCE = source;
    s->MPI_TAG = tag;
    s->MPI_internal[0] = (int)((uint64_t)bytes & 0xffffffffu);
    s->MPI_internal[1] = (int)((uint64_t)bytes >> 32);
    s->MPI_internal[2] = cancelled;
}
static inline void wm_status_set(MPI_Status *s, int source, int tag, int error, MPI_Count bytes,
                                 int cancelled)
{
    s->MPI_SOURCE = source;
    s->MPI_TAG = tag;
    s->MPI_ERROR = error;
    s->MPI_internal[0] = (int)((uint64_t)bytes & 0xffffffffu);
    s->MPI_internal[1] = (int)((uint64_t)bytes >> 32);
    s->MPI_internal[2] = cancelled;
}
static inline MPI_Count wm_status_bytes(const MPI_Status *s)
{
    return (MPI_Count)(((uint64_t)(uint32_t)s->MPI_internal[1] << 32) |
                       (uint32_t)s->MPI_internal[0]);
}
static inline void wm_status_empty(MPI_Status *s)
{
    if (s != MPI_STATUS_IGNORE)
        wm_status_fill(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
}


#endif
