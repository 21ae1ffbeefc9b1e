/* Every WEFT_* environment variable, written once: name, type, default, meaning.
 * weft-info prints this table; docs/tuning.md mirrors it. Add a line here to add a variable.
 * Types: INT (long), SIZE (bytes, accepts k/m/g suffix), BOOL (0/1/yes/no), STR. */
#define WU_CONFIG_VARS(X)                                                                          \
    X(DEBUG,          BOOL, "0",      "print debug messages from every layer")                      \
    X(SHM_EAGER_MAX,  SIZE, "16384",  "largest message sent eagerly through the shared-memory ring") \
    X(SHM_RING_SIZE,  SIZE, "0",      "bytes of each per-pair ring; 0 picks by job size")          \
    X(SHM_CMA,        STR,  "auto",   "single-copy rendezvous by process_vm_readv: auto, 1 or 0")  \
    X(SHM_CMA_MIN,    SIZE, "0",      "smallest message sent by single-copy CMA rendezvous; 0: never (pipelined copy)") \
    X(SHM_CMA_COLL_MIN, SIZE, "32768", "the same for the messages of collectives; 0: never")      \
    X(SHM_FRAG_SIZE,  SIZE, "32768",  "fragment size of the pipelined rendezvous copy")            \
    X(TRANSPORTS,     STR,  "auto",   "transports between ranks: auto (shm on the node, ofi across nodes), self,shm or self,ofi (every other rank through libfabric, even on the node)") \
    X(NODE_SPLIT,     INT,  "0",      "testing: ranks r / k form a node (one machine plays several nodes); 0: nodes are hosts") \
    X(OFI_EAGER_MAX,  SIZE, "16384",  "largest message sent eagerly through libfabric (as shm: a program behaves alike on either)") \
    X(OFI_FRAG_SIZE,  SIZE, "32768",  "fragment size of the pipelined rendezvous over libfabric")   \
    X(OFI_GET_MIN,    SIZE, "1",      "rendezvous messages of at least this size are read by the receiver with fi_read when the provider has RMA (1: every rendezvous); 0: always the pipelined send") \
    X(OFI_RCACHE_SIZE, INT, "64",     "entries of the libfabric memory registration cache") \
    X(OFI_ADDR_FILE,  STR,  "",       "testing: each rank writes its libfabric endpoint name (hex) to <this>.<rank> at start-up") \
    X(OFI_CREDITS,    INT,  "0",      "packets a rank may have outstanding to one peer over libfabric; 0: its share of the peer's posted buffers (WEFT_OFI_RX_BUFS / (ranks - 1) - 2, at least 1)") \
    X(OFI_RX_BUFS,    INT,  "64",     "receive buffers posted to the libfabric endpoint")         \
    X(OFI_TX_BUFS,    INT,  "64",     "send bounce buffers of the libfabric transport (none free: the send waits)") \
    X(PROGRESS_IDLE,  BOOL, "1",      "run ltasks from idle threads (SCHED_IDLE, one per topology node of PROGRESS_IDLE_LEVEL)") \
    X(PROGRESS_IDLE_LEVEL, STR, "package", "where idle threads live: package, l3, core or machine") \
    X(PROGRESS_IDLE_US, INT, "20",    "idle threads: pause between polls that found work, in microseconds (throttling)") \
    X(PROGRESS_TIMER, BOOL, "1",      "run ltasks from a timer thread")                             \
    X(PROGRESS_TIMER_US, INT, "1000", "timer thread period in microseconds")                        \
    X(PROGRESS_EXPLICIT, BOOL, "1",   "run ltasks at explicit polling points inside MPI calls")     \
    X(SPIN_US,        INT,  "10",     "microseconds a waiting thread polls before it sleeps")      \
    X(WAIT_YIELD,     STR,  "auto",   "a waiting rank (any MPI wait or blocking call) yields its core after every empty poll: auto (when ranks > CPUs), 1 or 0") \
    X(BIND,           STR,  "auto",   "mpiexec: CPU binding of ranks: auto (a share of the CPUs each when ranks <= CPUs), core or none") \
    X(BOUND_CPUS,     STR,  "",       "set by mpiexec for each rank: the CPUs it is bound to (unset: not bound)") \
    X(TIMEOUT,        INT,  "0",      "mpiexec: kill the job after this many seconds (0: never)")
