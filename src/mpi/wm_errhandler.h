/* User error handlers (MPI_Comm_create_errhandler and friends) and how errors reach them.
 *
 * An error handler is a WM_OBJ_ERRH in the handle arena. Its `uses` count is the user's handles
 * (one from the create call, one more per MPI_Comm_get_errhandler, as the standard says) plus one
 * per communicator holding it (wm_errh_ref/unref, declared in wm_attr.h). When it reaches zero the
 * handle becomes invalid (wm_obj_user_free) and the object goes; a handler the user freed while a
 * communicator still uses it keeps working for that communicator. Predefined handlers
 * (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT) are small constants, never counted.
 *
 * Concurrency contract: any thread; `uses` is atomic. A communicator's `errh` field is written by
 * MPI_Comm_set_errhandler and read by errors raised on it; replacing a user handler while another
 * thread raises an error on the same communicator is the application's race.
 */
#ifndef WM_ERRHANDLER_H
#define WM_ERRHANDLER_H

#include <mpi.h>
#include <stdbool.h>
#include "mpi/wm_object.h"

typedef enum { WM_ERRH_COMM = 1, WM_ERRH_WIN, WM_ERRH_FILE, WM_ERRH_SESSION } wm_errh_kind_t;

typedef struct wm_errh {
    wm_obj_t obj;                 /* first: lifetime and handle */
    wm_errh_kind_t kind;          /* which object family it may be attached to */
    void (*fn)(void);             /* the user's function, of the kind's type */
    _Atomic int uses;             /* user handles + holders */
} wm_errh_t;

static inline bool wm_errh_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

/* Calls the user handler eh (held by the communicator comm) with code. */
void wm_errh_call(MPI_Errhandler eh, MPI_Comm comm, int code);
/* The same for a session's handler (MPI_Session_errhandler_function). */
void wm_errh_call_session(MPI_Errhandler eh, MPI_Session session, int code);
/* A handler the user passes for objects of kind `kind`: MPI_SUCCESS (predefined, or a live user
 * handler of that kind), else the class of the error (MPI_ERR_ERRHANDLER, MPI_ERR_ARG). */
int wm_errh_check(MPI_Errhandler eh, wm_errh_kind_t kind);

/* MPI_LASTUSEDCODE: the largest error class, added ones included (wm_errors.c). The
 * pointer is that of the attribute's value; the int changes when classes or codes are added. */
const int *wm_error_lastused(void);

#endif
