/* One-sided communication on one node: the window's shared control segment, its locks and
 * counters, and moving typed data into and out of a target's window memory (docs/rma.md).
 *
 * A window's processes of one node share one anonymous segment (memfd_create by the node's first;
 * the others open it through /proc/<creator>/fd while the creator holds it, so it has no name and
 * nothing outlives the job). Processes of other nodes are reached by messages (wc_rma_msg.h),
 * whose handlers take the same words of the target's node segment.
 * It holds, per process, a control block (wc_rma_peer_t: passive-target lock word, accumulate
 * mutex, PSCW completion counter, where its memory is), the PSCW post matrix, the regions attached
 * to a dynamic window, and for the
 * Win_allocate flavors the window memory itself. So an origin reaches a target's memory with
 * loads and stores (allocated windows) or one process_vm_readv/writev (Win_create on user memory,
 * the target's address and pid in its block): the target never takes part.
 *
 * Concurrency contract: the segment is written by every process of the window at once, only
 * through the atomics below (control words) or by RMA data movement the MPI layer orders with its
 * synchronization calls. Every function here may be called by any thread of any process of the
 * window at any time; waits spin briefly, then yield the CPU (oversubscribed nodes), never hold a
 * process-wide lock, and need no progress from the target. A wc_rma_seg_t is immutable after
 * wc_rma_seg_attach returns, until wc_rma_seg_detach (which no other thread may race).
 */
#ifndef WC_RMA_H
#define WC_RMA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/wc_dtype.h"
#include "util/wu_status.h"

#define WC_RMA_WRITER 0x80000000u   /* lock word: held exclusively; low bits: shared holders */
#define WC_RMA_USER_MEM UINT64_MAX  /* wc_rma_peer_t.data_off of memory outside the segment */

/* One process's control block; one cache line each, so lock traffic to one target does not slow
 * the others. */
typedef struct wc_rma_peer {
    _Atomic uint32_t lock;        /* passive target: WC_RMA_WRITER | shared holders */
    _Atomic uint32_t acc;         /* accumulate mutex: 0 free, 1 held (element-wise atomicity) */
    _Atomic uint32_t complete;    /* PSCW: MPI_Win_complete calls received, ever */
    int32_t  pid;                 /* the owner's pid (single copy to user memory) */
    uint64_t base;                /* address of its window memory in its own address space */
    uint64_t size;                /* bytes */
    uint64_t data_off;            /* offset in the segment, or WC_RMA_USER_MEM */
    int64_t  disp_unit;
    _Atomic uint32_t ainflight;   /* atomic accumulates this process has under way (wc_rma_atomic_inl.h) */
    _Atomic uint32_t amode;       /* process 0's block only: the window's WC_RMA_AMODE_* */
    _Atomic uint32_t fence_in;    /* process 0's block only: arrivals at the current fence */
    _Atomic uint32_t fence_gen;   /* process 0's block only: fences completed, ever */
} __attribute__((aligned(64))) wc_rma_peer_t;

/* An attached region of a dynamic window (MPI_Win_attach). Written only by its owner: attach
 * claims a free slot by compare-and-swap of base from 0, then publishes size (release); detach
 * clears size, then base. Origins read size (acquire), then base. */
#define WC_RMA_REGIONS 32   /* per process */
typedef struct wc_rma_region {
    _Atomic uint64_t base;
    _Atomic uint64_t size;
} wc_rma_region_t;

/* A process's view of the segment. */
typedef struct wc_rma_seg {
    void            *map;
    size_t           len;
    int              n;          /* processes of the window */
    wc_rma_peer_t   *peers;      /* [n] */
    _Atomic uint32_t *post;      /* [n * n]: post[o * n + t] = MPI_Win_post calls of t naming o */
    wc_rma_region_t *regions;    /* [n * WC_RMA_REGIONS]: process r's from r * WC_RMA_REGIONS */
    char            *data;       /* the allocated flavors' memory */
} wc_rma_seg_t;

/* Bytes of a segment for n processes with `data` bytes of window memory, and where data starts. */
size_t wc_rma_seg_size(int n, size_t data, size_t *data_off_p);
/* The creator: a new zeroed segment of len bytes, mapped, its descriptor in *fd_p (keep it open
 * until every other process has attached, then close it). */
wu_status_t wc_rma_seg_create(size_t len, int n, wc_rma_seg_t *seg_p, int *fd_p);
/* The others: map the segment the creator (pid) holds as descriptor fd. */
wu_status_t wc_rma_seg_attach(pid_t pid, int fd, size_t len, int n, wc_rma_seg_t *seg_p);
void wc_rma_seg_detach(wc_rma_seg_t *seg);

/* ---- locks and counters (wc_rma_sync.c) ---- */
void wc_rma_lock(wc_rma_peer_t *p, bool exclusive);
/* false: the lock is not free now (a shared lock is refused only while a writer holds it). */
bool wc_rma_trylock(wc_rma_peer_t *p, bool exclusive);
void wc_rma_unlock(wc_rma_peer_t *p, bool exclusive);
void wc_rma_acc_lock(wc_rma_peer_t *p);
void wc_rma_acc_unlock(wc_rma_peer_t *p);
/* MPI_Win_fence's barrier for a window whose n processes all share seg (one node): a
 * sense-reversing counter in process 0's block, no messages. The waiters poll progress (a
 * correct program may need this process's progress to reach the fence: a rendezvous it sends)
 * and spin, then yield (never sleep: the last arrival wakes nobody).
 * Everything each process wrote before it happens before everything any process does after. */
void wc_rma_fence_barrier(wc_rma_seg_t *seg, int n);
/* Waits until *w >= v (acquire). */
void wc_rma_wait_ge(_Atomic uint32_t *w, uint32_t v);
/* Spin-then-yield step of a wait loop: call with a counter starting at 0. */
void wc_rma_backoff(unsigned *spins);

/* ---- data movement (wc_rma_io.c) ---- */
struct wc_rma_defer;

/* Where a target's window memory is, from the origin's side. */
typedef struct wc_rma_target {
    char    *addr;      /* mapped here (allocated flavors, or the origin itself), or NULL */
    pid_t    pid;       /* addr == NULL: the owner, reached by process_vm_readv/writev */
    uint64_t raddr;     /* addr == NULL: the memory's address in the owner */
    /* addr == NULL: the copies wc_rma_*_deferred holds for this target, made on first use
     * (compare-and-swap from NULL); freed by wc_rma_target_fini */
    struct wc_rma_defer *_Atomic defer;
} wc_rma_target_t;

/* Moves count elements of layout dt at byte offset off of the target's memory from / to a packed
 * buffer of count * dt->size bytes. The caller has checked the range. WU_ERR_IO: the single copy
 * failed (errno logged). */
wu_status_t wc_rma_write(const wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                         uint64_t count, const void *packed);
wu_status_t wc_rma_read(const wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                        uint64_t count, void *packed);
/* Whether this process may single-copy from and to pid (probe: a one-byte read of addr). */
bool wc_rma_cma_ok(pid_t pid, uint64_t addr);
/* Asks the kernel to back the 2 MiB-aligned extents inside [base, base + len) of this process's
 * own memory with transparent huge pages from their next page fault on (madvise MADV_HUGEPAGE;
 * nothing outside the range, nothing if it holds no whole extent). For user memory that other
 * processes reach by process_vm_readv/writev: the kernel pins every page a copy touches, a
 * quarter of the time of a 64 KiB Put on 4 KiB pages, about nothing per byte on 2 MiB pages.
 * Contents and addresses do not change; see docs/rma.md for what else does. Best effort: a
 * refusal (THP not built in, memory the hint does not apply to) is logged in debug mode only.
 * Any thread; it races with nothing the library does. */
void wc_rma_user_mem_advise(void *base, size_t len);

/* Deferred single copies. On memory of another process (Win_create) each process_vm_readv/writev
 * costs about 1.5 us whatever it moves (the kernel looks the process up and checks that the caller
 * may trace it, on every call), a sixth of a 64 KiB copy. The variants below let the caller complete
 * an operation later, at its next synchronization: contiguous copies to or from one target are
 * held (up to WC_RMA_DEFER_OPS of one direction, WC_RMA_DEFER_MAX bytes) and moved by one system
 * call of many iovecs when the batch is full, the direction changes, or wc_rma_drain is called.
 * Copies are applied in the order they were issued. A target mapped here (addr != NULL) and a
 * layout that is not contiguous are moved at once, after what is held.
 *
 * The caller's promise: `packed` (the origin buffer of a write, the result buffer of a read) is
 * neither changed nor read nor freed until a wc_rma_drain of that target has returned (MPI's rule
 * for the origin buffer of MPI_Put and MPI_Get until the operation completes).
 * Concurrency contract: any thread may call any of these on one target at once; a spin-then-yield
 * lock in the target's wc_rma_defer_t orders them (held across the system call). A drain moves
 * everything issued before it by any thread. wc_rma_target_fini races with nothing.
 * Returns: the status of this call's own copy when made at once; WU_ERR_NO_MEMORY if the batch
 * could not be allocated (nothing was moved: the caller may fall back to wc_rma_write/read);
 * WU_ERR_IO of a held copy that failed is returned by the next wc_rma_drain (or the call that
 * made the batch move), once. */
#define WC_RMA_DEFER_OPS 64
#define WC_RMA_DEFER_MAX ((size_t)1 << 30)   /* bytes per system call, see wc_rma_io.c */
wu_status_t wc_rma_write_deferred(wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                                  uint64_t count, const void *packed);
wu_status_t wc_rma_read_deferred(wc_rma_target_t *t, uint64_t off, const wc_dtype_t *dt,
                                 uint64_t count, void *packed);
/* Moves every copy held for t; when it returns they are complete (WU_OK) or one failed
 * (WU_ERR_IO, logged). Inline and one load when t never deferred a copy. */
wu_status_t wc_rma_drain_held(wc_rma_target_t *t);
static inline wu_status_t wc_rma_drain(wc_rma_target_t *t)
{
    return atomic_load_explicit(&t->defer, memory_order_acquire) ? wc_rma_drain_held(t) : WU_OK;
}
/* wc_rma_drain of targets[0..n-1]; the first failure. */
wu_status_t wc_rma_drain_all(wc_rma_target_t *targets, int n);
/* Frees what wc_rma_*_deferred made for t (after a drain: held copies are dropped). */
void wc_rma_target_fini(wc_rma_target_t *t);

#endif
