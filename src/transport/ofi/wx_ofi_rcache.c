/* The registration cache of wx_ofi_rcache.h: a small table scanned linearly (capacity is tens of
 * entries: the sends in flight with rendezvous, plus the idle ones kept). */
#include "transport/ofi/wx_ofi_rcache.h"
#include "util/wu_log.h"

#include <stdlib.h>
#include <unistd.h>

wu_status_t wx_rcache_init(wx_rcache_t *rc, int capacity, bool keep_idle, wx_rcache_reg_fn_t reg,
                           wx_rcache_dereg_fn_t dereg, void *ctx)
{
    *rc = (wx_rcache_t){ .capacity = capacity > 0 ? capacity : 1, .keep_idle = keep_idle,
                         .reg = reg, .dereg = dereg, .ctx = ctx };
    rc->table = calloc((size_t)rc->capacity, sizeof(*rc->table));
    if (!rc->table) {
        wu_log_error("no memory for a registration cache of %d entries", rc->capacity);
        return WU_ERR_NO_MEMORY;
    }
    wt_spin_init(&rc->lock);
    return WU_OK;
}

static void wx_rcache_free(wx_rcache_t *rc, wx_rcache_entry_t *e)
{
    rc->dereg(rc->ctx, e->handle);
    free(e);
}

/* A free slot, evicting the least recently used idle entry if need be; -1 when all are in use.
 * Lock held. */
static int wx_rcache_slot(wx_rcache_t *rc)
{
    int victim = -1;
    for (int i = 0; i < rc->capacity; i++) {
        wx_rcache_entry_t *e = rc->table[i];
        if (!e)
            return i;
        if (e->refs == 0 && (victim < 0 || e->last_use < rc->table[victim]->last_use))
            victim = i;
    }
    if (victim >= 0) {
        wx_rcache_free(rc, rc->table[victim]);
        rc->table[victim] = NULL;
        rc->stats.evictions++;
    }
    return victim;
}

wu_status_t wx_rcache_acquire(wx_rcache_t *rc, const void *buf, size_t len,
                              wx_rcache_entry_t **entry_p)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)buf & ~(page - 1);
    uintptr_t end = ((uintptr_t)buf + len + page - 1) & ~(page - 1);
    if (end <= start)
        end = start + page;
    wt_spin_lock_always(&rc->lock);
    rc->tick++;
    for (int i = 0; i < rc->capacity; i++) {
        wx_rcache_entry_t *e = rc->table[i];
        if (e && e->start <= start && end <= e->end) {
            e->refs++;
            e->last_use = rc->tick;
            rc->stats.hits++;
            wt_spin_unlock_always(&rc->lock);
            *entry_p = e;
            return WU_OK;
        }
    }
    rc->stats.misses++;
    wx_rcache_entry_t *e = calloc(1, sizeof(*e));
    if (!e) {
        wt_spin_unlock_always(&rc->lock);
        return WU_ERR_NO_MEMORY;
    }
    wu_status_t st = rc->reg(rc->ctx, (void *)start, end - start, &e->handle, &e->key);
    if (st != WU_OK) {
        wt_spin_unlock_always(&rc->lock);
        free(e);
        return st;
    }
    e->start = start;
    e->end = end;
    e->refs = 1;
    e->last_use = rc->tick;
    int slot = wx_rcache_slot(rc);
    if (slot >= 0) {
        e->cached = true;
        rc->table[slot] = e;
    } else {
        rc->stats.uncached++;
        e->next = rc->uncached;   /* kept findable by its key until its release */
        rc->uncached = e;
    }
    wt_spin_unlock_always(&rc->lock);
    *entry_p = e;
    return WU_OK;
}

void wx_rcache_release(wx_rcache_t *rc, wx_rcache_entry_t *e)
{
    wt_spin_lock_always(&rc->lock);
    bool drop = --e->refs == 0 && (!e->cached || !rc->keep_idle);
    if (drop && e->cached) {
        for (int i = 0; i < rc->capacity; i++)
            if (rc->table[i] == e)
                rc->table[i] = NULL;
    } else if (drop) {
        wx_rcache_entry_t **pp = &rc->uncached;
        while (*pp && *pp != e)
            pp = &(*pp)->next;
        if (*pp)
            *pp = e->next;
    }
    wt_spin_unlock_always(&rc->lock);
    if (drop)
        wx_rcache_free(rc, e);
}

wx_rcache_entry_t *wx_rcache_find_key(wx_rcache_t *rc, uint64_t key)
{
    wx_rcache_entry_t *found = NULL;
    wt_spin_lock_always(&rc->lock);
    for (int i = 0; i < rc->capacity && !found; i++)
        if (rc->table[i] && rc->table[i]->key == key)
            found = rc->table[i];
    for (wx_rcache_entry_t *e = rc->uncached; e && !found; e = e->next)
        if (e->key == key)
            found = e;
    wt_spin_unlock_always(&rc->lock);
    return found;
}

wx_rcache_stats_t wx_rcache_stats(wx_rcache_t *rc)
{
    wt_spin_lock_always(&rc->lock);
    wx_rcache_stats_t s = rc->stats;
    wt_spin_unlock_always(&rc->lock);
    return s;
}

void wx_rcache_destroy(wx_rcache_t *rc)
{
    for (int i = 0; rc->table && i < rc->capacity; i++)
        if (rc->table[i])
            wx_rcache_free(rc, rc->table[i]);
    /* entries still in use (sends abandoned at finalize) go with the cache */
    while (rc->uncached) {
        wx_rcache_entry_t *e = rc->uncached;
        rc->uncached = e->next;
        wx_rcache_free(rc, e);
    }
    free(rc->table);
    rc->table = NULL;
}
