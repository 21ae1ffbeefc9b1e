# MPIX_Dynbcast (docs/dynbcast.md): random roots and subsets, with other traffic, every byte
# checked; 8 ranks oversubscribe the machine. The small-ring run forces every path (HEAD + FRAGs
# from a few hundred bytes, full rings, queued forwarding).
weft_mpi_program(dynbcast dynbcast.c)
weft_mpi_tests(dynbcast NPS 2 4 8 ARGS 40 --weft TIMEOUT 120)
weft_mpi_test(NAME dynbcast.small_eager.np4 PROGRAM dynbcast NP 4 TIMEOUT 120 ARGS 30 --weft
  ENV WEFT_SHM_EAGER_MAX=256 WEFT_SHM_RING_SIZE=8192 WEFT_SHM_FRAG_SIZE=1024)
weft_mpi_test(NAME dynbcast.small_eager.np8 PROGRAM dynbcast NP 8 TIMEOUT 120 ARGS 20 --weft
  ENV WEFT_SHM_EAGER_MAX=256 WEFT_SHM_RING_SIZE=8192 WEFT_SHM_FRAG_SIZE=1024)
# Progress threads on: forwarding runs in whichever thread delivers, packets leave from any thread.
weft_mpi_test(NAME dynbcast.progress.np4 PROGRAM dynbcast NP 4 TIMEOUT 120 ARGS 40 --weft
  ENV WEFT_PROGRESS_IDLE=1 WEFT_PROGRESS_TIMER=1)
weft_mpi_test(NAME dynbcast.progress.small_eager.np8 PROGRAM dynbcast NP 8 TIMEOUT 120 ARGS 20 --weft
  ENV WEFT_PROGRESS_IDLE=1 WEFT_PROGRESS_TIMER=1 WEFT_SHM_EAGER_MAX=256 WEFT_SHM_RING_SIZE=8192
  WEFT_SHM_FRAG_SIZE=1024)
