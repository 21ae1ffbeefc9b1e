# Derived datatypes through point-to-point (issue 4): a datatype and a communicator freed by one
# thread while another is inside a blocking MPI_Recv on them.
weft_mpi_program(p2p_dt_mt p2p_dt_mt.c)
target_link_libraries(p2p_dt_mt PRIVATE Threads::Threads)
weft_mt_test(p2p_dt_mt.np2 p2p_dt_mt NP 2 THREADS 2 TIMEOUT 90 ARGS 8)
weft_mt_test(p2p_dt_mt.np4 p2p_dt_mt NP 4 THREADS 2 TIMEOUT 90 ARGS 8)
