# Communicators created and freed by threads while others communicate (docs/communicators.md).
weft_mpi_program(mt_comm_create mt_comm_create.c)
target_link_libraries(mt_comm_create PRIVATE Threads::Threads)
if(CMAKE_C_FLAGS MATCHES "sanitize")
  set(mt_comm_create_rounds 21)
else()
  set(mt_comm_create_rounds 70)
endif()
weft_mt_tests(mt_comm_create ARGS ${mt_comm_create_rounds} TIMEOUT 180)
weft_mt_test(mt_comm_create.np3 mt_comm_create NP 3 THREADS 4 TIMEOUT 180 ARGS ${mt_comm_create_rounds})
# Communicators freed while their requests are pending, then collected by other threads.
weft_mt_tests(mt_comm_create SUFFIX .free_pending ARGS ${mt_comm_create_rounds} --free-pending TIMEOUT 180)
# Context ids from world rank 0, asked by several threads of every rank while rank 0 waits in MPI.
weft_mt_tests(mt_ctxid ARGS 100 TIMEOUT 120)
# Communicators from a session's groups made by every thread at once, distinct and repeated
# stringtags (docs/sessions.md).
weft_mpi_program(mt_session mt_session.c)
target_link_libraries(mt_session PRIVATE Threads::Threads)
weft_mt_tests(mt_session ARGS 20 TIMEOUT 180)
