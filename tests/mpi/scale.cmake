# Scale: many ranks on few cores through the shared-memory transport, with a ceiling on the
# /dev/shm the segment takes (docs/shm.md). Label `scale`, RUN_SERIAL: CI can run it alone
# (`ctest -L scale`) or leave it out (`-LE scale`). Not in the sanitizer builds (label noasan;
# the TSan preset also skips it): 256 instrumented processes on 2 cores would take many minutes
# and check nothing the 4- and 8-process shm tests do not.
weft_mpi_program(scale_shm scale_shm.c)
weft_mpi_test(NAME scale_shm.np256 PROGRAM scale_shm NP 256 TIMEOUT 600 ARGS 1024 --weft
              LABELS scale noasan notsan)
# 64 ranks with no per-pair rings: everything through the shared queues, 63 producers each
weft_mpi_test(NAME scale_shm.queue.np64 PROGRAM scale_shm NP 64 TIMEOUT 300 ARGS 1024 --weft
              ENV WEFT_SHM_FAST_PATHS=0 LABELS scale noasan notsan)
set_tests_properties(mpi.scale_shm.np256 mpi.scale_shm.queue.np64 PROPERTIES RUN_SERIAL TRUE)

# The core's traffic through the shared queues: no per-pair rings at all, or one per receiver
# (the first sender's; the others share the queue).
weft_mpi_test(NAME p2p_order.shmqueue.np4 PROGRAM p2p_order NP 4 TIMEOUT 120 ARGS 1 --weft
              ENV WEFT_SHM_FAST_PATHS=0)
weft_mpi_test(NAME p2p_flood.shmqueue.np4 PROGRAM p2p_flood NP 4 TIMEOUT 120 ARGS 100000 --weft
              ENV WEFT_SHM_FAST_PATHS=1)
weft_mpi_test(NAME p2p_big.shmqueue.np4 PROGRAM p2p_big NP 4 TIMEOUT 120 ARGS 64 --weft
              ENV WEFT_SHM_FAST_PATHS=1 WEFT_SHM_CMA=0)
weft_mpi_test(NAME coll_move.shmqueue.np4 PROGRAM coll_move NP 4 TIMEOUT 120 ARGS 1048576 --weft
              ENV WEFT_SHM_FAST_PATHS=1)

# No room in /dev/shm: MPI_Init fails with advice that helps (docs/shm.md).
add_test(NAME mpi.scale_shm.noroom
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/shm_noroom.sh ${WEFT_MPIEXEC} $<TARGET_FILE:scale_shm>)
set_tests_properties(mpi.scale_shm.noroom PROPERTIES LABELS "mpi;scale" TIMEOUT 120 SKIP_RETURN_CODE 77
                     RUN_SERIAL TRUE)
