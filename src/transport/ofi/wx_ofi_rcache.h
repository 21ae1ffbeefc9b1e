/* A registration cache: memory registrations keyed by address range, shared by the threads of a
 * process, bounded. Generic over the registration calls (reg_fn / dereg_fn), so that it is tested
 * without a provider (tests/unit/test_ofi_rcache.c).
 *
 * acquire(buf, len) returns an entry covering [buf, buf + len): an existing one (a hit, its count
 * of users raised) or a new registration. release drops a use. What happens to an entry nobody
 * uses is the safety policy, fixed at init:
 *   - keep_idle false: it is deregistered at once. The cache then only shares a registration
 *     between sends of overlapping buffers in flight together. This is the policy for providers
 *     that pin pages (hardware NICs): after free() and a new mmap at the same address, a kept
 *     registration would name the old physical pages, and without memory hooks (we have none) the
 *     cache cannot know.
 *   - keep_idle true: it stays (up to `capacity` entries, the least recently used idle one evicted
 *     first) for the next buffer inside it. Safe only where a registration names virtual
 *     addresses and pins nothing (tcp, sockets, udp, shm providers): a reader through a stale entry
 *     reads what is at those addresses now, and keys are only handed out for live buffers.
 * When every entry is in use a new registration is made outside the cache (counted) and
 * deregistered at its release.
 *
 * Concurrency contract: every function may be called by any thread (one spinlock, held across the
 * registration call of a miss); destroy once, when nothing else runs.
 */
#ifndef WX_OFI_RCACHE_H
#define WX_OFI_RCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "thread/wt_thread.h"
#include "util/wu_status.h"

typedef struct wx_rcache_entry {
    uintptr_t start, end;     /* the registered range [start, end) */
    void     *handle;         /* reg_fn's (a struct fid_mr *) */
    uint64_t  key;            /* reg_fn's (the remote key) */
    int       refs;           /* users: acquired and not released */
    bool      cached;         /* in the table (false: made when the table was full) */
    uint64_t  last_use;       /* tick of the last acquire, for eviction */
    struct wx_rcache_entry *next;   /* not cached: the list of such entries in use */
} wx_rcache_entry_t;

typedef wu_status_t (*wx_rcache_reg_fn_t)(void *ctx, void *buf, size_t len, void **handle_p,
                                          uint64_t *key_p);
typedef void (*wx_rcache_dereg_fn_t)(void *ctx, void *handle);

typedef struct wx_rcache_stats {
    uint64_t hits, misses, evictions, uncached;
} wx_rcache_stats_t;

typedef struct wx_rcache {
    wt_spinlock_t lock;
    wx_rcache_entry_t **table;   /* lock: [capacity], NULL slots free */
    wx_rcache_entry_t *uncached; /* lock: entries in use made while the table was full */
    int capacity;
    bool keep_idle;
    uint64_t tick;               /* lock */
    wx_rcache_reg_fn_t reg;
    wx_rcache_dereg_fn_t dereg;
    void *ctx;
    wx_rcache_stats_t stats;     /* lock */
} wx_rcache_t;

wu_status_t wx_rcache_init(wx_rcache_t *rc, int capacity, bool keep_idle, wx_rcache_reg_fn_t reg,
                           wx_rcache_dereg_fn_t dereg, void *ctx);
/* Page-aligned registrations: a later buffer on the same pages hits. */
wu_status_t wx_rcache_acquire(wx_rcache_t *rc, const void *buf, size_t len,
                              wx_rcache_entry_t **entry_p);
void wx_rcache_release(wx_rcache_t *rc, wx_rcache_entry_t *e);
/* The entry in use with this key, or NULL. */
wx_rcache_entry_t *wx_rcache_find_key(wx_rcache_t *rc, uint64_t key);
wx_rcache_stats_t wx_rcache_stats(wx_rcache_t *rc);
void wx_rcache_destroy(wx_rcache_t *rc);

#endif
