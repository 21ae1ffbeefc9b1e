# Generalized requests completed by other threads while workers wait for them.
weft_mpi_program(mt_greq mt_greq.c)
target_link_libraries(mt_greq PRIVATE Threads::Threads)
weft_mt_tests(mt_greq ARGS 200 TIMEOUT 120)
