/* Keyvals: the user's ints and the WM_OBJ_KEYVAL objects behind them (see wm_attr.h).
 *
 * An int is WM_KV_BASE + (generation << 16) + slot: far from the predefined keys (501..507,
 * 601..605) and from MPI_KEYVAL_INVALID (0); a freed slot is reused with a new generation, so a
 * stale int fails until the generation wraps (256 reuses of that slot).
 *
 * MPI_*_free_keyval only marks the keyval freed (MPI 4.1 section 7.7.2: the actual free happens
 * when the last attribute using it is deleted): its int keeps naming it for getting and deleting
 * those attributes, a second free of it is MPI_ERR_KEYVAL, and no new attribute may use it. The
 * table slot is given up when the last reference goes; every reference taken or dropped through
 * the table's ints does so under wm_kv_lock (wm_keyval_take, wm_keyval_release; the last
 * reference is dropped just after, once its slot is empty), so a keyval whose count reached zero is
 * never handed out again. */
#include "mpi/wm_attr.h"
#include "mpi/wm_internal.h"

#include <pthread.h>

#define WM_KV_BASE  (1 << 24)
#define WM_KV_SLOTS (1 << 16)

static pthread_mutex_t wm_kv_lock = PTHREAD_MUTEX_INITIALIZER;
static wm_keyval_t *wm_kv_table[WM_KV_SLOTS];   /* wm_kv_lock; NULL: free slot */
static uint8_t wm_kv_gen[WM_KV_SLOTS];          /* wm_kv_lock */
static unsigned wm_kv_next;                     /* wm_kv_lock: where the search for a slot starts */

/* MPI_Finalize destroys every object without releasing it: the slot goes too. */
static void wm_keyval_destroy(wm_obj_t *o)
{
    wm_keyval_t *k = (wm_keyval_t *)o;
    pthread_mutex_lock(&wm_kv_lock);
    int slot = (k->value - WM_KV_BASE) & (WM_KV_SLOTS - 1);
    if (wm_kv_table[slot] == k)
        wm_kv_table[slot] = NULL;
    pthread_mutex_unlock(&wm_kv_lock);
}

int wm_keyval_create(wm_kv_kind_t kind, void (*copy_fn)(void), void (*delete_fn)(void),
                     void *extra_state, int *value_p)
{
    wm_keyval_t *k = wm_obj_create(WM_OBJ_KEYVAL, sizeof(*k), wm_keyval_destroy);
    if (!k)
        return MPI_ERR_NO_MEM;
    k->kind = kind;
    k->copy_fn = copy_fn;
    k->delete_fn = delete_fn;
    k->extra_state = extra_state;
    pthread_mutex_lock(&wm_kv_lock);
    unsigned slot = WM_KV_SLOTS;
    for (unsigned i = 0; i < WM_KV_SLOTS; i++) {
        unsigned s = (wm_kv_next + i) % WM_KV_SLOTS;
        if (!wm_kv_table[s]) {
            slot = s;
            break;
        }
    }
    if (slot < WM_KV_SLOTS) {
        wm_kv_next = slot + 1;   /* round robin: a freed slot is reused last */
        wm_kv_gen[slot]++;
        k->value = WM_KV_BASE + (wm_kv_gen[slot] << 16) + (int)slot;
        wm_kv_table[slot] = k;
    }
    pthread_mutex_unlock(&wm_kv_lock);
    if (slot == WM_KV_SLOTS) {
        k->obj.destroy = NULL;
        wm_obj_user_free(&k->obj);
        return MPI_ERR_NO_MEM;
    }
    *value_p = k->value;
    return MPI_SUCCESS;
}

/* The slot of a live keyval int of that kind, else -1. Lock held. */
static int wm_kv_slot_locked(int value, wm_kv_kind_t kind)
{
    if (value < WM_KV_BASE || value >= WM_KV_BASE + (256 << 16))
        return -1;
    int slot = (value - WM_KV_BASE) & (WM_KV_SLOTS - 1);
    wm_keyval_t *k = wm_kv_table[slot];
    return k && k->value == value && k->kind == kind ? slot : -1;
}

wm_keyval_t *wm_keyval_take(int value, wm_kv_kind_t kind, bool for_new_attr)
{
    pthread_mutex_lock(&wm_kv_lock);
    int slot = wm_kv_slot_locked(value, kind);
    wm_keyval_t *k = slot >= 0 ? wm_kv_table[slot] : NULL;
    if (k && for_new_attr && k->freed)
        k = NULL;
    if (k)
        wm_obj_retain(&k->obj);
    pthread_mutex_unlock(&wm_kv_lock);
    return k;
}

/* Drops one reference, the user's (user) or another, and unlocks wm_kv_lock. Every decrement
 * happens under the lock, so the count seen here is exact: the last reference empties the slot
 * (nobody can take a new one) and is dropped after the unlock, since dropping it may destroy the
 * keyval (wm_keyval_destroy takes the lock; the refcount build destroys at once). */
static void wm_keyval_drop_unlock(wm_keyval_t *k, bool user)
{
    bool last = atomic_load_explicit(&k->obj.refs, memory_order_relaxed) == 1;
    if (last) {
        int slot = (k->value - WM_KV_BASE) & (WM_KV_SLOTS - 1);
        if (wm_kv_table[slot] == k)
            wm_kv_table[slot] = NULL;
    }
    if (!last) {
        if (user)
            wm_obj_user_free(&k->obj);   /* keyvals are found through the table, not their handle */
        else
            wm_obj_release(&k->obj);
    }
    pthread_mutex_unlock(&wm_kv_lock);
    if (last) {
        if (user)
            wm_obj_user_free(&k->obj);
        else
            wm_obj_release(&k->obj);
    }
}

void wm_keyval_release(wm_keyval_t *k)
{
    pthread_mutex_lock(&wm_kv_lock);
    wm_keyval_drop_unlock(k, false);
}

bool wm_keyval_user_free(int value, wm_kv_kind_t kind)
{
    pthread_mutex_lock(&wm_kv_lock);
    int slot = wm_kv_slot_locked(value, kind);
    wm_keyval_t *k = slot >= 0 ? wm_kv_table[slot] : NULL;
    if (k && k->freed)
        k = NULL;
    if (!k) {
        pthread_mutex_unlock(&wm_kv_lock);
        return false;
    }
    k->freed = true;
    wm_keyval_drop_unlock(k, true);
    return true;
}
