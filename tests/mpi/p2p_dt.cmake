# Derived datatypes through point-to-point (issue 4).
# The core's typed calls with hand-built layouts (tests/unit/test_p2p_dt.c; its unit run is a
# singleton, so the self path): here on 2 and 4 ranks, on every path.
foreach(np 2 4)
  weft_mpi_test(NAME p2p_dt_core.np${np} PROGRAM test_p2p_dt NP ${np} TIMEOUT 120)
  weft_mpi_test(NAME p2p_dt_core.small_eager.np${np} PROGRAM test_p2p_dt NP ${np} TIMEOUT 120
    ENV WEFT_SHM_EAGER_MAX=256 WEFT_SHM_RING_SIZE=8192 WEFT_SHM_FRAG_SIZE=1024)
  weft_mpi_test(NAME p2p_dt_core.cma.np${np} PROGRAM test_p2p_dt NP ${np} TIMEOUT 120
    ENV WEFT_SHM_CMA_MIN=1)
endforeach()
weft_mpi_test(NAME p2p_dt_core.nocma.np2 PROGRAM test_p2p_dt NP 2 TIMEOUT 120 ENV WEFT_SHM_CMA=0
  WEFT_SHM_CMA_MIN=1)

# MPI programs: every send and receive call with derived datatypes, on every path.
weft_mpi_program(p2p_dt p2p_dt.c)
weft_mpi_tests(p2p_dt NPS 1 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_test(NAME p2p_dt.small_eager.np2 PROGRAM p2p_dt NP 2 TIMEOUT 120 ARGS --weft
  ENV WEFT_SHM_EAGER_MAX=256 WEFT_SHM_RING_SIZE=8192 WEFT_SHM_FRAG_SIZE=1024)
weft_mpi_test(NAME p2p_dt.cma.np2 PROGRAM p2p_dt NP 2 TIMEOUT 120 ARGS --weft ENV WEFT_SHM_CMA_MIN=1)
weft_mpi_test(NAME p2p_dt.cma.np4 PROGRAM p2p_dt NP 4 TIMEOUT 120 ARGS --weft ENV WEFT_SHM_CMA_MIN=1)

# Premature release: datatypes and communicators freed while requests use them.
weft_mpi_program(p2p_dt_release p2p_dt_release.c)
weft_mpi_tests(p2p_dt_release NPS 1 2 4 ARGS --weft TIMEOUT 120)
weft_mpi_test(NAME p2p_dt_release.cma.np2 PROGRAM p2p_dt_release NP 2 TIMEOUT 120 ARGS --weft
  ENV WEFT_SHM_CMA_MIN=1)
