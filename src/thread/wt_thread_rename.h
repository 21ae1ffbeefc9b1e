/* Force-included (-include) into wt_thread_pthreads.c and wt_thread_pth.c by the run-time-selected
 * build (WEFT_THREADS=runtime, src/thread/CMakeLists.txt), with WT_RENAME=pthreads or pth: every
 * out-of-line function of wt_thread.h that a backend defines gets the prefix wtb_<backend>_, so both
 * backends link into one library; wt_thread_runtime.c defines the public names and dispatches. */
#ifndef WT_THREAD_RENAME_H
#define WT_THREAD_RENAME_H

#define WT_RN_(b, n) wtb_##b##_##n
#define WT_RN(b, n) WT_RN_(b, n)

#define wt_mutex_init       WT_RN(WT_RENAME, mutex_init)
#define wt_mutex_destroy    WT_RN(WT_RENAME, mutex_destroy)
#define wt_spin_init        WT_RN(WT_RENAME, spin_init)
#define wt_spin_lock_slow   WT_RN(WT_RENAME, spin_lock_slow)
#define wt_cond_init        WT_RN(WT_RENAME, cond_init)
#define wt_cond_destroy     WT_RN(WT_RENAME, cond_destroy)
#define wt_cond_wait        WT_RN(WT_RENAME, cond_wait)
#define wt_cond_signal      WT_RN(WT_RENAME, cond_signal)
#define wt_cond_broadcast   WT_RN(WT_RENAME, cond_broadcast)
#define wt_thread_create    WT_RN(WT_RENAME, thread_create)
#define wt_thread_join      WT_RN(WT_RENAME, thread_join)
#define wt_thread_self      WT_RN(WT_RENAME, thread_self)
#define wt_thread_equal     WT_RN(WT_RENAME, thread_equal)
#define wt_thread_yield     WT_RN(WT_RENAME, thread_yield)
#define wt_tls_key_create   WT_RN(WT_RENAME, tls_key_create)
#define wt_tls_key_delete   WT_RN(WT_RENAME, tls_key_delete)
#define wt_wait_init        WT_RN(WT_RENAME, wait_init)
#define wt_wait_destroy     WT_RN(WT_RENAME, wait_destroy)
#define wt_wait_block       WT_RN(WT_RENAME, wait_block)
#define wt_wait_wake_slow   WT_RN(WT_RENAME, wait_wake_slow)
#define wt_word_wait        WT_RN(WT_RENAME, word_wait)
#define wt_word_wait_until  WT_RN(WT_RENAME, word_wait_until)
#define wt_word_wake_all    WT_RN(WT_RENAME, word_wake_all)

#endif
