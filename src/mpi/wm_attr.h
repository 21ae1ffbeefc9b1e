/* Attribute caching on communicators, datatypes and windows (keyvals, copy and delete callbacks).
 * Attributes hang off wm_obj_t.attrs.
 *
 * Hooks for the object families:
 *   - wm_attr_copy_all: MPI_Comm_dup / MPI_Type_dup (and Comm_idup) call it to run the keyvals'
 *     copy callbacks from src to the new object dst; returns an MPI error code.
 *   - wm_attr_delete_all: the object's MPI free (Comm_free, Type_free, Comm_disconnect) calls it
 *     before wm_obj_user_free, running the delete callbacks; returns an MPI error code (a callback's
 *     failure makes the free fail, as the standard asks).
 * Concurrency contract: the application does not set or delete attributes of one object from two
 * threads at once (MPI makes that erroneous); different objects are independent.
 */
#ifndef WM_ATTR_H
#define WM_ATTR_H

#include <mpi.h>
#include "mpi/wm_object.h"

int wm_attr_copy_all(wm_obj_t *src, wm_obj_t *dst);
int wm_attr_delete_all(wm_obj_t *o);

/* Error handlers held by communicators (and windows): an object holding a user error handler keeps
 * a structural reference on it. No-ops for the predefined handlers. */
void wm_errh_ref(MPI_Errhandler eh);
void wm_errh_unref(MPI_Errhandler eh);

#endif
