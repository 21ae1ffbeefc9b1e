/* The cooperative shared-memory rendezvous (docs/shm.md "Cooperative rendezvous"): a large message
 * finishes as long as either of its ranks is inside MPI. Ranks work in pairs (r, r ^ 1; an even
 * number of ranks); every case checks the data, the status and the bytes around the receive buffer.
 *
 *   receiver waits, sender outside MPI   the sender starts the send, then stays out of MPI until
 *                                        the receiver says (through a flag in a shared file, not
 *                                        MPI) that its receive completed; the send must then
 *                                        complete under MPI_Test (packets to handle, no copy
 *                                        left; a bound of 10 s for sanitizer builds).
 *   sender waits, receiver outside MPI   the same the other way: the receive is matched (inside
 *                                        MPI_Irecv, the offer having arrived first; or by the
 *                                        receiver's engine threads when --posted-first; or, with
 *                                        --in-ring, inside MPI_Irecv by its one look at the
 *                                        transports, the offer being still unread in the ring: the
 *                                        sender says through the shared file that it left, and
 *                                        the receiver made no MPI call since), then the receiver
 *                                        stays out of MPI until the sender's MPI_Wait returned.
 *                                        With --offer-wake (and --posted-first, the engine's idle
 *                                        threads off, its timer ticking every 10 s), the offer
 *                                        itself must wake the receiver's timer: the sender's
 *                                        MPI_Wait has to return within 5 s.
 *   both wait                            MPI_Sendrecv of both directions at once.
 *   truncation                           a receive shorter than the message, both of the above
 *                                        ways: MPI_ERR_TRUNCATE, its count, and nothing written
 *                                        past it.
 *   cancel                               40 unmatched large sends cancelled (more than a rank's
 *                                        slots: each must give its slot back), then one received.
 *   many in flight                       40 large sends at once (more than the slots: the rest take
 *                                        the old rendezvous), received in reverse order.
 *   datatypes                            a vector receive of a cooperative offer, a vector send.
 *   threads                              every thread of a pair exchanges large messages, each side
 *                                        alternately waiting and staying out of MPI.
 * With --strict (run with the engine's threads off) "outside MPI" means nobody of that rank runs
 * progress, so the flags prove that the peer alone moved the data; without it the engine's
 * threads may help. Where the cooperative copy cannot run (no CMA between the ranks, or
 * WEFT_SHM_COOP_MIN=0), the program checks the same results without the waits on flags (a
 * peer that is out of MPI could not finish the message) and says so.
 * Arguments: [rounds of the threads phase]. */
#include "mttest.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define BIG ((size_t)4 << 20)
#define GUARD 4096
#define NFLIGHT 40
#define TEST_S 10.0   /* MPI_Test time to handle what a peer that finished left: packets only */
enum { TAG_GO = 1, TAG_DATA = 2, TAG_MANY = 100, TAG_THR = 1000 };

static int strict, posted_first, in_ring, offer_wake, coop_possible, peer;
static long offers;   /* --in-ring: offers the sender announced through slot SLOT_OFFER */
#define SLOT_OFFER 1
static long rounds = 6;

/* Flags shared by the two ranks of a pair through a file (the test's own channel, not MPI; a pair
 * runs on one node): flags[r & 1][slot] counts events that rank r of the pair announced. */
#define NSLOTS 64
static _Atomic long (*flags)[NSLOTS];

static void flags_open(void)
{
    long id = 0;
    if (mt_rank == 0)
        id = (long)getpid();
    MT_CALL(MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD));
    char name[64];
    snprintf(name, sizeof(name), "/weft-mt-coop-%ld-%d", id, mt_rank / 2);
    size_t bytes = 2 * NSLOTS * sizeof(long);
    int fd = -1;
    if (mt_rank % 2 == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        MT_TRUE(fd >= 0 && ftruncate(fd, (off_t)bytes) == 0, "shm_open/ftruncate of %s", name);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank % 2)
        fd = shm_open(name, O_RDWR, 0600);
    MT_TRUE(fd >= 0, "shm_open of %s", name);
    flags = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    MT_TRUE(flags != MAP_FAILED, "mmap of %s", name);
    close(fd);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank % 2 == 0)
        shm_unlink(name);
}

static void flag_post(int slot)
{
    atomic_fetch_add_explicit(&flags[mt_rank & 1][slot], 1, memory_order_release);
}

/* Outside MPI: wait (sleeping, no MPI call) until rank r posted slot `slot` `count` times, at most
 * limit_s seconds. */
static void flag_wait_s(int r, int slot, long count, const char *what, int limit_s)
{
    for (int i = 0; atomic_load_explicit(&flags[r & 1][slot], memory_order_acquire) < count; i++) {
        if (i > limit_s * 1000)
            MT_FAIL("%s: rank %d did not finish its side in %d s while this rank stayed out of MPI "
                    "(the cooperative rendezvous should let it%s)", what, r, limit_s,
                    offer_wake ? "; the offer should have woken this rank's timer" : "");
        usleep(1000);
    }
}

static void flag_wait(int r, int slot, long count, const char *what)
{
    flag_wait_s(r, slot, count, what, 30);
}

/* Can this rank read its peer's memory (what the library's cooperative copy needs)? */
static int cma_works(void)
{
    static volatile long word = 0x5eed;
    long mine[2] = { (long)getpid(), (long)(uintptr_t)&word }, theirs[2];
    MT_CALL(MPI_Sendrecv(mine, 2, MPI_LONG, peer, TAG_GO, theirs, 2, MPI_LONG, peer, TAG_GO,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    long got = 0;
    struct iovec l = { &got, sizeof(got) }, rm = { (void *)(uintptr_t)theirs[1], sizeof(got) };
    int ok = process_vm_readv((pid_t)theirs[0], &l, 1, &rm, 1, 0) == (ssize_t)sizeof(got) &&
             got == 0x5eed;
    int all;
    MT_CALL(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    const char *off = getenv("WEFT_SHM_COOP_MIN");
    const char *cma = getenv("WEFT_SHM_CMA");
    if ((off && !strcmp(off, "0")) || (cma && !strcmp(cma, "0")))
        all = 0;
    return all;
}

static char *rbuf_alloc(size_t n)
{
    char *b = mt_malloc(n + 2 * GUARD);
    memset(b, 0xa5, n + 2 * GUARD);
    return b + GUARD;
}

static void rbuf_check(char *b, size_t cap, size_t n, uint64_t seed, const char *what)
{
    mt_verify(b, n, seed, what);
    mt_verify_const(b - GUARD, GUARD, 0xa5, "guard before the receive buffer");
    mt_verify_const(b + cap, GUARD, 0xa5, "guard after the receive buffer");
    if (n < cap)
        mt_verify_const(b + n, cap - n, 0xa5, "receive buffer past the message");
}

static void rbuf_free(char *b)
{
    free(b - GUARD);
}

/* MPI_Test r for at most TEST_S (what a peer that finished left here is packets to handle, no
 * copy): it must complete ("what: <side> expected complete ..."). Returns the last call's code. */
static int test_done(MPI_Request *r, MPI_Status *st, const char *what, const char *side)
{
    int done = 0, rc = MPI_SUCCESS;
    for (double t0 = MPI_Wtime(); !done && MPI_Wtime() - t0 < TEST_S;)
        rc = MPI_Test(r, &done, st);
    MT_TRUE(done, "%s: %s expected complete after %g s of MPI_Test got not complete", what, side,
            TEST_S);
    return rc;
}

/* One message of len bytes from the even rank of the pair to the odd one, into a receive of cap
 * bytes; `absent` is the side that stays out of MPI (0: sender, 1: receiver, -1: none). */
static void one_way(size_t len, size_t cap, int absent, int slot, long *count)
{
    int sender = (mt_rank & 1) == 0;
    uint64_t seed = mtt_seed(len, cap, (uint64_t)absent + 7, (uint64_t)slot);
    int wait_flags = coop_possible && absent >= 0;
    char what[96];
    snprintf(what, sizeof(what), "message of %zu bytes into %zu, %s out of MPI", len, cap,
             absent == 0 ? "sender" : absent == 1 ? "receiver" : "nobody");
    mtt_at("one_way %ld into %ld", (long)len, (long)cap);
    (*count)++;
    if (sender) {
        char *sbuf = mt_malloc(len);
        mt_fill(sbuf, len, seed);
        MPI_Request r;
        if (absent == 1 && posted_first)
            flag_wait(peer, slot, *count, what);   /* the receive is posted */
        MT_CALL(MPI_Isend(sbuf, (int)len, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &r));
        if (absent == 1 && in_ring)   /* the offer is in the ring: announce it outside MPI */
            flag_post(SLOT_OFFER);
        else if (absent == 1 && !posted_first)   /* the offer is ahead of "go": matched in Irecv */
            MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        if (absent == 0 && wait_flags) {
            flag_wait(peer, slot, *count, what);
            MT_CALL(test_done(&r, MPI_STATUS_IGNORE, what, "the receiver finished, the send"));
        }
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        flag_post(slot);
        free(sbuf);
        return;
    }
    char *rbuf = rbuf_alloc(cap);
    MPI_Request r;
    MPI_Status st;
    if (absent == 1 && in_ring)   /* no MPI call before the Irecv: the offer stays in the ring */
        flag_wait(peer, SLOT_OFFER, ++offers, what);
    else if (absent == 1 && !posted_first)
        MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Irecv(rbuf, (int)cap, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &r));
    if (absent == 1 && posted_first)
        flag_post(slot);
    if (absent == 1 && wait_flags) {
        /* --offer-wake: the receive was posted first and only this rank's timer can match it
         * (idle threads off), whose ticks are 10 s apart: the offer must wake it */
        flag_wait_s(peer, slot, *count, what, offer_wake ? 5 : 30);
        int rc = test_done(&r, &st, what, "the sender finished, the receive");
        MT_CLASS_EQ(what, len > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS, rc);
    } else {
        int rc = MPI_Wait(&r, &st);
        MT_CLASS_EQ(what, len > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS, rc);
        if (absent == 1 && posted_first)
            flag_wait(peer, slot, *count, what);   /* keep the counts in step */
    }
    size_t n = len < cap ? len : cap;
    MT_STATUS(what, st, peer, TAG_DATA, n);
    rbuf_check(rbuf, cap, n, seed, what);
    if (absent != 1 || !posted_first)
        flag_post(slot);
    rbuf_free(rbuf);
}

/* A collective's large message (a bulk cooperative rendezvous, docs/shm.md): MPI_Ibcast of len bytes
 * from the even rank of the pair (root of the pair's communicator) with one side out of MPI, as in
 * one_way: absent 1, the receiver starts its Ibcast (after the root's offer reached it: "go"; with
 * --posted-first before the offer: then the offer must wake its timer) and stays out of MPI until
 * the root's MPI_Wait returned, so the root wrote the whole message; absent 0, the root stays out
 * until the receiver's Wait returned. absent -1: a blocking MPI_Bcast, both copying. */
static void bcast_one_side(MPI_Comm pair, size_t len, int absent, int slot, long *count)
{
    int root = (mt_rank & 1) == 0;
    uint64_t seed = mtt_seed(len, 3, (uint64_t)absent + 11, (uint64_t)slot);
    int wait_flags = coop_possible && absent >= 0;
    char what[96];
    snprintf(what, sizeof(what), "Ibcast of %zu bytes, %s out of MPI", len,
             absent == 0 ? "root" : absent == 1 ? "receiver" : "nobody");
    mtt_at("bcast_one_side %ld, absent %ld", (long)len, (long)absent);
    (*count)++;
    char *buf = root ? mt_malloc(len) : rbuf_alloc(len);
    if (root)
        mt_fill(buf, len, seed);
    MPI_Request r;
    if (absent < 0) {
        MT_CALL(MPI_Bcast(buf, (int)len, MPI_BYTE, 0, pair));
        flag_post(slot);   /* (the counts in step) */
    } else if (root) {
        if (absent == 1 && posted_first)
            flag_wait(peer, slot, *count, what);   /* the receiver's Ibcast is under way */
        MT_CALL(MPI_Ibcast(buf, (int)len, MPI_BYTE, 0, pair, &r));
        if (absent == 1 && !posted_first)   /* the offer is ahead of "go": matched in Ibcast */
            MT_CALL(MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD));
        if (absent == 0 && wait_flags) {
            flag_wait(peer, slot, *count, what);
            MT_CALL(test_done(&r, MPI_STATUS_IGNORE, what,
                              "the receiver finished, the root's Ibcast"));
        }
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        flag_post(slot);
    } else {
        if (absent == 1 && !posted_first)
            MT_CALL(MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_CALL(MPI_Ibcast(buf, (int)len, MPI_BYTE, 0, pair, &r));
        if (absent == 1 && posted_first)
            flag_post(slot);
        if (absent == 1 && wait_flags) {
            flag_wait_s(peer, slot, *count, what, offer_wake ? 5 : 30);
            MT_CALL(test_done(&r, MPI_STATUS_IGNORE, what, "the root finished, the Ibcast"));
        }
        MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (absent == 1 && posted_first && !wait_flags)
            flag_wait(peer, slot, *count, what);   /* keep the counts in step */
        if (absent != 1 || !posted_first)
            flag_post(slot);
    }
    if (!root) {
        rbuf_check(buf, len, len, seed, what);
        rbuf_free(buf);
    } else {
        free(buf);
    }
}

static void both_wait(size_t len)
{
    uint64_t s_out = mtt_seed(len, (uint64_t)mt_rank, 1, 2), s_in = mtt_seed(len, (uint64_t)peer, 1, 2);
    char *sbuf = mt_malloc(len), *rbuf = rbuf_alloc(len);
    mt_fill(sbuf, len, s_out);
    MPI_Status st;
    mtt_at("Sendrecv %ld%.0ld", (long)len, 0);
    MT_CALL(MPI_Sendrecv(sbuf, (int)len, MPI_BYTE, peer, TAG_DATA, rbuf, (int)len, MPI_BYTE, peer,
                         TAG_DATA, MPI_COMM_WORLD, &st));
    MT_STATUS("Sendrecv", st, peer, TAG_DATA, len);
    rbuf_check(rbuf, len, len, s_in, "Sendrecv");
    free(sbuf);
    rbuf_free(rbuf);
}

static void cancels(void)
{
    char *sbuf = mt_malloc(BIG);
    mt_fill(sbuf, BIG, 99);
    if ((mt_rank & 1) == 0) {
        for (int i = 0; i < NFLIGHT; i++) {
            mtt_at("cancel %ld%.0ld", i, 0);
            MPI_Request r;
            MPI_Status st;
            MT_CALL(MPI_Isend(sbuf, (int)BIG, MPI_BYTE, peer, TAG_DATA + 50, MPI_COMM_WORLD, &r));
            MT_CALL(MPI_Cancel(&r));
            MT_CALL(MPI_Wait(&r, &st));
            int c = 0;
            MT_CALL(MPI_Test_cancelled(&st, &c));
            MT_TRUE(c, "cancel %d of an unmatched %zu-byte send: expected cancelled", i, BIG);
        }
        MT_CALL(MPI_Send(sbuf, (int)BIG, MPI_BYTE, peer, TAG_DATA + 51, MPI_COMM_WORLD));
    } else {
        char *rbuf = rbuf_alloc(BIG);
        MPI_Status st;
        MT_CALL(MPI_Recv(rbuf, (int)BIG, MPI_BYTE, peer, TAG_DATA + 51, MPI_COMM_WORLD, &st));
        MT_STATUS("message after 40 cancelled sends", st, peer, TAG_DATA + 51, BIG);
        rbuf_check(rbuf, BIG, BIG, 99, "message after 40 cancelled sends");
        int flag = 1;
        MT_CALL(MPI_Iprobe(peer, TAG_DATA + 50, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MT_TRUE(!flag, "a cancelled send expected withdrawn got one to receive");
        rbuf_free(rbuf);
    }
    free(sbuf);
}

static size_t many_len(int k)
{
    return (size_t)300 * 1024 + (size_t)k * 4097;
}

static void many_in_flight(void)
{
    MPI_Request r[NFLIGHT];
    char *b[NFLIGHT];
    for (int k = 0; k < NFLIGHT; k++) {
        size_t n = many_len(k);
        if ((mt_rank & 1) == 0) {
            b[k] = mt_malloc(n);
            mt_fill(b[k], n, mtt_seed(3, (uint64_t)k, 0, 0));
            MT_CALL(MPI_Isend(b[k], (int)n, MPI_BYTE, peer, TAG_MANY + k, MPI_COMM_WORLD, &r[k]));
        }
    }
    if (mt_rank & 1) {
        usleep(20000);   /* most offers arrive unexpected */
        for (int k = NFLIGHT - 1; k >= 0; k--) {
            b[k] = rbuf_alloc(many_len(k));
            MT_CALL(MPI_Irecv(b[k], (int)many_len(k), MPI_BYTE, peer, TAG_MANY + k, MPI_COMM_WORLD,
                              &r[k]));
        }
    }
    mtt_at("many in flight: Waitall%.0ld%.0ld", 0, 0);
    MT_CALL(MPI_Waitall(NFLIGHT, r, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NFLIGHT; k++) {
        if (mt_rank & 1) {
            rbuf_check(b[k], many_len(k), many_len(k), mtt_seed(3, (uint64_t)k, 0, 0),
                       "many in flight");
            rbuf_free(b[k]);
        } else {
            free(b[k]);
        }
    }
}

/* Vector of 512 blocks of 8 KiB, stride 16 KiB: 4 MiB of data in 8 MiB. */
static void datatypes(void)
{
    MPI_Datatype vec;
    MT_CALL(MPI_Type_vector(512, 8192, 16384, MPI_BYTE, &vec));
    MT_CALL(MPI_Type_commit(&vec));
    size_t span = (size_t)511 * 16384 + 8192;
    char *contig = mt_malloc(BIG), *strided = mt_malloc(span);
    for (int dir = 0; dir < 2; dir++) {   /* 0: contiguous -> vector; 1: vector -> contiguous */
        int sender = (mt_rank & 1) == dir;
        mtt_at("datatypes, direction %ld%.0ld", dir, 0);
        if (sender) {
            if (dir == 0) {
                mt_fill(contig, BIG, 11);
                MT_CALL(MPI_Send(contig, (int)BIG, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD));
            } else {
                for (int i = 0; i < 512; i++)
                    mt_fill(strided + (size_t)i * 16384, 8192, 1000 + (uint64_t)i);
                MT_CALL(MPI_Send(strided, 1, vec, peer, TAG_DATA, MPI_COMM_WORLD));
            }
        } else if (dir == 0) {
            memset(strided, 0xa5, span);
            MT_CALL(MPI_Recv(strided, 1, vec, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 512; i++) {
                const unsigned char *blk = (unsigned char *)strided + (size_t)i * 16384;
                for (size_t j = 0; j < 8192; j++)
                    if (blk[j] != mt_byte(11, (size_t)i * 8192 + j))
                        MT_FAIL("vector receive of a contiguous send: block %d byte %zu", i, j);
                if (i < 511)
                    mt_verify_const(blk + 8192, 8192, 0xa5, "vector receive: gap");
            }
        } else {
            MT_CALL(MPI_Recv(contig, (int)BIG, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE));
            for (int i = 0; i < 512; i++)
                mt_verify(contig + (size_t)i * 8192, 8192, 1000 + (uint64_t)i,
                          "contiguous receive of a vector send");
        }
    }
    MT_CALL(MPI_Type_free(&vec));
    free(contig);
    free(strided);
}

/* Threads: thread t of the even rank sends rounds messages to thread t of the odd one (tag
 * TAG_THR + t); sizes vary around the chunk size; each side alternately waits at once or
 * sleeps out of MPI (no flag: the engine or the other side's next call finishes it). */
static void thr_main(int t, void *arg)
{
    (void)arg;
    int sender = (mt_rank & 1) == 0;
    for (long i = 0; i < rounds; i++) {
        size_t len = (size_t)256 * 1024 + (size_t)((i * 7 + t * 13) % 17) * 65537;
        uint64_t seed = mtt_seed((uint64_t)t, (uint64_t)i, 5, 5);
        mtt_at("thread round %ld len %ld", i, (long)len);
        MPI_Request r;
        char *b = sender ? mt_malloc(len) : rbuf_alloc(len);
        if (sender) {
            mt_fill(b, len, seed);
            MT_CALL(MPI_Isend(b, (int)len, MPI_BYTE, peer, TAG_THR + t, MPI_COMM_WORLD, &r));
        } else {
            MT_CALL(MPI_Irecv(b, (int)len, MPI_BYTE, peer, TAG_THR + t, MPI_COMM_WORLD, &r));
        }
        if ((i + t + sender) % 2)
            usleep(2000);
        MPI_Status st;
        MT_CALL(MPI_Wait(&r, &st));
        if (!sender) {
            MT_STATUS("thread message", st, peer, TAG_THR + t, len);
            rbuf_check(b, len, len, seed, "thread message");
            rbuf_free(b);
        } else {
            free(b);
        }
        mtt_count(1);
    }
}

int main(int argc, char **argv)
{
    long nums[1] = { rounds };
    mtt_args(argc, argv, nums, 1);
    rounds = nums[0];
    strict = mtt_flag(argc, argv, "--strict");
    posted_first = mtt_flag(argc, argv, "--posted-first");
    in_ring = mtt_flag(argc, argv, "--in-ring");
    offer_wake = mtt_flag(argc, argv, "--offer-wake");
    mtt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_TRUE(mt_size % 2 == 0, "mt_coop works in pairs of ranks: expected an even size got %d",
            mt_size);
    mt_nodes_init();
    for (int r = 0; r < mt_size; r += 2)
        if (!mt_same_node(r, r + 1)) {
            /* the cooperative rendezvous and the test's flags are shared memory of one node */
            if (mt_rank == 0)
                printf("SKIP: ranks %d and %d of a pair run on different nodes\n", r, r + 1);
            fflush(stdout);
            MT_CALL(MPI_Finalize());
            exit(MTT_SKIP);
        }
    flags_open();
    peer = mt_rank ^ 1;
    coop_possible = cma_works();
    if (mt_rank == 0 && !coop_possible)
        printf("note: no cooperative copy here (CMA refused or turned off): results checked "
               "without waiting out of MPI\n");
    long count = 0;
    /* posted_first makes the receiver's engine match: it needs the engine's threads */
    int ways = strict && posted_first ? 1 : 2;
    const size_t lens[] = { BIG, BIG + 12345, (size_t)1 << 20, (size_t)300 * 1024 };
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
        for (int absent = 0; absent < ways; absent++)
            one_way(lens[i], lens[i], absent, 0, &count);
    /* truncation: a receive 1000 bytes short, and one of a single chunk */
    for (int absent = 0; absent < ways; absent++) {
        one_way(BIG, BIG - 1000, absent, 0, &count);
        one_way(BIG, 100000, absent, 0, &count);
    }
    one_way(BIG, BIG - 1000, -1, 0, &count);
    MPI_Comm pair;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, mt_rank / 2, mt_rank, &pair));
    long bcount = 0;
    const size_t blens[] = { (size_t)1 << 20, BIG + 12345 };
    for (size_t i = 0; i < sizeof(blens) / sizeof(blens[0]); i++)
        for (int absent = -1; absent < ways; absent++)
            bcast_one_side(pair, blens[i], absent, 2, &bcount);
    MT_CALL(MPI_Comm_free(&pair));
    both_wait(BIG);
    both_wait(BIG + 4097);
    cancels();
    many_in_flight();
    datatypes();
    mtt_run(mtt_nthreads, thr_main, NULL);
    return mtt_finish("mt_coop");
}
