/* ThreadSanitizer annotations for synchronization it cannot see: a happens-before edge that runs
 * through another process (a packet carrying a request pointer goes to a peer, which answers with
 * a packet naming that request again). Vanish outside TSan builds. */
#ifndef WU_TSAN_H
#define WU_TSAN_H

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define WU_TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#define WU_TSAN_ACQUIRE(addr) __tsan_acquire((void *)(addr))
#else
#define WU_TSAN_RELEASE(addr) ((void)0)
#define WU_TSAN_ACQUIRE(addr) ((void)0)
#endif

#endif
