# Info objects, attribute caching, error handlers and added error classes (docs/attributes.md).
foreach(p info_basic errh_user attr_comm attr_type)
  weft_mpi_program(${p} ${p}.c)
endforeach()
weft_mpi_tests(info_basic NPS 1 2 4 ARGS --weft)
weft_mpi_tests(errh_user NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_comm NPS 1 2 4 ARGS --weft)
weft_mpi_tests(attr_type NPS 1 2 ARGS --weft)

# Attributes deleted by MPI_Finalize (wm_attr_finalize, first thing in MPI_Finalize).
weft_mpi_program(attr_finalize attr_finalize.c)
weft_mpi_tests(attr_finalize NPS 1 2 ARGS --weft)

# MPI_APPNUM from the launcher's MPMD sections.
weft_mpi_program(attr_appnum attr_appnum.c)
add_test(NAME mpi.attr_appnum.mpmd
  COMMAND ${WEFT_MPIEXEC} --timeout 60 -n 1 $<TARGET_FILE:attr_appnum> 0 : -n 2 $<TARGET_FILE:attr_appnum> 1)
set_tests_properties(mpi.attr_appnum.mpmd PROPERTIES LABELS mpi TIMEOUT 90)
