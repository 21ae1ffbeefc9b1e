# Datatypes: constructors checked byte by byte against type maps built in the test, pack engine,
# envelope / contents, errors.
weft_mpi_program(dtype_layout dtype_layout.c)
weft_mpi_tests(dtype_layout NPS 1 2 ARGS --weft)
weft_mpi_program(dtype_err dtype_err.c)
weft_mpi_tests(dtype_err NPS 1 2 ARGS --weft)
