# Threads sending through the shm transport's shared queues: one per-pair ring per receiver (its
# first sender's), the other senders, several threads each, through the receiver's queue.
weft_mt_test(mt_tags.shmqueue.np4 mt_tags NP 4 THREADS 8 TIMEOUT 180 ARGS 256 ENV WEFT_SHM_FAST_PATHS=1)
weft_mt_test(mt_stress.shmqueue.np4 mt_stress NP 4 THREADS 8 TIMEOUT 300 ARGS ${mt_stress_count} 32
             ENV WEFT_SHM_FAST_PATHS=0)
