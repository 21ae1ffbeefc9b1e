/* The pack engine's cursor (src/core/wc_dtype.c) against a naive reference: random layouts
 * (1-4 segments, blocks of 1-24 bytes among them the 4/8/16-byte fast paths, positive, negative and
 * zero strides, single-segment series that run on across elements), random element counts, packed
 * and unpacked in random fragment sizes with random seeks, compared byte by byte with the address
 * of every packed byte computed directly from the definition of the layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/wc_dtype.h"

static unsigned long long rng = 88172645463325252ull;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

#define FAIL(...)                                   \
    do {                                            \
        fprintf(stderr, __VA_ARGS__);               \
        fprintf(stderr, " (iteration %d)\n", iter); \
        exit(1);                                    \
    } while (0)

int main(void)
{
    static const uint64_t bls[] = { 1, 2, 3, 4, 8, 16, 5, 24, 12 };
    for (int iter = 0; iter < 3000; iter++) {
        wc_dtype_seg_t segs[4];
        wc_dtype_t dt = { .segs = segs };
        dt.nsegs = 1 + rnd(4);
        int64_t off = 0;
        for (uint64_t i = 0; i < dt.nsegs; i++) {
            wc_dtype_seg_t *s = &segs[i];
            s->blocklen = bls[rnd(sizeof bls / sizeof bls[0])];
            s->count = 1 + rnd(6);
            s->stride = (int64_t)rnd(3 * s->blocklen) - (int64_t)s->blocklen;
            if (rnd(3) == 0)
                s->stride = (int64_t)(s->blocklen + rnd(8));
            s->disp = off + (int64_t)rnd(16);
            off = s->disp + (int64_t)(s->count * s->blocklen) + 40;
            s->unit = s->swap = 1;
            dt.size += s->count * s->blocklen;
        }
        dt.extent = off + (int64_t)rnd(32);
        if (dt.nsegs == 1 && rnd(2)) {     /* a series that runs on across elements */
            if (segs[0].count == 1)
                dt.extent = (int64_t)(segs[0].blocklen + rnd(9));
            else if (segs[0].stride > 0)
                dt.extent = (int64_t)segs[0].count * segs[0].stride;
        }
        if (rnd(8) == 0)
            dt.extent = -dt.extent;
        uint64_t count = rnd(7);
        uint64_t total = count * dt.size;

        /* the address of every packed byte, from the definition */
        int64_t *addr = malloc((total + 1) * sizeof(int64_t));
        int64_t lo = 0, hi = 0;
        uint64_t p = 0;
        for (uint64_t e = 0; e < count; e++)
            for (uint64_t i = 0; i < dt.nsegs; i++)
                for (uint64_t b = 0; b < segs[i].count; b++)
                    for (uint64_t k = 0; k < segs[i].blocklen; k++) {
                        int64_t a = (int64_t)e * dt.extent + segs[i].disp +
                                    (int64_t)b * segs[i].stride + (int64_t)k;
                        addr[p++] = a;
                        lo = a < lo ? a : lo;
                        hi = a + 1 > hi ? a + 1 : hi;
                    }
        size_t span = (size_t)(hi - lo) + 16;
        unsigned char *mem = malloc(span), *base = mem + 8 - lo;
        for (size_t k = 0; k < span; k++)
            mem[k] = (unsigned char)rnd(256);
        unsigned char *ref = malloc(total + 1), *got = malloc(total + 1);
        for (uint64_t k = 0; k < total; k++)
            ref[k] = base[addr[k]];

        /* pack in random fragments, sometimes seeking back and redoing a stretch */
        wc_dtype_cursor_t c;
        wc_dtype_cursor_init(&c, &dt, base, count);
        memset(got, 0xAB, total + 1);
        uint64_t pos = 0;
        while (pos < total) {
            if (rnd(5) == 0) {
                pos = rnd(pos + 1);
                wc_dtype_cursor_seek(&c, pos);
            }
            uint64_t want = 1 + rnd(rnd(2) ? 8 : 64);
            uint64_t n = wc_dtype_pack(&c, got + pos, want);
            uint64_t expect = total - pos < want ? total - pos : want;
            if (n != expect)
                FAIL("pack at %llu of %llu: returned %llu, expected %llu", (unsigned long long)pos,
                     (unsigned long long)total, (unsigned long long)n, (unsigned long long)expect);
            pos += n;
            if (c.pos != pos)
                FAIL("cursor pos %llu, expected %llu", (unsigned long long)c.pos,
                     (unsigned long long)pos);
        }
        if (wc_dtype_pack(&c, got, 10) != 0)
            FAIL("pack past the end returned bytes");
        for (uint64_t k = 0; k < total; k++)
            if (got[k] != ref[k])
                FAIL("packed byte %llu of %llu expected %u got %u (nsegs %llu, count %llu)",
                     (unsigned long long)k, (unsigned long long)total, ref[k], got[k],
                     (unsigned long long)dt.nsegs, (unsigned long long)count);

        /* unpack into a poisoned buffer in random fragments: exactly the layout's bytes change.
         * With overlapping blocks (stride 0 or negative), the last write wins, as in the reference. */
        unsigned char *mem2 = malloc(span), *base2 = mem2 + 8 - lo, *exp = malloc(span);
        memset(mem2, 0xEE, span);
        memset(exp, 0xEE, span);
        for (uint64_t k = 0; k < total; k++)
            exp[addr[k] + 8 - lo] = ref[k];
        wc_dtype_cursor_init(&c, &dt, base2, count);
        pos = 0;
        while (pos < total) {
            uint64_t n = wc_dtype_unpack(&c, ref + pos, 1 + rnd(rnd(2) ? 8 : 64));
            if (!n)
                FAIL("unpack stalled at %llu of %llu", (unsigned long long)pos,
                     (unsigned long long)total);
            pos += n;
        }
        for (size_t k = 0; k < span; k++)
            if (mem2[k] != exp[k])
                FAIL("unpacked byte at offset %lld expected %u got %u",
                     (long long)k - 8 + (long long)lo, exp[k], mem2[k]);
        free(addr);
        free(mem);
        free(mem2);
        free(exp);
        free(ref);
        free(got);
    }
    printf("test_dtype_cursor: ok\n");
    return 0;
}
