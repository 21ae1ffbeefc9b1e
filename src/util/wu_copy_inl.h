/* Copies of the smallest messages' payloads without a call to memcpy. A message of a few bytes is
 * copied twice (into the shm record, out of it into the receive buffer); on sizes this small a
 * call to the C library's memcpy costs more instructions (call, PLT, size dispatch) than the copy
 * itself. From 17 bytes on the library's vector copy is as short as anything inline without
 * AVX, so it is used. Any thread; the usual memcpy rules (no overlap). */
#ifndef WU_COPY_INL_H
#define WU_COPY_INL_H

#include <stddef.h>
#include <string.h>
#include "util/wu_compiler.h"

/* 1 <= n <= 16 bytes: two moves of the largest power of two that fits, the second one
 * overlapping the first from the end (fixed-size memcpy, which the compiler turns into a load and
 * a store). */
static inline void wu_copy_upto16(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        d[0] = s[0];
        if (n > 1)
            memcpy(d + n - 2, s + n - 2, 2);
    }
}

/* memcpy, inline up to 16 bytes. */
static inline void wu_copy(void *dst, const void *src, size_t n)
{
    if (n > 16)
        memcpy(dst, src, n);
    else if (n)
        wu_copy_upto16(dst, src, n);
}

#endif
