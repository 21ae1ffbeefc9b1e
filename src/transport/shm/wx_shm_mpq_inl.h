/* The shared queue of one receiver: a multi-producer single-consumer ring of the same variable-size
 * records as the per-pair rings (wx_shm_ring_inl.h), carrying the packets of every sender that has
 * no per-pair ring of its own to this receiver. The record's spare word names the sender.
 *
 * In the shared segment: a control block (wx_shm_mpq_ctl_t: `tail`, claimed by producers, and
 * `head`, published by the consumer, on separate line pairs) and a data area of `size` bytes (a
 * power of two, at least four of the largest records).
 *
 * Protocol. Positions are monotonic byte counts, offsets are positions modulo size; a record never
 * wraps (a producer that would cross the end reserves the rest of the area too and writes a skip
 * record there).
 *  - Reservation: a producer reads tail, computes the bytes it needs (padding + record) and moves
 *    tail forward by compare-and-swap, after checking against `head` (acquire) that the bytes are
 *    free. The reservations of all producers thus tile the positions from the consumer's head
 *    onwards without gaps or overlap; a failed CAS retries with the tail it saw (lock-free).
 *  - Publication: the producer writes len, spare (its rank), hdr, payload with plain stores, then
 *    the stamp (pos + 1) with a release store. Producers fill their reservations concurrently and
 *    publish in any order.
 *  - Consumption: the consumer reads the stamp at its read position with an acquire load and takes
 *    the record only when stamp == head + 1. A reservation not yet published (its producer was
 *    preempted) holds back the records behind it until it is: the consumer returns and polls again.
 *  - Stale bytes: every record start is a cache-line start, and the consumer, after delivering a
 *    record, zeroes the first word of each of its lines (and of a skipped padding area), before it
 *    hands the space back. So the first word of every free line is zero and can never look like a
 *    stamp; the release store of head orders the zeroing before the producers' reuse. (The
 *    per-pair rings get the same guarantee from their single producer clearing the next stamp;
 *    here no producer knows where the next record will start.)
 *  - Order per source: a producer's reservations to one queue are serialized (one thread at a time
 *    per destination, wx_transport.h), so its records lie in the queue in the order sent and the
 *    consumer delivers them in position order.
 *
 * Concurrency contract: any number of processes, each one thread at a time per queue, produce
 * (wx_shm_mpq_reserve, wx_shm_mpq_commit); one process, one thread at a time, consumes
 * (wx_shm_mpq_peek, wx_shm_mpq_advance, wx_shm_rx_publish). No locks, no system calls, no
 * allocation.
 */
#ifndef WX_SHM_MPQ_INL_H
#define WX_SHM_MPQ_INL_H

#include "transport/shm/wx_shm_ring_inl.h"

/* In the shared segment. tail: compare-and-swap by producers. head: release store by the
 * consumer, acquire load by producers that find the queue full in their cached view. */
typedef struct wx_shm_mpq_ctl {
    uint64_t tail;
    char pad0[2 * WU_CACHELINE - sizeof(uint64_t)];
    uint64_t head;
    char pad1[2 * WU_CACHELINE - sizeof(uint64_t)];
} WU_ALIGNED(WU_CACHELINE) wx_shm_mpq_ctl_t;

/* Reserve a record of len payload bytes in the queue tx->mpq / tx->data (producer's view,
 * tx->head_cache its cached copy of head). Returns the record (to fill, then wx_shm_mpq_commit
 * with *pos_p) or NULL when there is no room: nothing reserved. */
static inline wx_shm_rec_t *wx_shm_mpq_reserve(wx_shm_tx_t *tx, uint32_t len, uint64_t *pos_p)
{
    uint64_t rec_bytes = WX_SHM_REC_BYTES(len), size = tx->size;
    uint64_t tail = __atomic_load_n(&tx->mpq->tail, __ATOMIC_RELAXED), pad;
    for (;;) {
        uint64_t off = tail & (size - 1);
        pad = off + rec_bytes > size ? size - off : 0;
        if (tail + pad + rec_bytes > tx->head_cache + size) {
            tx->head_cache = __atomic_load_n(&tx->mpq->head, __ATOMIC_ACQUIRE);
            uint64_t now = __atomic_load_n(&tx->mpq->tail, __ATOMIC_RELAXED);
            if (now != tail) {          /* others moved on: recompute from the new tail */
                tail = now;
                continue;
            }
            if (tail + pad + rec_bytes > tx->head_cache + size)
                return NULL;
        }
        if (__atomic_compare_exchange_n(&tx->mpq->tail, &tail, tail + pad + rec_bytes, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
    }
    if (WU_UNLIKELY(pad)) {
        wx_shm_rec_t *skip = (wx_shm_rec_t *)(tx->data + (tail & (size - 1)));
        skip->len = WX_SHM_REC_SKIP;
        wx_shm_stamp_release(skip, tail);
    }
    *pos_p = tail + pad;
    return (wx_shm_rec_t *)(tx->data + ((tail + pad) & (size - 1)));
}

/* Publish the record reserved at pos, its payload written. */
static inline void wx_shm_mpq_commit(wx_shm_rec_t *rec, uint64_t pos, const void *hdr, uint32_t len,
                                     uint32_t src)
{
    rec->len = len;
    rec->spare = src;
    memcpy(rec->hdr, hdr, WX_HDR_SIZE);
    wx_shm_stamp_release(rec, pos);
}

/* Zero the first word of every line of [off, off + bytes): the lines become free space. */
static inline void wx_shm_mpq_scrub(char *data, uint32_t off, uint32_t bytes)
{
    for (uint32_t o = off; o < off + bytes; o += WU_CACHELINE)
        __atomic_store_n((uint64_t *)(data + o), 0, __ATOMIC_RELAXED);
}

/* The record at the consumer's read position, or NULL. Steps over (and scrubs) padding. A record
 * that does not fit the queue or whose sender is not a rank of the job (src_max ranks) other than
 * the consumer (self) is a protocol error: wx_shm_rx_corrupt, which does not return. */
static inline wx_shm_rec_t *wx_shm_mpq_peek(wx_shm_rx_t *rx, uint32_t src_max, uint32_t self)
{
    for (;;) {
        wx_shm_rec_t *rec = (wx_shm_rec_t *)(rx->data + rx->off);
        if (__atomic_load_n(&rec->stamp, __ATOMIC_ACQUIRE) != rx->head + 1)
            return NULL;
        if (WU_LIKELY(rec->len != WX_SHM_REC_SKIP)) {
            /* len and the sender's rank are written by another process (wx_shm_ring_inl.h) */
            if (WU_UNLIKELY(!wx_shm_rec_fits(rx, rx->off, rec->len) || rec->spare >= src_max ||
                            rec->spare == self))
                wx_shm_rx_corrupt(rx, rec);
            return rec;
        }
        wx_shm_mpq_scrub(rx->data, rx->off, rx->size - rx->off);
        rx->head += rx->size - rx->off;
        rx->off = 0;
    }
}

/* Step past rec (returned by wx_shm_mpq_peek, delivered): scrub its lines. The space goes back to
 * the producers at the next wx_shm_rx_publish. */
static inline void wx_shm_mpq_advance(wx_shm_rx_t *rx, const wx_shm_rec_t *rec)
{
    uint32_t rec_bytes = (uint32_t)WX_SHM_REC_BYTES(rec->len);
    wx_shm_mpq_scrub(rx->data, rx->off, rec_bytes);
    rx->head += rec_bytes;
    rx->off += rec_bytes;
    if (rx->off == rx->size)
        rx->off = 0;
}

#endif
