# Thread communicators (MPIX_Threadcomm_*, docs/threadcomm.md): one process x 4 and x 8 thread-ranks,
# 2 processes x 4 (local and remote thread-ranks mixed, process-rank traffic beside them), 3 x 1,
# 3 x 2 and 2 x 9, and the same below MPI_THREAD_MULTIPLE (--single). ARGS: regions started one
# after the other on the first threadcomm (a second threadcomm follows).
weft_mpi_program(threadcomm threadcomm.c)
target_link_libraries(threadcomm PRIVATE Threads::Threads)
weft_mt_test(threadcomm.np1 threadcomm NP 1 THREADS 4 TIMEOUT 120 ARGS 2)
weft_mt_test(threadcomm.np1.t8 threadcomm NP 1 THREADS 8 TIMEOUT 180 ARGS 1)
weft_mt_test(threadcomm.np2 threadcomm NP 2 THREADS 4 TIMEOUT 180 ARGS 1)
# across processes: one thread-rank per process (all traffic on the pair communicators), 3 x 2,
# and 2 x 9 (more than TC_DIRECT_MAX thread-ranks per process: everything through net)
weft_mt_test(threadcomm.np3.t1 threadcomm NP 3 THREADS 1 TIMEOUT 180 ARGS 1)
weft_mt_test(threadcomm.np3.t2 threadcomm NP 3 THREADS 2 TIMEOUT 180 ARGS 1)
weft_mt_test(threadcomm.np2.t9 threadcomm NP 2 THREADS 9 TIMEOUT 300 ARGS 1)
weft_mt_test(threadcomm.single.np1 threadcomm NP 1 THREADS 4 TIMEOUT 120 ARGS 1 --single)
weft_mt_test(threadcomm.single.np2 threadcomm NP 2 THREADS 3 TIMEOUT 180 ARGS 1 --single)
