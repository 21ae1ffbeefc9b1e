/* Fuzz test of the shared-memory receive path: malformed packets written into a real ring.
 *
 * Each case is a fresh job of two processes on a fresh segment (test_shm_boot.h's fake bootstrap):
 * rank 1 is a receiver with a full core endpoint (wc_ep_create, the shm and self transports,
 * wc_ep_deliver as the receive callback); rank 0 injects through the transport's internal API
 * (wx_shm_priv.h): first a valid EAGER packet with a random payload to a receive rank 1 has
 * posted, then one packet of the case's kind, either through wx_shm_send (a well-formed record
 * whose core header is bad) or written byte by byte into the ring or shared queue (a record whose
 * length or sender is bad, a ring whose owner is bad). The route (per-pair ring or shared queue,
 * WEFT_SHM_FAST_PATHS=0) is chosen at random per case.
 *
 * The receiver's wc_fatal_fn stands in for the MPI layer's (which aborts the job through the
 * launcher): it prints the message and exits with FZ_EXIT_PROTO. Each case asserts: the valid
 * packet was received intact; the receiver then either went on (status 0: a random header that
 * happens to be valid) or ended with FZ_EXIT_PROTO and a "protocol error" naming the sender and
 * the field the case broke; never a signal, a sanitizer report or a hang (alarm). Cases of a kind
 * that must be refused must end with the error.
 *
 * Usage: test_shm_fuzz [seed [case]]: without a seed one is drawn and printed; with a case, only
 * that case runs (to reproduce one). A bounded number of cases (FZ_CASES) within FZ_BUDGET_S. */
#include "test_shm_boot.h"
#include "core/wc_core.h"
#include "core/wc_ep.h"
#include "core/wc_proto.h"
#include "core/wc_request.h"
#include "transport/self/wx_self.h"
#include "transport/shm/wx_shm_priv.h"
#include "transport/shm/wx_shm_tl.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>

#define FZ_CASES      240
#define FZ_BUDGET_S   60.0
#define FZ_EXIT_PROTO 70
#define FZ_TAG        7
#define FZ_CTX        4242
#define FZ_MAXLEN     2048

/* Under AddressSanitizer a huge malloc (a random DYN HEAD length) must fail as malloc does, not
 * stop the process: the library then reports "out of memory". Unused without ASan. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

enum {
    K_VALID,      /* only the valid packet */
    K_RANDOM,     /* a random header and payload (valid or refused) */
    K_TYPE,       /* a type without a handler */
    K_EAGER_LEN,  /* EAGER whose len is not its payload's */
    K_RTS_LEN,    /* RTS whose payload is not a remote key */
    K_TOKEN,      /* FIN, ACK, CTS, CANCEL_REP, FRAG, CTX_REP, COOP_MATCH or COOP_FIN naming no
                     request (a token never handed out, a slot with no receive) */
    K_FRAG_OOB,   /* FRAG with a real token (from the receiver's CTS) outside its message */
    K_CTX_REQ,    /* CTX_REQ to a rank other than 0 */
    K_DYN,        /* DYN with bad flags, route, root or lengths */
    K_REC_LEN,    /* a record longer than what is left of the ring or queue */
    K_QUEUE_SRC,  /* a shared-queue record naming no other rank */
    K_OWNER,      /* a ring claimed with a bad owner */
    K_COOP_SLOT,  /* RTS offering a cooperative slot that is no slot of the sender */
    K_RMA,        /* RMA or RMA_REP from a same-node peer: the receiver has no window and waits
                     for no answer, so every one is refused (length, window or token) */
    K_NKINDS
};

static const char *const kind_name[K_NKINDS] = {
    "valid", "random", "type", "eager-len", "rts-len", "token", "frag-oob", "ctx-req", "dyn",
    "record-len", "queue-src", "owner", "coop-slot", "rma",
};

/* What the receiver's stderr must contain when the kind is refused. */
static const char *const kind_expect[K_NKINDS] = {
    NULL, NULL, "no packet type", "EAGER message length", "RTS payload of", "names no",
    "lies outside its message", "CTX_REQ for", "DYN", "claims a payload of", "names sender rank",
    "names owner", "no slot of that rank", "RMA ",
};

typedef struct {
    uint64_t seed;
    int kind;
    bool queue;   /* route by the shared queue (WEFT_SHM_FAST_PATHS=0) */
} fz_case_t;

/* ---- random numbers (xorshift64*), one stream per case ---- */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

/* A length-like value: small, at a boundary or anything. */
static uint64_t rnd_len(void)
{
    switch (rnd_below(6)) {
    case 0: return rnd_below(64);
    case 1: return rnd_below(FZ_MAXLEN + 1);
    case 2: return (uint64_t)1 << rnd_below(64);
    case 3: return ((uint64_t)1 << rnd_below(64)) - 1;
    case 4: return UINT64_MAX - rnd_below(16);
    default: return rnd();
    }
}

static unsigned char pat(uint64_t seed, size_t i)
{
    return (unsigned char)((seed >> (i % 7 * 8)) ^ (i * 131u) ^ (i >> 8));
}

/* ---- shared between the two processes of a case (tb_sh->scratch) ---- */

#define SC_DONE(sh)     ((sh)->scratch[0][0])   /* rank 0: the case's packets are in the ring */
#define SC_VALID_OK(sh) ((sh)->scratch[1][0])   /* rank 1: the valid packet arrived intact */

/* ---- the receiver (rank 1) ---- */

static void fz_fatal(wu_status_t st, const char *msg)
{
    fprintf(stderr, "fatal (%s): %s\n", wu_status_str(st), msg);
    fflush(stderr);
    _exit(FZ_EXIT_PROTO);
}

static int receiver(const wx_bootstrap_t *bs, const fz_case_t *c, size_t valid_len)
{
    wc_ep_t *ep;
    wx_tl_t *shm, *self;
    static unsigned char buf[FZ_MAXLEN], big[1 << 16];
    wc_fatal_fn = fz_fatal;
    TB_CHECK("wc_ep_create", WU_OK, wc_ep_create(1, 2, &ep));
    TB_CHECK("wx_shm_create", WU_OK, wx_shm_create(bs, wc_ep_deliver, ep, &shm));
    TB_CHECK("wx_self_create", WU_OK, wx_self_create(bs, wc_ep_deliver, ep, &self));
    wc_ep_peer_set(ep, 0, shm);
    wc_ep_peer_set(ep, 1, self);
    wc_ep_start(ep, false);
    wc_request_t valid, frag;
    memset(&valid, 0, sizeof(valid));
    memset(&frag, 0, sizeof(frag));
    TB_CHECK("wc_irecv", WU_OK, wc_irecv(ep, &valid, buf, sizeof(buf), 0, FZ_TAG, FZ_CTX));
    if (c->kind == K_FRAG_OOB)   /* the rendezvous whose CTS token rank 0 misuses */
        TB_CHECK("wc_irecv", WU_OK, wc_irecv(ep, &frag, big, sizeof(big), 0, FZ_TAG + 1, FZ_CTX));
    bs->fence();
    double deadline = tb_now() + 8, drained = 0;
    for (;;) {
        if (!SC_VALID_OK(tb_sh) && wc_request_is_complete(&valid)) {
            TB_CHECK("valid packet: status", WU_OK, valid.error);
            TB_CHECK("valid packet: bytes", valid_len, valid.st_bytes);
            for (size_t i = 0; i < valid_len; i++)
                TB_CHECK("valid packet: payload byte", pat(c->seed, i), buf[i]);
            SC_VALID_OK(tb_sh) = 1;
        }
        int did = wc_ep_progress(ep);
        if (SC_DONE(tb_sh) && !did) {
            /* nothing left in the ring: everything rank 0 wrote has been delivered */
            if (!drained)
                drained = tb_now();
            else if (tb_now() - drained > 0.05)
                break;
        } else {
            drained = 0;
        }
        if (!did)
            sched_yield();
        if (tb_now() > deadline) {
            fprintf(stderr, "rank 1: timed out (done %d)\n", (int)SC_DONE(tb_sh));
            return 1;
        }
    }
    return SC_VALID_OK(tb_sh) ? 0 : 1;
}

/* ---- the injector (rank 0) ---- */

static wc_hdr_t cts_seen;
static bool cts_got;

static void injector_cb(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    (void)src, (void)payload, (void)len, (void)arg;
    wc_hdr_t h;
    memcpy(&h, hdr, sizeof(h));
    if (h.type == WC_PKT_CTS) {
        cts_seen = h;
        cts_got = true;
    }
}

static int send_pkt(const wc_hdr_t *h, const void *payload, size_t len)
{
    for (double dl = tb_now() + 5; tb_now() < dl;) {
        wu_status_t st = wx_shm_send(1, h, payload, len);
        if (st == WU_OK)
            return 0;
        if (st != WU_ERR_AGAIN) {
            tb_fail("wx_shm_send", WU_OK, st);
            return 1;
        }
        wx_shm_progress();
        sched_yield();
    }
    fprintf(stderr, "rank 0: no room in the ring\n");
    return 1;
}

/* Write one record with the given len and spare fields (whatever they are) and payload_len bytes of
 * payload room, through the route already chosen for rank 1. */
static int write_raw(const wc_hdr_t *h, uint32_t len_field, uint32_t spare, uint32_t payload_len)
{
    wx_shm_tx_t *tx = &wx_shm.tx[1];
    wx_shm_rec_t *rec = NULL;
    uint64_t pos = 0;
    for (double dl = tb_now() + 5; !rec && tb_now() < dl; sched_yield())
        rec = tx->route == WX_SHM_ROUTE_RING ? wx_shm_tx_reserve(tx, payload_len)
                                              : wx_shm_mpq_reserve(tx, payload_len, &pos);
    if (!rec) {
        fprintf(stderr, "rank 0: no room in the ring\n");
        return 1;
    }
    for (uint32_t i = 0; i < payload_len; i++)
        rec->payload[i] = (unsigned char)rnd();
    rec->len = len_field;
    rec->spare = spare;
    memcpy(rec->hdr, h, WX_HDR_SIZE);
    if (tx->route == WX_SHM_ROUTE_RING) {
        uint32_t bytes = (uint32_t)WX_SHM_REC_BYTES(payload_len), next = tx->off + bytes;
        if (next == tx->size)
            next = 0;
        wx_shm_stamp_clear(tx->data, next);
        wx_shm_stamp_release(rec, tx->tail);
        tx->tail += bytes;
        tx->off = next;
    } else {
        wx_shm_stamp_release(rec, pos);
    }
    return 0;
}

static wc_hdr_t rnd_hdr(void)
{
    wc_hdr_t h;
    unsigned char *b = (unsigned char *)&h;
    for (size_t i = 0; i < sizeof(h); i++)
        b[i] = (unsigned char)rnd();
    return h;
}

/* The case's malformed (or, for K_RANDOM, arbitrary) packet. */
static int inject(const fz_case_t *c)
{
    static unsigned char payload[FZ_MAXLEN];
    size_t plen = rnd_below(FZ_MAXLEN + 1);
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (unsigned char)rnd();
    wc_hdr_t h = rnd_hdr();
    static const uint8_t token_types[] = { WC_PKT_FIN, WC_PKT_ACK, WC_PKT_CTS, WC_PKT_CANCEL_REP,
                                           WC_PKT_FRAG, WC_PKT_CTX_REP, WC_PKT_COOP_MATCH,
                                           WC_PKT_COOP_FIN };
    switch (c->kind) {
    case K_RANDOM:
        h.type = rnd_below(4) ? (uint8_t)rnd_below(WC_PKT_CANCEL_REP + 2) : h.type;
        if (rnd_below(2))
            h.len = plen;
        if (rnd_below(2))
            h.addr = rnd_below(4);
        if (rnd_below(2))
            h.reserved2 = (uint32_t)rnd_below(3);
        if (h.type == WC_PKT_RTS && rnd_below(2))
            plen = sizeof(wx_rkey_t);
        return send_pkt(&h, payload, plen);
    case K_TYPE:
        h.type = (uint8_t)(WC_PKT_COOP_FIN + 1 + rnd_below(256 - WC_PKT_COOP_FIN - 1));
        if (rnd_below(4) == 0)
            h.type = 0;
        return send_pkt(&h, payload, plen);
    case K_EAGER_LEN:
        h.type = WC_PKT_EAGER;
        h.len = rnd_len();
        if (h.len == plen)
            h.len = plen + 1 + rnd_below(8);
        return send_pkt(&h, payload, plen);
    case K_RTS_LEN:
        h.type = WC_PKT_RTS;
        if (plen == sizeof(wx_rkey_t))
            plen = rnd_below(sizeof(wx_rkey_t));
        return send_pkt(&h, payload, plen);
    case K_TOKEN:
        h.type = token_types[rnd_below(WU_ARRAY_SIZE(token_types))];
        if (h.type == WC_PKT_CANCEL_REP)
            h.flags |= WC_PKT_FLAG_CANCELLED;
        if (rnd_below(3) == 0)   /* an address in this process, but no token of the receiver */
            h.sreq = h.addr = (uint64_t)(uintptr_t)&h;
        return send_pkt(&h, payload, h.type == WC_PKT_FRAG ? plen : 0);
    case K_FRAG_OOB: {
        /* a rendezvous offer without a key: the receiver answers CTS with its request's token */
        wc_hdr_t rts = { .type = WC_PKT_RTS, .flags = WC_PKT_FLAG_NOKEY, .tag = FZ_TAG + 1,
                         .ctx = FZ_CTX, .len = 1000, .sreq = 8 };
        wx_rkey_t key = { 0, 0 };
        if (send_pkt(&rts, &key, sizeof(key)))
            return 1;
        for (double dl = tb_now() + 5; !cts_got && tb_now() < dl; sched_yield())
            wx_shm_progress();
        if (!cts_got) {
            fprintf(stderr, "rank 0: no CTS\n");
            return 1;
        }
        wc_hdr_t f = { .type = WC_PKT_FRAG, .addr = cts_seen.addr, .len = 1000 };
        f.sreq = rnd_below(2) ? 1000 + rnd_below(1u << 20) : UINT64_MAX - rnd_below(64);
        if (plen == 0)
            plen = 1;
        if (rnd_below(2)) {   /* or in range, but running past the end */
            f.sreq = rnd_below(1000);
            plen = 1000 - f.sreq + 1 + rnd_below(FZ_MAXLEN - 1001 + f.sreq);
        }
        return send_pkt(&f, payload, plen);
    }
    case K_COOP_SLOT: {
        /* an index past the slots, or generation 0 (never a message's) */
        h.type = WC_PKT_RTS;
        h.flags = WC_PKT_FLAG_COOP;
        h.addr = rnd_below(2) ? (rnd() | 1ull << 32) | (WX_SHM_COOP_SLOTS + rnd_below(1u << 20))
                              : rnd_below(WX_SHM_COOP_SLOTS);
        wx_rkey_t key = { rnd(), 0 };
        return send_pkt(&h, &key, sizeof(key));
    }
    case K_RMA:
        h.type = rnd_below(2) ? WC_PKT_RMA : WC_PKT_RMA_REP;
        if (rnd_below(2))
            h.len = plen;
        return send_pkt(&h, payload, plen);
    case K_CTX_REQ:
        h.type = WC_PKT_CTX_REQ;
        return send_pkt(&h, payload, 0);
    case K_DYN: {
        h.type = WC_PKT_DYN;
        int32_t *route = (int32_t *)payload;
        switch (rnd_below(5)) {
        case 0:   /* flags not exactly one of WHOLE (1), HEAD (2), FRAG (4) */
            h.flags = (uint8_t)(rnd_below(2) ? 0 : 3 + 2 * rnd_below(3));
            break;
        case 1:   /* a route longer than the job or the payload */
            h.flags = (uint8_t)(1 + rnd_below(2));
            h.addr = 1 + rnd_len();
            break;
        case 2:   /* a root that is no other rank */
            h.flags = (uint8_t)(1 + rnd_below(2));
            h.addr = 0;
            h.reserved2 = rnd_below(2) ? 1 : 2 + (uint32_t)rnd();
            h.len = plen;
            break;
        case 3:   /* a route entry that is no other rank (a job of 2: any route is wrong) */
            h.flags = (uint8_t)(1 + rnd_below(2));
            h.addr = 1;
            h.reserved2 = 0;
            route[0] = rnd_below(2) ? 1 : (int32_t)rnd();
            plen = 8;
            h.len = h.flags == 1 ? 0 : plen;
            break;
        default:  /* lengths: WHOLE's data is not its payload, HEAD has data, FRAG of no message */
            h.flags = (uint8_t)(1 << rnd_below(3));
            h.addr = h.flags == 4 ? h.addr : 0;
            h.reserved2 = 0;
            if (h.flags == 1 && h.len == plen)
                h.len = plen + 1;
            if (h.flags == 2 && plen == 0)
                plen = 8;
            break;
        }
        return send_pkt(&h, payload, plen);
    }
    case K_REC_LEN: {
        uint32_t size = wx_shm.tx[1].size;
        uint32_t bad = size - (uint32_t)rnd_below(WX_SHM_REC_OVERHEAD) +
                       (uint32_t)rnd_below((uint64_t)UINT32_MAX - size);
        if (bad == WX_SHM_REC_SKIP)
            bad--;
        return write_raw(&h, bad, 0, (uint32_t)rnd_below(256));
    }
    case K_QUEUE_SRC: {
        uint32_t spare = rnd_below(2) ? 1 : 2 + (uint32_t)rnd_below(UINT32_MAX - 2);
        h.type = WC_PKT_EAGER;
        h.len = 0;
        return write_raw(&h, 0, spare, 0);
    }
    default:
        return 0;
    }
}

static int injector(const wx_bootstrap_t *bs, const fz_case_t *c, size_t valid_len)
{
    TB_CHECK("wx_shm_init", WU_OK, wx_shm_init(bs, injector_cb, NULL));
    bs->fence();
    if (c->kind == K_OWNER) {
        /* claim rank 1's first ring as wx_shm_route would, but write a bad owner */
        uint32_t slot = atomic_fetch_add(&wx_shm.info[1].claimed, 1);
        wx_shm_ring_ctl_t *ctl =
            (wx_shm_ring_ctl_t *)(wx_shm.seg + wx_shm.hdr_bytes + wx_shm.block_bytes) + slot;
        uint32_t owner = rnd_below(2) ? 2 : 3 + (uint32_t)rnd_below(UINT32_MAX - 3);
        __atomic_store_n(&ctl->owner, owner, __ATOMIC_RELEASE);
        SC_VALID_OK(tb_sh) = 1;   /* no valid packet can precede it */
        SC_DONE(tb_sh) = 1;
        return 0;
    }
    unsigned char payload[FZ_MAXLEN];
    for (size_t i = 0; i < valid_len; i++)
        payload[i] = pat(c->seed, i);
    wc_hdr_t h = { .type = WC_PKT_EAGER, .tag = FZ_TAG, .ctx = FZ_CTX, .len = valid_len };
    if (send_pkt(&h, payload, valid_len) || inject(c))
        return 1;
    SC_DONE(tb_sh) = 1;
    return 0;
}

/* ---- one case: two processes, the receiver's stderr captured ---- */

static uint64_t case_seed(uint64_t seed, unsigned n)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (n + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1;
}

static int run_case(uint64_t seed, unsigned n, int *refused_p)
{
    fz_case_t c;
    rng = case_seed(seed, n);
    c.seed = rng;
    c.kind = n < 2 ? (int)n : (int)rnd_below(K_NKINDS);   /* the first two: valid, random */
    c.queue = c.kind == K_QUEUE_SRC || (c.kind != K_OWNER && rnd_below(3) == 0);
    size_t valid_len = rnd_below(FZ_MAXLEN + 1);
    uint64_t rng_inject = rnd();

    tb_sh = mmap(NULL, sizeof(*tb_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tb_sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&tb_sh->barrier, &ba, 2);
    snprintf(tb_job, sizeof(tb_job), "weft-fuzz-%d-%u", (int)getpid(), n);
    tb_size = 2;
    int errpipe[2];
    if (pipe(errpipe) != 0) {
        perror("pipe");
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pids[2];
    for (int r = 0; r < 2; r++) {
        pids[r] = fork();
        if (pids[r] == 0) {
            alarm(10);
            close(errpipe[0]);
            if (r == 1)
                dup2(errpipe[1], 2);
            if (c.queue)
                putenv((char *)"WEFT_SHM_FAST_PATHS=0");
            putenv((char *)"WEFT_SHM_CMA=0");
            wu_config_init();
            tb_rank = r;
            rng = rng_inject;
            wx_bootstrap_t bs;
            tb_bootstrap(&bs);
            int rc = r == 0 ? injector(&bs, &c, valid_len) : receiver(&bs, &c, valid_len);
            fflush(stdout);
            fflush(stderr);
            _exit(rc);
        }
    }
    close(errpipe[1]);
    char err[8192];
    size_t got = 0;
    ssize_t k;
    while ((k = read(errpipe[0], err + got, sizeof(err) - 1 - got)) > 0 && got < sizeof(err) - 1)
        got += (size_t)k;
    err[got] = 0;
    close(errpipe[0]);
    int st[2] = { 0, 0 };
    for (int left = 2; left > 0; left--) {
        int s;
        pid_t pid = waitpid(-1, &s, 0);
        if (pid < 0) {
            perror("waitpid");
            return 1;
        }
        int r = pid == pids[0] ? 0 : 1;
        st[r] = s;
        if (!(WIFEXITED(s) && (WEXITSTATUS(s) == 0 || (r == 1 && WEXITSTATUS(s) == FZ_EXIT_PROTO))))
            kill(pids[1 - r], SIGKILL);   /* the other may wait in the barrier */
    }
    char path[128];
    snprintf(path, sizeof(path), "/%s-shm", tb_job);
    shm_unlink(path);
    munmap(tb_sh, sizeof(*tb_sh));

    const char *why = NULL;
    bool refused = WIFEXITED(st[1]) && WEXITSTATUS(st[1]) == FZ_EXIT_PROTO;
    bool must_refuse = c.kind >= K_TYPE;
    if (strstr(err, "AddressSanitizer") || strstr(err, "runtime error:") ||
        strstr(err, "LeakSanitizer"))
        why = "sanitizer report";
    else if (WIFSIGNALED(st[1]))
        why = WTERMSIG(st[1]) == SIGALRM ? "receiver hung (timeout)" : "receiver killed by a signal";
    else if (!WIFEXITED(st[0]) || WEXITSTATUS(st[0]) != 0)
        why = "injector failed";
    else if (WEXITSTATUS(st[1]) != 0 && !refused)
        why = "receiver failed (not a protocol error)";
    else if (refused && must_refuse && !strstr(err, "protocol error"))
        why = "no \"protocol error\" in the message";
    else if (refused && !must_refuse && !strstr(err, "protocol error") &&
             !strstr(err, "out of memory"))
        why = "ended without a protocol error or out-of-memory message";
    else if (refused && must_refuse && !strstr(err, kind_expect[c.kind]))
        why = "the message does not name the bad field";
    else if (refused && !strstr(err, c.kind == K_OWNER || c.kind == K_QUEUE_SRC
                                           ? "from an unknown rank" : "from rank 0"))
        why = "the message does not name the sender";
    else if (!refused && must_refuse)
        why = "malformed packet accepted";
    else if (c.kind == K_VALID && refused)
        why = "valid packet refused";
    if (why) {
        fprintf(stderr, "case %u (seed %llu, kind %s, %s): FAILED: %s (receiver status 0x%x, "
                "injector 0x%x); receiver's stderr:\n%s\n", n, (unsigned long long)seed,
                kind_name[c.kind], c.queue ? "queue" : "ring", why, st[1], st[0], err);
        return 1;
    }
    if (refused && refused_p)
        (*refused_p)++;
    if (getenv("FZ_VERBOSE"))
        printf("case %u %s/%s: %s%s", n, kind_name[c.kind], c.queue ? "queue" : "ring",
               refused ? "refused: " : "accepted\n", refused ? err : "");
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t seed;
    if (argc > 1) {
        seed = strtoull(argv[1], NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 32;
    }
    printf("test_shm_fuzz: seed %llu (rerun one case: test_shm_fuzz %llu CASE)\n",
           (unsigned long long)seed, (unsigned long long)seed);
    fflush(stdout);
    if (argc > 2)
        return run_case(seed, (unsigned)strtoul(argv[2], NULL, 0), NULL);
    int failed = 0, refused = 0;
    unsigned n;
    double t0 = tb_now();
    for (n = 0; n < FZ_CASES && tb_now() - t0 < FZ_BUDGET_S; n++)
        failed += run_case(seed, n, &refused);
    printf("test_shm_fuzz: %u cases in %.1f s, %d refused as protocol errors, %d accepted, %d "
           "failed\n", n, tb_now() - t0, refused, (int)n - refused - failed, failed);
    return failed != 0;
}
