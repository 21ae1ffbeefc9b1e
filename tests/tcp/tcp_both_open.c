/* Both ranks of every pair open their connection at once (docs/tcp.md, "Addresses and
 * connections"): every rank waits until the wall-clock second START_AT (the driver's, the same for
 * all ranks of the machine), then sends COUNT messages to every other rank at once, nonblocking,
 * of sizes cycling 8 B, 1000 B and 70,000 B (above the 64 KiB eager limit: rendezvous), while
 * receiving COUNT from each in order on one tag. So each pair's two first sends race, and the
 * higher rank must move to the lower's connection without reordering what it sent before. Every
 * received message must carry its sender, its sequence number and its bytes.
 *
 * usage: tcp_both_open START_AT COUNT */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } while (0)

static const int sizes[3] = { 8, 1000, 70000 };

static void fill(unsigned char *b, int n, int src, int seq)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(src * 31 + seq * 7 + i);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2)
        FAIL("usage: tcp_both_open START_AT COUNT, on 2 ranks or more");
    long start = atol(argv[1]);
    int count = atoi(argv[2]);
    struct timespec now;
    do
        clock_gettime(CLOCK_REALTIME, &now);
    while (now.tv_sec < start);
    int npeer = size - 1, nreq = 2 * npeer * count;
    MPI_Request *req = malloc(sizeof(*req) * (size_t)nreq);
    unsigned char **sbuf = malloc(sizeof(*sbuf) * (size_t)count);
    unsigned char **rbuf = malloc(sizeof(*rbuf) * (size_t)(npeer * count));
    if (!req || !sbuf || !rbuf)
        FAIL("rank %d: no memory", rank);
    int k = 0;
    for (int s = 0; s < count; s++) {
        sbuf[s] = malloc((size_t)sizes[s % 3]);
        fill(sbuf[s], sizes[s % 3], rank, s);
    }
    for (int p = 0, j = 0; p < size; p++) {
        if (p == rank)
            continue;
        for (int s = 0; s < count; s++, j++) {
            rbuf[j] = malloc((size_t)sizes[s % 3]);
            MPI_Irecv(rbuf[j], sizes[s % 3], MPI_BYTE, p, 5, MPI_COMM_WORLD, &req[k++]);
        }
    }
    /* each message to every peer in turn: every connection opens at once */
    for (int s = 0; s < count; s++)
        for (int d = 1; d < size; d++)
            MPI_Isend(sbuf[s], sizes[s % 3], MPI_BYTE, (rank + d) % size, 5, MPI_COMM_WORLD,
                      &req[k++]);
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    for (int p = 0, j = 0; p < size; p++) {
        if (p == rank)
            continue;
        for (int s = 0; s < count; s++, j++) {
            unsigned char *want = malloc((size_t)sizes[s % 3]);
            fill(want, sizes[s % 3], p, s);
            if (memcmp(want, rbuf[j], (size_t)sizes[s % 3]) != 0)
                FAIL("rank %d: message %d from rank %d (%d bytes) expected its own bytes: a message "
                     "out of order or altered", rank, s, p, sizes[s % 3]);
            free(want);
            free(rbuf[j]);
        }
    }
    for (int s = 0; s < count; s++)
        free(sbuf[s]);
    free(sbuf);
    free(rbuf);
    free(req);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("tcp_both_open: %d ranks, %d messages each way per pair ok\n", size, count);
    MPI_Finalize();
    return 0;
}
