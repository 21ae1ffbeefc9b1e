# MPI 4 requests: Isendrecv(_replace), Request_get_status_all/any/some, generalized requests.
weft_mpi_program(req_ext req_ext.c)
weft_mpi_tests(req_ext NPS 1 2 4 TIMEOUT 60)

# Buffers of buffered sends: per communicator, MPI_BUFFER_AUTOMATIC, flush and iflush.
weft_mpi_program(p2p_bbuf p2p_bbuf.c)
weft_mpi_tests(p2p_bbuf NPS 1 2 3 4 ARGS --weft TIMEOUT 60)
