# Reduction operations (wm_op.c): predefined ops on every type, user ops, errors. Rank-local
# checks, run at 1, 2 and 4 ranks like every MPI program here.
foreach(p op_reduce op_user)
  weft_mpi_program(${p} ${p}.c)
  weft_mpi_tests(${p} NPS 1 2 4 ARGS --weft)
endforeach()
