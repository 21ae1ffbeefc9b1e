# Collectives (issue 5): each program checks every collective against a reference it computes with
# point-to-point, blocking, nonblocking overlapped with computation, and many outstanding at once
# (argument: the largest buffer of a rank in bytes, or the largest count). Under MPICH too:
# tests/mpi/validate_mpich.sh style, without --weft (cases MPICH 4.0 gets wrong are then left out).
weft_mpi_program(coll_move coll_move.c)
weft_mpi_program(coll_reduce coll_reduce.c)
# The collectives that go hierarchical across nodes (tests/ofi runs them on several nodes); here on
# one node, where the flat algorithms serve them.
weft_mpi_program(coll_hier coll_hier.c)
weft_mpi_tests(coll_hier NPS 1 3 4 ARGS 512 --weft TIMEOUT 120)
# Data movement (Barrier, Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w)): up to 4 MiB
# per rank with 1 and 2 ranks, 1 MiB with 3 and 4, 256 KiB with 8; every root, in place and not.
weft_mpi_tests(coll_move NPS 1 2 ARGS 4194304 --weft TIMEOUT 120)
weft_mpi_tests(coll_move NPS 3 4 ARGS 1048576 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_move.np8 PROGRAM coll_move NP 8 TIMEOUT 120 ARGS 262144 --weft)
# Reductions: predefined ops on the types they are defined for, pair types, user ops (one
# non-commutative); counts 0 .. 70000 elements (1000 with 8 ranks).
weft_mpi_tests(coll_reduce NPS 1 2 ARGS 70000 --weft TIMEOUT 120)
weft_mpi_tests(coll_reduce NPS 3 4 ARGS 70000 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_reduce.np8 PROGRAM coll_reduce NP 8 TIMEOUT 120 ARGS 1000 --weft)
# Nonblocking collectives advanced by the engine's idle and timer threads as well.
weft_mpi_test(NAME coll_move.progress_threads.np3 PROGRAM coll_move NP 3 TIMEOUT 120 ARGS 262144 --weft
  ENV WEFT_PROGRESS_IDLE=1 WEFT_PROGRESS_TIMER=1)
weft_mpi_test(NAME coll_reduce.progress_threads.np4 PROGRAM coll_reduce NP 4 TIMEOUT 120 ARGS 1000 --weft
  ENV WEFT_PROGRESS_IDLE=1 WEFT_PROGRESS_TIMER=1)
# Large messages without single copy (the pipelined rendezvous under the one-round algorithms), and
# single copy from the eager limit on (every rendezvous of a collective read by CMA).
weft_mpi_test(NAME coll_move.no_cma.np4 PROGRAM coll_move NP 4 TIMEOUT 120 ARGS 1048576 --weft
  ENV WEFT_SHM_CMA_COLL_MIN=0)
weft_mpi_test(NAME coll_reduce.cma_all.np3 PROGRAM coll_reduce NP 3 TIMEOUT 120 ARGS 70000 --weft
  ENV WEFT_SHM_CMA_COLL_MIN=1)
# The same data laid out differently on different ranks (contiguous / strided), large messages,
# with single copy and with the pipeline only.
weft_mpi_program(coll_layout coll_layout.c)
weft_mpi_tests(coll_layout NPS 1 2 3 4 ARGS 65536 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_layout.no_cma.np3 PROGRAM coll_layout NP 3 TIMEOUT 120 ARGS 65536 --weft
  ENV WEFT_SHM_CMA_COLL_MIN=0)
# Bad arguments give the right error class; freed and tested collective requests.
weft_mpi_program(coll_err coll_err.c)
weft_mpi_tests(coll_err NPS 1 2 4 ARGS --weft TIMEOUT 60)
# Persistent collectives (MPI_*_init) against their blocking forms over many starts, on
# MPI_COMM_WORLD, a split communicator and an intercommunicator; counts 3 and the argument.
weft_mpi_program(coll_persist coll_persist.c)
weft_mpi_tests(coll_persist NPS 1 2 3 ARGS 9000 --weft TIMEOUT 180)
weft_mpi_tests(coll_persist NPS 4 5 ARGS 9000 --weft TIMEOUT 300)
# Persistent neighborhood collectives on Cartesian, graph and distributed-graph communicators.
weft_mpi_program(coll_persist_neighbor coll_persist_neighbor.c)
weft_mpi_tests(coll_persist_neighbor NPS 1 2 3 4 5 ARGS 1000 --weft TIMEOUT 120)
# A start of a persistent collective allocates nothing (malloc counted in the starting thread).
weft_mpi_program(coll_persist_alloc coll_persist_alloc.c)
weft_mpi_tests(coll_persist_alloc NPS 1 2 4 ARGS 200 --weft TIMEOUT 60)
foreach(np 1 2 4)
  set_tests_properties(mpi.coll_persist_alloc.np${np} PROPERTIES SKIP_RETURN_CODE 77)
endforeach()
