/* Windows of one-sided communication (docs/rma.md): creation and attributes (wm_win.c), error
 * handlers (wm_win_err.c), operations (wm_win_ops.c), synchronization (wm_win_sync.c). The data
 * path and the shared control segment are the core's (core/wc_rma.h).
 *
 * Concurrency contract: a window's fields are written by its creating call before the handle is
 * returned and are then read-only, except
 *   - name, errh, info: written by Win_set_name/set_errhandler/set_info, which the application
 *     does not race with other uses of them;
 *   - the epoch state (atomics below): any thread may open or close an epoch and any thread may
 *     issue operations in it, as the standard allows; a lock per target is taken by compare-and-
 *     swap on locks[target], so two threads locking one target get one success and one
 *     MPI_ERR_RMA_SYNC. No window state is guarded by a lock of the library: operations from
 *     many threads to one window only read it.
 */
#ifndef WM_WIN_H
#define WM_WIN_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "core/wc_rma.h"
#include "core/wc_rma_msg.h"
#include "mpi/wm_comm.h"
#include "mpi/wm_object.h"

/* locks[target]; WM_WIN_LOCKING while a lock or unlock of that target is under way (the claim
 * that makes a second Win_lock of one target fail) */
enum { WM_WIN_UNLOCKED = 0, WM_WIN_SHARED, WM_WIN_EXCL, WM_WIN_NOCHECK, WM_WIN_LOCKING };

/* One target as the fast paths see it, in one line of reading: its memory mapped here (NULL:
 * reached otherwise, single copy or another node), its window size and disp unit, and whether
 * every origin maps it (CPU atomics allowed: core/wc_rma_atomic_inl.h). */
typedef struct wm_win_fast {
    char    *addr;
    int64_t  size;
    int64_t  disp_unit;
    bool     atomic;
} wm_win_fast_t;

typedef struct wm_win {
    wm_obj_t        obj;          /* first: lifetime and handle */
    MPI_Comm        comm;         /* private duplicate of the creating communicator (errors return) */
    int             rank, size;
    int             flavor;       /* MPI_WIN_FLAVOR_* */
    void           *base;         /* this process's window memory */
    MPI_Aint        bytes;        /* its size */
    int             disp_unit;
    wc_rma_seg_t    seg;          /* this node's control segment (and its allocated memory) */
    wc_rma_target_t *targets;     /* [size]: how to reach each process's memory */
    wm_win_fast_t  *fast;         /* [size]: what the fast paths read (wm_win_ops.c) */
    bool           *remote;       /* [size]: on another node: reached by messages (cw) */
    int64_t        (*meta)[2];    /* [size]: each process's window size and disp unit */
    wc_rma_win_t   *cw;           /* windows across nodes: the message path's view, else NULL */
    int            *world;        /* [size]: window rank -> world rank */
    MPI_Errhandler  errh;         /* a reference held (wm_errh_ref) */
    MPI_Info        info;         /* the hints in use, owned */
    bool            no_locks;     /* hint: passive target will not be used */
    _Atomic bool    deferred;     /* sticky: a Put or Get to this window was held by
                                     wc_rma_*_deferred once; the epoch ends then drain every
                                     target (wm_win_drain_all) */
    /* epochs */
    _Atomic int     fence;        /* a fence epoch is open (the last fence had no NOSUCCEED) */
    _Atomic int     lock_all;     /* MPI_Win_lock_all: 0 none, -1 being taken or released, 1 held,
                                     2 held with MPI_MODE_NOCHECK (no lock words taken) */
    _Atomic int     nlocks;       /* targets locked by MPI_Win_lock */
    _Atomic uint8_t *locks;       /* [size]: WM_WIN_* */
    _Atomic int     started;      /* access epoch of MPI_Win_start open */
    uint8_t        *start_in;     /* [size]: target in the started group (written by start only) */
    int            *start_list;   /* ranks of the started group */
    int             start_n;
    _Atomic int     posted;       /* exposure epoch of MPI_Win_post open */
    uint32_t        complete_expected;   /* completions to wait for, ever (post/wait's thread) */
    uint32_t       *post_seen;    /* [size]: posts consumed from each target, ever (start's thread) */
    char            name[MPI_MAX_OBJECT_NAME];
} wm_win_t;

/* No store of this thread to a target since its last full barrier, on a CPU where the only
 * reordering is a later load passing an earlier store and a locked read-modify-write is a full
 * barrier (x86-64): a flush then needs no fence of its own. Set by the fast flush after its fence
 * and by the CPU-atomic fast path (Fetch_and_op, Compare_and_swap, Accumulate of one element: it
 * ends with a locked read-modify-write); kept by the fast Get (it loads from the target; its
 * stores go to the origin's own buffer, which the standard completes at the origin only, and in
 * order with any later store by TSO); cleared by every other operation (wm_win_ops.c). Per
 * thread, as the fence it replaces orders only the calling thread's accesses. */
extern __thread bool wm_rma_ordered;

/* The window of handle h, or NULL. */
static inline wm_win_t *wm_win_get(MPI_Win h)
{
    return (wm_win_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_WIN);
}

/* Raises an error of class cls on window w (NULL: no window, MPI_COMM_SELF's handler), with the
 * message "func: <fmt>". Returns the code if the handler returns. */
int wm_win_error(wm_win_t *w, int cls, const char *func, const char *fmt, ...) WU_PRINTF(4, 5);

/* The window argument of an entry point: declares `wm_win_t *w` or returns MPI_ERR_WIN. */
#define WM_WIN_ARG(fn, win, w)                                                                  \
    WM_CHECK_INIT(fn);                                                                          \
    wm_win_t *w = wm_win_get(win);                                                              \
    if (WU_UNLIKELY(!w))                                                                        \
        return wm_win_error(NULL, MPI_ERR_WIN, fn, "invalid window %p", (void *)(win))

/* MPI_Win_get_attr of a predefined key (wm_attr.c calls it for MPI_WIN_BASE ... MPI_WIN_MODEL). */
int wm_win_attr_predefined(wm_obj_t *o, int key, void *attribute_val, int *flag);

/* Whether an access epoch to target is open (fence, lock, lock_all or start). */
/* A Put or Get to target t is about to be held by wc_rma_*_deferred (t's memory is not mapped:
 * Win_create or dynamic windows): from now on the window's ends of epoch drain its targets. */
static inline void wm_win_mark_deferred(wm_win_t *w, const wc_rma_target_t *t)
{
    if (!t->addr && !atomic_load_explicit(&w->deferred, memory_order_relaxed))
        atomic_store_explicit(&w->deferred, true, memory_order_relaxed);
}

/* Moves every copy held for the window's targets (an epoch ends, or a flush_all): WU_OK or the
 * first failure. One load for a window that never held one. */
static inline wu_status_t wm_win_drain_all(wm_win_t *w)
{
    return atomic_load_explicit(&w->deferred, memory_order_relaxed)
               ? wc_rma_drain_all(w->targets, w->size)
               : WU_OK;
}

static inline bool wm_win_can_access(wm_win_t *w, int target)
{
    if (atomic_load_explicit(&w->lock_all, memory_order_acquire) > 0 ||
        atomic_load_explicit(&w->fence, memory_order_acquire))
        return true;
    uint8_t l = atomic_load_explicit(&w->locks[target], memory_order_acquire);
    return (l != WM_WIN_UNLOCKED && l != WM_WIN_LOCKING) ||
           (atomic_load_explicit(&w->started, memory_order_acquire) && w->start_in[target]);
}

#endif
