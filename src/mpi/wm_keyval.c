/* Keyvals: the user's ints and the WM_OBJ_KEYVAL objects behind them (see wm_attr.h).
 *
 * An int is WM_KV_BASE + (generation << 16) + slot: far from the predefined keys (501..507,
 * 601..605) and from MPI_KEYVAL_INVALID (0); a freed slot is reused with a new generation, so a
 * stale int fails until the generation wraps (256 reuses of that slot). */
#include "mpi/wm_attr.h"
#include "mpi/wm_internal.h"

#include <pthread.h>

#define WM_KV_BASE  (1 << 24)
#define WM_KV_SLOTS (1 << 16)

static pthread_mutex_t wm_kv_lock = PTHREAD_MUTEX_INITIALIZER;
static wm_keyval_t *wm_kv_table[WM_KV_SLOTS];   /* wm_kv_lock; NULL: free slot */
static uint8_t wm_kv_gen[WM_KV_SLOTS];          /* wm_kv_lock */
static unsigned wm_kv_next;                     /* wm_kv_lock: where the search for a slot starts */

int wm_keyval_create(wm_kv_kind_t kind, void (*copy_fn)(void), void (*delete_fn)(void),
                     void *extra_state, int *value_p)
{
    wm_keyval_t *k = wm_obj_create(WM_OBJ_KEYVAL, sizeof(*k), NULL);
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

wm_keyval_t *wm_keyval_take(int value, wm_kv_kind_t kind)
{
    pthread_mutex_lock(&wm_kv_lock);
    int slot = wm_kv_slot_locked(value, kind);
    wm_keyval_t *k = slot >= 0 ? wm_kv_table[slot] : NULL;
    if (k)
        wm_obj_retain(&k->obj);
    pthread_mutex_unlock(&wm_kv_lock);
    return k;
}

bool wm_keyval_user_free(int value, wm_kv_kind_t kind)
{
    pthread_mutex_lock(&wm_kv_lock);
    int slot = wm_kv_slot_locked(value, kind);
    wm_keyval_t *k = slot >= 0 ? wm_kv_table[slot] : NULL;
    if (k)
        wm_kv_table[slot] = NULL;
    pthread_mutex_unlock(&wm_kv_lock);
    if (!k)
        return false;
    wm_obj_user_free(&k->obj);
    return true;
}
