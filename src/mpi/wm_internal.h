/* Internal state of the MPI layer: communicators, requests, datatypes, error reporting.
 * The MPI layer checks every argument, turns counts and datatypes into bytes and communicator
 * ranks into world ranks, and calls the core. It is the only place a wu_status_t becomes an MPI
 * error class.
 *
 * Concurrency contract (this version): MPI_THREAD_SERIALIZED at most; one thread at a time in the
 * library, so the objects below need no lock. The threaded version (next issue) gives requests
 * per-thread pools and communicators immutable-after-creation fields.
 */
#ifndef WM_INTERNAL_H
#define WM_INTERNAL_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "mpi/wm_api.h"
#include "util/wu_compiler.h"

/* ---- library state ---- */
typedef struct wm_state {
    _Atomic int initialized;   /* MPI_Init done: any thread may ask (MPI_Initialized) */
    _Atomic int finalized;     /* MPI_Finalize done */
    int thread_level;
} wm_state_t;
extern wm_state_t wm_state;

#define WM_TAG_UB 0x3fffffff
/* Context ids: point-to-point traffic of a communicator uses ctx, its collectives ctx|WM_CTX_COLL. */
#define WM_CTX_COLL 0x80000000u
#define WM_CTX_WORLD 0u
#define WM_CTX_SELF  2u

/* ---- communicators ---- */
#define WM_MAGIC_COMM 0x436f6d6du
typedef struct wm_comm {
    uint32_t       magic;
    uint32_t       ctx;
    int            rank, size;
    const int     *world_ranks;   /* local rank -> world rank; NULL: identity */
    MPI_Errhandler errh;
    bool           predefined;
    char           name[MPI_MAX_OBJECT_NAME];
} wm_comm_t;

extern wm_comm_t wm_comm_world, wm_comm_self;

static inline wm_comm_t *wm_comm_get(MPI_Comm h)
{
    if (WU_LIKELY(h == MPI_COMM_WORLD))
        return &wm_comm_world;
    if (h == MPI_COMM_SELF)
        return &wm_comm_self;
    if ((uintptr_t)h < 0x1000)
        return NULL;
    wm_comm_t *c = (wm_comm_t *)h;
    return c->magic == WM_MAGIC_COMM ? c : NULL;
}

static inline int wm_comm_world_rank(const wm_comm_t *c, int r)
{
    return c->world_ranks ? c->world_ranks[r] : r;
}

static inline int wm_comm_local_rank(const wm_comm_t *c, int world)
{
    if (!c->world_ranks)
        return world;
    for (int i = 0; i < c->size; i++)
        if (c->world_ranks[i] == world)
            return i;
    return MPI_UNDEFINED;
}

/* ---- datatypes (predefined, contiguous) ---- */
typedef struct wm_type_info {
    uint32_t size;      /* bytes of data in one element */
    uint32_t extent;    /* bytes one element spans */
    uint8_t  elements;  /* basic elements in one element (2 for the pair types) */
} wm_type_info_t;

#define WM_TYPE_BASE 0x200
#define WM_TYPE_COUNT 0x100
extern wm_type_info_t wm_type_table[WM_TYPE_COUNT];
void wm_datatype_init(void);

static inline const wm_type_info_t *wm_type_get(MPI_Datatype t)
{
    uintptr_t i = (uintptr_t)t - WM_TYPE_BASE;
    if (i >= WM_TYPE_COUNT || wm_type_table[i].extent == 0)
        return NULL;
    return &wm_type_table[i];
}

/* ---- requests ---- */
#define WM_MAGIC_REQ 0x52657175u
typedef enum {
    WM_REQ_SEND = 1,
    WM_REQ_RECV,
    WM_REQ_DONE,       /* completed at start: MPI_PROC_NULL */
} wm_req_kind_t;

typedef struct wm_request {
    /* 16 bytes read by every wait and test, then the core request (its hot part next). */
    uint32_t       magic;
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
    int            peer;         /* communicator rank, or MPI_ANY_SOURCE / MPI_PROC_NULL */
    int            tag;
    wc_send_mode_t mode;
    void          *bsend_block;
} wm_request_t;

wm_request_t *wm_request_alloc(void);
void wm_request_release(wm_request_t *r);

static inline wm_request_t *wm_request_get(MPI_Request h)
{
    if ((uintptr_t)h < 0x1000)
        return NULL;
    wm_request_t *r = (wm_request_t *)h;
    return r->magic == WM_MAGIC_REQ ? r : NULL;
}

/* Start (or restart) the operation described by r's arguments. Returns an MPI error code. */
int wm_request_start(wm_request_t *r, const char *func);
/* Fill status (may be MPI_STATUS_IGNORE) from a completed request. */
void wm_request_status(const wm_request_t *r, MPI_Status *status);
/* MPI error code of a completed request (MPI_SUCCESS or a class with message), without invoking
 * the error handler. */
int wm_request_error(const wm_request_t *r, const char *func);
/* After a wait or test saw r complete: free a non-persistent request (*h = REQUEST_NULL),
 * deactivate a persistent one. */
void wm_request_retire(wm_request_t *r, MPI_Request *h);

void wm_bsend_init(void);

/* status helpers: bytes and cancelled flag live in MPI_internal[] */
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
        wm_status_set(s, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
}

/* ---- errors ---- */
/* Make an error code of class cls carrying the message "func: <fmt>", and hand it to the error
 * handler of comm (NULL: MPI_COMM_WORLD's). Returns the code if the handler returns. */
int wm_error(wm_comm_t *comm, int cls, const char *func, const char *fmt, ...) WU_PRINTF(4, 5);
/* The same without invoking a handler: just the code. */
int wm_error_code(int cls, const char *func, const char *fmt, ...) WU_PRINTF(3, 4);
/* Hand an existing code to comm's handler. */
int wm_error_raise(wm_comm_t *comm, int code);
int wm_status_to_class(wu_status_t st);

/* Checks shared by many calls; each returns MPI_SUCCESS or raises the error. */
#define WM_CHECK_INIT(func)                                                              \
    do {                                                                                  \
        if (WU_UNLIKELY(!wm_state.initialized || wm_state.finalized))                     \
            return wm_error(NULL, MPI_ERR_OTHER, func, "called %s MPI_Init",              \
                            wm_state.finalized ? "after MPI_Finalize, not between" : "before"); \
    } while (0)

int wm_check_buffer_args(wm_comm_t *c, const char *func, const void *buf, MPI_Count count,
                         MPI_Datatype type, const wm_type_info_t **ti_p);

int wm_barrier(wm_comm_t *c);
uint32_t wm_ctx_agree(wm_comm_t *c);

#endif
