# Scale: many ranks on few cores through the shared-memory transport, with a ceiling on the
# /dev/shm the segment takes (docs/shm.md). Label `scale`, RUN_SERIAL: CI can run it alone
# (`ctest -L scale`) or leave it out (`-LE scale`). Not in the sanitizer builds (label noasan;
# the TSan preset also skips it): 256 instrumented processes on 2 cores would take many minutes
# and check nothing the 4- and 8-process shm tests do not.
weft_mpi_program(scale_shm scale_shm.c)
weft_mpi_test(NAME scale_shm.np256 PROGRAM scale_shm NP 256 TIMEOUT 600 ARGS 1024 --weft
              LABELS scale noasan notsan)
set_tests_properties(mpi.scale_shm.np256 PROPERTIES RUN_SERIAL TRUE)
