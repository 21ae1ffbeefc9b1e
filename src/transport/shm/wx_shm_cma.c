/* Single-copy reads of a peer's memory (cross-memory attach, process_vm_readv) for rendezvous.
 * The kernel allows them when the reader may ptrace the target (same uid, and Yama's ptrace_scope
 * or a seccomp filter not in the way); wx_shm_init probes that once and all ranks agree. */
#include "transport/shm/wx_shm_priv.h"
#include "util/wu_log.h"

#include <errno.h>
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
