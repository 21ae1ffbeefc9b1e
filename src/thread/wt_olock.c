/* The owner-biased lock's slow paths: choosing the owner, biasing, revoking (wt_olock.h). */
#include "thread/wt_olock.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#if WT_OLOCK_BIAS
#include <linux/membarrier.h>
#include <sys/syscall.h>
#endif
#include "util/wu_config.h"
#include "util/wu_log.h"

#if WT_OLOCK_BIAS
__thread char wt_olock_self;
#endif

/* 0: not tried yet; 1: registered (biasing on); -1: off (WEFT_THREAD_BIAS=0, or no membarrier). */
static int wt_olock_state;
static uint64_t wt_olock_nrevoked;   /* __atomic */

void wt_olock_init(wt_olock_t *l)
{
    memset(l, 0, sizeof(*l));
    wt_spin_init(&l->lock);
}

uint64_t wt_olock_revocations(void)
{
    return __atomic_load_n(&wt_olock_nrevoked, __ATOMIC_RELAXED);
}

bool wt_olock_bias_active(void)
{
    return __atomic_load_n(&wt_olock_state, __ATOMIC_ACQUIRE) == 1;
}

#if WT_OLOCK_BIAS
static long wt_membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Once per process (racing callers all reach the same answer). */
static bool wt_olock_can_bias(void)
{
    int st = __atomic_load_n(&wt_olock_state, __ATOMIC_ACQUIRE);
    if (WU_LIKELY(st != 0))
        return st == 1;
    st = -1;
    if (wu_config_int(WU_CONFIG_THREAD_BIAS)) {
        long q = wt_membarrier(MEMBARRIER_CMD_QUERY);
        if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            wt_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
            st = 1;
        else
            wu_debug("owner-biased locks off: membarrier private expedited unavailable (%s)",
                         q < 0 ? strerror(errno) : "not supported");
    }
    __atomic_store_n(&wt_olock_state, st, __ATOMIC_RELEASE);
    return st == 1;
}

/* `lock` held, WT_OLOCK_STREAK acquisitions in a row by the caller. */
void wt_olock_streak_end(wt_olock_t *l)
{
    uintptr_t self = wt_olock_token();
    uintptr_t owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
    if (owner == 0) {
        if (!wt_olock_can_bias())
            return;
        __atomic_store_n(&l->owner, self, __ATOMIC_RELAXED);
        owner = self;
    }
    if (owner == self) {
        __atomic_store_n(&l->nbiased, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&l->biased, 1, __ATOMIC_RELAXED);
    }
}

/* A full barrier on every running thread of this process. A forked child inherits none of its
 * parent's registration: register and try again. */
static void wt_olock_barrier_all(void)
{
    if (WU_LIKELY(wt_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0))
        return;
    if (errno == EPERM && wt_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
        wt_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
        return;
    wu_log_fatal("membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after a lock was biased: %s",
                 strerror(errno));
}
#endif

bool wt_olock_revoke(wt_olock_t *l, bool wait)
{
#if WT_OLOCK_BIAS
    __atomic_store_n(&l->biased, 0, __ATOMIC_RELAXED);
    wt_olock_barrier_all();
    __atomic_add_fetch(&wt_olock_nrevoked, 1, __ATOMIC_RELAXED);
    unsigned pauses = 0;
    while (__atomic_load_n(&l->owner_in, __ATOMIC_ACQUIRE)) {
        if (!wait) {
            /* The owner is inside: give the bias back before `lock` is released, or the next
             * thread to take `lock` would find no bias and enter beside the owner. The system call
             * was for nothing: bias less readily. */
            __atomic_store_n(&l->biased, 1, __ATOMIC_RELAXED);
            if (l->backoff < WT_OLOCK_BACKOFF_MAX)
                l->backoff++;
            return false;
        }
        if (++pauses < 64) {
            wu_cpu_relax();
        } else {
            pauses = 0;
            sched_yield();   /* the owner may need this core to leave */
        }
    }
    /* The owner is out (its last nbiased is visible through owner_in): did the bias pay? */
    if (__atomic_load_n(&l->nbiased, __ATOMIC_RELAXED) < WT_OLOCK_PAYOFF) {
        if (l->backoff < WT_OLOCK_BACKOFF_MAX)
            l->backoff++;
    } else {
        l->backoff = 0;
    }
    return true;
#else
    (void)l;
    (void)wait;
    return true;
#endif
}
