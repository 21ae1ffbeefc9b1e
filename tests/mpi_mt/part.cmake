# Partitioned communication readied by many threads at once (random order, Pready/list/range) with
# MPI_Parrived polled from every thread; different partition counts on both sides; many rounds.
weft_mpi_program(mt_part mt_part.c)
target_link_libraries(mt_part PRIVATE Threads::Threads)
weft_mt_tests(mt_part ARGS 30 TIMEOUT 180)
