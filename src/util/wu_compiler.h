/* Compiler helpers shared by every layer. */
#ifndef WU_COMPILER_H
#define WU_COMPILER_H

#include <stddef.h>

#define WU_LIKELY(x)   __builtin_expect(!!(x), 1)
#define WU_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define WU_CACHELINE   64
#define WU_ALIGNED(n)  __attribute__((aligned(n)))
#define WU_NOINLINE    __attribute__((noinline))
#define WU_UNUSED      __attribute__((unused))
#define WU_EXPORT      __attribute__((visibility("default")))
#define WU_PRINTF(f, a) __attribute__((format(printf, f, a)))

#define WU_CONTAINER_OF(ptr, type, member) \
    ((type *)((char *)(ptr) - offsetof(type, member)))

#define WU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define WU_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

static inline void wu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif
