# MPI 4 requests: Isendrecv(_replace), Request_get_status_all/any/some, generalized requests.
weft_mpi_program(req_ext req_ext.c)
weft_mpi_tests(req_ext NPS 1 2 4 TIMEOUT 60)
