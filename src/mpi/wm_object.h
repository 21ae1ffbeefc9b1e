/* Lifetime of MPI objects (communicators, datatypes, groups, ops, error handlers, info, keyvals),
 * after Goodell et al., "Reducing contention in MPI through garbage collection" (seed
 * mpich-resource-contention-gc.txt).
 *
 * - Predefined objects (MPI_COMM_WORLD, MPI_INT, MPI_SUM, ...) are static and never counted: every
 *   function below returns at once for them, reading only the constant `predefined` field.
 * - A user object has `refs`: one for the user's handle plus one per *structural* reference from
 *   another object (a datatype built from it, a communicator using an error handler). These change
 *   only when objects are created or freed, never per message.
 * - Requests do not count. A request names the objects it uses in wm_request_t.objs[]; when the
 *   last structural reference goes, the object becomes *eligible* (G_e). A collection cycle
 *   (wm_gc_collect) marks the eligible objects some outstanding request still names and frees the
 *   others. Cycles run when an object is created and at MPI_Finalize; their cost is
 *   O(|G_e| log |G_e| + |T|), T the outstanding requests, and nothing when G_e is empty.
 * - Built with -DWEFT_OBJ_REFCOUNT=ON, requests instead take an atomic reference on each object
 *   they name (wm_obj_req_ref / wm_obj_req_unref) and an object is freed when its count reaches
 *   zero: the naive scheme the paper compares against, kept so the two can be measured.
 *
 * Handles. User objects live in one reserved arena of fixed 512-byte slots; a handle is the slot's
 * address plus an 8-bit generation in the low bits. wm_obj_lookup() checks that a handle lies in
 * the arena, that the slot holds a live object of the expected kind and that the generation
 * matches, so a freed, stale or garbage handle gives an error class instead of a crash. A slot
 * whose object was freed is reused only after all others (FIFO), and then with a new generation.
 *
 * Concurrency contract:
 *   - wm_obj_create, wm_obj_release, wm_obj_retain, wm_gc_collect: any thread; the collector's
 *     lists and the arena's free list are guarded by one mutex (object creation is not a hot path).
 *   - wm_obj_lookup: any thread, no lock, no write. A lookup racing with the user's own free of the
 *     same handle is the application's race; it sees either the live object or an error.
 *   - wm_obj_req_ref/unref: any thread; no-ops (GC build) or one atomic (refcount build).
 *   - A request names and un-names its objects with release stores and the mark phase reads the
 *     names with acquire loads (plain moves on x86): whatever the request's owner did with an
 *     object before releasing the request happens before the collector destroys it.
 */
#ifndef WM_OBJECT_H
#define WM_OBJECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/wu_compiler.h"
#include "util/wu_list.h"

typedef enum {
    WM_OBJ_NONE = 0,
    WM_OBJ_COMM,
    WM_OBJ_TYPE,
    WM_OBJ_GROUP,
    WM_OBJ_OP,
    WM_OBJ_ERRH,
    WM_OBJ_INFO,
    WM_OBJ_KEYVAL,
    WM_OBJ_WIN,
    WM_OBJ_SESSION,
    WM_OBJ_KINDS
} wm_obj_kind_t;

#define WM_OBJ_SLOT 512u          /* bytes per arena slot; every object type must fit */
#define WM_OBJ_GEN_MASK 0xffu     /* handle low bits: generation */

struct wm_attr_list;

typedef struct wm_obj wm_obj_t;
typedef void (*wm_obj_destroy_fn_t)(wm_obj_t *o);

/* The common header, first member of every MPI object struct. */
struct wm_obj {
    _Atomic uint8_t kind;          /* wm_obj_kind_t while the user handle is valid, else 0 */
    uint8_t  gen;                  /* generation: the handle's low 8 bits */
    bool     predefined;           /* static object: never counted, never freed */
    uint8_t  state;                /* collector: WM_OBJ_LIVE, WM_OBJ_ELIGIBLE (gc lock) */
    _Atomic int refs;              /* user handle + structural references (+ requests in the
                                      refcount build) */
    wm_obj_destroy_fn_t destroy;   /* frees what the object owns (not the slot) */
    wu_list_t gc_link;             /* gc lock: on the eligible list */
    struct wm_attr_list *attrs;    /* cached attributes (wm_attr.c); NULL: none */
    uintptr_t handle;              /* the user's handle value */
};

/* Set up a predefined (static) object with a fixed handle value. */
void wm_obj_init_predefined(wm_obj_t *o, wm_obj_kind_t kind, uintptr_t handle,
                            wm_obj_destroy_fn_t destroy);

/* A new user object of `size` bytes (<= WM_OBJ_SLOT, zeroed, header filled, refs = 1 for the
 * user's handle). Runs a collection cycle first if objects are eligible. NULL: out of memory. */
void *wm_obj_create(wm_obj_kind_t kind, size_t size, wm_obj_destroy_fn_t destroy);

/* Structural references between objects. No-ops on predefined objects. */
void wm_obj_retain(wm_obj_t *o);
void wm_obj_release(wm_obj_t *o);

/* The user frees its handle: the handle becomes invalid at once (lookups fail), and the user's
 * reference is released. Delete-callbacks of attributes are the caller's business, before this. */
void wm_obj_user_free(wm_obj_t *o);

/* One collection cycle: free every eligible object no outstanding request names. */
void wm_gc_collect(void);
/* MPI_Finalize: collect, then free every remaining user object. */
void wm_obj_finalize(void);

/* Statistics for tests: live user objects, eligible objects. */
void wm_obj_stats(size_t *live_p, size_t *eligible_p);

/* ---- hot path ---- */

extern uintptr_t wm_obj_arena_base, wm_obj_arena_end;

/* The object of handle h if it is a live user object of the given kind, else NULL. Predefined
 * handles are the caller's to resolve first (they are small constants). */
static inline wm_obj_t *wm_obj_lookup(uintptr_t h, wm_obj_kind_t kind)
{
    uintptr_t p = h & ~(uintptr_t)WM_OBJ_GEN_MASK;
    if (WU_UNLIKELY(p - wm_obj_arena_base >= wm_obj_arena_end - wm_obj_arena_base))
        return NULL;
    wm_obj_t *o = (wm_obj_t *)p;
    if (WU_UNLIKELY(atomic_load_explicit(&o->kind, memory_order_acquire) != kind ||
                    o->gen != (uint8_t)(h & WM_OBJ_GEN_MASK)))
        return NULL;
    return o;
}

#ifdef WEFT_OBJ_REFCOUNT
static inline void wm_obj_req_ref(wm_obj_t *o)
{
    if (!o->predefined)
        atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}
static inline void wm_obj_req_unref(wm_obj_t *o)
{
    if (!o->predefined)
        wm_obj_release(o);
}
#else
static inline void wm_obj_req_ref(wm_obj_t *o) { (void)o; }
static inline void wm_obj_req_unref(wm_obj_t *o) { (void)o; }
#endif

#endif
