/* Handles as integers (MPI 5.0 standard ABI): MPI_<X>_toint / MPI_<X>_fromint and the Fortran
 * conversions MPI_<X>_c2f / MPI_<X>_f2c, which the ABI defines as the same integers, for the
 * eleven handle kinds; and the status conversions between C, Fortran (MPI_Fint[8]) and the
 * mpi_f08 status (MPI_F08_status).
 *
 * The integers:
 * - a predefined handle is its ABI value, a small constant below 0x400 (MPI_COMM_WORLD: 0x101,
 *   MPI_INT: 0x209, MPI_SUM: 0x021); null handles included;
 * - a user handle of the object arena (communicators, datatypes, groups, ops, error handlers, info,
 *   windows: wm_object.h) is WM_HC_USER_BASE + (slot << 8 | generation), and a request
 *   (wm_request.h) WM_HC_USER_BASE + (slot << 6 | generation): a pure function of the handle,
 *   so it is the same for the whole life of the handle, needs no table and no lock either way, and
 *   the integer of a freed handle is reused only when its slot is, with a new generation (a stale
 *   integer then gives the null handle);
 * - a message (a malloc'd object) gets the next free slot of a table when first converted; the slot
 *   is freed when the message is consumed (wm_handle_conv_forget_message), and reused (LIFO).
 *   Files and sessions have no user objects yet: only their null handles convert.
 * fromint/f2c of anything that is not the integer of a live handle of that kind (never given out,
 * freed, of another kind) gives the kind's null handle; toint/c2f of an invalid handle gives the
 * null handle's integer. Neither raises an error: a Fortran binding tests for the null handle.
 *
 * Concurrency contract: every function may be called from any thread, before MPI_Init and after
 * MPI_Finalize. fromint/f2c never lock (the message table's slots are read with acquire loads,
 * published with release stores); toint/c2f of a message and wm_handle_conv_forget_message take
 * the table's mutex; all other conversions are arithmetic plus the lock-free handle checks of
 * wm_object.h and wm_request.h. Converting a handle while another thread frees it is the
 * application's race: the result is then the handle's integer or the null's. */
#include "mpi/wm_handle_conv.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "mpi/wm_api.h"
#include "mpi/wm_datatype.h"
#include "mpi/wm_internal.h"
#include "mpi/wm_object.h"
#include "mpi/wm_op.h"
#include "mpi/wm_request.h"
#include "thread/wt_thread.h"

typedef enum {
    WM_HC_COMM, WM_HC_ERRHANDLER, WM_HC_FILE, WM_HC_GROUP, WM_HC_INFO, WM_HC_MESSAGE, WM_HC_OP,
    WM_HC_REQUEST, WM_HC_SESSION, WM_HC_TYPE, WM_HC_WIN, WM_HC_KINDS
} wm_hc_kind_t;

#define WM_HC_PREDEF_END 0x400    /* the ABI's predefined handles are below */
#define WM_HC_USER_BASE  0x4000   /* the first integer of a user handle */
#define WM_HC_REQ_GEN_BITS __builtin_popcount(WM_REQ_GEN_MASK)
_Static_assert((WM_REQ_GEN_MASK & (WM_REQ_GEN_MASK + 1)) == 0, "request generation: low bits");
_Static_assert(WM_OBJ_GEN_MASK == 0xffu && WM_OBJ_SLOT > WM_OBJ_GEN_MASK, "object handles");

/* Per kind: its null handle and, for the arena's kinds, the object kind (WM_OBJ_NONE: other). */
static const struct {
    uintptr_t null;
    wm_obj_kind_t obj;
} wm_hc_kinds[WM_HC_KINDS] = {
    [WM_HC_COMM]       = { (uintptr_t)MPI_COMM_NULL, WM_OBJ_COMM },
    [WM_HC_ERRHANDLER] = { (uintptr_t)MPI_ERRHANDLER_NULL, WM_OBJ_ERRH },
    [WM_HC_FILE]       = { (uintptr_t)MPI_FILE_NULL, WM_OBJ_NONE },
    [WM_HC_GROUP]      = { (uintptr_t)MPI_GROUP_NULL, WM_OBJ_GROUP },
    [WM_HC_INFO]       = { (uintptr_t)MPI_INFO_NULL, WM_OBJ_INFO },
    [WM_HC_MESSAGE]    = { (uintptr_t)MPI_MESSAGE_NULL, WM_OBJ_NONE },
    [WM_HC_OP]         = { (uintptr_t)MPI_OP_NULL, WM_OBJ_OP },
    [WM_HC_REQUEST]    = { (uintptr_t)MPI_REQUEST_NULL, WM_OBJ_NONE },
    [WM_HC_SESSION]    = { (uintptr_t)MPI_SESSION_NULL, WM_OBJ_SESSION },
    [WM_HC_TYPE]       = { (uintptr_t)MPI_DATATYPE_NULL, WM_OBJ_TYPE },
    [WM_HC_WIN]        = { (uintptr_t)MPI_WIN_NULL, WM_OBJ_WIN },
};

#define WM_HC_IS(v, h) ((v) == (uintptr_t)(h))

/* Whether v is one of the ABI's predefined handles of kind k (null included). */
static bool wm_hc_predefined(wm_hc_kind_t k, uintptr_t v)
{
    if (v == wm_hc_kinds[k].null)
        return true;
    switch (k) {
    case WM_HC_COMM:
        return WM_HC_IS(v, MPI_COMM_WORLD) || WM_HC_IS(v, MPI_COMM_SELF);
    case WM_HC_ERRHANDLER:
        return WM_HC_IS(v, MPI_ERRORS_ARE_FATAL) || WM_HC_IS(v, MPI_ERRORS_ABORT) ||
               WM_HC_IS(v, MPI_ERRORS_RETURN);
    case WM_HC_GROUP:
        return WM_HC_IS(v, MPI_GROUP_EMPTY);
    case WM_HC_INFO:
        return WM_HC_IS(v, MPI_INFO_ENV);
    case WM_HC_MESSAGE:
        return WM_HC_IS(v, MPI_MESSAGE_NO_PROC);
    case WM_HC_OP:
        return wm_op_get((MPI_Op)v) != NULL;
    case WM_HC_TYPE:
        if (v - WM_TYPE_BASE >= WM_TYPE_COUNT)
            return false;
        if (!wm_type_table[(uintptr_t)MPI_INT - WM_TYPE_BASE].extent)
            wm_datatype_init();   /* usable before MPI_Init, as wm_type_arg */
        return wm_type_table[v - WM_TYPE_BASE].extent != 0;
    default:
        return false;
    }
}

/* ---- the object arena's kinds and requests: arithmetic ---- */

static int wm_hc_obj_toint(uintptr_t h, wm_obj_kind_t kind)
{
    if (!wm_obj_lookup(h, kind))
        return -1;
    uintptr_t off = h - wm_obj_arena_base;
    uintptr_t v = (off / WM_OBJ_SLOT) << 8 | (off & WM_OBJ_GEN_MASK);
    return v <= (uintptr_t)(INT_MAX - WM_HC_USER_BASE) ? WM_HC_USER_BASE + (int)v : -1;
}

static uintptr_t wm_hc_obj_fromint(int i, wm_obj_kind_t kind)
{
    uintptr_t v = (uintptr_t)(i - WM_HC_USER_BASE), slot = v >> 8;
    if (slot >= (wm_obj_arena_end - wm_obj_arena_base) / WM_OBJ_SLOT)
        return 0;
    uintptr_t h = wm_obj_arena_base + slot * WM_OBJ_SLOT + (v & WM_OBJ_GEN_MASK);
    return wm_obj_lookup(h, kind) ? h : 0;
}

static int wm_hc_req_toint(uintptr_t h)
{
    if (!wm_request_get((MPI_Request)h))
        return -1;
    uintptr_t off = (h & ~(uintptr_t)WM_REQ_GEN_MASK) - wm_req_arena_base;
    uintptr_t v = (off / WM_REQ_STRIDE) << WM_HC_REQ_GEN_BITS | (h & WM_REQ_GEN_MASK);
    return v <= (uintptr_t)(INT_MAX - WM_HC_USER_BASE) ? WM_HC_USER_BASE + (int)v : -1;
}

static uintptr_t wm_hc_req_fromint(int i)
{
    uintptr_t v = (uintptr_t)(i - WM_HC_USER_BASE), slot = v >> WM_HC_REQ_GEN_BITS;
    if (slot >= (wm_req_arena_end - wm_req_arena_base) / WM_REQ_STRIDE)
        return 0;
    uintptr_t h = (wm_req_arena_base + slot * WM_REQ_STRIDE) | (v & WM_REQ_GEN_MASK);
    return wm_request_get((MPI_Request)h) ? h : 0;
}

/* ---- malloc'd objects (messages): a table of slots ---- */

#define WM_HC_CHUNK 4096u   /* slots per chunk */
#define WM_HC_DIR   256u    /* chunks: up to 1M integers given out at once per table */

/* Slot i holds the handle whose integer is WM_HC_USER_BASE + i (0: free). The directory and the
 * slots are read without the lock (acquire), written under it (release); chunks are never freed.
 * The hash (handle -> slot, open addressing, key 0 empty, 1 deleted), the slot counter and the
 * free list are guarded by `lock`. */
typedef struct {
    wt_mutex_t lock;
    _Atomic(_Atomic uintptr_t *) dir[WM_HC_DIR];
    uint32_t next;                 /* slots handed out so far */
    uint32_t *free, nfree, cap_free;
    uintptr_t *keys;
    uint32_t *vals, cap, used;     /* used: live + deleted keys */
} wm_hc_table_t;

#define WM_HC_KEY_DELETED ((uintptr_t)1)

static wm_hc_table_t wm_hc_messages = { .lock = WT_MUTEX_INITIALIZER };

static uint32_t wm_hc_hash(uintptr_t h, uint32_t cap)
{
    uint64_t x = (uint64_t)h * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (cap - 1);
}

/* The index of h's key, or of the empty key where it would go. Caller holds the lock; cap > 0. */
static uint32_t wm_hc_find(const wm_hc_table_t *t, uintptr_t h)
{
    uint32_t i = wm_hc_hash(h, t->cap);
    while (t->keys[i] != 0 && t->keys[i] != h)
        i = (i + 1) & (t->cap - 1);
    return i;
}

/* Room for one more key (rehashes without the deleted ones). False: out of memory. */
static bool wm_hc_reserve(wm_hc_table_t *t)
{
    if (t->cap && (t->used + 1) * 2 <= t->cap)
        return true;
    uint32_t live = 0;
    for (uint32_t i = 0; i < t->cap; i++)
        live += t->keys[i] > WM_HC_KEY_DELETED;
    uint32_t cap = 64;
    while (cap < (live + 1) * 4)
        cap *= 2;
    uintptr_t *keys = calloc(cap, sizeof(*keys));
    uint32_t *vals = calloc(cap, sizeof(*vals));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return false;
    }
    wm_hc_table_t n = { .keys = keys, .vals = vals, .cap = cap };
    for (uint32_t i = 0; i < t->cap; i++) {
        if (t->keys[i] > WM_HC_KEY_DELETED) {
            uint32_t j = wm_hc_find(&n, t->keys[i]);
            keys[j] = t->keys[i];
            vals[j] = t->vals[i];
        }
    }
    free(t->keys);
    free(t->vals);
    t->keys = keys;
    t->vals = vals;
    t->cap = cap;
    t->used = live;
    return true;
}

static int wm_hc_table_toint(wm_hc_table_t *t, uintptr_t h)
{
    int ret = -1;
    wt_mutex_lock_always(&t->lock);
    if (t->cap) {
        uint32_t i = wm_hc_find(t, h);
        if (t->keys[i] == h) {
            ret = WM_HC_USER_BASE + (int)t->vals[i];
            goto out;
        }
    }
    if (!wm_hc_reserve(t))
        goto out;
    uint32_t slot;
    if (t->nfree > 0) {
        slot = t->free[--t->nfree];
    } else if (t->next < WM_HC_DIR * WM_HC_CHUNK) {
        slot = t->next;
        _Atomic uintptr_t *chunk = atomic_load_explicit(&t->dir[slot / WM_HC_CHUNK],
                                                        memory_order_relaxed);
        if (!chunk) {
            if (!(chunk = calloc(WM_HC_CHUNK, sizeof(*chunk))))
                goto out;
            atomic_store_explicit(&t->dir[slot / WM_HC_CHUNK], chunk, memory_order_release);
        }
        t->next++;
    } else {
        goto out;   /* a million integers given out at once: the handle gets the null's */
    }
    atomic_store_explicit(&t->dir[slot / WM_HC_CHUNK][slot % WM_HC_CHUNK], h, memory_order_release);
    uint32_t i = wm_hc_find(t, h);
    t->keys[i] = h;
    t->vals[i] = slot;
    t->used++;
    ret = WM_HC_USER_BASE + (int)slot;
out:
    wt_mutex_unlock_always(&t->lock);
    return ret;
}

static uintptr_t wm_hc_table_fromint(wm_hc_table_t *t, int i)
{
    uintptr_t slot = (uintptr_t)(i - WM_HC_USER_BASE);
    if (slot >= WM_HC_DIR * WM_HC_CHUNK)
        return 0;
    _Atomic uintptr_t *chunk = atomic_load_explicit(&t->dir[slot / WM_HC_CHUNK], memory_order_acquire);
    return chunk ? atomic_load_explicit(&chunk[slot % WM_HC_CHUNK], memory_order_acquire) : 0;
}

static void wm_hc_table_forget(wm_hc_table_t *t, uintptr_t h)
{
    wt_mutex_lock_always(&t->lock);
    uint32_t i = t->cap ? wm_hc_find(t, h) : 0;
    if (t->cap && t->keys[i] == h) {
        uint32_t slot = t->vals[i];
        t->keys[i] = WM_HC_KEY_DELETED;
        atomic_store_explicit(&t->dir[slot / WM_HC_CHUNK][slot % WM_HC_CHUNK], 0,
                              memory_order_release);
        if (t->nfree == t->cap_free) {
            uint32_t cap = t->cap_free ? t->cap_free * 2 : 64;
            uint32_t *f = realloc(t->free, cap * sizeof(*f));
            if (f) {
                t->free = f;
                t->cap_free = cap;
            }
        }
        if (t->nfree < t->cap_free)
            t->free[t->nfree++] = slot;   /* else the slot is lost, not reused */
    }
    wt_mutex_unlock_always(&t->lock);
}

void wm_handle_conv_forget_message(MPI_Message m)
{
    if ((uintptr_t)m >= WM_HC_PREDEF_END)
        wm_hc_table_forget(&wm_hc_messages, (uintptr_t)m);
}

/* ---- the two directions ---- */

static int wm_hc_toint(wm_hc_kind_t k, uintptr_t h)
{
    int i = -1;
    if (h < WM_HC_PREDEF_END)
        i = wm_hc_predefined(k, h) ? (int)h : -1;
    else if (wm_hc_kinds[k].obj != WM_OBJ_NONE)
        i = wm_hc_obj_toint(h, wm_hc_kinds[k].obj);
    else if (k == WM_HC_REQUEST)
        i = wm_hc_req_toint(h);
    else if (k == WM_HC_MESSAGE)
        i = wm_hc_table_toint(&wm_hc_messages, h);
    return i >= 0 ? i : (int)wm_hc_kinds[k].null;
}

static uintptr_t wm_hc_fromint(wm_hc_kind_t k, int i)
{
    uintptr_t h = 0;
    if (i >= 0 && i < WM_HC_PREDEF_END)
        h = wm_hc_predefined(k, (uintptr_t)i) ? (uintptr_t)i : 0;
    else if (i >= WM_HC_USER_BASE && wm_hc_kinds[k].obj != WM_OBJ_NONE)
        h = wm_hc_obj_fromint(i, wm_hc_kinds[k].obj);
    else if (i >= WM_HC_USER_BASE && k == WM_HC_REQUEST)
        h = wm_hc_req_fromint(i);
    else if (i >= WM_HC_USER_BASE && k == WM_HC_MESSAGE)
        h = wm_hc_table_fromint(&wm_hc_messages, i);
    return h ? h : wm_hc_kinds[k].null;
}

/* ---- entry points: handles ---- */

int wm_impl_MPI_Comm_toint(MPI_Comm comm)
{
    return wm_hc_toint(WM_HC_COMM, (uintptr_t)comm);
}

MPI_Comm wm_impl_MPI_Comm_fromint(int comm)
{
    return (MPI_Comm)wm_hc_fromint(WM_HC_COMM, comm);
}

MPI_Fint wm_impl_MPI_Comm_c2f(MPI_Comm comm)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_COMM, (uintptr_t)comm);
}

MPI_Comm wm_impl_MPI_Comm_f2c(MPI_Fint comm)
{
    return (MPI_Comm)wm_hc_fromint(WM_HC_COMM, (int)comm);
}

int wm_impl_MPI_Errhandler_toint(MPI_Errhandler errhandler)
{
    return wm_hc_toint(WM_HC_ERRHANDLER, (uintptr_t)errhandler);
}

MPI_Errhandler wm_impl_MPI_Errhandler_fromint(int errhandler)
{
    return (MPI_Errhandler)wm_hc_fromint(WM_HC_ERRHANDLER, errhandler);
}

MPI_Fint wm_impl_MPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_ERRHANDLER, (uintptr_t)errhandler);
}

MPI_Errhandler wm_impl_MPI_Errhandler_f2c(MPI_Fint errhandler)
{
    return (MPI_Errhandler)wm_hc_fromint(WM_HC_ERRHANDLER, (int)errhandler);
}

int wm_impl_MPI_File_toint(MPI_File file)
{
    return wm_hc_toint(WM_HC_FILE, (uintptr_t)file);
}

MPI_File wm_impl_MPI_File_fromint(int file)
{
    return (MPI_File)wm_hc_fromint(WM_HC_FILE, file);
}

MPI_Fint wm_impl_MPI_File_c2f(MPI_File file)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_FILE, (uintptr_t)file);
}

MPI_File wm_impl_MPI_File_f2c(MPI_Fint file)
{
    return (MPI_File)wm_hc_fromint(WM_HC_FILE, (int)file);
}

int wm_impl_MPI_Group_toint(MPI_Group group)
{
    return wm_hc_toint(WM_HC_GROUP, (uintptr_t)group);
}

MPI_Group wm_impl_MPI_Group_fromint(int group)
{
    return (MPI_Group)wm_hc_fromint(WM_HC_GROUP, group);
}

MPI_Fint wm_impl_MPI_Group_c2f(MPI_Group group)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_GROUP, (uintptr_t)group);
}

MPI_Group wm_impl_MPI_Group_f2c(MPI_Fint group)
{
    return (MPI_Group)wm_hc_fromint(WM_HC_GROUP, (int)group);
}

int wm_impl_MPI_Info_toint(MPI_Info info)
{
    return wm_hc_toint(WM_HC_INFO, (uintptr_t)info);
}

MPI_Info wm_impl_MPI_Info_fromint(int info)
{
    return (MPI_Info)wm_hc_fromint(WM_HC_INFO, info);
}

MPI_Fint wm_impl_MPI_Info_c2f(MPI_Info info)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_INFO, (uintptr_t)info);
}

MPI_Info wm_impl_MPI_Info_f2c(MPI_Fint info)
{
    return (MPI_Info)wm_hc_fromint(WM_HC_INFO, (int)info);
}

int wm_impl_MPI_Message_toint(MPI_Message message)
{
    return wm_hc_toint(WM_HC_MESSAGE, (uintptr_t)message);
}

MPI_Message wm_impl_MPI_Message_fromint(int message)
{
    return (MPI_Message)wm_hc_fromint(WM_HC_MESSAGE, message);
}

MPI_Fint wm_impl_MPI_Message_c2f(MPI_Message message)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_MESSAGE, (uintptr_t)message);
}

MPI_Message wm_impl_MPI_Message_f2c(MPI_Fint message)
{
    return (MPI_Message)wm_hc_fromint(WM_HC_MESSAGE, (int)message);
}

int wm_impl_MPI_Op_toint(MPI_Op op)
{
    return wm_hc_toint(WM_HC_OP, (uintptr_t)op);
}

MPI_Op wm_impl_MPI_Op_fromint(int op)
{
    return (MPI_Op)wm_hc_fromint(WM_HC_OP, op);
}

MPI_Fint wm_impl_MPI_Op_c2f(MPI_Op op)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_OP, (uintptr_t)op);
}

MPI_Op wm_impl_MPI_Op_f2c(MPI_Fint op)
{
    return (MPI_Op)wm_hc_fromint(WM_HC_OP, (int)op);
}

int wm_impl_MPI_Request_toint(MPI_Request request)
{
    return wm_hc_toint(WM_HC_REQUEST, (uintptr_t)request);
}

MPI_Request wm_impl_MPI_Request_fromint(int request)
{
    return (MPI_Request)wm_hc_fromint(WM_HC_REQUEST, request);
}

MPI_Fint wm_impl_MPI_Request_c2f(MPI_Request request)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_REQUEST, (uintptr_t)request);
}

MPI_Request wm_impl_MPI_Request_f2c(MPI_Fint request)
{
    return (MPI_Request)wm_hc_fromint(WM_HC_REQUEST, (int)request);
}

int wm_impl_MPI_Session_toint(MPI_Session session)
{
    return wm_hc_toint(WM_HC_SESSION, (uintptr_t)session);
}

MPI_Session wm_impl_MPI_Session_fromint(int session)
{
    return (MPI_Session)wm_hc_fromint(WM_HC_SESSION, session);
}

MPI_Fint wm_impl_MPI_Session_c2f(MPI_Session session)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_SESSION, (uintptr_t)session);
}

MPI_Session wm_impl_MPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)wm_hc_fromint(WM_HC_SESSION, (int)session);
}

int wm_impl_MPI_Type_toint(MPI_Datatype datatype)
{
    return wm_hc_toint(WM_HC_TYPE, (uintptr_t)datatype);
}

MPI_Datatype wm_impl_MPI_Type_fromint(int datatype)
{
    return (MPI_Datatype)wm_hc_fromint(WM_HC_TYPE, datatype);
}

MPI_Fint wm_impl_MPI_Type_c2f(MPI_Datatype datatype)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_TYPE, (uintptr_t)datatype);
}

MPI_Datatype wm_impl_MPI_Type_f2c(MPI_Fint datatype)
{
    return (MPI_Datatype)wm_hc_fromint(WM_HC_TYPE, (int)datatype);
}

int wm_impl_MPI_Win_toint(MPI_Win win)
{
    return wm_hc_toint(WM_HC_WIN, (uintptr_t)win);
}

MPI_Win wm_impl_MPI_Win_fromint(int win)
{
    return (MPI_Win)wm_hc_fromint(WM_HC_WIN, win);
}

MPI_Fint wm_impl_MPI_Win_c2f(MPI_Win win)
{
    return (MPI_Fint)wm_hc_toint(WM_HC_WIN, (uintptr_t)win);
}

MPI_Win wm_impl_MPI_Win_f2c(MPI_Fint win)
{
    return (MPI_Win)wm_hc_fromint(WM_HC_WIN, (int)win);
}

/* ---- entry points: statuses ----
 * The three forms hold the same eight integers in the same order (MPI_F_STATUS_SIZE: the public
 * MPI_SOURCE, MPI_TAG, MPI_ERROR, then the five the library keeps, count and cancelled flag), so
 * every conversion copies them field by field. MPI_STATUS_IGNORE (NULL) is not a status: passing
 * it, or a NULL destination, is an error of class MPI_ERR_ARG. */

_Static_assert(MPI_F_STATUS_SIZE == 3 + sizeof(((MPI_Status *)0)->MPI_internal) / sizeof(int),
               "a Fortran status holds a C status word for word");
_Static_assert(MPI_F_SOURCE == 0 && MPI_F_TAG == 1 && MPI_F_ERROR == 2,
               "the public fields lead the Fortran status");
_Static_assert(sizeof(MPI_F08_status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint), "MPI_F08_status");

static int wm_status_args(const char *fn, const void *from, const char *from_name, const void *to,
                          const char *to_name)
{
    if (!from)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL (MPI_STATUS_IGNORE is not a status)",
                        from_name);
    if (!to)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", to_name);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    int rc = wm_status_args("MPI_Status_c2f", c_status, "c_status", f_status, "f_status");
    if (rc)
        return rc;
    f_status[MPI_F_SOURCE] = c_status->MPI_SOURCE;
    f_status[MPI_F_TAG] = c_status->MPI_TAG;
    f_status[MPI_F_ERROR] = c_status->MPI_ERROR;
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        f_status[3 + k] = c_status->MPI_internal[k];
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    int rc = wm_status_args("MPI_Status_f2c", f_status, "f_status", c_status, "c_status");
    if (rc)
        return rc;
    c_status->MPI_SOURCE = f_status[MPI_F_SOURCE];
    c_status->MPI_TAG = f_status[MPI_F_TAG];
    c_status->MPI_ERROR = f_status[MPI_F_ERROR];
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        c_status->MPI_internal[k] = f_status[3 + k];
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    int rc = wm_status_args("MPI_Status_c2f08", c_status, "c_status", f08_status, "f08_status");
    if (rc)
        return rc;
    f08_status->MPI_SOURCE = c_status->MPI_SOURCE;
    f08_status->MPI_TAG = c_status->MPI_TAG;
    f08_status->MPI_ERROR = c_status->MPI_ERROR;
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        f08_status->MPI_internal[k] = c_status->MPI_internal[k];
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    int rc = wm_status_args("MPI_Status_f082c", f08_status, "f08_status", c_status, "c_status");
    if (rc)
        return rc;
    c_status->MPI_SOURCE = f08_status->MPI_SOURCE;
    c_status->MPI_TAG = f08_status->MPI_TAG;
    c_status->MPI_ERROR = f08_status->MPI_ERROR;
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        c_status->MPI_internal[k] = f08_status->MPI_internal[k];
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    int rc = wm_status_args("MPI_Status_f082f", f08_status, "f08_status", f_status, "f_status");
    if (rc)
        return rc;
    f_status[MPI_F_SOURCE] = f08_status->MPI_SOURCE;
    f_status[MPI_F_TAG] = f08_status->MPI_TAG;
    f_status[MPI_F_ERROR] = f08_status->MPI_ERROR;
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        f_status[3 + k] = f08_status->MPI_internal[k];
    return MPI_SUCCESS;
}

int wm_impl_MPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    int rc = wm_status_args("MPI_Status_f2f08", f_status, "f_status", f08_status, "f08_status");
    if (rc)
        return rc;
    f08_status->MPI_SOURCE = f_status[MPI_F_SOURCE];
    f08_status->MPI_TAG = f_status[MPI_F_TAG];
    f08_status->MPI_ERROR = f_status[MPI_F_ERROR];
    for (int k = 0; k < MPI_F_STATUS_SIZE - 3; k++)
        f08_status->MPI_internal[k] = f_status[3 + k];
    return MPI_SUCCESS;
}
