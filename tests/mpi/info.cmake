# Info objects, attribute caching, error handlers and added error classes (docs/attributes.md).
foreach(p info_basic errh_user attr_comm attr_type)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(info_basic NPS 1 2 4 ARGS --weft)
weft_mpi_tests(errh_user NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_comm NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_type NPS 1 2 ARGS --weft)
