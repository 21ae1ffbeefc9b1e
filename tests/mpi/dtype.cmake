# Datatypes: constructors checked byte by byte against type maps built in the test, pack engine,
# envelope / contents, errors; the types of MPI_Type_create_f90_* (dtype_f90, with threads).
weft_mpi_program(dtype_layout dtype_layout.c)
weft_mpi_tests(dtype_layout NPS 1 2 ARGS --weft)
weft_mpi_program(dtype_err dtype_err.c)
weft_mpi_tests(dtype_err NPS 1 2 ARGS --weft)
weft_mpi_program(dtype_packed dtype_packed.c)
weft_mpi_tests(dtype_packed NPS 1 2 4 ARGS --weft)
weft_mpi_program(dtype_f90 dtype_f90.c)
weft_mpi_tests(dtype_f90 NPS 2 ARGS --weft)
