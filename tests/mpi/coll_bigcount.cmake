# Large-count collectives (issue 5): every _c collective, blocking and nonblocking, against values the
# test computes; counts up to 600000 ints at 1-4 ranks, 100000 at 8.
weft_mpi_program(coll_bigcount coll_bigcount.c)
weft_mpi_tests(coll_bigcount NPS 1 2 3 4 ARGS 600000 TIMEOUT 120)
weft_mpi_test(NAME coll_bigcount.np8 PROGRAM coll_bigcount NP 8 TIMEOUT 120 ARGS 100000)
# Counts above INT_MAX (2 ranks, buffers of 2-4 GiB: run alone, not under the sanitizers).
weft_mpi_test(NAME coll_bigcount.huge.np2 PROGRAM coll_bigcount NP 2 TIMEOUT 240 ARGS --huge
  LABELS noasan)
set_tests_properties(mpi.coll_bigcount.huge.np2 PROPERTIES RUN_SERIAL TRUE)
