/* WEFT_TRANSPORTS=auto on a node without an RDMA device reaches other nodes through Weft's tcp
 * transport and never loads libfabric (docs/tcp.md): after MPI_Init this program looks for it in
 * its own mappings (/proc/self/maps), then checks a ring exchange over every pair of neighbours.
 * With --expect-ofi it checks the opposite (auto chose ofi: FI_PROVIDER was set).
 *
 * usage: tcp_nolib [--expect-ofi] */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } while (0)

static int mapped(const char *what)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    if (!f)
        return -1;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, what) != NULL;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    int rank, size;
    int expect_ofi = argc > 1 && !strcmp(argv[1], "--expect-ofi");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int m = mapped("libfabric");
    if (m < 0)
        FAIL("rank %d: cannot read /proc/self/maps", rank);
    if (m != expect_ofi)
        FAIL("rank %d: libfabric is %smapped after MPI_Init (expected %s)", rank, m ? "" : "not ",
             expect_ofi ? "mapped: ofi" : "not mapped: tcp");
    for (int i = 0; i < 50; i++) {
        long out[64], in[64];
        for (int k = 0; k < 64; k++)
            out[k] = (long)rank * 1000000 + i * 100 + k;
        int to = (rank + 1) % size, from = (rank + size - 1) % size;
        MPI_Sendrecv(out, 64, MPI_LONG, to, i, in, 64, MPI_LONG, from, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int k = 0; k < 64; k++)
            if (in[k] != (long)from * 1000000 + i * 100 + k)
                FAIL("rank %d: round %d element %d: expected %ld got %ld", rank, i, k,
                     (long)from * 1000000 + i * 100 + k, in[k]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("tcp_nolib: %d ranks ok, libfabric %s\n", size, m ? "loaded" : "not loaded");
    MPI_Finalize();
    return 0;
}
