# The tool information interface (MPI_T, docs/mpit.md).
weft_mpi_program(tool_mpit tool_mpit.c)
set(tool_env WEFT_SPIN_US=37 WEFT_SHM_EAGER_MAX=8k WEFT_WAIT_YIELD=1)
foreach(np 2 4)
  weft_mpi_test(NAME tool_mpit.np${np} PROGRAM tool_mpit NP ${np} TIMEOUT 120 ARGS --weft
    ENV ${tool_env})
endforeach()
# The rendezvous counters name the protocol the settings choose: the pipelined copy (CMA off),
# shm's single copy (every rendezvous by CMA, the cooperative copy off), shm's cooperative copy,
# libfabric's RMA read.
weft_mpi_test(NAME tool_mpit.pipeline.np2 PROGRAM tool_mpit NP 2 TIMEOUT 120
  ARGS --weft --rndv=pipeline ENV ${tool_env} WEFT_SHM_CMA=0)
weft_mpi_test(NAME tool_mpit.cma.np2 PROGRAM tool_mpit NP 2 TIMEOUT 120
  ARGS --weft --rndv=get ENV ${tool_env} WEFT_SHM_CMA_MIN=1 WEFT_SHM_COOP_MIN=0)
weft_mpi_test(NAME tool_mpit.coop.np2 PROGRAM tool_mpit NP 2 TIMEOUT 120
  ARGS --weft --rndv=coop ENV ${tool_env} WEFT_SHM_COOP_MIN=64k)
weft_mpi_test(NAME tool_mpit.queued.np2 PROGRAM tool_mpit NP 2 TIMEOUT 120
  ARGS --weft --queued ENV ${tool_env} WEFT_PROGRESS_IDLE=0 WEFT_PROGRESS_TIMER=0)
if(WEFT_OFI)
  weft_mpi_test(NAME tool_mpit.ofi.np2 PROGRAM tool_mpit NP 2 TIMEOUT 120
    ARGS --weft --rndv=get_async ENV ${tool_env} WEFT_TRANSPORTS=self,ofi LABELS ofi)
endif()

# weft-info and MPI_T agree: the same control and performance variables, in the same order.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/check_weft_info_mpit.cmake [=[
# cmake -DWEFT_INFO=<weft-info> -DLISTER=<tool_mpit> -P check_weft_info_mpit.cmake
execute_process(COMMAND ${LISTER} --list OUTPUT_VARIABLE mpit RESULT_VARIABLE rc1)
execute_process(COMMAND ${WEFT_INFO} --parsable OUTPUT_VARIABLE info RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0)
  message(FATAL_ERROR "tool_mpit --list: exit status expected 0, got ${rc1}")
endif()
string(REGEX MATCHALL "cvar [A-Z0-9_]+" a "${mpit}")
string(REGEX MATCHALL "var:WEFT_[A-Z0-9_]+:mpit:cvar [0-9]+" b "${info}")
set(b2)
foreach(x ${b})
  string(REGEX REPLACE "var:(WEFT_[A-Z0-9_]+):mpit:.*" "cvar \\1" y "${x}")
  list(APPEND b2 "${y}")
endforeach()
if(NOT "${a}" STREQUAL "${b2}")
  message(FATAL_ERROR "control variables: MPI_T lists\n${a}\nweft-info lists\n${b2}")
endif()
string(REGEX MATCHALL "pvar [a-z0-9_]+" c "${mpit}")
string(REGEX MATCHALL "pvar:[a-z0-9_]+:index" d "${info}")
set(d2)
foreach(x ${d})
  string(REGEX REPLACE "pvar:([a-z0-9_]+):index" "pvar \\1" y "${x}")
  list(APPEND d2 "${y}")
endforeach()
if(NOT "${c}" STREQUAL "${d2}")
  message(FATAL_ERROR "performance variables: MPI_T lists\n${c}\nweft-info lists\n${d2}")
endif()
list(LENGTH a na)
list(LENGTH c nc)
if(na EQUAL 0 OR nc EQUAL 0)
  message(FATAL_ERROR "expected variables, got ${na} cvars and ${nc} pvars")
endif()
message(STATUS "weft-info and MPI_T agree on ${na} control and ${nc} performance variables")
]=])
add_test(NAME tools.weft_info_mpit
  COMMAND ${CMAKE_COMMAND} -DWEFT_INFO=$<TARGET_FILE:weft-info> -DLISTER=$<TARGET_FILE:tool_mpit>
          -P ${CMAKE_CURRENT_BINARY_DIR}/check_weft_info_mpit.cmake)
set_tests_properties(tools.weft_info_mpit PROPERTIES LABELS "unit;tools" TIMEOUT 60)
