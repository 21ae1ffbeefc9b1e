/* Single-copy reads of a peer's memory (cross-memory attach, process_vm_readv) for rendezvous.
 * The kernel allows them when the reader may ptrace the target (same uid, and Yama's ptrace_scope
 * or a seccomp filter not in the way); wx_shm_init probes that once and all ranks agree. */
#include "transport/shm/wx_shm_priv.h"
#include "util/wu_log.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

size_t wx_shm_get_chunk = (size_t)1 << 30;

/* Read by peers through process_vm_readv during wx_shm_init; never written after that. */
static volatile uint64_t wx_shm_probe_word;

void wx_shm_cma_publish(wx_shm_rank_info_t *mine)
{
    uint64_t v = 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 20) ^ (uintptr_t)&wx_shm_probe_word;
    wx_shm_probe_word = v;
    mine->probe_addr = (uintptr_t)&wx_shm_probe_word;
    mine->probe_val = v;
}

bool wx_shm_cma_probe(const wx_shm_rank_info_t *peer, int peer_rank)
{
    uint64_t got = 0;
    struct iovec local = { &got, sizeof(got) };
    struct iovec remote = { (void *)(uintptr_t)peer->probe_addr, sizeof(got) };
    ssize_t n = process_vm_readv((pid_t)peer->pid, &local, 1, &remote, 1, 0);
    if (n != (ssize_t)sizeof(got) || got != peer->probe_val) {
        wu_debug("shm: process_vm_readv from rank %d (pid %d): %s", peer_rank, (int)peer->pid,
                 n < 0 ? strerror(errno) : "wrong data");
        return false;
    }
    return true;
}

wu_status_t wx_shm_get(int src, void *buf, uint64_t remote_addr, size_t len)
{
    if (WU_UNLIKELY(!wx_shm.cma || (unsigned)src >= (unsigned)wx_shm.size)) {
        wu_log_error("wx_shm_get from rank %d of %d: %s", src, wx_shm.size,
                     wx_shm.cma ? "no such rank" : "CMA is off");
        return wx_shm.cma ? WU_ERR_INVALID : WU_ERR_UNSUPPORTED;
    }
    pid_t pid = (pid_t)wx_shm.info[src].pid;
    char *dst = buf;
    /* One iovec per call, at most wx_shm_get_chunk bytes: the kernel moves at most MAX_RW_COUNT
     * (just under 2 GiB) per call and may stop early, so loop until everything arrived. */
    while (len > 0) {
        size_t chunk = len < wx_shm_get_chunk ? len : wx_shm_get_chunk;
        struct iovec local = { dst, chunk };
        struct iovec remote = { (void *)(uintptr_t)remote_addr, chunk };
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            wu_log_error("process_vm_readv of %zu bytes at 0x%llx from rank %d (pid %d): %s", chunk,
                         (unsigned long long)remote_addr, src, (int)pid,
                         n < 0 ? strerror(errno) : "no progress");
            return WU_ERR_IO;
        }
        dst += n;
        remote_addr += (uint64_t)n;
        len -= (size_t)n;
    }
    return WU_OK;
}

#define WX_SHM_IOV_BATCH 1024   /* IOV_MAX on Linux */

wu_status_t wx_shm_getv(int src, struct iovec *iov, int niov, uint64_t remote_addr, size_t len)
{
    if (WU_UNLIKELY(!wx_shm.cma || (unsigned)src >= (unsigned)wx_shm.size)) {
        wu_log_error("wx_shm_getv from rank %d of %d: %s", src, wx_shm.size,
                     wx_shm.cma ? "no such rank" : "CMA is off");
        return wx_shm.cma ? WU_ERR_INVALID : WU_ERR_UNSUPPORTED;
    }
    pid_t pid = (pid_t)wx_shm.info[src].pid;
    int i = 0;
    while (len > 0 && i < niov) {
        /* A batch: at most WX_SHM_IOV_BATCH local pieces and wx_shm_get_chunk bytes. */
        int k = 0;
        size_t chunk = 0;
        while (i + k < niov && k < WX_SHM_IOV_BATCH && chunk + iov[i + k].iov_len <= wx_shm_get_chunk)
            chunk += iov[i + k++].iov_len;
        if (k == 0) {   /* one piece larger than a chunk: read its first chunk */
            struct iovec part = { iov[i].iov_base, wx_shm_get_chunk };
            struct iovec remote = { (void *)(uintptr_t)remote_addr, wx_shm_get_chunk };
            ssize_t n = process_vm_readv(pid, &part, 1, &remote, 1, 0);
            if (n <= 0) {
                if (n < 0 && errno == EINTR)
                    continue;
                goto fail;
            }
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= (size_t)n;
            remote_addr += (uint64_t)n;
            len -= (size_t)n;
            continue;
        }
        struct iovec remote = { (void *)(uintptr_t)remote_addr, chunk };
        ssize_t n = process_vm_readv(pid, &iov[i], (unsigned long)k, &remote, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            goto fail;
        }
        remote_addr += (uint64_t)n;
        len -= (size_t)n;
        /* Step over what arrived; the kernel may stop early, in the middle of a piece. */
        size_t got = (size_t)n;
        while (got > 0 && got >= iov[i].iov_len)
            got -= iov[i++].iov_len;
        if (got) {
            iov[i].iov_base = (char *)iov[i].iov_base + got;
            iov[i].iov_len -= got;
        }
    }
    return WU_OK;
fail:
    wu_log_error("process_vm_readv of %d pieces at 0x%llx from rank %d (pid %d): %s", niov - i,
                 (unsigned long long)remote_addr, src, (int)pid, strerror(errno));
    return WU_ERR_IO;
}

wu_status_t wx_shm_put(int dst, const void *buf, uint64_t remote_addr, size_t len)
{
    if (WU_UNLIKELY(!wx_shm.cma || (unsigned)dst >= (unsigned)wx_shm.size)) {
        wu_log_error("wx_shm_put to rank %d of %d: %s", dst, wx_shm.size,
                     wx_shm.cma ? "no such rank" : "CMA is off");
        return wx_shm.cma ? WU_ERR_INVALID : WU_ERR_UNSUPPORTED;
    }
    pid_t pid = (pid_t)wx_shm.info[dst].pid;
    const char *src = buf;
    while (len > 0) {
        size_t chunk = len < wx_shm_get_chunk ? len : wx_shm_get_chunk;
        struct iovec local = { (void *)src, chunk };
        struct iovec remote = { (void *)(uintptr_t)remote_addr, chunk };
        ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            wu_log_error("process_vm_writev of %zu bytes at 0x%llx to rank %d (pid %d): %s", chunk,
                         (unsigned long long)remote_addr, dst, (int)pid,
                         n < 0 ? strerror(errno) : "no progress");
            return WU_ERR_IO;
        }
        src += n;
        remote_addr += (uint64_t)n;
        len -= (size_t)n;
    }
    return WU_OK;
}

/* ---- cooperative rendezvous slots (wx_shm.h; the slot's contract in wx_shm_priv.h) ---------- */

#define WX_SHM_COOP_IDX(tok) ((uint32_t)((tok) & 0xffffffffu))
#define WX_SHM_COOP_GEN(tok) ((uint32_t)((tok) >> 32))

wu_status_t wx_shm_coop_open(uint64_t *tok_p)
{
    uint32_t f = atomic_load_explicit(&wx_shm.coop_free, memory_order_acquire);
    uint32_t i;
    do {
        if (!f)
            return WU_ERR_AGAIN;
        i = (uint32_t)__builtin_ctz(f);
    } while (!atomic_compare_exchange_weak_explicit(&wx_shm.coop_free, &f, f & ~(1u << i),
                                                    memory_order_acq_rel, memory_order_acquire));
    uint32_t gen = ++wx_shm.coop_gen[i];
    if (gen == 0)   /* 0 is a fresh slot's: never a message's */
        gen = wx_shm.coop_gen[i] = 1;
    wx_shm_coop_slot_t *s = &wx_shm_coop_slots(wx_shm.rank)[i];
    atomic_store_explicit(&s->done, 0, memory_order_relaxed);
    atomic_store_explicit(&s->fsent, 0, memory_order_relaxed);
    atomic_store_explicit(&s->consumed, (uint64_t)gen << 32, memory_order_relaxed);
    atomic_store_explicit(&s->claim, (uint64_t)gen << 32, memory_order_release);
    *tok_p = (uint64_t)gen << 32 | i;
    return WU_OK;
}

void wx_shm_coop_close(uint64_t tok)
{
    atomic_fetch_or_explicit(&wx_shm.coop_free, 1u << WX_SHM_COOP_IDX(tok), memory_order_acq_rel);
}

bool wx_shm_coop_valid(int owner, uint64_t tok)
{
    return (unsigned)owner < (unsigned)wx_shm.size && owner != wx_shm.rank &&
           WX_SHM_COOP_IDX(tok) < WX_SHM_COOP_SLOTS && WX_SHM_COOP_GEN(tok) != 0;
}

uint32_t wx_shm_coop_claim(int owner, uint64_t tok, uint32_t n, uint32_t max, uint32_t *idx_p)
{
    wx_shm_coop_slot_t *s = &wx_shm_coop_slots(owner)[WX_SHM_COOP_IDX(tok)];
    uint64_t gen = WX_SHM_COOP_GEN(tok);
    uint64_t w = atomic_load_explicit(&s->claim, memory_order_acquire);
    uint32_t k;
    do {
        if ((w >> 32) != gen || (uint32_t)w >= n)
            return 0;
        k = n - (uint32_t)w < max ? n - (uint32_t)w : max;
    } while (!atomic_compare_exchange_weak_explicit(&s->claim, &w, w + k, memory_order_acq_rel,
                                                    memory_order_acquire));
    *idx_p = (uint32_t)w;
    return k;
}

bool wx_shm_coop_finish(int owner, uint64_t tok, uint32_t n, uint32_t k, bool failed,
                        bool *failed_p)
{
    wx_shm_coop_slot_t *s = &wx_shm_coop_slots(owner)[WX_SHM_COOP_IDX(tok)];
    uint64_t add = failed ? ((uint64_t)1 << 32) + k : k;
    uint64_t now = atomic_fetch_add_explicit(&s->done, add, memory_order_seq_cst) + add;
    if ((uint32_t)now != n)
        return false;
    *failed_p = (now >> 32) != 0;
    return true;
}

uint32_t wx_shm_coop_count(int owner, uint64_t tok, int which, uint32_t k)
{
    wx_shm_coop_slot_t *s = &wx_shm_coop_slots(owner)[WX_SHM_COOP_IDX(tok)];
    if (which == WX_SHM_COOP_FSENT) {
        if (!k)
            return atomic_load_explicit(&s->fsent, memory_order_seq_cst);
        return atomic_fetch_add_explicit(&s->fsent, k, memory_order_seq_cst) + k;
    }
    uint64_t gen = WX_SHM_COOP_GEN(tok);
    uint64_t w = atomic_load_explicit(&s->consumed, memory_order_seq_cst);
    do {
        if ((w >> 32) != gen)
            return 0;   /* the message ended and the slot moved on: nobody counts any more */
        if (!k)
            return (uint32_t)w;
    } while (!atomic_compare_exchange_weak_explicit(&s->consumed, &w, w + k, memory_order_seq_cst,
                                                    memory_order_seq_cst));
    return (uint32_t)w + k;
}

uint32_t wx_shm_coop_next(int owner, uint64_t tok)
{
    wx_shm_coop_slot_t *s = &wx_shm_coop_slots(owner)[WX_SHM_COOP_IDX(tok)];
    return (uint32_t)atomic_load_explicit(&s->claim, memory_order_relaxed);
}
