/* Synchronization of windows: fence, passive target (lock, lock_all, flush, sync) and general
 * active target (post, start, complete, wait, test). Operations on targets of this node complete
 * when they return (wm_win_ops.c), so closing an epoch needs no waiting for their data: a fence is
 * a memory barrier and a barrier of the window's processes; a lock is the target's reader-writer
 * word in the node's segment; PSCW counts posts and completions in the segment. The target takes
 * no part in any of it, so a target busy computing never delays an origin. A target of another
 * node takes part only through its progress (idle and timer threads too): lock and unlock are
 * messages it answers, a flush (also inside fence, unlock and unlock_all) is a round trip that
 * comes back after the operations sent before it, post and complete are messages that move the
 * same counters in the peer's node segment (core/wc_rma_msg.h). */
#include "mpi/wm_win.h"

#include <stdlib.h>
#include "core/wc_wait.h"
#include "mpi/wm_group.h"
#include "mpi/wm_internal.h"

#define WM_MODE_FENCE (MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

static bool wm_win_passive_open(wm_win_t *w)
{
    return atomic_load(&w->nlocks) || atomic_load(&w->lock_all);
}

/* A target of another node reported that an operation sent and forgotten (Put, Accumulate) fell
 * outside its memory: raised by the flush, unlock or fence that learns it. */
/* A copy held for a target of this node (wc_rma_*_deferred) failed when the epoch's end moved it. */
static int wm_win_drain_error(const char *fn, wm_win_t *w)
{
    return wm_win_error(w, MPI_ERR_OTHER, fn, "moving the data of an earlier MPI_Put or MPI_Get to "
                        "or from a target of this node failed (see the log)");
}

static int wm_win_remote_error(const char *fn, wm_win_t *w, wu_status_t st)
{
    if (st == WU_ERR_INVALID)
        return wm_win_error(w, MPI_ERR_RMA_RANGE, fn, "a target on another node found the data of "
                            "an earlier operation outside its window memory or attached regions");
    return wm_win_error(w, MPI_ERR_OTHER, fn, "an earlier operation failed at a target on "
                        "another node (see its log)");
}

/* A lock word of this node, polling progress meanwhile when the window spans nodes: the holder
 * may be an origin of another node whose unlock this process's progress must apply. */
static void wm_win_lock_local(wm_win_t *w, int t, bool excl)
{
    if (!w->cw) {
        wc_rma_lock(&w->seg.peers[t], excl);
        return;
    }
    wc_idle_t idle;
    wc_idle_init(&idle);
    while (!wc_rma_trylock(&w->seg.peers[t], excl))
        if (!wc_progress())
            wc_idle_block(&idle, NULL, 0);
}

/* Win_lock of a target on another node: its lock word is taken by its progress, one attempt per
 * round trip, polling meanwhile (a busy word is retried, never waited on at the target). */
static void wm_win_lock_remote(wm_win_t *w, int t, bool excl)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    while (!wc_rma_msg_lock(w->cw, t, excl))
        for (int i = 0; i < 16; i++)
            if (!wc_progress())
                wc_idle_block(&idle, NULL, 0);
}

int wm_impl_MPI_Win_fence(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_fence";
    WM_WIN_ARG(fn, win, w);
    if (assert & ~WM_MODE_FENCE)
        return wm_win_error(w, MPI_ERR_ASSERT, fn, "assert %#x has bits fence does not know",
                            assert);
    if (wm_win_passive_open(w) || atomic_load(&w->started) || atomic_load(&w->posted))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn,
                            "a lock, lock_all, start or post epoch is open on the window");
    /* targets of other nodes have applied this process's operations before the barrier */
    wu_status_t held = wm_win_drain_all(w);   /* copies held for targets of this node */
    wu_status_t st = w->cw ? wc_rma_msg_flush_all(w->cw, w->remote) : WU_OK;
    atomic_thread_fence(memory_order_seq_cst);
    /* NOPRECEDE: no operation of this process precedes, but others' may: the barrier stays (it
     * is what makes their stores visible before our loads). A window of one node meets in its
     * segment (core/wc_rma.h), faster than the communicator's barrier. */
    if (!w->cw) {
        wc_rma_fence_barrier(&w->seg, w->size);
    } else {
        int rc = PMPI_Barrier(w->comm);
        if (rc != MPI_SUCCESS)
            return wm_win_error(w, MPI_ERR_OTHER, fn, "the fence's barrier failed");
    }
    atomic_store_explicit(&w->fence, !(assert & MPI_MODE_NOSUCCEED), memory_order_release);
    if (held != WU_OK)
        return wm_win_drain_error(fn, w);
    return st == WU_OK ? MPI_SUCCESS : wm_win_remote_error(fn, w, st);
}

static int wm_win_check_rank(const char *fn, wm_win_t *w, int rank)
{
    if (rank < 0 || rank >= w->size)
        return wm_win_error(w, MPI_ERR_RANK, fn, "rank %d is not in the window's group of %d", rank,
                            w->size);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    WM_WIN_ARG(fn, win, w);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return wm_win_error(w, MPI_ERR_LOCKTYPE, fn, "lock_type %d is neither MPI_LOCK_EXCLUSIVE "
                            "nor MPI_LOCK_SHARED", lock_type);
    if (assert & ~MPI_MODE_NOCHECK)
        return wm_win_error(w, MPI_ERR_ASSERT, fn, "assert %#x: only MPI_MODE_NOCHECK applies",
                            assert);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = wm_win_check_rank(fn, w, rank);
    if (rc != MPI_SUCCESS)
        return rc;
    if (w->no_locks)
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "the window was created with no_locks=true");
    if (atomic_load(&w->lock_all) || atomic_load(&w->started))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "a lock_all or start epoch is open");
    uint8_t none = WM_WIN_UNLOCKED;
    if (!atomic_compare_exchange_strong(&w->locks[rank], &none, WM_WIN_LOCKING))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "target %d is already locked by this process",
                            rank);
    bool excl = lock_type == MPI_LOCK_EXCLUSIVE;
    if (!(assert & MPI_MODE_NOCHECK)) {
        if (w->remote[rank])
            wm_win_lock_remote(w, rank, excl);
        else
            wm_win_lock_local(w, rank, excl);
    }
    atomic_fetch_add(&w->nlocks, 1);
    /* NOCHECK is remembered as a plain lock: unlock must then not release the word */
    atomic_store_explicit(&w->locks[rank],
                          (uint8_t)((assert & MPI_MODE_NOCHECK) ? WM_WIN_NOCHECK
                                                                : excl ? WM_WIN_EXCL : WM_WIN_SHARED),
                          memory_order_release);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    WM_WIN_ARG(fn, win, w);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = wm_win_check_rank(fn, w, rank);
    if (rc != MPI_SUCCESS)
        return rc;
    uint8_t s = atomic_load_explicit(&w->locks[rank], memory_order_acquire);
    if (s == WM_WIN_UNLOCKED || s == WM_WIN_LOCKING ||
        !atomic_compare_exchange_strong(&w->locks[rank], &s, WM_WIN_LOCKING))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "target %d is not locked by this process",
                            rank);
    wu_status_t held = wc_rma_drain(&w->targets[rank]);
    atomic_thread_fence(memory_order_seq_cst);   /* the epoch's stores before the release */
    wu_status_t st = WU_OK;
    if (w->remote[rank]) {
        /* answered after the epoch's operations: they are applied when it returns */
        if (s != WM_WIN_NOCHECK)
            wc_rma_msg_unlock(w->cw, rank, s == WM_WIN_EXCL);
        st = wc_rma_msg_flush(w->cw, rank);
    } else if (s != WM_WIN_NOCHECK) {
        wc_rma_unlock(&w->seg.peers[rank], s == WM_WIN_EXCL);
    }
    atomic_fetch_sub(&w->nlocks, 1);
    atomic_store_explicit(&w->locks[rank], WM_WIN_UNLOCKED, memory_order_release);
    if (held != WU_OK)
        return wm_win_drain_error(fn, w);
    return st == WU_OK ? MPI_SUCCESS : wm_win_remote_error(fn, w, st);
}

int wm_impl_MPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    WM_WIN_ARG(fn, win, w);
    if (assert & ~MPI_MODE_NOCHECK)
        return wm_win_error(w, MPI_ERR_ASSERT, fn, "assert %#x: only MPI_MODE_NOCHECK applies",
                            assert);
    if (w->no_locks)
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "the window was created with no_locks=true");
    if (atomic_load(&w->nlocks) || atomic_load(&w->started))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "a lock or start epoch is open");
    int none = 0;
    if (!atomic_compare_exchange_strong(&w->lock_all, &none, -1))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "MPI_Win_lock_all is already in effect");
    int mode = (assert & MPI_MODE_NOCHECK) ? 2 : 1;
    if (mode == 1)
        for (int r = 0; r < w->size; r++) {
            if (w->remote[r])
                wm_win_lock_remote(w, r, false);
            else
                wm_win_lock_local(w, r, false);
        }
    atomic_store_explicit(&w->lock_all, mode, memory_order_release);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_unlock_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock_all";
    WM_WIN_ARG(fn, win, w);
    int mode = atomic_load(&w->lock_all);
    if (mode <= 0 || !atomic_compare_exchange_strong(&w->lock_all, &mode, -1))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "MPI_Win_lock_all is not in effect");
    wu_status_t held = wm_win_drain_all(w);
    atomic_thread_fence(memory_order_seq_cst);
    if (mode == 1)
        for (int r = 0; r < w->size; r++) {
            if (w->remote[r])
                wc_rma_msg_unlock(w->cw, r, false);
            else
                wc_rma_unlock(&w->seg.peers[r], false);
        }
    wu_status_t st = w->cw ? wc_rma_msg_flush_all(w->cw, w->remote) : WU_OK;
    atomic_store_explicit(&w->lock_all, 0, memory_order_release);
    if (held != WU_OK)
        return wm_win_drain_error(fn, w);
    return st == WU_OK ? MPI_SUCCESS : wm_win_remote_error(fn, w, st);
}

/* Flushes: operations on targets of this node are complete at the origin and at the target when
 * they return, so a flush only orders this process's memory accesses (and checks the epoch);
 * targets of other nodes answer a FLUSH after applying what came before it, once this process's
 * fabric writes to them are delivered. A local flush waits for those writes only (they read the
 * origin's buffer); messages copied their origin data when they returned. */
static int wm_win_flush(const char *fn, MPI_Win win, int rank, bool local)
{
    WM_WIN_ARG(fn, win, w);
    if (rank != -1 && rank != MPI_PROC_NULL) {
        int rc = wm_win_check_rank(fn, w, rank);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    bool ok = atomic_load(&w->lock_all) > 0 ||
              (rank == -1 ? atomic_load(&w->nlocks) > 0
                          : rank == MPI_PROC_NULL ||
                                (atomic_load(&w->locks[rank]) != WM_WIN_UNLOCKED &&
                                 atomic_load(&w->locks[rank]) != WM_WIN_LOCKING));
    if (!ok)
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch is open%s",
                            rank == -1 ? "" : " to that target");
    wu_status_t held = rank == -1 ? wm_win_drain_all(w)
                     : rank != MPI_PROC_NULL ? wc_rma_drain(&w->targets[rank]) : WU_OK;
    wu_status_t st = WU_OK;
    if (w->cw && !local)
        st = rank == -1 ? wc_rma_msg_flush_all(w->cw, w->remote)
           : rank != MPI_PROC_NULL && w->remote[rank] ? wc_rma_msg_flush(w->cw, rank) : WU_OK;
    else if (w->cw && rank != MPI_PROC_NULL && (rank == -1 || w->remote[rank]))
        st = wc_rma_msg_flush_local(w->cw, rank);   /* fabric Puts use the origin's buffer */
    atomic_thread_fence(memory_order_seq_cst);
    if (held != WU_OK)
        return wm_win_drain_error(fn, w);
    return st == WU_OK ? MPI_SUCCESS : wm_win_remote_error(fn, w, st);
}

int wm_impl_MPI_Win_flush(int rank, MPI_Win win)
{
    /* the common case first: a lock_all epoch on a window of one node, a valid rank */
    wm_win_t *w = WU_LIKELY(wm_state.up) ? wm_win_get(win) : NULL;
    if (WU_LIKELY(w && !w->cw && rank >= 0 && rank < w->size &&
                  atomic_load_explicit(&w->lock_all, memory_order_acquire) > 0)) {
        if (!wm_rma_ordered) {
            atomic_thread_fence(memory_order_seq_cst);
#if defined(__x86_64__)
            wm_rma_ordered = true;   /* until this thread's next RMA store */
#endif
        }
        if (WU_LIKELY(wc_rma_drain(&w->targets[rank]) == WU_OK))
            return MPI_SUCCESS;
        return wm_win_drain_error("MPI_Win_flush", w);
    }
    return wm_win_flush("MPI_Win_flush", win, rank, false);
}

int wm_impl_MPI_Win_flush_local(int rank, MPI_Win win)
{
    return wm_win_flush("MPI_Win_flush_local", win, rank, true);
}

int wm_impl_MPI_Win_flush_all(MPI_Win win)
{
    return wm_win_flush("MPI_Win_flush_all", win, -1, false);
}

int wm_impl_MPI_Win_flush_local_all(MPI_Win win)
{
    return wm_win_flush("MPI_Win_flush_local_all", win, -1, true);
}

/* The unified model: public and private copies are one memory; sync is a full memory barrier. */
int wm_impl_MPI_Win_sync(MPI_Win win)
{
    static const char fn[] = "MPI_Win_sync";
    WM_WIN_ARG(fn, win, w);
    (void)w;
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}

/* ---- PSCW: post[o * n + t] counts the posts of t naming o; peers[t].complete the completions t
 * received. Both only grow, and each side keeps how many it has consumed. ---- */

/* The window ranks of group g, into out[] (n of them); an error if one is not in the window. */
static int wm_win_group_ranks(const char *fn, wm_win_t *w, MPI_Group group, int *out, int *n_p)
{
    wm_group_t *g = wm_group_get(group);
    if (!g)
        return wm_win_error(w, MPI_ERR_GROUP, fn, "invalid group %p", (void *)group);
    if (g->size > w->size)
        return wm_win_error(w, MPI_ERR_GROUP, fn, "the group is larger than the window's");
    for (int i = 0; i < g->size; i++) {
        int r = wm_ranks_find(w->world, w->size, g->ranks[i]);
        if (r == MPI_UNDEFINED)
            return wm_win_error(w, MPI_ERR_GROUP, fn,
                                "process %d of the group is not in the window", i);
        out[i] = r;
    }
    *n_p = g->size;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    WM_WIN_ARG(fn, win, w);
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return wm_win_error(w, MPI_ERR_ASSERT, fn, "assert %#x has bits post does not know",
                            assert);
    int n, rc;
    int *ranks = malloc(sizeof(int) * (size_t)w->size);
    if (!ranks)
        return wm_win_error(w, MPI_ERR_NO_MEM, fn, "no memory");
    if ((rc = wm_win_group_ranks(fn, w, group, ranks, &n)) != MPI_SUCCESS) {
        free(ranks);
        return rc;
    }
    int none = 0;
    if (!atomic_compare_exchange_strong(&w->posted, &none, 1)) {
        free(ranks);
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
    }
    w->complete_expected += (uint32_t)n;
    atomic_thread_fence(memory_order_seq_cst);   /* our stores before the origins' accesses */
    for (int i = 0; i < n; i++) {
        if (w->remote[ranks[i]])
            wc_rma_msg_post(w->cw, ranks[i]);   /* its progress counts it in its node's matrix */
        else
            atomic_fetch_add_explicit(
                &w->seg.post[(size_t)ranks[i] * (size_t)w->size + (size_t)w->rank], 1,
                memory_order_release);
    }
    free(ranks);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    WM_WIN_ARG(fn, win, w);
    if (assert & ~MPI_MODE_NOCHECK)
        return wm_win_error(w, MPI_ERR_ASSERT, fn, "assert %#x: only MPI_MODE_NOCHECK applies",
                            assert);
    if (atomic_load(&w->started) || wm_win_passive_open(w))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
    int n, rc;
    if ((rc = wm_win_group_ranks(fn, w, group, w->start_list, &n)) != MPI_SUCCESS)
        return rc;
    w->start_n = n;
    for (int i = 0; i < n; i++) {
        int t = w->start_list[i];
        w->start_in[t] = 1;
        /* NOCHECK still consumes the post: the target posts all the same */
        w->post_seen[t]++;
        _Atomic uint32_t *c = &w->seg.post[(size_t)w->rank * (size_t)w->size + (size_t)t];
        if (w->cw)
            wc_rma_wait_ge_poll(c, w->post_seen[t]);   /* a remote post is a packet */
        else
            wc_rma_wait_ge(c, w->post_seen[t]);
    }
    atomic_store_explicit(&w->started, 1, memory_order_release);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_complete(MPI_Win win)
{
    static const char fn[] = "MPI_Win_complete";
    WM_WIN_ARG(fn, win, w);
    int one = 1;
    if (!atomic_compare_exchange_strong(&w->started, &one, 0))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "no MPI_Win_start epoch is open");
    wu_status_t held = wm_win_drain_all(w);
    atomic_thread_fence(memory_order_seq_cst);   /* the epoch's stores before the completion */
    for (int i = 0; i < w->start_n; i++) {
        int t = w->start_list[i];
        w->start_in[t] = 0;
        if (w->remote[t])
            wc_rma_msg_complete(w->cw, t);
        else
            atomic_fetch_add_explicit(&w->seg.peers[t].complete, 1, memory_order_release);
    }
    w->start_n = 0;
    return held == WU_OK ? MPI_SUCCESS : wm_win_drain_error(fn, w);
}

static int wm_win_wait_test(const char *fn, MPI_Win win, int *flag)
{
    WM_WIN_ARG(fn, win, w);
    if (!atomic_load(&w->posted))
        return wm_win_error(w, MPI_ERR_RMA_SYNC, fn, "no MPI_Win_post epoch is open");
    _Atomic uint32_t *c = &w->seg.peers[w->rank].complete;
    if (flag) {
        if (w->cw)
            wc_progress();   /* completions from other nodes come as packets */
        *flag = (int32_t)(atomic_load_explicit(c, memory_order_acquire) - w->complete_expected) >= 0;
        if (!*flag)
            return MPI_SUCCESS;
    } else if (w->cw) {
        wc_rma_wait_ge_poll(c, w->complete_expected);
    } else {
        wc_rma_wait_ge(c, w->complete_expected);
    }
    atomic_store_explicit(&w->posted, 0, memory_order_release);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_wait(MPI_Win win)
{
    return wm_win_wait_test("MPI_Win_wait", win, NULL);
}

int wm_impl_MPI_Win_test(MPI_Win win, int *flag)
{
    if (!flag)
        return wm_win_error(NULL, MPI_ERR_ARG, "MPI_Win_test", "flag is NULL");
    return wm_win_wait_test("MPI_Win_test", win, flag);
}
