/* liblockcall.so: lock calls that cross a shared-library boundary, as Open MPI's threads framework
 * measured when its hot path was not inline. The executable calls these through the PLT.
 *   lock_call/unlock_call         a non-inline wrapper around pthread_mutex_lock/unlock
 *   wt_lock_call/wt_unlock_call   the gated wt_mutex_lock/unlock, compiled out of line here, with
 *                                 this library's own copy of the gate (lockcall_set_multi) */
#include "thread/wt_thread.h"

#include <pthread.h>

#define LOCKCALL_EXPORT __attribute__((visibility("default"), noinline))

LOCKCALL_EXPORT void lock_call(pthread_mutex_t *m)
{
    pthread_mutex_lock(m);
}

LOCKCALL_EXPORT void unlock_call(pthread_mutex_t *m)
{
    pthread_mutex_unlock(m);
}

LOCKCALL_EXPORT void wt_lock_call(wt_mutex_t *m) WT_ACQUIRE(*m)
{
    wt_mutex_lock(m);
}

LOCKCALL_EXPORT void wt_unlock_call(wt_mutex_t *m) WT_RELEASE(*m)
{
    wt_mutex_unlock(m);
}

LOCKCALL_EXPORT void lockcall_set_multi(bool on)
{
    wt_thread_set_multi(on);
}
