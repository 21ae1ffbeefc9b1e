# Leaving with operations pending (issue 18): an erroneous program unmaps the buffers of sends (or
# of a receive) that never complete and then calls MPI_Finalize, exit(0), or returns from main. No
# crash, the exit status our mpiexec gives (0 after MPI_Finalize, 1 for leaving without it), and a
# warning naming the pending operations. Sends whose requests were freed (not an error) still
# complete during MPI_Finalize. finalize_pending.sh runs the job with progress threads on the rank
# at fault; see finalize_pending.c for the cases.
weft_mpi_program(finalize_pending finalize_pending.c)
foreach(kind rndv eager late recv coll freed)
  foreach(end finalize exit return)
    if(kind STREQUAL "freed" AND NOT end STREQUAL "finalize")
      continue()   # freed requests complete during MPI_Finalize; an exit just ends them
    endif()
    add_test(NAME mpi.finalize_pending.${kind}.${end}
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/finalize_pending.sh ${WEFT_MPIEXEC}
              $<TARGET_FILE:finalize_pending> ${kind} ${end})
    set_tests_properties(mpi.finalize_pending.${kind}.${end} PROPERTIES LABELS mpi TIMEOUT 60)
  endforeach()
endforeach()
# The rank at fault without explicit polling: its progress threads alone move MPI_Finalize's
# barrier, so they keep running there, and must still leave the abandoned buffers alone.
foreach(kind eager late recv coll freed)
  add_test(NAME mpi.finalize_pending.${kind}.finalize.background
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/finalize_pending.sh ${WEFT_MPIEXEC}
            $<TARGET_FILE:finalize_pending> ${kind} finalize)
  set_tests_properties(mpi.finalize_pending.${kind}.finalize.background PROPERTIES LABELS mpi
    TIMEOUT 60 ENVIRONMENT FINALIZE_PENDING_BACKGROUND=1)
endforeach()
