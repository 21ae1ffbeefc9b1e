# Datatypes built, packed, queried and freed by many threads at once.
weft_mpi_program(mt_dtype mt_dtype.c)
target_link_libraries(mt_dtype PRIVATE Threads::Threads)
weft_mt_tests(mt_dtype ARGS 1000)
