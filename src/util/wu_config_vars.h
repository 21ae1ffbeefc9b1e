/* Every WEFT_* environment variable, written once: name, type, default, accepted range, scope,
 * meaning. weft-info prints this table; docs/tuning.md mirrors it. Add a line here to add a
 * variable.
 * Types: INT (decimal), SIZE (bytes, decimal with an optional k/m/g/t suffix), BOOL (0/1, yes/no,
 *   true/false, on/off), STR (WORDS "a|b|c": one of these, exactly; NULL: any text).
 * MIN, MAX: the accepted range of INT and SIZE (inclusive); 0 for the others.
 * Scope: RANK (read by each rank, may differ), RUN (as RANK, and MPI_T_cvar_write may change it
 *   while the program runs: only a setting whose users read it again each time, docs/mpit.md),
 *   JOB (chooses a protocol: every rank must have the same value, checked at start-up, wc_core.c),
 *   LAUNCH (read by mpiexec, which checks it).
 * An empty value means the default. */
#define WU_CONFIG_KIB 1024L
#define WU_CONFIG_MIB (1024L * 1024L)
#define WU_CONFIG_GIB (1024L * 1024L * 1024L)
#define WU_CONFIG_TIB (1024L * 1024L * 1024L * 1024L)
#define WU_CONFIG_INT_MAX 2147483647L

/* Columns: name, type, default, min, max, words, scope, meaning. */
#define WU_CONFIG_VARS(X)                                                                          \
    X(DEBUG,          BOOL, "0",      0, 1, NULL, RUN,  "print debug messages from every layer")   \
    X(SHM_EAGER_MAX,  SIZE, "16384",  0, 64 * WU_CONFIG_MIB, NULL, JOB,                            \
      "largest message sent eagerly through the shared-memory ring")                               \
    X(SHM_RING_SIZE,  SIZE, "0",      0, WU_CONFIG_GIB, NULL, RANK,                                \
      "bytes of each per-pair ring; 0 picks by job size (rank 0's value is used)")                 \
    X(SHM_FAST_PATHS, INT,  "8",      0, 65536, NULL, RANK,                                        \
      "per-pair rings each rank offers its first senders; later senders share its queue "          \
      "(rank 0's value is used)")                                                                  \
    X(SHM_QUEUE_SIZE, SIZE, "0",      0, WU_CONFIG_GIB, NULL, RANK,                                \
      "bytes of each rank's shared receive queue (rounded up to a power of two); 0: 512 KiB "      \
      "(rank 0's value is used)")                                                                  \
    X(SHM_CMA,        STR,  "auto",   0, 0, "auto|1|0", JOB,                                       \
      "single-copy rendezvous by process_vm_readv: auto, 1 or 0")                                  \
    X(SHM_CMA_MIN,    SIZE, "0",      0, WU_CONFIG_TIB, NULL, JOB,                                 \
      "smallest message sent by single-copy CMA rendezvous; 0: never (pipelined copy)")            \
    X(SHM_CMA_COLL_MIN, SIZE, "32768", 0, WU_CONFIG_TIB, NULL, JOB,                                \
      "the same for the messages of collectives; 0: never")                                        \
    X(SHM_COOP_MIN,   SIZE, "262144", 0, WU_CONFIG_TIB, NULL, JOB,                                 \
      "smallest contiguous message sent by cooperative rendezvous (either side copies by CMA); "   \
      "0: never")                                                                                  \
    X(SHM_FRAG_SIZE,  SIZE, "32768",  0, 64 * WU_CONFIG_MIB, NULL, JOB,                            \
      "fragment size of the pipelined rendezvous copy (0: 4096)")                                  \
    X(TRANSPORTS,     STR,  "auto",   0, 0,                                                        \
      "auto|self,shm|shm|self,ofi|ofi|shm,tcp|shm,ofi|self,tcp|tcp", JOB,                          \
      "transports between ranks: auto (shm on the node; across nodes tcp when the node has no "    \
      "RDMA device, /sys/class/infiniband absent or empty, and FI_PROVIDER is unset, else ofi), "  \
      "shm,tcp or shm,ofi (that one across nodes), self,shm (one node), self,tcp or self,ofi "     \
      "(every other rank through it, even on the node)")                                           \
    X(NODE_SPLIT,     INT,  "0",      -WU_CONFIG_INT_MAX, WU_CONFIG_INT_MAX, NULL, JOB,            \
      "testing: ranks r / k form a node (one machine plays several nodes), with -k ranks r % k "    \
      "(round robin); 0: nodes are hosts")                                                         \
    X(OFI_EAGER_MAX,  SIZE, "16384",  0, 64 * WU_CONFIG_MIB, NULL, JOB,                            \
      "largest message sent eagerly through libfabric (as shm: a program behaves alike on either)") \
    X(OFI_FRAG_SIZE,  SIZE, "32768",  1024, 64 * WU_CONFIG_MIB, NULL, JOB,                         \
      "fragment size of the pipelined rendezvous over libfabric")                                  \
    X(OFI_GET_MIN,    SIZE, "1",      0, WU_CONFIG_TIB, NULL, JOB,                                 \
      "rendezvous messages of at least this size are read by the receiver with fi_read when the "  \
      "provider has RMA (1: every rendezvous); 0: always the pipelined send")                      \
    X(RMA_NET,        STR,  "auto",   0, 0, "auto|msg", JOB,                                       \
      "one-sided windows across nodes: auto (Put and Get by the transport's RMA where it has "    \
      "remote write, messages otherwise), msg (messages only)")                                   \
    X(RMA_HUGEPAGE,   BOOL, "1",      0, 1, NULL, RANK,                                            \
      "MPI_Win_create / Win_attach memory that another process of the node reaches by single "    \
      "copy: madvise(MADV_HUGEPAGE) on the 2 MiB-aligned extents inside it (docs/rma.md)")         \
    X(OFI_RCACHE_SIZE, INT, "64",     0, 1048576, NULL, RANK,                                      \
      "entries of the libfabric memory registration cache")                                        \
    X(OFI_ADDR_FILE,  STR,  "",       0, 0, NULL, RANK,                                            \
      "testing: each rank writes its libfabric endpoint name (hex) to <this>.<rank> at start-up")  \
    X(OFI_CREDITS,    INT,  "0",      0, 65536, NULL, JOB,                                         \
      "packets a rank may have outstanding to one peer over libfabric; 0: its share of the peer's " \
      "posted buffers (WEFT_OFI_RX_BUFS / (ranks - 1) - 2, at least 1)")                           \
    X(OFI_RX_BUFS,    INT,  "64",     2, 65536, NULL, JOB,                                         \
      "receive buffers posted to the libfabric endpoint (the peers' credits are computed from it)") \
    X(OFI_TX_BUFS,    INT,  "64",     2, 65536, NULL, RANK,                                        \
      "send bounce buffers of the libfabric transport (none free: the send waits)")                \
    X(OFI_PREFETCH,   BOOL, "1",      0, 1, NULL, RANK,                                            \
      "load libfabric in a background thread as soon as the job is seen to span nodes, so that "   \
      "its slow start overlaps the rest of start-up")                                              \
    X(TCP_EAGER_MAX,  SIZE, "65536",  0, 64 * WU_CONFIG_MIB, NULL, JOB,                            \
      "largest message sent eagerly through Weft's tcp transport")                                 \
    X(TCP_FRAG_SIZE,  SIZE, "262144", 4096, 64 * WU_CONFIG_MIB, NULL, JOB,                         \
      "fragment size of the pipelined rendezvous over the tcp transport")                          \
    X(TCP_TX_QUEUE,   SIZE, "4m",     65536, WU_CONFIG_GIB, NULL, RANK,                            \
      "bytes a rank queues to one peer over tcp beyond what the socket took; past it sends wait "  \
      "(flow control)")                                                                            \
    X(TCP_AGG_NS,     INT,  "2000",   0, 1000000, NULL, RANK,                                      \
      "tcp, MPI_THREAD_MULTIPLE: a send to a peer within this many ns of the end of the previous "  \
      "one is queued, not written, and leaves with the others at the next send or progress (0: "    \
      "every send is written at once)")                                                            \
    X(TCP_ADDR_FILE,  STR,  "",       0, 0, NULL, RANK,                                            \
      "testing: each rank writes its tcp transport's address (IP:PORT) to <this>.<rank> at "       \
      "start-up")                                                                                  \
    X(UNEXPECTED_MAX, SIZE, "1g",     0, WU_CONFIG_TIB, NULL, RUN,                                 \
      "bytes a rank may hold in unexpected messages (arrived before their receive); past it the "   \
      "job aborts with MPI_ERR_NO_MEM naming the sender; 0: no limit")                            \
    X(PROGRESS_IDLE,  BOOL, "1",      0, 1, NULL, RANK,                                            \
      "run ltasks from idle threads (SCHED_IDLE, one per topology node of PROGRESS_IDLE_LEVEL)")   \
    X(PROGRESS_IDLE_LEVEL, STR, "package", 0, 0, "package|l3|core|machine|pu", RANK,               \
      "where idle threads live: package, l3, core, machine or pu")                                 \
    X(PROGRESS_IDLE_US, INT, "20",    0, 1000000, NULL, RANK,                                      \
      "idle threads: pause between polls that found work, in microseconds (throttling)")           \
    X(PROGRESS_TIMER, BOOL, "1",      0, 1, NULL, RANK, "run ltasks from a timer thread")          \
    X(PROGRESS_TIMER_US, INT, "1000", 10, 10000000, NULL, RANK,                                    \
      "timer thread period in microseconds")                                                       \
    X(PROGRESS_EXPLICIT, BOOL, "1",   0, 1, NULL, RANK,                                            \
      "run ltasks at explicit polling points inside MPI calls")                                    \
    X(SPIN_US,        INT,  "10",     0, 10000000, NULL, RUN,                                      \
      "microseconds a waiting thread polls before it sleeps")                                      \
    X(SPIN_MAX_US,    INT,  "200",    0, 10000000, NULL, RUN,                                      \
      "adaptive spin: the longest a waiting thread's spin grows to after sleeps that its message " \
      "ended sooner (SPIN_US or less: no adaptation)")                                             \
    X(WAIT_YIELD,     STR,  "auto",   0, 0, "auto|1|0", RUN,                                       \
      "a waiting rank (any MPI wait or blocking call) yields its core after every empty poll: "    \
      "auto (when ranks > CPUs), 1 or 0")                                                          \
    X(THREAD_BIAS,    BOOL, "0",      0, 1, NULL, RANK,                                            \
      "owner-biased locks: a thread that takes a lock of the message path alone takes it without "  \
      "atomic instructions (docs/threads.md; off by default until the 8-thread network runs are "  \
      "understood)")                                                                               \
    X(BIND,           STR,  "auto",   0, 0, "auto|core|none", LAUNCH,                              \
      "mpiexec: CPU binding of ranks: auto (a share of the CPUs each when ranks <= CPUs), core or " \
      "none")                                                                                      \
    X(BOUND_CPUS,     STR,  "",       0, 0, NULL, RANK,                                            \
      "set by mpiexec for each rank: the CPUs it is bound to (unset: not bound)")                  \
    X(TIMEOUT,        INT,  "0",      0, 2147483L, NULL, LAUNCH,                                   \
      "mpiexec: kill the job after this many seconds (0: never)")                                  \
    X(PMI,            STR,  "auto",   0, 0, "auto|pmix|pmi2|pmi1", RANK,                           \
      "how a rank talks to its launcher: auto (PMIx if PMIX_NAMESPACE is set, PMI-2 if PMI_FD and " \
      "PMI_JOBID are, else PMI-1), or pmix, pmi2, pmi1 (without a launcher: a singleton)")         \
    X(THREADS,        STR,  "pthreads", 0, 0, "pthreads|pth", RANK,                                \
      "threading backend of a build configured with WEFT_THREADS=runtime (read at start-up, "      \
      "before main); other builds have theirs fixed and ignore it")
