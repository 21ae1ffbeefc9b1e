# Info hints of communicators (mpi_assert_no_any_source/no_any_tag: exact matching).
weft_mpi_program(comm_hints comm_hints.c)
weft_mpi_tests(comm_hints NPS 1 2 4 ARGS --weft)
