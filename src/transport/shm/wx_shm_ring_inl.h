/* One single-producer single-consumer ring of variable-size records: the fast path of the shm
 * transport between an ordered pair of ranks (sender -> receiver), taken by the sender from the
 * receiver's pool on first contact (wx_shm_priv.h). The record format is shared with the
 * receiver's multi-producer queue (wx_shm_mpq_inl.h), which carries the other senders.
 *
 * In the shared segment a ring is a control block and a data area:
 *   wx_shm_ring_ctl_t  128 bytes: `head`, the only field of the ring both sides look at while it
 *                      carries packets, and (second line) `owner`, written once when a sender
 *                      claims the ring. Two lines, so the adjacent-line prefetcher never couples
 *                      head to a neighbour.
 *   data               `size` bytes (a multiple of 64), records back to back.
 * Everything else (the producer's tail, its cached copy of head, the consumer's read position) is
 * private to one process and lives in its own memory (wx_shm_tx_t, wx_shm_rx_t), so the producer
 * and the consumer never write the same cache line except the record they hand over.
 *
 * Record, 64-byte aligned, never straddling the end of data:
 *    0  uint64 stamp    pos + 1, pos = the producer's monotonic byte count at the record start
 *    8  uint32 len      payload bytes, or WX_SHM_REC_SKIP: padding up to the end of data
 *   12  uint32 spare
 *   16  hdr[WX_HDR_SIZE]
 *   56  payload[len]    8-byte aligned
 * A record takes WX_SHM_REC_BYTES(len) = align64(56 + len) bytes: len <= 8 is one cache line.
 *
 * Protocol (all offsets are positions modulo size; records never wrap, so offset == pos % size):
 *  - The producer writes len, hdr and payload with plain stores, then the stamp with a release
 *    store. The consumer polls the stamp at its read position with an acquire load and accepts the
 *    record only if stamp == head + 1; then len, hdr and payload are visible. It never reads the
 *    producer's tail.
 *  - A stamp left from an earlier lap holds an older position and cannot match. Stale payload bytes
 *    that happen to lie where a later record starts could; so before publishing a record the
 *    producer zeroes the stamp word where the next record will start (a relaxed store ordered by
 *    the release that follows). That word is always free space: the producer keeps 64 bytes of
 *    slack (a ring is full at size - 64 bytes used).
 *  - The consumer delivers the record in place, advances its private head and publishes head to
 *    ctl->head with a release store lazily: after a quarter of the ring, or when it finds the ring
 *    drained. The producer reads ctl->head (acquire) only when its cached copy says the ring is
 *    full; the release/acquire pair orders the consumer's reads of a record before the producer's
 *    reuse of its bytes.
 *  - After each record the producer asks for write ownership of the line WX_SHM_TX_AHEAD bytes
 *    beyond its new tail (wx_shm_tx_prefetch): the consumer read that line a lap ago and may still
 *    hold it, and fetching it on the first store would stall the stream (see there).
 *
 * Concurrency contract: exactly one process (one thread at a time) produces into a ring and
 * exactly one consumes from it. wx_shm_tx_* are called by the producer only, wx_shm_rx_* by the
 * consumer only. No locks, no system calls, no allocation.
 */
#ifndef WX_SHM_RING_INL_H
#define WX_SHM_RING_INL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "transport/wx_transport.h"
#include "util/wu_compiler.h"
#include "util/wu_copy_inl.h"

#define WX_SHM_REC_SKIP     UINT32_MAX
#define WX_SHM_REC_OVERHEAD (16 + WX_HDR_SIZE)     /* stamp, len, spare, hdr */
#define WX_SHM_REC_BYTES(len) WU_ALIGN_UP((uint64_t)(len) + WX_SHM_REC_OVERHEAD, (uint64_t)WU_CACHELINE)
#define WX_SHM_RING_SLACK   WU_CACHELINE          /* room for the next record's zeroed stamp */

typedef struct wx_shm_rec {
    uint64_t stamp;          /* producer: release store, last; consumer: acquire load */
    uint32_t len;            /* producer: plain store before the stamp */
    uint32_t spare;
    unsigned char hdr[WX_HDR_SIZE];
    unsigned char payload[];
} wx_shm_rec_t;

_Static_assert(sizeof(wx_shm_rec_t) == WX_SHM_REC_OVERHEAD, "record header layout");

/* In the shared segment. head: written by the consumer only (release store), read by the producer
 * (acquire load) when the ring looks full. owner: 0 while the ring is free; the rank of its
 * producer + 1, stored once (release) by the sender that claimed the ring, read (acquire) by the
 * consumer until it is set; on its own line so it never disturbs head. */
typedef struct wx_shm_ring_ctl {
    uint64_t head;
    char pad[WU_CACHELINE - sizeof(uint64_t)];
    uint32_t owner;
    char pad2[WU_CACHELINE - sizeof(uint32_t)];
} WU_ALIGNED(WU_CACHELINE) wx_shm_ring_ctl_t;

struct wx_shm_mpq_ctl;

/* How a sender reaches one destination, chosen on first contact and never changed afterwards (so
 * the packets of one source to one receiver all travel one FIFO path, in order). */
enum { WX_SHM_ROUTE_NONE, WX_SHM_ROUTE_RING, WX_SHM_ROUTE_QUEUE };

/* Producer's private view of one destination (process-local memory): a per-pair ring
 * (route RING: data, ctl, tail, off) or the destination's shared queue (route QUEUE: data, mpq). */
typedef struct wx_shm_tx {
    char *data;
    wx_shm_ring_ctl_t *ctl;
    uint64_t tail;           /* bytes ever produced; the next record starts at position tail */
    uint64_t head_cache;     /* last value read from head; <= the consumer's real head */
    uint32_t off;            /* tail % size */
    uint32_t size;
    struct wx_shm_mpq_ctl *mpq;
    uint8_t route;           /* WX_SHM_ROUTE_* */
} WU_ALIGNED(WU_CACHELINE) wx_shm_tx_t;

/* Consumer's private view of one ring or of the shared queue (process-local memory). */
typedef struct wx_shm_rx {
    char *data;
    uint64_t *pub;           /* where head is published: the ring's ctl->head or the queue's head */
    uint64_t head;           /* bytes consumed; the next record starts at position head */
    uint64_t published;      /* last value stored to ctl->head */
    uint32_t off;            /* head % size */
    uint32_t size;
    int src;                 /* rank of the producer; -1 for the queue (the record's spare says) */
    bool backlog;            /* the last poll found more than one record */
} WU_ALIGNED(WU_CACHELINE) wx_shm_rx_t;

static inline void wx_shm_stamp_release(wx_shm_rec_t *rec, uint64_t pos)
{
    __atomic_store_n(&rec->stamp, pos + 1, __ATOMIC_RELEASE);
}

/* Make the stamp word at offset off unable to match before the record in front of it is published. */
static inline void wx_shm_stamp_clear(char *data, uint32_t off)
{
    __atomic_store_n((uint64_t *)(data + off), 0, __ATOMIC_RELAXED);
}

/* Reserve a record of len payload bytes (the caller fills rec->payload, then wx_shm_tx_commit).
 * NULL: not enough free space, nothing written. */
static inline wx_shm_rec_t *wx_shm_tx_reserve(wx_shm_tx_t *tx, uint32_t len)
{
    uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(len);
    uint32_t off = tx->off;
    uint32_t pad = off + rec_bytes > tx->size ? tx->size - off : 0;   /* skip to the start first */
    uint64_t need = (uint64_t)pad + rec_bytes + WX_SHM_RING_SLACK;

    if (WU_UNLIKELY(tx->tail - tx->head_cache + need > tx->size)) {
        tx->head_cache = __atomic_load_n(&tx->ctl->head, __ATOMIC_ACQUIRE);
        if (tx->tail - tx->head_cache + need > tx->size)
            return NULL;
    }
    if (WU_UNLIKELY(pad)) {
        wx_shm_rec_t *skip = (wx_shm_rec_t *)(tx->data + off);
        skip->len = WX_SHM_REC_SKIP;
        wx_shm_stamp_clear(tx->data, 0);
        wx_shm_stamp_release(skip, tx->tail);
        tx->tail += pad;
        tx->off = 0;
    }
    /* The next record's stamp word is cleared now, before the payload: the line it lies on may
     * have to be fetched, and that store must not sit between the stores to this record's first
     * line (the one the consumer polls), see wx_shm_tx_push. */
    uint32_t next = tx->off + rec_bytes;
    wx_shm_stamp_clear(tx->data, next == tx->size ? 0 : next);
    return (wx_shm_rec_t *)(tx->data + tx->off);
}

/* Whether the CPU has the prefetch-for-write instruction (x86: PREFETCHW, CPUID 0x80000001 ECX bit
 * 8); set once by wx_shm_init before any ring is used, read-only afterwards. */
extern bool wx_shm_prefetchw;

/* Ask for the line at p in a state that lets this core write it (exclusive), without waiting. */
static inline void wx_shm_prefetch_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
    if (WU_LIKELY(wx_shm_prefetchw)) {
        __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
        return;
    }
#endif
    __builtin_prefetch(p, 1);   /* (x86 without -mprfchw: a read prefetch, better than none) */
}

/* How far ahead of its tail the producer claims lines: 4 lines, a few small records. Measured with
 * bench_mbw_mr (8-byte messages, 1 pair, 2 vCPUs): 2 and 4 lines are alike, 8 is worse. */
#define WX_SHM_TX_AHEAD (4 * WU_CACHELINE)

/* How much of a record either side prefetches at once, the producer before it copies the payload in
 * (wx_shm_tx_push), the consumer when it finds the record (wx_shm_rx_peek): about as many lines as
 * a core keeps misses in flight; the copy's own streaming takes the rest. */
#define WX_SHM_REC_PREFETCH_MAX 2048u

/* After a record: claim the line WX_SHM_TX_AHEAD bytes beyond the tail. x86 commits stores in
 * order, so one store that waits for its line (taken from the consumer's cache, where it lies
 * since the consumer read it a lap ago) holds back every store after it: the request and header
 * stores of the next messages fill the store buffer behind it, and a stream of small messages runs
 * at one cross-core transfer per message (on the 2-vCPU VM, when its vCPUs are far apart: 4.4
 * Mmsg/s against 9.9 with this prefetch, bench_mbw_mr, 8-byte messages). Claimed early, the lines
 * of the next records arrive while this one is written. Not when the ring is nearly full (by the
 * cached head): the consumer may still be reading that line. */
static inline void wx_shm_tx_prefetch(const wx_shm_tx_t *tx)
{
    if (WU_UNLIKELY(tx->tail - tx->head_cache + 2 * WX_SHM_TX_AHEAD > tx->size))
        return;
    uint32_t ahead = tx->off + WX_SHM_TX_AHEAD;
    if (ahead >= tx->size)
        ahead -= tx->size;
    wx_shm_prefetch_write(tx->data + ahead);
}

/* Publish the record reserved by wx_shm_tx_reserve (which cleared the next stamp), its payload
 * written. */
static inline void wx_shm_tx_commit(wx_shm_tx_t *tx, wx_shm_rec_t *rec, const void *hdr, uint32_t len)
{
    uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(len);
    uint32_t next = tx->off + rec_bytes;
    if (next == tx->size)
        next = 0;
    rec->len = len;
    memcpy(rec->hdr, hdr, WX_HDR_SIZE);
    wx_shm_stamp_release(rec, tx->tail);
    tx->tail += rec_bytes;
    tx->off = next;
    wx_shm_tx_prefetch(tx);
}

/* Copy one packet into the ring. false: not enough free space, nothing written.
 * Store order: the next stamp (wx_shm_tx_reserve), the payload beyond the record's first line,
 * then everything on the first line (the first WX_SHM_REC_LINE0_PAYLOAD payload bytes, len, hdr,
 * stamp) in one burst. The consumer polls that line: once this side owns it, its stores complete
 * together, with no store to another, possibly missing, line in between during which the
 * consumer's next poll would take the line back (one more transfer of it per message). */
#define WX_SHM_REC_LINE0_PAYLOAD (WU_CACHELINE - WX_SHM_REC_OVERHEAD)   /* 8 */
static inline bool wx_shm_tx_push(wx_shm_tx_t *tx, const void *hdr, const void *payload, uint32_t len)
{
    wx_shm_rec_t *rec = wx_shm_tx_reserve(tx, len);
    if (WU_UNLIKELY(!rec))
        return false;
    if (len > WX_SHM_REC_LINE0_PAYLOAD) {
        /* A record of up to WX_SHM_REC_PREFETCH_MAX bytes: claim its other lines at once, so
         * that their transfers overlap (the copy's stores would otherwise wait for them one after
         * the other, see wx_shm_tx_prefetch). Not a larger one: memcpy writes those with string
         * or non-temporal stores, which need no read of the old line, and a prefetch would add
         * one (16 KiB ping-pong: 1.19 -> 1.84 us when the first 2 KiB were claimed). */
        uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(len);
        if (rec_bytes <= WX_SHM_REC_PREFETCH_MAX)
            for (uint32_t l = WU_CACHELINE; l < rec_bytes; l += WU_CACHELINE)
                wx_shm_prefetch_write((const char *)rec + l);
        wu_copy(rec->payload + WX_SHM_REC_LINE0_PAYLOAD,
                (const unsigned char *)payload + WX_SHM_REC_LINE0_PAYLOAD,
                len - WX_SHM_REC_LINE0_PAYLOAD);
        memcpy(rec->payload, payload, WX_SHM_REC_LINE0_PAYLOAD);
    } else {
        wu_copy(rec->payload, payload, len);
    }
    wx_shm_tx_commit(tx, rec, hdr, len);
    return true;
}

/* A record's len is written by another process: before anything reads its payload or steps over
 * it, the record must end inside the data area (records never wrap). One compare, in 64 bits so no
 * len can wrap it. A record that does not fit is a protocol error (wx_shm.c, never returns). */
static inline bool wx_shm_rec_fits(const wx_shm_rx_t *rx, uint32_t off, uint32_t len)
{
    return WX_SHM_REC_BYTES(len) <= (uint64_t)(rx->size - off);
}

void wx_shm_rx_corrupt(const wx_shm_rx_t *rx, const wx_shm_rec_t *rec)
    __attribute__((noreturn, noinline, cold));

/* The record at the read position, or NULL if none has arrived. Steps over padding. */
static inline wx_shm_rec_t *wx_shm_rx_peek(wx_shm_rx_t *rx)
{
    for (;;) {
        wx_shm_rec_t *rec = (wx_shm_rec_t *)(rx->data + rx->off);
        if (__atomic_load_n(&rec->stamp, __ATOMIC_ACQUIRE) != rx->head + 1)
            return NULL;
        uint32_t len = rec->len;
        if (WU_LIKELY(len != WX_SHM_REC_SKIP)) {
            if (WU_UNLIKELY(!wx_shm_rec_fits(rx, rx->off, len)))
                wx_shm_rx_corrupt(rx, rec);
            /* The payload's other lines (a record of more than one line), up to
             * WX_SHM_REC_PREFETCH_MAX bytes: ask for them now, so that their transfers from the
             * producer's cache overlap each other and the delivery's work on the header
             * (matching) instead of following one another as the copy reaches them. */
            if (len > WX_SHM_REC_LINE0_PAYLOAD) {
                uint32_t end = (uint32_t)WX_SHM_REC_BYTES(len);
                if (end > WX_SHM_REC_PREFETCH_MAX)
                    end = WX_SHM_REC_PREFETCH_MAX;
                for (uint32_t l = WU_CACHELINE; l < end; l += WU_CACHELINE)
                    __builtin_prefetch((const char *)rec + l);
            }
            return rec;
        }
        rx->head += rx->size - rx->off;
        rx->off = 0;
    }
}

/* Look ahead without consuming: the record at cursor (*head_p, *off_p), stepping the cursor over
 * padding, or NULL. The caller advances the cursor past a returned record with
 * wx_shm_rx_cursor_next. Used to prefetch for a batch before delivering it. A record that does
 * not fit (or, in the shared queue, names no valid sender: src_max is the job size) ends the look-ahead:
 * delivery reports it (wx_shm_rx_peek, wx_shm_mpq_peek). */
static inline wx_shm_rec_t *wx_shm_rx_peek_at(const wx_shm_rx_t *rx, uint64_t *head_p, uint32_t *off_p,
                                              uint32_t src_max)
{
    for (;;) {
        wx_shm_rec_t *rec = (wx_shm_rec_t *)(rx->data + *off_p);
        if (__atomic_load_n(&rec->stamp, __ATOMIC_ACQUIRE) != *head_p + 1)
            return NULL;
        if (WU_LIKELY(rec->len != WX_SHM_REC_SKIP)) {
            if (!wx_shm_rec_fits(rx, *off_p, rec->len) || (rx->src < 0 && rec->spare >= src_max))
                return NULL;
            return rec;
        }
        *head_p += rx->size - *off_p;
        *off_p = 0;
    }
}

static inline void wx_shm_rx_cursor_next(const wx_shm_rx_t *rx, const wx_shm_rec_t *rec,
                                         uint64_t *head_p, uint32_t *off_p)
{
    uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(rec->len);
    *head_p += rec_bytes;
    *off_p += rec_bytes;
    if (*off_p == rx->size)
        *off_p = 0;
}

/* Step past rec (returned by wx_shm_rx_peek). Its bytes stay untouched until wx_shm_rx_publish. */
static inline void wx_shm_rx_advance(wx_shm_rx_t *rx, const wx_shm_rec_t *rec)
{
    uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(rec->len);
    rx->head += rec_bytes;
    rx->off += rec_bytes;
    if (rx->off == rx->size)
        rx->off = 0;
}

/* Hand consumed space back to the producer: always when drained, else once a quarter ring is due. */
static inline void wx_shm_rx_publish(wx_shm_rx_t *rx, bool drained)
{
    uint64_t due = rx->head - rx->published;
    if (due && (drained || due >= rx->size / 4)) {
        __atomic_store_n(rx->pub, rx->head, __ATOMIC_RELEASE);
        rx->published = rx->head;
    }
}

#endif
