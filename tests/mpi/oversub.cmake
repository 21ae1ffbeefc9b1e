# More ranks than CPUs, each rank bound to one CPU (WEFT_BIND=core: rank i on CPU i % C) and the
# waits in yield mode (WEFT_WAIT_YIELD=1): a receive from a rank bound to another CPU polls 64 times
# before its first yield, one from a rank on the same CPU yields at once (core/wc_wait.c,
# wc_wait_apart; docs/progress.md, "Waiting with more ranks than cores"). Pairs (r, r^1) of
# p2p_order sit on different CPUs, p2p_modes' and p2p_probe's peers on both; every message is
# checked, and a wait that never yields to the peer on its CPU would hang into the time-out.
weft_mpi_test(NAME p2p_order.bound_yield.np4 PROGRAM p2p_order NP 4 TIMEOUT 120 ARGS 1 --weft
  ENV WEFT_BIND=core WEFT_WAIT_YIELD=1)
weft_mpi_test(NAME p2p_modes.bound_yield.np4 PROGRAM p2p_modes NP 4 TIMEOUT 120 ARGS --weft
  ENV WEFT_BIND=core WEFT_WAIT_YIELD=1)
weft_mpi_test(NAME p2p_probe.bound_yield.np6 PROGRAM p2p_probe NP 6 TIMEOUT 120 ARGS 100 --weft
  ENV WEFT_BIND=core WEFT_WAIT_YIELD=1)

# Two ranks on one CPU without yield mode (stacked.sh: mpiexec confined to the first allowed CPU of a
# machine that has more, so WEFT_WAIT_YIELD=auto does not yield): a receive from the rank that last
# waited on our CPU yields after every empty poll (wc_wait_together; docs/progress.md, "Ranks stacked
# on one CPU"). Checks the messages and that the job ends; how fast is for the benchmarks.
add_test(NAME mpi.p2p_order.stacked.np2
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stacked.sh ${WEFT_MPIEXEC} $<TARGET_FILE:p2p_order> 1 --weft)
set_tests_properties(mpi.p2p_order.stacked.np2 PROPERTIES LABELS mpi TIMEOUT 150 SKIP_RETURN_CODE 77)
