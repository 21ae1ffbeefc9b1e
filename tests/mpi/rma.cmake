# One-sided communication (docs/rma.md): windows, operations, synchronization, errors.
foreach(p rma_win rma_fence rma_passive rma_err rma_more)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(rma_win NPS 1 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_tests(rma_fence NPS 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_tests(rma_passive NPS 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_tests(rma_err NPS 1 2 ARGS --weft TIMEOUT 120)
weft_mpi_tests(rma_more NPS 1 2 4 ARGS --weft TIMEOUT 120)
# Windows across nodes (tests/ofi runs it with WEFT_NODE_SPLIT, tests/net on fake hosts): on one
# node the same checks of the one-node path.
weft_mpi_program(rma_net rma_net.c)
weft_mpi_tests(rma_net NPS 2 4 ARGS --weft TIMEOUT 180)
# multithreaded (MPI_THREAD_MULTIPLE): the TSan run of `make test` takes them (label mt)
set_tests_properties(mpi.rma_passive.np2 mpi.rma_passive.np4 mpi.rma_net.np2 mpi.rma_net.np4
  PROPERTIES LABELS "mpi;mt")
# The fast paths of Put/Get/Fetch_and_op/Compare_and_swap/flush and what they leave to the general
# path (docs/rma.md, "Per-call costs").
weft_mpi_program(rma_fast rma_fast.c)
weft_mpi_tests(rma_fast NPS 1 2 4 ARGS --weft TIMEOUT 120)
