/* The pack engine (see wc_dtype.h). The cursor moves whole blocks at a time: within a segment it
 * copies as many whole blocks as fit with a loop specialised for 4, 8 and 16-byte blocks (a
 * vector of doubles is one 8-byte load and store per block, no per-byte bookkeeping), and a
 * single-segment layout whose elements continue its series (a vector, a resized basic type, a
 * subarray face) is walked as one series across elements. Partial blocks happen only at the two
 * ends of a call. */
#include "core/wc_dtype.h"

#include <string.h>

void wc_dtype_cursor_init(wc_dtype_cursor_t *c, const wc_dtype_t *dt, const void *base,
                          uint64_t count)
{
    *c = (wc_dtype_cursor_t){ .dt = dt, .base = (char *)base, .count = count };
}

void wc_dtype_cursor_seek(wc_dtype_cursor_t *c, uint64_t pos)
{
    if (pos == c->pos)
        return;
    const wc_dtype_t *dt = c->dt;
    c->pos = pos;
    c->elem = dt->size ? pos / dt->size : c->count;
    uint64_t rem = dt->size ? pos % dt->size : 0;
    c->seg = c->block = c->in_block = 0;
    for (; c->seg < dt->nsegs; c->seg++) {
        const wc_dtype_seg_t *s = &dt->segs[c->seg];
        uint64_t bytes = s->count * s->blocklen;
        if (rem < bytes) {
            c->block = rem / s->blocklen;
            c->in_block = rem % s->blocklen;
            return;
        }
        rem -= bytes;
    }
    c->seg = 0;
}

/* n blocks of bl bytes, stride apart in memory, packed back to back in the stream. */
#define WC_GATHER(T)                                          \
    for (uint64_t i = 0; i < n; i++) {                        \
        T v_;                                                 \
        memcpy(&v_, mem, sizeof(T));                          \
        memcpy(stream, &v_, sizeof(T));                       \
        stream += sizeof(T);                                  \
        mem += stride;                                        \
    }
#define WC_SCATTER(T)                                         \
    for (uint64_t i = 0; i < n; i++) {                        \
        T v_;                                                 \
        memcpy(&v_, stream, sizeof(T));                       \
        memcpy(mem, &v_, sizeof(T));                          \
        stream += sizeof(T);                                  \
        mem += stride;                                        \
    }

typedef struct { uint64_t a, b; } wc_u128_t;

static inline void wc_blocks_pack(char *stream, const char *mem, uint64_t n, uint64_t bl,
                                  int64_t stride)
{
    switch (bl) {
    case 4: WC_GATHER(uint32_t) break;
    case 8: WC_GATHER(uint64_t) break;
    case 16: WC_GATHER(wc_u128_t) break;
    default:
        for (uint64_t i = 0; i < n; i++) {
            memcpy(stream, mem, bl);
            stream += bl;
            mem += stride;
        }
    }
}

static inline void wc_blocks_unpack(char *mem, const char *stream, uint64_t n, uint64_t bl,
                                    int64_t stride)
{
    switch (bl) {
    case 4: WC_SCATTER(uint32_t) break;
    case 8: WC_SCATTER(uint64_t) break;
    case 16: WC_SCATTER(wc_u128_t) break;
    default:
        for (uint64_t i = 0; i < n; i++) {
            memcpy(mem, stream, bl);
            stream += bl;
            mem += stride;
        }
    }
}

/* Advance c past n whole blocks of segment s (n <= blocks left in the segment). */
static inline void wc_cursor_blocks_done(wc_dtype_cursor_t *c, const wc_dtype_seg_t *s,
                                         uint64_t n)
{
    c->block += n;
    if (c->block == s->count) {
        c->block = 0;
        if (++c->seg == c->dt->nsegs) {
            c->seg = 0;
            c->elem++;
        }
    }
}

/* Single-segment layouts whose series runs on across elements: block k of the whole stream is
 * at disp + k * step. Returns the step, or 0 if the layout is not of that kind. */
static inline int64_t wc_dtype_series_step(const wc_dtype_t *dt)
{
    if (dt->nsegs != 1)
        return 0;
    const wc_dtype_seg_t *s = &dt->segs[0];
    if (s->count == 1)
        return dt->extent ? dt->extent : 0;
    return (int64_t)s->count * s->stride == dt->extent ? s->stride : 0;
}

static inline uint64_t wc_dtype_walk(wc_dtype_cursor_t *c, char *stream, uint64_t len, bool pack)
{
    const wc_dtype_t *dt = c->dt;
    uint64_t done = 0;
    if (!dt->size || c->elem >= c->count)
        return 0;
    int64_t step = wc_dtype_series_step(dt);
    while (done < len && c->elem < c->count) {
        const wc_dtype_seg_t *s = &dt->segs[c->seg];
        char *mem = c->base + (int64_t)c->elem * dt->extent + s->disp +
                    (int64_t)c->block * s->stride + (int64_t)c->in_block;
        if (c->in_block == 0 && len - done >= s->blocklen) {
            uint64_t fit = (len - done) / s->blocklen, n;
            if (step) {
                /* whole blocks across elements: k-th block of the stream */
                uint64_t k = c->elem * s->count + c->block, total = c->count * s->count;
                n = total - k < fit ? total - k : fit;
                if (pack)
                    wc_blocks_pack(stream + done, mem, n, s->blocklen, step);
                else
                    wc_blocks_unpack(mem, stream + done, n, s->blocklen, step);
                k += n;
                c->elem = k / s->count;
                c->block = k % s->count;
            } else {
                uint64_t left = s->count - c->block;
                n = left < fit ? left : fit;
                if (pack)
                    wc_blocks_pack(stream + done, mem, n, s->blocklen, s->stride);
                else
                    wc_blocks_unpack(mem, stream + done, n, s->blocklen, s->stride);
                wc_cursor_blocks_done(c, s, n);
            }
            done += n * s->blocklen;
            continue;
        }
        /* a partial block: at the start or the end of this call */
        uint64_t n = s->blocklen - c->in_block;
        if (n > len - done)
            n = len - done;
        if (pack)
            memcpy(stream + done, mem, n);
        else
            memcpy(mem, stream + done, n);
        done += n;
        c->in_block += n;
        if (c->in_block == s->blocklen) {
            c->in_block = 0;
            wc_cursor_blocks_done(c, s, 1);
        }
    }
    c->pos += done;
    return done;
}

uint64_t wc_dtype_pack(wc_dtype_cursor_t *c, void *dst, uint64_t len)
{
    return wc_dtype_walk(c, dst, len, true);
}

uint64_t wc_dtype_unpack(wc_dtype_cursor_t *c, const void *src, uint64_t len)
{
    return wc_dtype_walk(c, (char *)src, len, false);
}
