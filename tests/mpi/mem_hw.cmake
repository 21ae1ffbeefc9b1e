# MPI_Alloc_mem/Free_mem, MPI_Get_hw_resource_info, RESOURCE_GUIDED splits.
weft_mpi_program(mem_hw mem_hw.c)
weft_mpi_tests(mem_hw NPS 1 2 4 ARGS --weft)
