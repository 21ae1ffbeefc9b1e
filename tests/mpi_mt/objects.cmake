# Object lifetime under threads (issue 4): communicators and datatypes created and freed by several
# threads while requests using them are pending, per-thread and shared objects (~5 s at 4 x 8).
weft_mpi_program(mt_objects mt_objects.c)
target_link_libraries(mt_objects PRIVATE Threads::Threads)
weft_mt_tests(mt_objects ARGS 120 40 TIMEOUT 180)
