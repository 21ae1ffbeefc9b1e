/* pthreads backend of the threading layer: management calls (the hot path is in wt_thread_inl.h). */
