# Partitioned communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready*, MPI_Parrived): a ring,
# different partition counts on both sides, 20 rounds, partitions readied in random order, an early
# partition arriving before the others are ready, errors. Threads: tests/mpi_mt/mt_part.c.
weft_mpi_program(part part.c)
weft_mpi_tests(part NPS 1 2 3 4 ARGS 20 --weft TIMEOUT 120)
