# Collectives from every thread at once, each on its own duplicate of MPI_COMM_WORLD (issue 5):
# Bcast, Allreduce, Allgather, Alltoall, Scan (three outstanding per thread), Reduce_scatter_block,
# Barrier, 2 .. 16384 ints.
weft_mpi_program(mt_coll mt_coll.c)
target_link_libraries(mt_coll PRIVATE Threads::Threads)
weft_mt_tests(mt_coll ARGS 200 TIMEOUT 180)
# Progress only from the engine's threads (explicit polling off).
weft_mt_test(mt_coll.background_only.np4 mt_coll NP 4 THREADS 8 TIMEOUT 180 ARGS 100
  ENV WEFT_PROGRESS_EXPLICIT=0)
