/* The job key (docs/ofi.md, docs/tcp.md), one program for both transports (built as ofi_foreign
 * and tcp_foreign): while rank 1 waits in MPI_Recv with wildcards, a process outside the job
 * (ofi_intruder: COUNT packets; tcp_intruder: COUNT connections) sends it what it must drop; then
 * rank 0 sends it 100 real messages. Rank 1 checks that every message it receives is rank 0's, in
 * order, with the right data: no foreign packet was delivered. The driver (ofi_foreign.sh,
 * tcp_foreign.sh) checks the count of drops that rank 1 logs at finalize (WEFT_DEBUG=1).
 *
 * usage: PROGRAM INTRUDER COUNT   (at least 2 ranks, with the transport's address files named by
 * WEFT_OFI_ADDR_FILE or WEFT_TCP_ADDR_FILE; the intruder reads rank 1's) */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *base = getenv("WEFT_OFI_ADDR_FILE");
    if (!base)
        base = getenv("WEFT_TCP_ADDR_FILE");
    if (argc != 3 || size < 2 || !base)
        FAIL("usage: %s INTRUDER COUNT, with WEFT_OFI_ADDR_FILE or WEFT_TCP_ADDR_FILE, on 2 ranks "
             "or more", argv[0]);
    MPI_Barrier(MPI_COMM_WORLD);   /* every address file is written */
    if (rank == 0) {
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s %s.1 %s", argv[1], base, argv[2]);
        int rc = system(cmd);
        if (rc != 0)
            FAIL("rank 0: %s: exit status expected 0 got %d", cmd, rc);
        for (int i = 0; i < 100; i++) {
            long v[4] = { i, i * 3, -i, 42 };
            MPI_Send(v, 4, MPI_LONG, 1, i, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        for (int i = 0; i < 100; i++) {
            long v[4] = { 0 };
            MPI_Status st;
            MPI_Recv(v, 4, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int n;
            MPI_Get_count(&st, MPI_LONG, &n);
            if (st.MPI_SOURCE != 0 || st.MPI_TAG != i || n != 4 || v[0] != i || v[1] != i * 3 ||
                v[2] != -i || v[3] != 42)
                FAIL("rank 1: message %d expected (source 0, tag %d, 4 longs {%d,%d,%d,42}) got "
                     "(source %d, tag %d, %d longs {%ld,%ld,%ld,%ld})", i, i, i, 3 * i, -i,
                     st.MPI_SOURCE, st.MPI_TAG, n, v[0], v[1], v[2], v[3]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d ranks ok\n", argv[0], size);
    MPI_Finalize();
    return 0;
}
