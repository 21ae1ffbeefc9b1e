# Info objects, attribute caching, error handlers and added error classes (docs/attributes.md).
foreach(p info_basic errh_user attr_comm attr_type)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(info_basic NPS 1 2 4 ARGS --weft)
weft_mpi_tests(errh_user NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_comm NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_type NPS 1 2 ARGS --weft)

# Attributes deleted by MPI_Finalize: runs once MPI_Finalize calls wm_attr_finalize (wm_init.c).
file(READ ${PROJECT_SOURCE_DIR}/src/mpi/wm_init.c wm_init_src)
if(wm_init_src MATCHES "wm_attr_finalize")
  weft_mpi_program(attr_finalize attr_finalize.c)
  weft_mpi_tests(attr_finalize NPS 1 2 ARGS --weft)
endif()
