# Collectives on intercommunicators (issue 5): every collective defined on intercommunicators,
# blocking and nonblocking, int and _c forms, every root, against references computed in the
# test; MPI_IN_PLACE, Scan/Exscan and bad roots rejected; Intercomm_merge afterwards. Argument:
# bytes per rank block of the large case. Under MPICH too (without --weft).
weft_mpi_program(coll_inter coll_inter.c)
weft_mpi_tests(coll_inter NPS 2 3 4 ARGS 1048576 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_inter.np8 PROGRAM coll_inter NP 8 TIMEOUT 120 ARGS 262144 --weft)
# Nonblocking intercommunicator collectives advanced by the engine's idle and timer threads as well.
weft_mpi_test(NAME coll_inter.progress_threads.np3 PROGRAM coll_inter NP 3 TIMEOUT 120 ARGS 262144 --weft
  ENV WEFT_PROGRESS_IDLE=1 WEFT_PROGRESS_TIMER=1)
