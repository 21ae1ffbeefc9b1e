/* Typed data into and out of a target's window memory: the pack engine on a mapped window, one
 * process_vm_readv/writev per batch of blocks on user memory of another process, or per batch of
 * held operations (the deferred variants; see wc_rma.h);
 * accumulates element by element with CPU atomics on a mapped window (wc_rma_atomic_inl.h); the
 * huge-page hint on user memory that other processes single-copy to. */
#include "core/wc_rma.h"
#include "core/wc_rma_atomic_inl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include "util/wu_compiler.h"
#include "util/wu_log.h"

#define WC_RMA_IOV 256   /* remote blocks per system call (IOV_MAX is 1024) */
#define WC_RMA_MAX_CALL ((size_t)1 << 30)   /* bytes per system call: the kernel moves at most
                                              * about 2 GiB in one and reports the rest as short */

/* A batch of remote blocks matched by one contiguous run of the packed buffer. */
typedef struct wc_rma_batch {
    const wc_rma_target_t *t;
    bool   write;
    char  *lp;          /* packed bytes not yet moved */
    size_t bytes;       /* bytes of the blocks in riov */
    int    nr;
    struct iovec riov[WC_RMA_IOV];
} wc_rma_batch_t;

static wu_status_t wc_rma_batch_flush(wc_rma_batch_t *b)
{
    if (!b->nr)
        return WU_OK;
    struct iovec l = {b->lp, b->bytes};
    ssize_t got = b->write ? process_vm_writev(b->t->pid, &l, 1, b->riov, (unsigned long)b->nr, 0)
                           : process_vm_readv(b->t->pid, &l, 1, b->riov, (unsigned long)b->nr, 0);
    if (got != (ssize_t)b->bytes) {
        wu_log_error("RMA: single copy %s process %d failed: %s", b->write ? "to" : "from",
                     (int)b->t->pid, got < 0 ? strerror(errno) : "short transfer");
        return WU_ERR_IO;
    }
    b->lp += b->bytes;
    b->bytes = 0;
    b->nr = 0;
    return WU_OK;
}

/* Walks the blocks of (off, dt, count) in the target in type-map order, so that they line up
 * with the packed stream. A contiguous layout is one block; a block that starts where the last
 * one ended extends it (count elements of a predefined type were one iovec each: 64 KiB of
 * MPI_CHAR took 256 system calls of 256 one-byte blocks, about 3 MB/s). */
static wu_status_t wc_rma_cma(const wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                              uint64_t count, char *packed, bool write)
{
    wc_rma_batch_t b = {.t = t, .write = write, .lp = packed};
    if (dt->contig) {
        char *at = (char *)(uintptr_t)(t->raddr + off + (uint64_t)dt->contig_off);
        for (uint64_t left = count * dt->size; left;) {
            size_t n = left < WC_RMA_MAX_CALL ? (size_t)left : WC_RMA_MAX_CALL;
            b.riov[0] = (struct iovec){at, n};
            b.bytes = n;
            b.nr = 1;
            wu_status_t st = wc_rma_batch_flush(&b);
            if (st != WU_OK)
                return st;
            at += n;
            left -= n;
        }
        return WU_OK;
    }
    for (uint64_t e = 0; e < count; e++) {
        uint64_t elem = t->raddr + off + e * (uint64_t)dt->extent;
        for (uint64_t s = 0; s < dt->nsegs; s++) {
            const wc_dtype_seg_t *sg = &dt->segs[s];
            for (uint64_t k = 0; k < sg->count; k++) {
                char *at = (char *)(uintptr_t)(elem + (uint64_t)sg->disp + k * (uint64_t)sg->stride);
                if (b.nr && (char *)b.riov[b.nr - 1].iov_base + b.riov[b.nr - 1].iov_len == at &&
                    b.bytes + sg->blocklen <= WC_RMA_MAX_CALL) {
                    b.riov[b.nr - 1].iov_len += sg->blocklen;
                    b.bytes += sg->blocklen;
                    continue;
                }
                if (b.nr == WC_RMA_IOV) {
                    wu_status_t st = wc_rma_batch_flush(&b);
                    if (st != WU_OK)
                        return st;
                }
                b.riov[b.nr].iov_base = at;
                b.riov[b.nr].iov_len = sg->blocklen;
                b.bytes += sg->blocklen;
                b.nr++;
            }
        }
    }
    return wc_rma_batch_flush(&b);
}

wu_status_t wc_rma_write(const wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                         uint64_t count, const void *packed)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    if (!t->addr)
        return wc_rma_cma(t, off, dt, count, (char *)packed, true);
    if (dt->contig) {
        memcpy(t->addr + off + dt->contig_off, packed, bytes);
        return WU_OK;
    }
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, dt, t->addr + off, count);
    wc_dtype_unpack(&c, packed, bytes);
    return WU_OK;
}

wu_status_t wc_rma_read(const wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                        uint64_t count, void *packed)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    if (!t->addr)
        return wc_rma_cma(t, off, dt, count, packed, false);
    if (dt->contig) {
        memcpy(packed, t->addr + off + dt->contig_off, bytes);
        return WU_OK;
    }
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, dt, t->addr + off, count);
    wc_dtype_pack(&c, packed, bytes);
    return WU_OK;
}

/* ---- deferred single copies (wc_rma.h) ---- */

_Static_assert(WC_RMA_DEFER_MAX <= WC_RMA_MAX_CALL, "a batch is one system call");

/* The copies held for one target: one direction at a time, local and remote iovecs pairwise. */
typedef struct wc_rma_defer {
    _Atomic uint32_t lock;   /* 0 free, 1 held: guards every field below */
    bool        write;       /* the direction of what is held */
    int         n;           /* copies held */
    size_t      bytes;
    wu_status_t err;         /* a failed batch not yet reported */
    struct iovec l[WC_RMA_DEFER_OPS], r[WC_RMA_DEFER_OPS];
} wc_rma_defer_t;

static void wc_rma_defer_lock(wc_rma_defer_t *q)
{
    unsigned spins = 0;
    for (;;) {
        uint32_t z = 0;
        if (atomic_compare_exchange_weak_explicit(&q->lock, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        while (atomic_load_explicit(&q->lock, memory_order_relaxed))
            wc_rma_backoff(&spins);
    }
}

static void wc_rma_defer_unlock(wc_rma_defer_t *q)
{
    atomic_store_explicit(&q->lock, 0, memory_order_release);
}

/* Under q's lock: moves what is held, one system call. Every copy is settled afterwards: moved,
 * or counted in q->err. */
static void wc_rma_defer_move(const wc_rma_target_t *t, wc_rma_defer_t *q)
{
    if (!q->n)
        return;
    ssize_t got = q->write
        ? process_vm_writev(t->pid, q->l, (unsigned long)q->n, q->r, (unsigned long)q->n, 0)
        : process_vm_readv(t->pid, q->l, (unsigned long)q->n, q->r, (unsigned long)q->n, 0);
    if (got != (ssize_t)q->bytes) {
        wu_log_error("RMA: single copy of %d operations (%zu bytes) %s process %d failed: %s", q->n,
                     q->bytes, q->write ? "to" : "from", (int)t->pid,
                     got < 0 ? strerror(errno) : "short transfer");
        q->err = WU_ERR_IO;
    }
    q->n = 0;
    q->bytes = 0;
}

static wc_rma_defer_t *wc_rma_defer_get(wc_rma_target_t *t)
{
    wc_rma_defer_t *q = atomic_load_explicit(&t->defer, memory_order_acquire);
    if (WU_LIKELY(q))
        return q;
    wc_rma_defer_t *mine = calloc(1, sizeof(*mine));
    if (!mine)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(&t->defer, &q, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine);   /* another thread's is installed: q */
    return q;
}

static wu_status_t wc_rma_defer_take_err(wc_rma_defer_t *q)
{
    wu_status_t st = q->err;
    q->err = WU_OK;
    return st;
}

static wu_status_t wc_rma_deferred(wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                                   uint64_t count, char *packed, bool write)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    if (t->addr)
        return write ? wc_rma_write(t, off, dt, count, packed) : wc_rma_read(t, off, dt, count, packed);
    wc_rma_defer_t *q = wc_rma_defer_get(t);
    if (!q)
        return WU_ERR_NO_MEMORY;
    wc_rma_defer_lock(q);
    if (q->n && (q->write != write || q->n == WC_RMA_DEFER_OPS ||
                 q->bytes + bytes > WC_RMA_DEFER_MAX || !dt->contig))
        wc_rma_defer_move(t, q);
    wu_status_t st = WU_OK;
    if (dt->contig && bytes <= WC_RMA_DEFER_MAX) {
        q->write = write;
        q->l[q->n] = (struct iovec){packed, (size_t)bytes};
        q->r[q->n] = (struct iovec){(void *)(uintptr_t)(t->raddr + off + (uint64_t)dt->contig_off),
                                    (size_t)bytes};
        q->n++;
        q->bytes += (size_t)bytes;
    } else {
        st = wc_rma_cma(t, off, dt, count, packed, write);   /* after what was held */
    }
    if (st == WU_OK)
        st = wc_rma_defer_take_err(q);
    wc_rma_defer_unlock(q);
    return st;
}

wu_status_t wc_rma_write_deferred(wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                                  uint64_t count, const void *packed)
{
    return wc_rma_deferred(t, off, dt, count, (char *)packed, true);
}

wu_status_t wc_rma_read_deferred(wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                                 uint64_t count, void *packed)
{
    return wc_rma_deferred(t, off, dt, count, packed, false);
}

wu_status_t wc_rma_drain_held(wc_rma_target_t *t)
{
    wc_rma_defer_t *q = atomic_load_explicit(&t->defer, memory_order_acquire);
    if (!q)
        return WU_OK;
    wc_rma_defer_lock(q);
    wc_rma_defer_move(t, q);
    wu_status_t st = wc_rma_defer_take_err(q);
    wc_rma_defer_unlock(q);
    return st;
}

wu_status_t wc_rma_drain_all(wc_rma_target_t *targets, int n)
{
    wu_status_t first = WU_OK;
    for (int r = 0; r < n; r++) {
        wu_status_t st = wc_rma_drain(&targets[r]);
        if (first == WU_OK)
            first = st;
    }
    return first;
}

void wc_rma_target_fini(wc_rma_target_t *t)
{
    free(atomic_load_explicit(&t->defer, memory_order_relaxed));
    atomic_store_explicit(&t->defer, NULL, memory_order_relaxed);
}

bool wc_rma_cma_ok(pid_t pid, uint64_t addr)
{
    char b;
    struct iovec l = {&b, 1}, r = {(void *)(uintptr_t)addr, 1};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == 1;
}

#define WC_RMA_HUGE ((uintptr_t)2 << 20)   /* x86-64 and arm64 (4 KiB base pages) PMD size */

void wc_rma_user_mem_advise(void *base, size_t len)
{
    uintptr_t b = (uintptr_t)base;
    if (len < WC_RMA_HUGE || b > UINTPTR_MAX - len)
        return;
    uintptr_t lo = (b + WC_RMA_HUGE - 1) & ~(WC_RMA_HUGE - 1), hi = (b + len) & ~(WC_RMA_HUGE - 1);
    if (lo >= hi)
        return;
    if (madvise((void *)lo, hi - lo, MADV_HUGEPAGE) != 0)
        wu_debug("RMA: madvise(MADV_HUGEPAGE) on window memory [%p, %p) refused: %s",
                 (void *)lo, (void *)hi, strerror(errno));
}

/* ---- atomic accumulates (wc_rma_atomic_inl.h) ---- */

void wc_rma_atomic_apply(const wc_rma_atomic_t *a, wc_rma_peer_t *p, char *tbase, uint64_t off,
                         const wc_dtype_t *dt, uint64_t count, const char *in, char *old)
{
    const uint64_t es = a->esize;
    bool locked = false;
    uint64_t pos = 0;   /* packed bytes done */
    if (dt->contig) {
        char *x = tbase + off + dt->contig_off;
        for (uint64_t n = count * dt->size; pos < n; pos += es)
            wc_rma_atomic_elem(a, p, x + pos, in ? in + pos : NULL, old ? old + pos : NULL,
                               &locked);
    } else {
        for (uint64_t e = 0; e < count; e++) {
            char *elem = tbase + off + (int64_t)e * dt->extent;
            for (uint64_t s = 0; s < dt->nsegs; s++) {
                const wc_dtype_seg_t *sg = &dt->segs[s];
                for (uint64_t k = 0; k < sg->count; k++) {
                    char *blk = elem + sg->disp + (int64_t)k * sg->stride;
                    for (uint64_t b = 0; b < sg->blocklen; b += es, pos += es)
                        wc_rma_atomic_elem(a, p, blk + b, in ? in + pos : NULL,
                                           old ? old + pos : NULL, &locked);
                }
            }
        }
    }
    if (locked)
        wc_rma_acc_unlock(p);
}

void wc_rma_atomic_switch(wc_rma_seg_t *seg, int me)
{
    _Atomic uint32_t *mode = &seg->peers[0].amode;
    uint32_t m = WC_RMA_AMODE_ATOMIC;
    unsigned spins = 0;
    if (atomic_compare_exchange_strong_explicit(mode, &m, WC_RMA_AMODE_SWITCHING,
                                                memory_order_seq_cst, memory_order_acquire)) {
        for (int q = 0; q < seg->n; q++)
            while (atomic_load_explicit(&seg->peers[q].ainflight, memory_order_seq_cst) != 0)
                wc_rma_backoff(&spins);
        atomic_store_explicit(mode, WC_RMA_AMODE_MUTEX, memory_order_release);
        return;
    }
    while (atomic_load_explicit(mode, memory_order_acquire) != WC_RMA_AMODE_MUTEX)
        wc_rma_backoff(&spins);
    (void)atomic_load_explicit(&seg->peers[me].ainflight, memory_order_acquire);   /* as in enter */
}
