/* Layouts of typed data in memory and the pack engine that streams them.
 *
 * The MPI layer flattens every datatype into a layout: a list of strided segments, each a run of
 * `count` blocks of `blocklen` bytes, `stride` bytes apart, starting `disp` bytes from the
 * element's origin. An element of the type is the segments in list order (the type map's order);
 * element i of a buffer starts i * extent bytes after the buffer. A vector is one segment, a 3-D
 * subarray face one, an indexed type one per block (adjacent blocks merged, equal blocks at a
 * constant stride merged into one strided segment). A segment with count > 1 has stride !=
 * blocklen (a dense run is stored as one block).
 *
 * The core moves packed bytes: the data of the elements one after another, with no gaps. A cursor
 * walks a (buffer, count, layout) triple and packs or unpacks any number of bytes at a time, so a
 * message is streamed in fragments straight between the user's buffer and the transport, with no
 * temporary copy of the whole message. A contiguous layout (`contig`) never needs a cursor: its
 * `count` elements are `count * size` bytes at buffer + `contig_off`.
 *
 * Concurrency contract: a layout is immutable once built and may be read by any thread; a cursor
 * belongs to one operation and is used by one thread at a time.
 */
#ifndef WC_DTYPE_H
#define WC_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wc_dtype_seg {
    int64_t  disp;       /* bytes from the element's origin to the first block */
    uint64_t count;      /* blocks (>= 1) */
    uint64_t blocklen;   /* bytes per block (>= 1) */
    int64_t  stride;     /* bytes from one block's start to the next's (any sign) */
    uint32_t unit;       /* basic element size in the blocks (1, 2, 4, 8, 16, 32): the unit of
                            MPI_Get_elements; blocklen is a multiple of it */
    uint32_t swap;       /* byte-swap unit of external32: unit, or half of it for the complex
                            types (two reals); 1 for bytes */
} wc_dtype_seg_t;

typedef struct wc_dtype {
    uint64_t size;        /* packed bytes per element (sum over segments of count * blocklen) */
    int64_t  extent;      /* bytes from one element's origin to the next's */
    bool     contig;      /* the segments are one run of bytes (each one block, each starting where
                            the previous ended) and size == extent: count elements are
                            count * size bytes at base + contig_off. Also set for size 0. */
    int64_t  contig_off;  /* contig: offset of the data from the element's origin */
    uint64_t nsegs;
    wc_dtype_seg_t *segs;
} wc_dtype_t;

/* A position in the packed stream of (base, count, layout). */
typedef struct wc_dtype_cursor {
    const wc_dtype_t *dt;
    char    *base;
    uint64_t count;      /* elements */
    uint64_t pos;        /* packed bytes before the cursor */
    uint64_t elem;       /* current element */
    uint64_t seg;        /* current segment of the element */
    uint64_t block;      /* current block of the segment */
    uint64_t in_block;   /* bytes of the current block already done */
} wc_dtype_cursor_t;

/* Position c at the start of the packed stream. base is const for packing, written for unpacking. */
void wc_dtype_cursor_init(wc_dtype_cursor_t *c, const wc_dtype_t *dt, const void *base,
                          uint64_t count);
/* Move c to packed byte pos (0 <= pos <= count * size); cheap for pos == c->pos. */
void wc_dtype_cursor_seek(wc_dtype_cursor_t *c, uint64_t pos);
/* Copy up to len packed bytes from the buffer at the cursor to dst; returns bytes copied (less
 * than len only at the end of the stream) and advances the cursor. */
uint64_t wc_dtype_pack(wc_dtype_cursor_t *c, void *dst, uint64_t len);
/* Copy up to len packed bytes from src into the buffer at the cursor; the same contract. */
uint64_t wc_dtype_unpack(wc_dtype_cursor_t *c, const void *src, uint64_t len);

#endif
