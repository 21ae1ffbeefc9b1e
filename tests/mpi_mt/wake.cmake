# Waking the thread a message is for when more threads wait than there are cores (mt_wake.c;
# docs/progress.md, "Waiting"): 4 ranks x 8 threads and 2 x 4 (each ~1-3 s on the 2-core machine),
# 2 x 16 with the engine's threads off (only waiters poll), and 2 x 8 with no spin (every wait
# sleeps at once: the doorbell and the blocked waiters' hand-over carry every message).
weft_mpi_program(mt_wake mt_wake.c)
target_link_libraries(mt_wake PRIVATE Threads::Threads)
weft_mt_tests(mt_wake ARGS 2000 TIMEOUT 120)
weft_mt_test(mt_wake.many.np2 mt_wake NP 2 THREADS 16 TIMEOUT 120 ARGS 1000
             ENV WEFT_PROGRESS_IDLE=0 WEFT_PROGRESS_TIMER=0)
weft_mt_test(mt_wake.nospin.np2 mt_wake NP 2 THREADS 8 TIMEOUT 120 ARGS 1000 ENV WEFT_SPIN_US=0)
