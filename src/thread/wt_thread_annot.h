/* Annotations for clang's -Wthread-safety analysis; they vanish with every other compiler.
 * A lock type is a WT_CAPABILITY; data it protects says WT_GUARDED_BY(lock); a function that must be
 * called with the lock held says WT_REQUIRES(lock). The wt_mutex_* and wt_spin_* calls carry
 * WT_ACQUIRE/WT_RELEASE/WT_TRY_ACQUIRE, so the analysis checks their callers. Note that the gated
 * calls are annotated as if they always locked: the analysis proves the MPI_THREAD_MULTIPLE case,
 * which is the one that matters. */
#ifndef WT_THREAD_ANNOT_H
#define WT_THREAD_ANNOT_H

#if defined(__clang__) && !defined(SWIG)
#define WT_TSA(x) __attribute__((x))
#else
#define WT_TSA(x)
#endif

#define WT_CAPABILITY(name)          WT_TSA(capability(name))
#define WT_SCOPED_CAPABILITY         WT_TSA(scoped_lockable)
#define WT_GUARDED_BY(lock)          WT_TSA(guarded_by(lock))
#define WT_PT_GUARDED_BY(lock)       WT_TSA(pt_guarded_by(lock))
#define WT_ACQUIRED_BEFORE(...)      WT_TSA(acquired_before(__VA_ARGS__))
#define WT_ACQUIRED_AFTER(...)       WT_TSA(acquired_after(__VA_ARGS__))
#define WT_REQUIRES(...)             WT_TSA(requires_capability(__VA_ARGS__))
#define WT_EXCLUDES(...)             WT_TSA(locks_excluded(__VA_ARGS__))
#define WT_ACQUIRE(...)              WT_TSA(acquire_capability(__VA_ARGS__))
#define WT_RELEASE(...)              WT_TSA(release_capability(__VA_ARGS__))
#define WT_TRY_ACQUIRE(...)          WT_TSA(try_acquire_capability(__VA_ARGS__))
#define WT_ASSERT_CAPABILITY(x)      WT_TSA(assert_capability(x))
#define WT_RETURN_CAPABILITY(x)      WT_TSA(lock_returned(x))
#define WT_NO_THREAD_SAFETY_ANALYSIS WT_TSA(no_thread_safety_analysis)

#endif
