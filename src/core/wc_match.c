/* Constant-time tag matching; the contract is in wc_match.h.
 *
 * One table, four kinds of key. A bin is keyed by a pattern (ctx, src, tag) in which src and tag may
 * be the wildcard -1, so the paper's four structures are four kinds of key in one hash table:
 *   kind 0 (ctx,src,tag)   kind 1 (ctx,src,ANY)   kind 2 (ctx,ANY,tag)   kind 3 (ctx,ANY,ANY)
 * A bin holds the receives posted with exactly its pattern (entry link[0]) and the unexpected
 * messages of its view: a message (c,s,t) is linked into the four bins its key generalizes to, with
 * link[k] in the kind-k bin, so taking it unlinks all four in O(1).
 *
 * Ordering: every list is FIFO and every entry draws its seq from one counter, so a list's head is
 * its oldest. An arriving message can only match the receives in its four bins; the oldest matching
 * receive is therefore the smallest-seq head among them. A receive pattern names exactly one view.
 *
 * The table: bins live in the slots themselves (linear probing, index from the top bits of a 64-bit
 * mix), so a lookup costs one cache miss, not a slot and then a bin. A bin that moves (rebuild)
 * repoints the first and last entry of each of its lists; entries never point at their bin.
 * An emptied bin stays where it is, keyed, so a bounded set of patterns reuses its bins and the
 * table does not change at all; an insertion may also take over an empty bin on its probe path.
 * When used slots (live or empty bins) reach 3/4, a rebuild drops the empty bins: in place by
 * backward shift if live bins fill at most 5/8 of the table, otherwise into one twice as large. At
 * least 1/8 of the table is then free for insertions, so a rebuild's O(table) cost is amortized. The
 * table never shrinks, so once the peak number of live patterns has been seen the engine calls no
 * malloc, even when every message uses a new tag.
 */
#include <stdlib.h>
#include "core/wc_match.h"
#include "util/wu_compiler.h"
#include "util/wu_log.h"

enum {
    WC_KIND_EXACT    = 0,
    WC_KIND_ANY_TAG  = 1,
    WC_KIND_ANY_SRC  = 2,
    WC_KIND_ANY_BOTH = 3,
    WC_KIND_COUNT    = 4
};

typedef struct wc_match_bin {
    uint32_t  ctx;
    int32_t   src;
    int32_t   tag;
    uint32_t  used;        /* 0: never used since the last rebuild; ends a probe run */
    wu_list_t posted;      /* receives posted with exactly this pattern, oldest first */
    wu_list_t unexp;       /* unexpected messages of this view, oldest first; link[kind] */
} wc_match_bin_t;

#define WC_MATCH_TABLE_MIN 64

struct wc_match {
    wc_match_bin_t *slots;
    size_t          mask;
    unsigned        shift;        /* home slot = hash >> shift */
    size_t          nposted_wild; /* posted receives of kinds 1..3 */
    size_t          nposted[WC_KIND_COUNT];
    size_t          nunexp;
    size_t          nwatched;     /* posted receives with aux = 1 */
    uint64_t        seq;
    size_t          nused;        /* slots holding a bin, live or empty */
    size_t          max_used;
};

/* Multiply-xor mixing of the whole key; the index takes the top bits, which depend on every input
 * bit, so consecutive tags or ranks spread over the table. */
static inline uint64_t wc_match_hash(uint32_t ctx, int32_t src, int32_t tag)
{
    uint64_t h = ((uint64_t)ctx << 32) | (uint32_t)src;
    h *= 0x9e3779b97f4a7c15ull;
    h ^= (uint32_t)tag;
    h *= 0xc2b2ae3d27d4eb4full;
    h ^= h >> 31;
    h *= 0x165667b19e3779f9ull;
    return h;
}

static inline size_t wc_match_home(const wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag)
{
    return (size_t)(wc_match_hash(ctx, src, tag) >> m->shift);
}

static inline unsigned wc_match_kind(int32_t src, int32_t tag)
{
    return (unsigned)(tag == WC_ANY_TAG) | ((unsigned)(src == WC_ANY_SOURCE) << 1);
}

/* Views an unexpected message of context ctx is linked into (see WC_CTX_EXACT). */
static inline unsigned wc_match_views(uint32_t ctx)
{
    return (ctx & WC_CTX_EXACT) ? 1 : WC_KIND_COUNT;
}

static inline bool wc_match_bin_is(const wc_match_bin_t *b, uint32_t ctx, int32_t src, int32_t tag)
{
    return b->ctx == ctx && b->src == src && b->tag == tag;
}

static inline bool wc_match_bin_empty(const wc_match_bin_t *b)
{
    return wu_list_empty(&b->posted) && wu_list_empty(&b->unexp);
}

static inline wc_match_entry_t *wc_match_entry_of(wu_list_t *l, unsigned kind)
{
    return (wc_match_entry_t *)((char *)(l - kind) - offsetof(wc_match_entry_t, link));
}

static inline wc_match_bin_t *wc_match_bin_find(const wc_match_t *m, uint32_t ctx, int32_t src,
                                                int32_t tag)
{
    for (size_t i = wc_match_home(m, ctx, src, tag);; i = (i + 1) & m->mask) {
        wc_match_bin_t *b = &m->slots[i];
        if (!b->used)
            return NULL;
        if (wc_match_bin_is(b, ctx, src, tag))
            return b;
    }
}

/* --- moving bins: rebuilds only ---------------------------------------------------------------- */

/* A list head was copied from old to new: repoint its neighbours, or re-init it if it was empty. */
static void wc_match_head_moved(wu_list_t *new, const wu_list_t *old)
{
    if (new->next == old) {
        wu_list_init(new);
    } else {
        new->next->prev = new;
        new->prev->next = new;
    }
}

static void wc_match_bin_move(wc_match_bin_t *dst, const wc_match_bin_t *src)
{
    *dst = *src;
    wc_match_head_moved(&dst->posted, &src->posted);
    wc_match_head_moved(&dst->unexp, &src->unexp);
}

/* Empty slot i by backward shift: later bins of its probe run move up into the hole unless that
 * would put them before their home slot. */
static void wc_match_slot_delete(wc_match_t *m, size_t hole)
{
    for (size_t j = (hole + 1) & m->mask; m->slots[j].used; j = (j + 1) & m->mask) {
        const wc_match_bin_t *b = &m->slots[j];
        size_t home = wc_match_home(m, b->ctx, b->src, b->tag);
        if (((j - home) & m->mask) >= ((j - hole) & m->mask)) {
            wc_match_bin_move(&m->slots[hole], b);
            hole = j;
        }
    }
    m->slots[hole].used = 0;
    m->nused--;
}

/* Slots [0, i) hold no empty bin once i has been passed: a deletion moves bins only from later in
 * the same probe run, and when that run wraps to the start it brings only live bins. */
static void wc_match_purge(wc_match_t *m)
{
    for (size_t i = 0; i <= m->mask; i++)
        while (m->slots[i].used && wc_match_bin_empty(&m->slots[i]))
            wc_match_slot_delete(m, i);
}

static WU_NOINLINE wu_status_t wc_match_rebuild(wc_match_t *m)
{
    size_t live = 0, cap = m->mask + 1, newcap = cap;
    for (size_t i = 0; i < cap; i++)
        live += m->slots[i].used && !wc_match_bin_empty(&m->slots[i]);
    while (8 * (live + 1) > 5 * newcap)
        newcap *= 2;
    if (newcap == cap) {
        wc_match_purge(m);
        return WU_OK;
    }

    wc_match_bin_t *slots = calloc(newcap, sizeof(*slots));
    if (slots == NULL) {
        wu_log_error("tag matching: cannot allocate a table of %zu bins", newcap);
        return WU_ERR_NO_MEMORY;
    }
    unsigned shift = 64 - (unsigned)__builtin_ctzll(newcap);
    for (size_t j = 0; j < cap; j++) {
        const wc_match_bin_t *b = &m->slots[j];
        if (!b->used || wc_match_bin_empty(b))
            continue;
        size_t i = (size_t)(wc_match_hash(b->ctx, b->src, b->tag) >> shift);
        while (slots[i].used)
            i = (i + 1) & (newcap - 1);
        wc_match_bin_move(&slots[i], b);
    }
    free(m->slots);
    m->slots = slots;
    m->mask = newcap - 1;
    m->shift = shift;
    m->nused = live;
    m->max_used = newcap - newcap / 4;
    return WU_OK;
}

/* The bin of a pattern, created empty if absent; NULL only when out of memory (logged). The pointer
 * is valid until the next call that may create a bin. */
static wc_match_bin_t *wc_match_bin_get(wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag)
{
    wc_match_bin_t *reuse = NULL, *b;

    for (size_t i = wc_match_home(m, ctx, src, tag);; i = (i + 1) & m->mask) {
        b = &m->slots[i];
        if (!b->used)
            break;
        if (wc_match_bin_is(b, ctx, src, tag))
            return b;
        if (reuse == NULL && wc_match_bin_empty(b))
            reuse = b;
    }
    if (reuse != NULL) {
        b = reuse;
    } else if (WU_UNLIKELY(m->nused >= m->max_used)) {
        if (wc_match_rebuild(m) != WU_OK)
            return NULL;
        return wc_match_bin_get(m, ctx, src, tag);
    } else {
        b->used = 1;
        wu_list_init(&b->posted);
        wu_list_init(&b->unexp);
        m->nused++;
    }
    b->ctx = ctx;
    b->src = src;
    b->tag = tag;
    return b;
}

/* --- engine ----------------------------------------------------------------------------------- */

wu_status_t wc_match_create(wc_match_t **m_p)
{
    wc_match_t *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        wu_log_error("tag matching: cannot allocate the engine");
        return WU_ERR_NO_MEMORY;
    }
    m->slots = calloc(WC_MATCH_TABLE_MIN, sizeof(*m->slots));
    if (m->slots == NULL) {
        wu_log_error("tag matching: cannot allocate a table of %d bins", WC_MATCH_TABLE_MIN);
        goto err_free_engine;
    }
    m->mask = WC_MATCH_TABLE_MIN - 1;
    m->shift = 64 - (unsigned)__builtin_ctzll(WC_MATCH_TABLE_MIN);
    m->max_used = WC_MATCH_TABLE_MIN - WC_MATCH_TABLE_MIN / 4;
    *m_p = m;
    return WU_OK;

err_free_engine:
    free(m);
    return WU_ERR_NO_MEMORY;
}

void wc_match_destroy(wc_match_t *m)
{
    if (m == NULL)
        return;
    if (m->nposted_wild + m->nposted[WC_KIND_EXACT] != 0 || m->nunexp != 0)
        wu_debug("tag matching: destroyed with %zu posted and %zu unexpected entries",
                 m->nposted_wild + m->nposted[WC_KIND_EXACT], m->nunexp);
    free(m->slots);
    free(m);
}

/* --- posted receives -------------------------------------------------------------------------- */

wu_status_t wc_match_post(wc_match_t *m, wc_match_entry_t *recv)
{
    wc_match_bin_t *b = wc_match_bin_get(m, recv->ctx, recv->src, recv->tag);
    if (WU_UNLIKELY(b == NULL))
        return WU_ERR_NO_MEMORY;
    unsigned kind = wc_match_kind(recv->src, recv->tag);
    recv->seq = m->seq++;
    recv->owner = m;   /* marks it posted, for wc_match_posted_remove */
    recv->aux = 0;
    wu_list_push_back(&b->posted, &recv->link[0]);
    m->nposted[kind]++;
    m->nposted_wild += kind != WC_KIND_EXACT;
    return WU_OK;
}

wu_status_t wc_match_post_watched(wc_match_t *m, wc_match_entry_t *recv)
{
    wu_status_t st = wc_match_post(m, recv);
    if (st == WU_OK) {
        recv->aux = 1;
        m->nwatched++;
    }
    return st;
}

size_t wc_match_watched(const wc_match_t *m)
{
    return m->nwatched;
}

static inline wc_match_entry_t *wc_match_posted_head(const wc_match_bin_t *b)
{
    if (b == NULL || wu_list_empty(&b->posted))
        return NULL;
    return WU_CONTAINER_OF(b->posted.next, wc_match_entry_t, link[0]);
}

static inline void wc_match_posted_unlink(wc_match_t *m, wc_match_entry_t *recv)
{
    unsigned kind = wc_match_kind(recv->src, recv->tag);
    wu_list_del(&recv->link[0]);
    recv->owner = NULL;
    m->nwatched -= recv->aux;
    m->nposted[kind]--;
    m->nposted_wild -= kind != WC_KIND_EXACT;
}

static inline wc_match_entry_t *wc_match_older(wc_match_entry_t *a, wc_match_entry_t *b)
{
    if (a == NULL)
        return b;
    if (b == NULL)
        return a;
    return b->seq < a->seq ? b : a;
}

/* Only the wildcard kinds that have posted receives are looked up. */
static wc_match_entry_t *wc_match_posted_oldest_wild(wc_match_t *m, uint32_t ctx, int32_t src,
                                                     int32_t tag, wc_match_entry_t *best)
{
    if (m->nposted[WC_KIND_ANY_TAG] != 0)
        best = wc_match_older(best, wc_match_posted_head(wc_match_bin_find(m, ctx, src, WC_ANY_TAG)));
    if (m->nposted[WC_KIND_ANY_SRC] != 0)
        best = wc_match_older(best,
                              wc_match_posted_head(wc_match_bin_find(m, ctx, WC_ANY_SOURCE, tag)));
    if (m->nposted[WC_KIND_ANY_BOTH] != 0)
        best = wc_match_older(best, wc_match_posted_head(
                                        wc_match_bin_find(m, ctx, WC_ANY_SOURCE, WC_ANY_TAG)));
    return best;
}

wc_match_entry_t *wc_match_posted_take(wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag)
{
    wc_match_entry_t *best = NULL;

    if (WU_LIKELY(m->nposted[WC_KIND_EXACT] != 0))
        best = wc_match_posted_head(wc_match_bin_find(m, ctx, src, tag));
    if (WU_UNLIKELY(m->nposted_wild != 0))
        best = wc_match_posted_oldest_wild(m, ctx, src, tag, best);
    if (best != NULL)
        wc_match_posted_unlink(m, best);
    return best;
}

void wc_match_prefetch_bin(const wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag)
{
    if (m->nposted[WC_KIND_EXACT] != 0)
        __builtin_prefetch(&m->slots[wc_match_home(m, ctx, src, tag)], 0);
}

wc_match_entry_t *wc_match_posted_peek_exact(const wc_match_t *m, uint32_t ctx, int32_t src,
                                             int32_t tag)
{
    if (m->nposted[WC_KIND_EXACT] == 0)
        return NULL;
    wc_match_bin_t *b = wc_match_bin_find(m, ctx, src, tag);
    return b ? wc_match_posted_head(b) : NULL;
}

bool wc_match_posted_remove(wc_match_t *m, wc_match_entry_t *recv)
{
    if (recv->owner != m)
        return false;
    wc_match_posted_unlink(m, recv);
    return true;
}

size_t wc_match_posted_sweep(wc_match_t *m, bool (*drop)(wc_match_entry_t *recv, void *arg),
                             void *arg)
{
    size_t n = 0;
    for (size_t i = 0; i <= m->mask; i++) {
        wc_match_bin_t *b = &m->slots[i];
        if (!b->used)
            continue;
        /* emptied bins stay where they are, keyed (see the file comment) */
        for (wu_list_t *l = b->posted.next, *next; l != &b->posted; l = next) {
            next = l->next;
            wc_match_entry_t *recv = WU_CONTAINER_OF(l, wc_match_entry_t, link[0]);
            if (drop(recv, arg)) {
                wc_match_posted_unlink(m, recv);
                n++;
            }
        }
    }
    return n;
}

/* --- unexpected messages ---------------------------------------------------------------------- */

wu_status_t wc_match_unexpected_add(wc_match_t *m, wc_match_entry_t *msg)
{
    /* Link into each bin as soon as it is found: a later lookup may rebuild the table (moving
     * linked bins is fine) or take over a bin that is still empty. */
    unsigned k, views = wc_match_views(msg->ctx);
    for (k = 0; k < views; k++) {
        wc_match_bin_t *b = wc_match_bin_get(m, msg->ctx, (k & 2) ? WC_ANY_SOURCE : msg->src,
                                             (k & 1) ? WC_ANY_TAG : msg->tag);
        if (WU_UNLIKELY(b == NULL))
            goto err_unlink;
        wu_list_push_back(&b->unexp, &msg->link[k]);
    }
    msg->seq = m->seq++;
    m->nunexp++;
    return WU_OK;

err_unlink:
    while (k-- > 0)
        wu_list_del(&msg->link[k]);
    return WU_ERR_NO_MEMORY;
}

wc_match_entry_t *wc_match_unexpected_find(wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag,
                                           bool take)
{
    if (m->nunexp == 0)
        return NULL;
    wc_match_bin_t *b = wc_match_bin_find(m, ctx, src, tag);
    if (b == NULL || wu_list_empty(&b->unexp))
        return NULL;
    wc_match_entry_t *msg = wc_match_entry_of(b->unexp.next, wc_match_kind(src, tag));
    if (take) {
        for (unsigned k = 0, views = wc_match_views(ctx); k < views; k++)
            wu_list_del(&msg->link[k]);
        m->nunexp--;
    }
    return msg;
}

wc_match_entry_t *wc_match_unexpected_take_newest(wc_match_t *m, uint32_t ctx, int32_t src,
                                                  int32_t tag,
                                                  bool (*pick)(wc_match_entry_t *msg, void *arg),
                                                  void *arg)
{
    if (m->nunexp == 0)
        return NULL;
    wc_match_bin_t *b = wc_match_bin_find(m, ctx, src, tag);
    if (b == NULL)
        return NULL;
    for (wu_list_t *l = b->unexp.prev; l != &b->unexp; l = l->prev) {
        wc_match_entry_t *msg = wc_match_entry_of(l, WC_KIND_EXACT);
        if (!pick(msg, arg))
            continue;
        for (unsigned k = 0, views = wc_match_views(ctx); k < views; k++)
            wu_list_del(&msg->link[k]);
        m->nunexp--;
        return msg;
    }
    return NULL;
}

size_t wc_match_unexpected_sweep(wc_match_t *m, void (*take)(wc_match_entry_t *msg, void *arg),
                                 void *arg)
{
    size_t n = 0;
    for (size_t i = 0; i <= m->mask && m->nunexp; i++) {
        wc_match_bin_t *b = &m->slots[i];
        /* every message is linked in the exact view (link[0]) of its own (ctx, src, tag) */
        if (!b->used || b->src == WC_ANY_SOURCE || b->tag == WC_ANY_TAG)
            continue;
        while (!wu_list_empty(&b->unexp)) {
            wc_match_entry_t *msg = wc_match_entry_of(b->unexp.next, WC_KIND_EXACT);
            for (unsigned k = 0, views = wc_match_views(msg->ctx); k < views; k++)
                wu_list_del(&msg->link[k]);
            m->nunexp--;
            n++;
            take(msg, arg);
        }
    }
    return n;
}

size_t wc_match_posted_count(const wc_match_t *m)
{
    return m->nposted[WC_KIND_EXACT] + m->nposted_wild;
}

size_t wc_match_unexpected_count(const wc_match_t *m)
{
    return m->nunexp;
}
