/* shm transport, one ring at a time: per-pair ordering and integrity for payload sizes from 0 to
 * the maximum, many wrap-arounds of a small ring, payloads forged to look like later records'
 * stamps, and a full ring (WU_ERR_AGAIN, nothing written, space back after the receiver's
 * progress). Also: the segment is gone from /dev/shm once init returns. The same with
 * WEFT_SHM_FAST_PATHS=0, where every packet goes through the receiver's shared queue instead. */
#include "test_shm_boot.h"
#include "transport/shm/wx_shm_priv.h"

typedef struct {
    uint64_t seq;
    uint32_t len;
    uint32_t src;
    unsigned char fill[24];
} pkt_hdr_t;
_Static_assert(sizeof(pkt_hdr_t) == WX_HDR_SIZE, "test header");

static unsigned char pat(uint64_t seq, size_t j, int src)
{
    return (unsigned char)(seq * 31 + j * 7 + (size_t)src * 13 + (j >> 8));
}

static unsigned char payload_buf[1 << 17];

static void fill_packet(pkt_hdr_t *h, uint64_t seq, uint32_t len, int src)
{
    h->seq = seq;
    h->len = len;
    h->src = (uint32_t)src;
    for (size_t k = 0; k < sizeof(h->fill); k++)
        h->fill[k] = (unsigned char)(seq + k);
    for (size_t j = 0; j < len; j++)
        payload_buf[j] = pat(seq, j, src);
}

/* Receiver side bookkeeping, per source. */
static uint64_t next_seq[TB_MAXPROCS];
static long received, errors;

static void check_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    pkt_hdr_t h;
    memcpy(&h, hdr, sizeof(h));
    const unsigned char *p = payload;
    received++;
    int bad = h.seq != next_seq[src] || h.len != len || h.src != (uint32_t)src ||
              ((uintptr_t)payload & 7) != 0;
    for (size_t k = 0; !bad && k < sizeof(h.fill); k++)
        bad = h.fill[k] != (unsigned char)(h.seq + k);
    for (size_t j = 0; !bad && j < len; j++)
        bad = p[j] != pat(h.seq, j, src);
    if (bad && errors++ < 5)
        fprintf(stderr, "rank %d: packet from %d: expected seq %llu intact, got seq %llu, len %zu "
                "(header says %u), payload %s\n", tb_rank, src, (unsigned long long)next_seq[src],
                (unsigned long long)h.seq, len, h.len,
                ((uintptr_t)payload & 7) ? "misaligned" : "or header corrupt");
    next_seq[src] = h.seq + 1;
}

/* Size of the i-th packet: every size 0..300, then a stride up to max, max itself, then mixed. */
static uint32_t size_of(uint64_t i, size_t max)
{
    if (i <= 300)
        return (uint32_t)(i <= max ? i : max);
    uint64_t k = i - 301;
    uint64_t strided = (max - 300) / 97 + 1;
    if (k < strided)
        return (uint32_t)(300 + k * 97 > max ? max : 300 + k * 97);
    if (k == strided)
        return (uint32_t)max;
    return (uint32_t)((k * 2654435761u) % (max + 1) >> ((k & 3) * 3));
}

/* The size of the path to a peer: the ring when the job has rings, else the shared queue. */
static uint64_t path_size(void)
{
    return wx_shm.nfast ? wx_shm.ring_size : wx_shm.queue_size;
}

/* Bytes ever produced into the path to dst (for a queue: by all its producers). */
static uint64_t path_tail(const wx_shm_tx_t *tx)
{
    if (tx->route == WX_SHM_ROUTE_QUEUE)
        return __atomic_load_n(&tx->mpq->tail, __ATOMIC_RELAXED);
    return tx->tail;
}

static int init_checked(const wx_bootstrap_t *bs)
{
    wu_status_t s = wx_shm_init(bs, check_cb, NULL);
    TB_CHECK("wx_shm_init", WU_OK, s);
    TB_CHECK("segment in /dev/shm after init (1: still there)", 0, tb_segment_exists());
    return 0;
}

typedef struct {
    uint64_t count;      /* packets per rank */
    uint64_t min_laps;   /* times the ring must have wrapped around */
} stream_arg_t;

/* Every rank streams packets to its right neighbour while receiving from its left one. */
static int body_stream(const wx_bootstrap_t *bs, void *arg)
{
    const stream_arg_t *a = arg;
    uint64_t count = a->count;
    if (init_checked(bs))
        return 1;
    size_t max = wx_shm_max_payload();
    int right = (bs->rank + 1) % bs->size, left = (bs->rank + bs->size - 1) % bs->size;
    pkt_hdr_t h;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t len = size_of(i, max);
        fill_packet(&h, i, len, bs->rank);
        TB_PROGRESS_UNTIL(wx_shm_send(right, &h, payload_buf, len) == WU_OK, 5.0);
    }
    TB_PROGRESS_UNTIL(received == (long)count, 5.0);
    TB_CHECK("bad packets", 0, errors);
    TB_CHECK("last sequence from the left", count, next_seq[left]);
    uint64_t laps = path_tail(&wx_shm.tx[right]) / path_size();
    if (laps < a->min_laps) {
        fprintf(stderr, "rank %d: ring wrapped %llu times, expected at least %llu\n", bs->rank,
                (unsigned long long)laps, (unsigned long long)a->min_laps);
        return 1;
    }
    bs->fence();
    wx_shm_finalize();
    return 0;
}

/* Fill the ring to the right neighbour without the receiver polling, then drain. */
static int body_full(const wx_bootstrap_t *bs, void *arg)
{
    uint32_t len = (uint32_t)(uintptr_t)arg;
    if (init_checked(bs))
        return 1;
    pkt_hdr_t h;
    if (bs->rank == 0) {
        uint64_t n = 0;
        for (;;) {
            fill_packet(&h, n, len, 0);
            wu_status_t s = wx_shm_send(1, &h, payload_buf, len);
            if (s == WU_ERR_AGAIN)
                break;
            TB_CHECK("wx_shm_send into a ring with room", WU_OK, s);
            n++;
        }
        fill_packet(&h, n, len, 0);
        TB_CHECK("second send into a full ring", WU_ERR_AGAIN, wx_shm_send(1, &h, payload_buf, len));
        uint64_t rec = WX_SHM_REC_BYTES(len), ring = path_size();
        uint64_t slack = wx_shm.nfast ? WX_SHM_RING_SLACK : 0;   /* the queue needs none */
        /* at most ring - slack bytes are in use; at least that minus one record and the padding */
        if (n * rec > ring - slack || n * rec + 2 * rec + slack < ring) {
            fprintf(stderr, "rank 0: ring of %llu bytes took %llu records of %llu bytes\n",
                    (unsigned long long)ring, (unsigned long long)n, (unsigned long long)rec);
            return 1;
        }
        tb_sh->scratch[0][0] = n;
        bs->fence();                             /* A: the ring is full */
        bs->fence();                             /* B: rank 1 drained it */
        fill_packet(&h, n, len, 0);
        TB_CHECK("send after the receiver drained the ring", WU_OK, wx_shm_send(1, &h, payload_buf, len));
        bs->fence();                             /* C */
    } else {
        bs->fence();                             /* A */
        long n = (long)tb_sh->scratch[0][0];
        TB_PROGRESS_UNTIL(received == n, 5.0);
        for (int k = 0; k < 100; k++)
            TB_CHECK("packets delivered from an exhausted ring", 0, wx_shm_progress());
        bs->fence();                             /* B */
        bs->fence();                             /* C */
        TB_PROGRESS_UNTIL(received == n + 1, 5.0);
        TB_CHECK("bad packets", 0, errors);
    }
    bs->fence();
    wx_shm_finalize();
    return 0;
}

/* Payload words that fall on cache-line starts hold the stamp a record starting there one or two
 * laps later would carry: if the producer did not clear the next record's stamp word before
 * publishing, a consumer that catches up would take such stale bytes for a record. */
static void poison_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    uint64_t h[5];
    memcpy(h, hdr, sizeof(h));
    uint64_t seq = h[0], start = h[1], ring = path_size();
    const unsigned char *p = payload;
    uint64_t head = wx_shm.nfast ? wx_shm.rx[0].head : wx_shm.rxq.head;
    int bad = seq != next_seq[src] || h[2] != len || start != head;
    for (size_t j = 0; !bad && j < len; j++) {
        uint64_t pos = start + WX_SHM_REC_OVERHEAD + j;
        if (pos % 64 == 0 && j + 8 <= len) {
            uint64_t w, want = pos + (seq & 1 ? 2 : 1) * ring + 1;
            memcpy(&w, p + j, 8);
            bad = w != want;
            j += 7;
        } else {
            bad = p[j] != pat(seq, j, src);
        }
    }
    if (bad && errors++ < 5)
        fprintf(stderr, "rank %d: poisoned packet: expected seq %llu intact, got seq %llu, len %zu\n",
                tb_rank, (unsigned long long)next_seq[src], (unsigned long long)seq, len);
    next_seq[src] = seq + 1;
    received++;
}

static int body_poison(const wx_bootstrap_t *bs, void *arg)
{
    uint64_t count = (uint64_t)(uintptr_t)arg;
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, poison_cb, NULL));
    size_t max = wx_shm_max_payload();
    uint64_t ring = path_size();
    if (bs->rank == 0) {
        for (uint64_t i = 0; i < count; i++) {
            uint32_t len = (uint32_t)((i * 2654435761u >> 7) % (max + 1));
            const wx_shm_tx_t *tx = &wx_shm.tx[1];
            uint64_t rec = WX_SHM_REC_BYTES(len);
            uint64_t tail = path_tail(tx), off = tail % ring;
            uint64_t start = off + rec > ring ? tail + ring - off : tail;
            for (size_t j = 0; j < len; j++)
                payload_buf[j] = pat(i, j, 0);
            for (size_t j = 0; j + 8 <= len; j++) {
                uint64_t pos = start + WX_SHM_REC_OVERHEAD + j;
                if (pos % 64 == 0) {
                    uint64_t w = pos + (i & 1 ? 2 : 1) * ring + 1;
                    memcpy(payload_buf + j, &w, 8);
                }
            }
            uint64_t h[5] = { i, start, len, 0, 0 };
            while (wx_shm_send(1, h, payload_buf, len) == WU_ERR_AGAIN)
                sched_yield();          /* tail does not move while we wait: start stays right */
        }
    } else {
        TB_PROGRESS_UNTIL(received == (long)count, 8.0);
        TB_CHECK("bad packets", 0, errors);
    }
    bs->fence();
    wx_shm_finalize();
    return 0;
}

int main(void)
{
    int failed = 0;
    /* default sizes: every payload size, two procs and a ring of four */
    stream_arg_t every_size = { 1200, 10 }, every_size4 = { 600, 4 }, many = { 40000, 1000 };
    failed |= tb_run("ring: order, sizes 0..max, 2 procs", 2, NULL, body_stream, &every_size, 20);
    failed |= tb_run("ring: order, sizes 0..max, 4 procs", 4, NULL, body_stream, &every_size4, 20);

    /* small packets and the smallest ring: wraps thousands of times */
    static const char *const small[] = { "WEFT_SHM_EAGER_MAX=1024", "WEFT_SHM_FRAG_SIZE=1024",
                                         "WEFT_SHM_RING_SIZE=8k", NULL };
    failed |= tb_run("ring: wrap-around, 8 KiB ring", 2, small, body_stream, &many, 20);

    failed |= tb_run("ring: stale stamps in old payload", 2, small, body_poison,
                     (void *)(uintptr_t)60000, 20);
    failed |= tb_run("ring: full ring, 1000-byte packets", 2, NULL, body_full, (void *)(uintptr_t)1000, 20);
    failed |= tb_run("ring: full ring, 0-byte packets", 2, NULL, body_full, (void *)(uintptr_t)0, 20);
    failed |= tb_run("ring: full ring, largest packets", 2, NULL, body_full, (void *)(uintptr_t)32768, 20);

    /* the same through the shared queue (no rings) */
    static const char *const q[] = { "WEFT_SHM_FAST_PATHS=0", NULL };
    failed |= tb_run("queue: order, sizes 0..max, 2 procs", 2, q, body_stream, &every_size, 20);
    failed |= tb_run("queue: order, sizes 0..max, 4 procs", 4, q, body_stream, &every_size4, 20);
    static const char *const qsmall[] = { "WEFT_SHM_EAGER_MAX=1024", "WEFT_SHM_FRAG_SIZE=1024",
                                          "WEFT_SHM_QUEUE_SIZE=8k", "WEFT_SHM_FAST_PATHS=0", NULL };
    failed |= tb_run("queue: wrap-around, 8 KiB queue", 2, qsmall, body_stream, &many, 20);
    failed |= tb_run("queue: stale stamps in old payload", 2, qsmall, body_poison,
                     (void *)(uintptr_t)60000, 20);
    failed |= tb_run("queue: full, 1000-byte packets", 2, q, body_full, (void *)(uintptr_t)1000, 20);
    failed |= tb_run("queue: full, 0-byte packets", 2, q, body_full, (void *)(uintptr_t)0, 20);
    failed |= tb_run("queue: full, largest packets", 2, q, body_full, (void *)(uintptr_t)32768, 20);
    return failed;
}
