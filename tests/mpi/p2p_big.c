/* Big transfers, every byte verified: a 256 MiB message each way between the ranks of a pair (r, r^1)
 * (blocking Send/Recv one way, Irecv posted early + Isend the other), an odd-sized 64 MiB + 3 message
 * received with MPI_ANY_SOURCE, and a Sendrecv_replace of 4 MiB + 5 around the ring of all ranks.
 * Run it with WEFT_SHM_CMA=0 too, for the pipelined copy. Argument: MiB of the big message (default 256). */
#include "mpitest.h"

/* Word i of a buffer identified by seed; cheap enough for 256 MiB. */
static inline uint64_t word(uint64_t seed, size_t i)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    return x ^ (x >> 31);
}

static void fill(void *buf, size_t n, uint64_t seed)
{
    uint64_t *w = buf;
    size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++)
        w[i] = word(seed, i);
    uint64_t last = word(seed, nw);
    memcpy((uint8_t *)buf + nw * 8, &last, n % 8);
}

static void verify(const void *buf, size_t n, uint64_t seed, const char *what)
{
    const uint64_t *w = buf;
    size_t nw = n / 8;
    for (size_t i = 0; i < nw; i++)
        if (w[i] != word(seed, i))
            MT_FAIL("%s word %zu of %zu (byte offset %zu) expected %016llx got %016llx", what, i, nw, i * 8,
                    (unsigned long long)word(seed, i), (unsigned long long)w[i]);
    uint64_t last = word(seed, nw);
    MT_TRUE(memcmp((const uint8_t *)buf + nw * 8, &last, n % 8) == 0, "%s last %zu bytes differ", what,
            n % 8);
}

static uint64_t seed_of(int rank, int k) { return (uint64_t)rank << 32 | (unsigned)k; }

static void pair_transfers(int peer, size_t big, uint8_t *sbuf, uint8_t *rbuf)
{
    int even = mt_rank % 2 == 0;
    MPI_Status st;
    int cnt;

    /* even -> odd: blocking, counted in MPI_INT */
    if (even) {
        fill(sbuf, big, seed_of(mt_rank, 1));
        MT_CALL(MPI_Send(sbuf, (int)(big / sizeof(int)), MPI_INT, peer, 1, MPI_COMM_WORLD));
    } else {
        memset(rbuf, 0, big);
        MT_CALL(MPI_Recv(rbuf, (int)(big / sizeof(int)), MPI_INT, peer, 1, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
        MT_EQ("count of the big message in MPI_INT", big / sizeof(int), cnt);
        verify(rbuf, big, seed_of(peer, 1), "big blocking message");
    }

    /* odd -> even: receive posted before the barrier, send after it */
    MPI_Request r = MPI_REQUEST_NULL;
    if (even) {
        memset(rbuf, 0, big);
        MT_CALL(MPI_Irecv(rbuf, (int)big, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &r));
    }
    MT_CALL(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 3, NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
    if (!even) {
        fill(sbuf, big, seed_of(mt_rank, 2));
        MT_CALL(MPI_Isend(sbuf, (int)big, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &r));
    }
    MT_CALL(MPI_Wait(&r, &st));
    if (even) {
        MT_STATUS("big pre-posted message", st, peer, 2, big);
        verify(rbuf, big, seed_of(peer, 2), "big pre-posted message");
    }

    /* even -> odd, 64 MiB + 3, MPI_ANY_SOURCE receive posted after the send started */
    size_t odd = (64u << 20) + 3;
    if (odd > big)
        odd = big / 2 + 3;
    if (even) {
        fill(sbuf, odd, seed_of(mt_rank, 3));
        MT_CALL(MPI_Isend(sbuf, (int)odd, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &r));
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
        mt_sleep_ms(20);
        memset(rbuf, 0, odd + 16);
        MT_CALL(MPI_Recv(rbuf, (int)(odd + 16), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MT_STATUS("odd-sized message", st, peer, 4, odd);
        verify(rbuf, odd, seed_of(peer, 3), "odd-sized message");
        mt_verify_const(rbuf + odd, 16, 0, "bytes past an odd-sized message");
    }
}

/* Sendrecv_replace around the ring: send right, receive from the left, in place. */
static void ring_replace(void)
{
    const size_t n = (4u << 20) + 5;
    uint8_t *buf = mt_malloc(n);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Status st;
    for (int k = 0; k < 3; k++) {
        fill(buf, n, seed_of(mt_rank, 10 + k));
        MT_CALL(MPI_Sendrecv_replace(buf, (int)n, MPI_BYTE, right, 10 + k, left, 10 + k, MPI_COMM_WORLD, &st));
        MT_STATUS("Sendrecv_replace", st, left, 10 + k, n);
        verify(buf, n, seed_of(left, 10 + k), "Sendrecv_replace buffer");
    }
    /* and Sendrecv with distinct buffers, both directions at once */
    uint8_t *other = mt_malloc(n);
    fill(buf, n, seed_of(mt_rank, 20));
    MT_CALL(MPI_Sendrecv(buf, (int)n, MPI_BYTE, left, 20, other, (int)n, MPI_BYTE, right, 20, MPI_COMM_WORLD,
                         &st));
    MT_STATUS("Sendrecv", st, right, 20, n);
    verify(other, n, seed_of(right, 20), "Sendrecv buffer");
    free(other);
    free(buf);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    size_t big = (size_t)mt_init_args(argc, argv, 256) << 20;
    int peer = mt_rank ^ 1;
    double t0 = MPI_Wtime();
    uint8_t *sbuf = mt_malloc(big + 16), *rbuf = mt_malloc(big + 16);
    if (peer < mt_size)
        pair_transfers(peer, big, sbuf, rbuf);
    free(sbuf);
    free(rbuf);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    ring_replace();
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0)
        printf("p2p_big: %zu MiB in %.2f s\n", big >> 20, MPI_Wtime() - t0);
    return mt_finish("p2p_big");
}
