# MPI_Cancel of sends (eager, rendezvous, synchronous, persistent, buffered, ready, to self) and
# of receives under the same patterns.
weft_mpi_program(p2p_cancel_send p2p_cancel_send.c)
weft_mpi_tests(p2p_cancel_send NPS 1 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_test(NAME p2p_cancel_send.cma.np2 PROGRAM p2p_cancel_send NP 2 TIMEOUT 120 ARGS --weft
  ENV WEFT_SHM_CMA_MIN=1)
