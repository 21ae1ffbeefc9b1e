/* Sessions (MPI 4.1 chapter 11.3; docs/sessions.md).
 *
 * A session is a WM_OBJ_SESSION in the handle arena. It holds its error handler (a reference,
 * wm_errh_ref), the info it was opened with (a copy it owns), the thread level provided and its
 * buffer for buffered sends (MPI_Session_attach_buffer, wm_bsend.c). Groups made from its process
 * sets and the communicators made from those groups hold structural references (wm_obj_retain),
 * so the object outlives MPI_Session_finalize while they exist.
 *
 * Concurrency contract: fields are written when the session is opened, before its handle is
 * returned, except `errh` (MPI_Session_set_errhandler: the application does not race it with
 * errors on the same session) and `bbuf` (published with a compare-and-swap, read with acquire
 * loads). Any thread may use a session.
 */
#ifndef WM_SESSION_H
#define WM_SESSION_H

#include <mpi.h>
#include "mpi/wm_object.h"

typedef struct wm_session {
    wm_obj_t obj;                  /* first: lifetime and handle */
    MPI_Errhandler errh;
    MPI_Info info;                 /* MPI_INFO_NULL: none given */
    int thread_level;
    struct wm_bbuf *_Atomic bbuf;  /* MPI_Session_attach_buffer's; NULL: none yet */
} wm_session_t;

static inline wm_session_t *wm_session_get(MPI_Session h)
{
    return (wm_session_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_SESSION);
}

/* The session is destroyed: its buffer goes (wm_bsend.c). */
void wm_bsend_session_free(wm_session_t *s);

#endif
