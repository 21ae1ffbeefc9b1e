# Sessions and communicators from groups (docs/sessions.md): MPI_Session_init before MPI_Init,
# sessions only, and a session after MPI_Finalize; 1 to 4 ranks (3: unequal halves).
weft_mpi_program(session session.c)
foreach(mode before only after)
  foreach(np 1 2 3 4)
    weft_mpi_test(NAME session.${mode}.np${np} PROGRAM session NP ${np} TIMEOUT 60
      ARGS ${mode} --weft)
  endforeach()
endforeach()
