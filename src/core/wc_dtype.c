/* The pack engine (see wc_dtype.h). Reference version: one block at a time with memcpy. */
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
}

/* Walk up to len bytes from the cursor, calling copy(mem, stream, n) for each piece. */
static inline uint64_t wc_dtype_walk(wc_dtype_cursor_t *c, char *stream, uint64_t len, bool pack)
{
    const wc_dtype_t *dt = c->dt;
    uint64_t done = 0;
    if (!dt->size)
        return 0;
    while (done < len && c->elem < c->count) {
        const wc_dtype_seg_t *s = &dt->segs[c->seg];
        char *mem = c->base + (int64_t)c->elem * dt->extent + s->disp +
                    (int64_t)c->block * s->stride + (int64_t)c->in_block;
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
            if (++c->block == s->count) {
                c->block = 0;
                if (++c->seg == dt->nsegs) {
                    c->seg = 0;
                    c->elem++;
                }
            }
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
