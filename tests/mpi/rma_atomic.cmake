# Accumulate atomicity under concurrent accumulates from every rank and thread, mixed ops, on
# windows taking CPU atomics and the mutex path (docs/rma.md, "Atomic accumulates"). Label mt: the
# TSan build runs it.
weft_mpi_program(rma_atomic rma_atomic.c)
foreach(np 2 4)
  weft_mpi_test(NAME rma_atomic.np${np} PROGRAM rma_atomic NP ${np} TIMEOUT 180 ARGS --weft LABELS mt)
endforeach()
# rma_passive (rma.cmake) is multithreaded too: the TSan run takes it as well.
set_tests_properties(mpi.rma_passive.np2 mpi.rma_passive.np4 PROPERTIES LABELS "mpi;mt")
