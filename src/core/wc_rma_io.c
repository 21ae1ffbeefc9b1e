/* Typed data into and out of a target's window memory: the pack engine on a mapped window, one
 * process_vm_readv/writev per batch of blocks on user memory of another process (see wc_rma.h);
 * accumulates element by element with CPU atomics on a mapped window (wc_rma_atomic_inl.h). */
#include "core/wc_rma.h"
#include "core/wc_rma_atomic_inl.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
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

bool wc_rma_cma_ok(pid_t pid, uint64_t addr)
{
    char b;
    struct iovec l = {&b, 1}, r = {(void *)(uintptr_t)addr, 1};
    return process_vm_readv(pid, &l, 1, &r, 1, 0) == 1;
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
