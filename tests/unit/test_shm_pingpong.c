/* shm transport ping-pong between two processes: checks every reply, prints the raw transport's
 * round-trip and half-round-trip time for the lead's information (not asserted: the machine is
 * shared). Time-bounded, so a slow machine still finishes in about a second. */
#include "test_shm_boot.h"

#define WARMUP     200
#define MAX_ROUNDS 200000
#define BUDGET_S   0.15        /* per size, warm-up included */

typedef struct {
    uint64_t seq;
    uint64_t stop;
    unsigned char fill[WX_HDR_SIZE - 16];
} ping_hdr_t;
_Static_assert(sizeof(ping_hdr_t) == WX_HDR_SIZE, "test header");

static volatile int got, got_bad;
static ping_hdr_t got_hdr;
static size_t got_len;

static void pong_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    memcpy(&got_hdr, hdr, sizeof(got_hdr));
    got_len = len;
    if (len >= 8) {
        uint64_t echo;
        memcpy(&echo, payload, sizeof(echo));
        got_bad |= echo != ~got_hdr.seq;
    }
    got = 1;
}

static int ping(int peer, uint64_t seq, uint64_t stop, size_t len)
{
    ping_hdr_t h = { .seq = seq, .stop = stop };
    uint64_t payload[1024 / 8] = { ~seq };
    return wx_shm_send(peer, &h, payload, len) != WU_OK;
}

/* Wait for the next packet (spinning, as a rank blocked in MPI_Recv would, but yielding now and
 * then so a loaded machine still gets through) and check it. */
static int pong(uint64_t seq, size_t len)
{
    for (unsigned spins = 1; !got; spins++)
        if (wx_shm_progress() == 0 && spins % 1024 == 0)
            sched_yield();
    got = 0;
    if (got_hdr.seq != seq || got_len != len || got_bad) {
        fprintf(stderr, "rank %d: expected seq %llu len %zu intact, got seq %llu len %zu%s\n", tb_rank,
                (unsigned long long)seq, len, (unsigned long long)got_hdr.seq, got_len,
                got_bad ? " with a wrong payload" : "");
        return 1;
    }
    return 0;
}

static int body(const wx_bootstrap_t *bs, void *arg)
{
    static const size_t sizes[] = { 0, 8, 1024 };
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, pong_cb, NULL));
    for (size_t z = 0; z < WU_ARRAY_SIZE(sizes); z++) {
        size_t len = sizes[z];
        bs->fence();
        if (bs->rank == 1) {                   /* echo until told to stop */
            for (uint64_t seq = 0;; seq++) {
                if (pong(seq, len) || ping(0, seq, got_hdr.stop, len))
                    return 1;
                if (got_hdr.stop)
                    break;
            }
            continue;
        }
        uint64_t seq = 0, rounds = 0;
        double t0 = tb_now(), t1;
        for (; seq < WARMUP && tb_now() - t0 < BUDGET_S / 2; seq++)
            if (ping(1, seq, 0, len) || pong(seq, len))
                return 1;
        t0 = tb_now();
        do {
            for (int k = 0; k < 16; k++, seq++, rounds++)
                if (ping(1, seq, 0, len) || pong(seq, len))
                    return 1;
            t1 = tb_now();
        } while (t1 - t0 < BUDGET_S && rounds < MAX_ROUNDS);
        if (ping(1, seq, 1, len) || pong(seq, len))
            return 1;
        printf("  %4zu B: %7llu round trips, %6.0f ns per round trip, %5.0f ns one way\n", len,
               (unsigned long long)rounds, 1e9 * (t1 - t0) / (double)rounds,
               0.5e9 * (t1 - t0) / (double)rounds);
    }
    bs->fence();
    wx_shm_finalize();
    return 0;
}

int main(void)
{
    return tb_run("pingpong: 2 procs", 2, NULL, body, NULL, 10);
}
