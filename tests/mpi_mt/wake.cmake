# Waking the thread a message is for when more threads wait than there are cores (mt_wake.c;
# docs/progress.md, "Waiting with more threads than cores"): 4 ranks x 8 threads and 2 x 4 (each
# ~1 s on the 2-core machine), 2 x 16 with the engine's threads off (only waiters poll), and 2 x 8
# with no spin (every wait sleeps at once: the doorbell and the blocked waiters' hand-over carry
# every message). Under Pth every sleep is a timed poll of the whole process (no doorbell) and 1000
# pings take ~9 s at 2 x 4, so that build runs 200.
if(WEFT_THREADS STREQUAL "pth")
  set(mt_wake_count 200)
  set(mt_wake_many 200)
else()
  set(mt_wake_count 2000)
  set(mt_wake_many 1000)
endif()
weft_mpi_program(mt_wake mt_wake.c)
target_link_libraries(mt_wake PRIVATE Threads::Threads)
weft_mt_tests(mt_wake ARGS ${mt_wake_count} TIMEOUT 120)
weft_mt_test(mt_wake.many.np2 mt_wake NP 2 THREADS 16 TIMEOUT 120 ARGS ${mt_wake_many}
             ENV WEFT_PROGRESS_IDLE=0 WEFT_PROGRESS_TIMER=0)
weft_mt_test(mt_wake.nospin.np2 mt_wake NP 2 THREADS 8 TIMEOUT 120 ARGS ${mt_wake_many} ENV WEFT_SPIN_US=0)
