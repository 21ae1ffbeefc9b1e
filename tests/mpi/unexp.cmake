# Unexpected messages: storage in proportion to their size (1000-byte messages, and sizes of the
# larger classes and past them), the budget WEFT_UNEXPECTED_MAX.
weft_mpi_program(p2p_unexp_mem p2p_unexp_mem.c)
weft_mpi_test(NAME p2p_unexp_mem.np2 PROGRAM p2p_unexp_mem NP 2 TIMEOUT 120 ARGS 100000 1000 --weft)
weft_mpi_test(NAME p2p_unexp_mem.big_eager.np2 PROGRAM p2p_unexp_mem NP 2 TIMEOUT 120
  ARGS 20000 5000 --weft ENV WEFT_SHM_EAGER_MAX=1m)
# 200000-byte messages stored unexpected need them sent eagerly (the sender's MPI_Send would wait
# for a match otherwise): both eager limits are raised, so across hosts (tests/net's suites) the
# pairs that span two hosts flood over tcp.
weft_mpi_test(NAME p2p_unexp_mem.exact.np4 PROGRAM p2p_unexp_mem NP 4 TIMEOUT 120
  ARGS 300 200000 --weft ENV WEFT_SHM_EAGER_MAX=1m WEFT_TCP_EAGER_MAX=1m)

# Past the budget the job ends within seconds, non-zero, naming the setting and the sender.
add_test(NAME mpi.unexp_budget.np2
  COMMAND ${CMAKE_COMMAND} -E env WEFT_UNEXPECTED_MAX=1m
          bash ${CMAKE_CURRENT_SOURCE_DIR}/expect_fail.sh 50 "WEFT_UNEXPECTED_MAX"
          ${WEFT_MPIEXEC} -n 2 --timeout 60 $<TARGET_FILE:p2p_unexp_mem> 10000 1000 --budget)
set_tests_properties(mpi.unexp_budget.np2 PROPERTIES LABELS mpi TIMEOUT 90
  PASS_REGULAR_EXPRESSION "MPI_ERR_NO_MEM.*from rank 1")
