/* Internal state of the MPI layer: communicators, requests, datatypes, error reporting.
 * The MPI layer checks every argument, turns datatypes into flattened layouts and communicator
 * ranks into world ranks, and calls the core. It is the only place a wu_status_t becomes an MPI
 * error class.
 *
 * Concurrency contract: every object states its own (wm_object.h, wm_comm.h, wm_datatype.h,
 * wm_request.h); objects are immutable once their handle is returned, except for names, hints,
 * error handlers and attributes, which the application does not race with their other uses.
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
#include "mpi/wm_object.h"
#include "mpi/wm_comm.h"
#include "mpi/wm_datatype.h"
#include "mpi/wm_request.h"
#include "mpi/wm_attr.h"
#include "mpi/wm_threadcomm.h"

/* ---- library state ---- */
typedef struct wm_state {
    _Atomic int initialized;   /* MPI_Init done: any thread may ask (MPI_Initialized) */
    _Atomic int finalized;     /* MPI_Finalize done */
    _Atomic int up;            /* the core runs (world model or sessions, wm_init.c): MPI calls
                                  other than those allowed before MPI_Init may be made */
    int thread_level;
} wm_state_t;
extern wm_state_t wm_state;

#define WM_TAG_UB 0x3fffffff

/* Tags of the library's own traffic on a communicator's collective context (ctx | WM_CTX_COLL),
 * which no user message uses. Each family keeps to its range, so families never match each
 * other's messages; within a family, calls on one communicator are ordered alike on every member
 * and messages of one (context, source, tag) do not overtake.
 *   0x00000000 - 0x000000ff   barrier rounds (wm_coll.c)
 *   0x0ffffff0                blocking collectives (wm_coll.c: one at a time per communicator)
 *   0x10000000 - 0x2fffffff   nonblocking and persistent collectives (the communicator's sequence
 *                             number)
 *   0x30000000 - 0x3ffeffff   partitioned sends' data (wm_part.c: per-process counter)
 *   0x3fff0000 - 0x3fff00ff   communicator management: context ids, split, intercommunicators
 *   0x40000000 - 0x7fffffff   Comm_create_group and Intercomm_create: WM_TAG_USER_BIT | the
 *                             user's tag (wm_comm.h), above every user tag
 */
#define WM_TAG_COLL_BLOCKING 0x0ffffff0
#define WM_TAG_COLL_BASE 0x10000000
#define WM_TAG_COLL_END  0x2fffffff
#define WM_TAG_PART_BASE 0x30000000
#define WM_TAG_PART_END  0x3ffeffff
#define WM_TAG_COMM_BASE 0x3fff0000

/* ---- errors ---- */
/* Make an error code of class cls carrying the message "func: <fmt>", and hand it to the error
 * handler of comm (NULL: MPI_COMM_WORLD's). Returns the code if the handler returns. */
int wm_error(wm_comm_t *comm, int cls, const char *func, const char *fmt, ...) WU_PRINTF(4, 5);
/* Hand code to error handler eh (held by session s, or by no object: MPI_SESSION_NULL); returns
 * the code if the handler returns (wm_errors.c). */
int wm_error_eh(MPI_Errhandler eh, MPI_Session s, int code);
/* The same without invoking a handler: just the code. */
int wm_error_code(int cls, const char *func, const char *fmt, ...) WU_PRINTF(3, 4);
/* Hand an existing code to comm's handler. */
int wm_error_raise(wm_comm_t *comm, int code);
int wm_status_to_class(wu_status_t st);
/* wc_fatal_fn of the core: names the class of st, logs msg, ends the job (wm_errors.c). */
void wm_error_fatal_async(wu_status_t st, const char *msg) __attribute__((noreturn));

/* Checks shared by many calls; each returns MPI_SUCCESS or raises the error. */
#define WM_CHECK_INIT(func)                                                              \
    do {                                                                                  \
        if (WU_UNLIKELY(!wm_state.up))                                                    \
            return wm_error(NULL, MPI_ERR_OTHER, func, "called %s",                       \
                            wm_state.finalized ? "after MPI_Finalize, with no session open"   \
                                               : "before MPI_Init or MPI_Session_init");   \
    } while (0)

/* The communicator argument of an entry point: declares `wm_comm_t *c` or returns MPI_ERR_COMM. */
#define WM_COMM_CHECK(fn, comm, c)                                                       \
    WM_CHECK_INIT(fn);                                                                   \
    wm_comm_t *c = wm_comm_get(comm);                                                    \
    if (WU_UNLIKELY(!c))                                                                 \
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator %p", (void *)(comm))

/* The buffer arguments of a point-to-point call: count, buf and a committed datatype; *ti_p the
 * datatype. Returns MPI_SUCCESS or the raised error code. A predefined datatype with a count that
 * fits (the usual call) is checked inline; anything else, and every error, in wm_checks.c. */
int wm_check_buffer_args_full(wm_comm_t *c, const char *func, const void *buf, MPI_Count count,
                              MPI_Datatype type, const wm_datatype_t **ti_p);
static inline int wm_check_buffer_args(wm_comm_t *c, const char *func, const void *buf,
                                       MPI_Count count, MPI_Datatype type,
                                       const wm_datatype_t **ti_p)
{
    uintptr_t i = (uintptr_t)type - WM_TYPE_BASE;
    if (WU_LIKELY(i < WM_TYPE_COUNT && buf != MPI_IN_PLACE && buf != NULL)) {
        const wm_datatype_t *ti = &wm_type_table[i];
        /* (a negative count is above every max_count; an unused slot has extent 0) */
        if (WU_LIKELY((uint64_t)count <= ti->max_count && ti->extent != 0 && ti->committed)) {
            *ti_p = ti;
            return MPI_SUCCESS;
        }
    }
    return wm_check_buffer_args_full(c, func, buf, count, type, ti_p);
}

int wm_barrier(wm_comm_t *c);

/* Sessions and the core's lifetime (wm_init.c): a session opens (starting the core if it is not
 * up; errors go to eh) and gets the thread level provided, or closes. */
int wm_life_session_open(const char *fn, MPI_Errhandler eh, int *thread_level_p);
void wm_life_session_close(void);
uint32_t wm_ctx_agree(wm_comm_t *c);

/* Dynamic processes (wm_dpm.c): MPI_Init of a spawned process connects to its parents (collective
 * over MPI_COMM_WORLD); the parent intercommunicator (MPI_COMM_NULL: none, or disconnected);
 * MPI_Finalize waits for the launchers of the jobs this process spawned and closes its ports. */
int wm_dpm_init_parent(void);
MPI_Comm wm_dpm_parent(void);
void wm_dpm_finalize(void);

#endif
