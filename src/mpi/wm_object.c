/* Object lifetime: the handle arena, structural references and the mark-and-sweep collector of
 * eligible objects against outstanding requests (see wm_object.h for the scheme and contract). */
#include "mpi/wm_object.h"
#include "mpi/wm_internal.h"
#include "thread/wt_thread.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WM_OBJ_ARENA_BYTES ((size_t)512 << 20)   /* virtual: 1M slots, pages touched on use */

enum { WM_OBJ_FREE = 0, WM_OBJ_LIVE, WM_OBJ_ELIGIBLE };

uintptr_t wm_obj_arena_base, wm_obj_arena_end;

typedef struct wm_gc {
    wt_mutex_t lock;
    uintptr_t  used;             /* lock: end of the slots ever handed out */
    wm_obj_t  *free_head;        /* lock: FIFO of freed slots, linked through gc_link.next */
    wm_obj_t  *free_tail;
    wu_list_t  eligible;         /* lock: G_e */
    size_t     neligible;        /* lock */
    size_t     nlive;            /* lock: user objects not yet freed */
    _Atomic bool finalizing;     /* wm_obj_finalize runs: releases do nothing */
} wm_gc_t;

static wm_gc_t wm_gc = { .eligible = WU_LIST_INIT(wm_gc.eligible) };
static pthread_once_t wm_gc_once = PTHREAD_ONCE_INIT;

static void wm_gc_setup(void)
{
    wt_mutex_init(&wm_gc.lock);
    void *p = mmap(NULL, WM_OBJ_ARENA_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return;   /* every create then fails with out of memory */
    wm_gc.used = (uintptr_t)p;
    wm_obj_arena_end = (uintptr_t)p + WM_OBJ_ARENA_BYTES;
    wm_obj_arena_base = (uintptr_t)p;
}

void wm_obj_init_predefined(wm_obj_t *o, wm_obj_kind_t kind, uintptr_t handle,
                            wm_obj_destroy_fn_t destroy)
{
    atomic_store_explicit(&o->kind, (uint8_t)kind, memory_order_relaxed);
    o->predefined = true;
    o->state = WM_OBJ_LIVE;
    atomic_store_explicit(&o->refs, 1, memory_order_relaxed);
    o->destroy = destroy;
    o->handle = handle;
}

/* A slot, lock held: a freed one (oldest first) or a new one. */
static wm_obj_t *wm_slot_get_locked(void)
{
    wm_obj_t *o = wm_gc.free_head;
    if (o) {
        wm_gc.free_head = (wm_obj_t *)o->gc_link.next;
        if (!wm_gc.free_head)
            wm_gc.free_tail = NULL;
        return o;
    }
    if (!wm_gc.used || wm_gc.used + WM_OBJ_SLOT > wm_obj_arena_end)
        return NULL;
    o = (wm_obj_t *)wm_gc.used;
    wm_gc.used += WM_OBJ_SLOT;
    return o;
}

static void wm_slot_put_locked(wm_obj_t *o)
{
    o->state = WM_OBJ_FREE;
    o->gc_link.next = NULL;
    if (wm_gc.free_tail)
        wm_gc.free_tail->gc_link.next = (wu_list_t *)o;
    else
        wm_gc.free_head = o;
    wm_gc.free_tail = o;
}

void *wm_obj_create(wm_obj_kind_t kind, size_t size, wm_obj_destroy_fn_t destroy)
{
    if (size > WM_OBJ_SLOT)
        return NULL;
    pthread_once(&wm_gc_once, wm_gc_setup);
    wt_mutex_lock(&wm_gc.lock);
    bool collect = wm_gc.neligible > 0;
    wt_mutex_unlock(&wm_gc.lock);
    if (collect)
        wm_gc_collect();

    wt_mutex_lock(&wm_gc.lock);
    wm_obj_t *o = wm_slot_get_locked();
    if (o) {
        uint8_t gen = (uint8_t)(o->gen + 1);
        memset((char *)o + sizeof(o->kind), 0, WM_OBJ_SLOT - sizeof(o->kind));
        o->gen = gen;
        o->state = WM_OBJ_LIVE;
        wm_gc.nlive++;
    }
    wt_mutex_unlock(&wm_gc.lock);
    if (!o)
        return NULL;
    atomic_store_explicit(&o->refs, 1, memory_order_relaxed);
    o->destroy = destroy;
    o->handle = (uintptr_t)o | o->gen;
    /* publish last: a lookup that sees the kind sees the rest (the caller fills its fields before
     * it hands out the handle, which is the real publication) */
    atomic_store_explicit(&o->kind, (uint8_t)kind, memory_order_release);
    return o;
}

/* Free an object whose references are all gone: its contents, then its slot. */
static void wm_obj_free(wm_obj_t *o)
{
    if (o->destroy)
        o->destroy(o);
    wt_mutex_lock(&wm_gc.lock);
    wm_slot_put_locked(o);
    wt_mutex_unlock(&wm_gc.lock);
}

void wm_obj_retain(wm_obj_t *o)
{
    if (o->predefined)
        return;
    atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}

void wm_obj_release(wm_obj_t *o)
{
    if (o->predefined || atomic_load_explicit(&wm_gc.finalizing, memory_order_relaxed))
        return;
    if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) != 1)
        return;
#ifdef WEFT_OBJ_REFCOUNT
    wm_obj_free(o);
#else
    wt_mutex_lock(&wm_gc.lock);
    o->state = WM_OBJ_ELIGIBLE;
    wu_list_push_back(&wm_gc.eligible, &o->gc_link);
    wm_gc.neligible++;
    wt_mutex_unlock(&wm_gc.lock);
#endif
}

void wm_obj_user_free(wm_obj_t *o)
{
    if (o->predefined)
        return;
    atomic_store_explicit(&o->kind, WM_OBJ_NONE, memory_order_release);
    wt_mutex_lock(&wm_gc.lock);
    wm_gc.nlive--;
    wt_mutex_unlock(&wm_gc.lock);
    wm_obj_release(o);
}

/* ---- the collector --------------------------------------------------------------------------- */

typedef struct wm_mark {
    wm_obj_t **objs;     /* G_e, sorted by address */
    bool      *live;
    size_t     n;
} wm_mark_t;

static int wm_ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (wm_obj_t *const *)a, y = (uintptr_t) * (wm_obj_t *const *)b;
    return x < y ? -1 : x > y;
}

/* Mark: o is named by an outstanding request. Writes only the collector's own array, never the
 * object, so live objects' cache lines stay untouched. */
static void wm_gc_mark(wm_obj_t *o, void *arg)
{
    wm_mark_t *m = arg;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->objs[mid] == o) {
            m->live[mid] = true;
            return;
        }
        if ((uintptr_t)m->objs[mid] < (uintptr_t)o)
            lo = mid + 1;
        else
            hi = mid;
    }
}

void wm_gc_collect(void)
{
    /* Freeing an object may release the objects it was built from; those are swept by the next
     * rounds of this loop, so a chain of derived objects goes in one call. */
    for (;;) {
        wt_mutex_lock(&wm_gc.lock);
        size_t n = wm_gc.neligible;
        if (!n) {
            wt_mutex_unlock(&wm_gc.lock);
            return;
        }
        wm_mark_t m = { .objs = malloc(n * sizeof(*m.objs)), .live = calloc(n, 1), .n = n };
        if (!m.objs || !m.live) {
            wt_mutex_unlock(&wm_gc.lock);
            free(m.objs);
            free(m.live);
            return;
        }
        size_t i = 0;
        for (wu_list_t *e = wm_gc.eligible.next; e != &wm_gc.eligible; e = e->next)
            m.objs[i++] = WU_CONTAINER_OF(e, wm_obj_t, gc_link);
        qsort(m.objs, n, sizeof(*m.objs), wm_ptr_cmp);
        /* Reset is implicit (live[] starts false); mark from every outstanding request. */
        wm_request_scan_objs(wm_gc_mark, &m);
        size_t swept = 0;
        for (i = 0; i < n; i++) {
            if (m.live[i])
                continue;
            wu_list_del(&m.objs[i]->gc_link);
            m.objs[swept++] = m.objs[i];
        }
        wm_gc.neligible -= swept;
        wt_mutex_unlock(&wm_gc.lock);
        for (i = 0; i < swept; i++)
            wm_obj_free(m.objs[i]);
        free(m.objs);
        free(m.live);
        if (!swept)
            return;
    }
}

void wm_obj_stats(size_t *live_p, size_t *eligible_p)
{
    pthread_once(&wm_gc_once, wm_gc_setup);
    wt_mutex_lock(&wm_gc.lock);
    *live_p = wm_gc.nlive;
    *eligible_p = wm_gc.neligible;
    wt_mutex_unlock(&wm_gc.lock);
}

void wm_obj_finalize(void)
{
    pthread_once(&wm_gc_once, wm_gc_setup);
    wm_gc_collect();
    /* What remains was never freed by the user, or is still named by a request the user never
     * completed: free every object's contents so nothing leaks, without following references
     * (their targets are in the arena too and get the same treatment). Info objects whose user
     * handle is still valid stay: MPI_Info_* may be called after MPI_Finalize (MPI 4.1 section
     * 11.4.1). The infos other objects own (a communicator's hints) are user handles of their
     * owner, which frees them in its destroy: the sweep repeats until it frees nothing. */
    atomic_store(&wm_gc.finalizing, true);
    for (bool more = true; more;) {
        more = false;
        for (uintptr_t p = wm_obj_arena_base; p < wm_gc.used; p += WM_OBJ_SLOT) {
            wm_obj_t *o = (wm_obj_t *)p;
            if (o->state == WM_OBJ_FREE ||
                atomic_load_explicit(&o->kind, memory_order_relaxed) == WM_OBJ_INFO)
                continue;
            if (o->destroy)
                o->destroy(o);
            o->state = WM_OBJ_FREE;
            more = true;
        }
    }
    wm_gc.free_head = wm_gc.free_tail = NULL;
    wm_gc.nlive = 0;
    uintptr_t end = wm_obj_arena_base;
    for (uintptr_t p = wm_obj_arena_base; p < wm_gc.used; p += WM_OBJ_SLOT)
        if (((wm_obj_t *)p)->state != WM_OBJ_FREE) {
            end = p + WM_OBJ_SLOT;
            wm_gc.nlive++;
        }
    for (uintptr_t p = wm_obj_arena_base; p < end; p += WM_OBJ_SLOT)
        if (((wm_obj_t *)p)->state == WM_OBJ_FREE)
            wm_slot_put_locked((wm_obj_t *)p);
    wm_gc.used = end;
    wm_gc.neligible = 0;
    wu_list_init(&wm_gc.eligible);
    atomic_store(&wm_gc.finalizing, false);
}
