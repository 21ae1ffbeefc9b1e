/* Picks the backend header of the threading layer. WEFT_THREADS_<BACKEND> comes from the generated
 * wt_thread_config.h (written by src/thread/CMakeLists.txt into ${WEFT_GEN_DIR}/include, which every
 * layer, test and tool has on its include path: the layers are OBJECT libraries that do not link
 * each other, so a compile definition on one target would not reach them). A build outside CMake
 * (bench/locks/run.sh) may define the macro on the command line instead.
 *
 * A backend header defines the types wt_mutex_t, wt_spinlock_t, wt_cond_t, wt_thread_t,
 * wt_tls_key_t, their static initializers, WT_BACKEND_NAME, WT_BACKEND_WAIT, WT_BACKEND_ULT (1 when
 * threads are user-level threads sharing OS threads), WT_BACKEND_WAIT_FIELDS (extra members of
 * wt_wait_t), the WT_LOCAL macros (per-thread objects), and the static inline primitives wt_be_* that wt_thread_inl.h gates and annotates; see
 * wt_thread_pthreads.h and docs/threads.md. */
#ifndef WT_THREAD_BACKEND_H
#define WT_THREAD_BACKEND_H

#if !defined(WEFT_THREADS_PTHREADS) && !defined(WEFT_THREADS_PTH) && !defined(WEFT_THREADS_RUNTIME) && \
    !defined(WEFT_THREADS_ARGOBOTS)
#include "wt_thread_config.h"
#endif

#if defined(WEFT_THREADS_PTHREADS)
#include "thread/wt_thread_pthreads.h"
#elif defined(WEFT_THREADS_PTH)
#include "thread/wt_thread_pth.h"
#elif defined(WEFT_THREADS_RUNTIME)
#include "thread/wt_thread_runtime.h"
#elif defined(WEFT_THREADS_ARGOBOTS)
#include "thread/wt_thread_argobots.h"
#else
#error "no threading backend selected (WEFT_THREADS_PTHREADS, _PTH, _RUNTIME or _ARGOBOTS)"
#endif

#endif
