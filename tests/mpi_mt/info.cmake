# Info objects, attributes, error handlers and error classes from many threads (docs/attributes.md).
weft_mpi_program(mt_info mt_info.c)
target_link_libraries(mt_info PRIVATE Threads::Threads)
weft_mt_tests(mt_info ARGS 200 TIMEOUT 120)
