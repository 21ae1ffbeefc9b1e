/* Attribute caching on communicators, datatypes and windows (keyvals, copy and delete callbacks).
 * Attributes hang off wm_obj_t.attrs (predefined objects included); docs/attributes.md.
 *
 * Hooks for the object families:
 *   - wm_attr_copy_all: MPI_Comm_dup / MPI_Type_dup (and Comm_idup) call it to run the keyvals'
 *     copy callbacks from src to the new object dst; returns an MPI error code (on failure dst
 *     has no attributes left: those already copied were deleted again).
 *   - wm_attr_delete_all: the object's MPI free (Comm_free, Type_free, Comm_disconnect) calls it
 *     before wm_obj_user_free, running the delete callbacks (last set, first deleted); returns an
 *     MPI error code (a callback's failure makes the free fail, as the standard asks: the
 *     attributes not yet deleted stay).
 *   - wm_attr_finalize: MPI_Finalize calls it first, before any communication: deletes the
 *     attributes of MPI_COMM_SELF (the standard's order: last set, first deleted), then those of
 *     MPI_COMM_WORLD and of the predefined datatypes.
 *
 * Keyvals are ints (the ABI's type), mapped to WM_OBJ_KEYVAL objects by a table (wm_keyval.c); an
 * attribute keeps a structural reference on its keyval, so after MPI_Comm_free_keyval the
 * attributes using it keep working (and the int names them) until deleted.
 *
 * Concurrency contract: one lock guards the table of keyvals and the attribute lists' links;
 * callbacks run without it (they may call attribute functions). The application does not set or
 * delete the same attribute of one object from two threads at once (MPI makes that erroneous);
 * different objects and different keyvals are independent.
 */
#ifndef WM_ATTR_H
#define WM_ATTR_H

#include <mpi.h>
#include "mpi/wm_object.h"

int wm_attr_copy_all(wm_obj_t *src, wm_obj_t *dst);
int wm_attr_delete_all(wm_obj_t *o);
void wm_attr_finalize(void);

/* Error handlers held by communicators (and windows): an object holding a user error handler keeps
 * a reference on it (wm_errhandler.c). No-ops for the predefined handlers. */
void wm_errh_ref(MPI_Errhandler eh);
void wm_errh_unref(MPI_Errhandler eh);

/* ---- keyvals (wm_keyval.c) ---- */
typedef enum { WM_KV_COMM = WM_OBJ_COMM, WM_KV_TYPE = WM_OBJ_TYPE, WM_KV_WIN = WM_OBJ_WIN } wm_kv_kind_t;

/* The predefined copy and delete functions are the ABI's small integer constants. */
#define WM_ATTR_NULL_FN ((uintptr_t)0)   /* MPI_*_NULL_COPY_FN, MPI_*_NULL_DELETE_FN */
#define WM_ATTR_DUP_FN  ((uintptr_t)1)   /* MPI_*_DUP_FN */

typedef struct wm_keyval {
    wm_obj_t     obj;          /* first: lifetime (refs: the user's int + one per attribute) */
    wm_kv_kind_t kind;         /* the object kind its attributes hang on */
    int          value;        /* the user's int */
    void        (*copy_fn)(void);
    void        (*delete_fn)(void);
    void        *extra_state;
    bool         freed;        /* wm_kv_lock: the user freed it; attributes may still use it */
} wm_keyval_t;

/* A new keyval (refs 1: the user's int); its int in *value_p. An MPI error class on failure. */
int wm_keyval_create(wm_kv_kind_t kind, void (*copy_fn)(void), void (*delete_fn)(void),
                     void *extra_state, int *value_p);
/* The keyval of the user's int if it is live and of that kind (and, for_new_attr, not freed by
 * the user), with a reference the caller drops with wm_keyval_release (or hands to an
 * attribute); else NULL. */
wm_keyval_t *wm_keyval_take(int value, wm_kv_kind_t kind, bool for_new_attr);
/* Drops a reference to a keyval (an attribute's or wm_keyval_take's); the last one frees it and
 * its int. Any thread, no lock held. */
void wm_keyval_release(wm_keyval_t *k);
/* MPI_*_free_keyval: marks the keyval freed and drops the user's reference; its int keeps working
 * for the attributes still using it. false: not a live keyval of that kind, or freed already. */
bool wm_keyval_user_free(int value, wm_kv_kind_t kind);

#endif
