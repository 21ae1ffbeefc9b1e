# Collectives (issue 5): each program checks every collective against a reference it computes with
# point-to-point, blocking, nonblocking overlapped with computation, and many outstanding at once.
weft_mpi_program(coll_move coll_move.c)
# Data movement: 0 .. 4 MiB per rank buffer (1 MiB at 8 ranks), every root, in place and not.
weft_mpi_tests(coll_move NPS 1 2 3 4 ARGS 4194304 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_move.np8 PROGRAM coll_move NP 8 TIMEOUT 120 ARGS 1048576 --weft)
weft_mpi_program(coll_reduce coll_reduce.c)
# Reductions: every predefined op on types it is defined for, pair types, user ops (one
# non-commutative), counts 0 .. 200000 elements.
weft_mpi_tests(coll_reduce NPS 1 2 3 4 ARGS 200000 --weft TIMEOUT 120)
weft_mpi_test(NAME coll_reduce.np8 PROGRAM coll_reduce NP 8 TIMEOUT 120 ARGS 10000 --weft)
