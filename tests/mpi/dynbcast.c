/* MPIX_Dynbcast / MPIX_Idynbcast (include/weft.h, docs/dynbcast.md): random roots send to random
 * subsets; destinations receive with ordinary calls posted before or after arrival (some only
 * after a delay or a barrier, some by probe, matched probe or with wildcards), while other
 * point-to-point traffic runs on the same and other tags; every byte is checked. Derived
 * datatypes on either side; a reversed communicator checks the rank translation. Then the
 * argument errors and truncation. Weft only (MPIX_Dynbcast is Weft's).
 * Argument: number of rounds; DYNBCAST_SEED draws another plan. */
#include "mpitest.h"
#include <weft.h>

#include <stdbool.h>

#define TAG_DYN   100      /* + round % 4 */
#define TAG_OTHER 200
#define TAG_EXCL  300      /* rounds without same-tag traffic */

/* A tiny deterministic generator every rank runs in step. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

/* Layout T: 2 blocks of 3 ints, stride 5 ints (extent 8 ints). Logical int i of n elements sits
 * at int (i / 6) * 8 + ((i % 6) / 3) * 5 + i % 3 of the buffer. */
#define T_INTS 6
#define T_EXT  8
static size_t t_pos(size_t i)
{
    return (i / 6) * T_EXT + ((i % 6) / 3) * 5 + i % 3;
}

static void t_fill(int *mem, size_t n_elems, uint64_t seed)
{
    uint8_t *b = (uint8_t *)mem;
    for (size_t i = 0; i < n_elems * T_INTS; i++)
        for (size_t k = 0; k < sizeof(int); k++)
            b[t_pos(i) * sizeof(int) + k] = mt_byte(seed, i * sizeof(int) + k);
}

static void t_check(const int *mem, size_t n_elems, uint64_t seed, const char *what)
{
    const uint8_t *b = (const uint8_t *)mem;
    size_t ints = n_elems * T_EXT;
    size_t next = 0;   /* next logical int */
    for (size_t p = 0; p < ints; p++) {
        bool data = next < n_elems * T_INTS && t_pos(next) == p;
        for (size_t k = 0; k < sizeof(int); k++) {
            uint8_t want = data ? mt_byte(seed, next * sizeof(int) + k) : 0xEE;
            if (b[p * sizeof(int) + k] != want)
                MT_FAIL("%s: byte %zu of the layout expected 0x%02x got 0x%02x", what,
                        p * sizeof(int) + k, want, b[p * sizeof(int) + k]);
        }
        if (data)
            next++;
    }
}

static const size_t sizes[] = { 0, 1, 8, 100, 255, 256, 257, 4000, 16384, 16385, 50000, 200000,
                                1 << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

enum { RECV_PREPOST, RECV_NOW, RECV_DELAY, RECV_AFTER_BARRIER, RECV_PROBE, RECV_WILD, RECV_MPROBE,
       RECV_MODES };

typedef struct {
    MPI_Comm comm;
    int      root;        /* in comm */
    int      nd;
    int      dests[64];
    int      mode[64];    /* by comm rank */
    size_t   bytes;       /* multiple of 24 when a layout is used */
    int      kind;        /* 0 bytes, 1 root sends T / dest ints, 2 root ints / dest T */
    int      tag;
    bool     traffic;
    bool     nonblocking;
    uint64_t seed;
} round_t;

static void plan(round_t *r, int i, MPI_Comm world, MPI_Comm rev, int size)
{
    r->comm = (rnd() % 3 == 0) ? rev : world;
    r->root = (int)(rnd() % (uint32_t)size);
    r->nd = 0;
    int order[64];
    for (int k = 0; k < size; k++)
        order[k] = k;
    for (int k = size - 1; k > 0; k--) {
        int j = (int)(rnd() % (uint32_t)(k + 1)), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    uint32_t p = rnd() % 4;   /* 0: everybody, else about half */
    for (int k = 0; k < size; k++) {
        r->mode[order[k]] = (int)(rnd() % RECV_MODES);
        if (order[k] != r->root && (p == 0 || rnd() % 2))
            r->dests[r->nd++] = order[k];
    }
    uint32_t s = rnd() % (NSIZES + 3);
    r->bytes = s < NSIZES ? sizes[s] : (size_t)(rnd() % 70000);
    if (r->bytes == (1u << 20) && rnd() % 2)
        r->bytes = 300000;
    r->kind = (int)(rnd() % 3);
    if (r->kind)
        r->bytes = r->bytes / 24 * 24;
    r->traffic = rnd() % 4 != 0;
    r->tag = r->traffic ? TAG_DYN + i % 4 : TAG_EXCL;
    r->nonblocking = rnd() % 2;
    r->seed = 0x1000u + (uint64_t)i * 7919u;
}

/* Ordinary traffic of a round: everybody but the root sends to its right neighbour on the round's
 * tag; the root sends to everybody on TAG_OTHER, half before its broadcast and half after. */
typedef struct {
    MPI_Request req[130];
    int         n;
    char       *sbuf, *rbuf_left, *rbuf_root;
    size_t      len_left, len_root;
} traffic_t;

static size_t traffic_len(int i, int from)
{
    static const size_t l[] = { 0, 100, 20000 };
    return l[(size_t)(i * 31 + from * 7) % 3];
}

static void traffic_start(traffic_t *t, const round_t *r, int i, int me, int size, int phase)
{
    int left = (me + size - 1) % size, right = (me + 1) % size;
    if (phase == 0) {
        t->n = 0;
        t->sbuf = mt_malloc(20000);
        t->rbuf_left = mt_malloc(20000);
        t->rbuf_root = mt_malloc(20000);
        if (me == r->root)
            mt_fill(t->sbuf, 20000, 0x600000u + (uint64_t)i);
        if (me != r->root && right != me) {
            mt_fill(t->sbuf, traffic_len(i, me), 0x500000u + (uint64_t)i * 64 + (uint64_t)me);
            MT_CALL(MPI_Isend(t->sbuf, (int)traffic_len(i, me), MPI_BYTE, right, r->tag, r->comm,
                              &t->req[t->n++]));
        }
        if (left != r->root && left != me)
            MT_CALL(MPI_Irecv(t->rbuf_left, 20000, MPI_BYTE, left, r->tag, r->comm,
                              &t->req[t->n++]));
        if (me != r->root)
            MT_CALL(MPI_Irecv(t->rbuf_root, 20000, MPI_BYTE, r->root, TAG_OTHER, r->comm,
                              &t->req[t->n++]));
    }
    if (me == r->root) {
        for (int d = 0; d < size; d++) {
            if (d == me || (d % 2) != phase)
                continue;
            MT_CALL(MPI_Isend(t->sbuf, 7 + d, MPI_BYTE, d, TAG_OTHER, r->comm, &t->req[t->n++]));
        }
    }
}

static void traffic_finish(traffic_t *t, const round_t *r, int i, int me, int size)
{
    MPI_Status st[130];
    MT_CALL(MPI_Waitall(t->n, t->req, st));
    int left = (me + size - 1) % size;
    if (left != r->root && left != me)
        mt_verify(t->rbuf_left, traffic_len(i, left), 0x500000u + (uint64_t)i * 64 + (uint64_t)left,
                  "same-tag traffic");
    if (me != r->root)
        mt_verify(t->rbuf_root, (size_t)(7 + me), 0x600000u + (uint64_t)i, "root's other traffic");
    free(t->sbuf);
    free(t->rbuf_left);
    free(t->rbuf_root);
}

static MPI_Datatype type_t;
static long long got_msgs, got_bytes;   /* dynamic broadcasts received by this rank */

/* The receive side of one destination, started (prepost) or run whole. */
typedef struct {
    char       *buf;
    size_t      alloc;
    MPI_Request req;
} dest_t;

static void dest_buffers(dest_t *d, const round_t *r)
{
    d->alloc = r->kind == 2 ? r->bytes / 24 * T_EXT * sizeof(int) + 1 : r->bytes + 1;
    d->buf = mt_malloc(d->alloc);
    memset(d->buf, 0xEE, d->alloc);
}

static void dest_post(dest_t *d, const round_t *r, int src, int tag)
{
    if (r->kind == 2)
        MT_CALL(MPI_Irecv(d->buf, (int)(r->bytes / 24), type_t, src, tag, r->comm, &d->req));
    else if (r->kind == 1)
        MT_CALL(MPI_Irecv(d->buf, (int)(r->bytes / sizeof(int)), MPI_INT, src, tag, r->comm,
                          &d->req));
    else
        MT_CALL(MPI_Irecv(d->buf, (int)r->bytes, MPI_BYTE, src, tag, r->comm, &d->req));
}

/* Matched probe, then MPI_Imrecv of the message it took. */
static void dest_mprobe(dest_t *d, const round_t *r)
{
    MPI_Message msg;
    MPI_Status st;
    MT_CALL(MPI_Mprobe(r->root, r->tag, r->comm, &msg, &st));
    MT_EQ("mprobed source", r->root, st.MPI_SOURCE);
    if (r->kind == 2)
        MT_CALL(MPI_Imrecv(d->buf, (int)(r->bytes / 24), type_t, &msg, &d->req));
    else if (r->kind == 1)
        MT_CALL(MPI_Imrecv(d->buf, (int)(r->bytes / sizeof(int)), MPI_INT, &msg, &d->req));
    else
        MT_CALL(MPI_Imrecv(d->buf, (int)r->bytes, MPI_BYTE, &msg, &d->req));
}

static void dest_finish(dest_t *d, const round_t *r, int i)
{
    MPI_Status st;
    MT_CALL(MPI_Wait(&d->req, &st));
    MT_EQ("status source", r->root, st.MPI_SOURCE);
    MT_EQ("status tag", r->tag, st.MPI_TAG);
    int n = -1;
    MT_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
    MT_EQ("received bytes", (long long)r->bytes, n);
    char what[96];
    snprintf(what, sizeof(what), "round %d (root %d, %zu bytes, kind %d)", i, r->root, r->bytes,
             r->kind);
    if (r->kind == 2) {
        t_check((const int *)d->buf, r->bytes / 24, r->seed, what);
    } else {
        mt_verify(d->buf, r->bytes, r->seed, what);
        mt_verify_const(d->buf + r->bytes, 1, 0xEE, "byte after the message");
    }
    free(d->buf);
    got_msgs++;
    got_bytes += (long long)r->bytes;
}

static void root_send(const round_t *r, MPI_Request *req)
{
    void *buf;
    int count;
    MPI_Datatype dt;
    if (r->kind == 1) {
        count = (int)(r->bytes / 24);
        buf = mt_malloc((size_t)count * T_EXT * sizeof(int) + 1);
        t_fill(buf, (size_t)count, r->seed);
        dt = type_t;
    } else {
        count = r->kind == 2 ? (int)(r->bytes / sizeof(int)) : (int)r->bytes;
        buf = mt_malloc(r->bytes + 1);
        mt_fill(buf, r->bytes, r->seed);
        dt = r->kind == 2 ? MPI_INT : MPI_BYTE;
    }
    if (r->nonblocking) {
        MT_CALL(MPIX_Idynbcast(buf, count, dt, r->dests, r->nd, r->tag, r->comm, req));
        MT_CALL(MPI_Wait(req, MPI_STATUS_IGNORE));
    } else {
        MT_CALL(MPIX_Dynbcast(buf, count, dt, r->dests, r->nd, r->tag, r->comm));
    }
    free(buf);   /* the root's part is done: the buffer may go */
}

static void run_round(int i, MPI_Comm world, MPI_Comm rev, int size)
{
    round_t r;
    plan(&r, i, world, rev, size);
    int me;
    MPI_Comm_rank(r.comm, &me);
    bool is_dest = false;
    for (int k = 0; k < r.nd; k++)
        is_dest |= r.dests[k] == me;
    int mode = r.mode[me];
    if (r.traffic && mode == RECV_WILD)
        mode = RECV_NOW;   /* the neighbours' traffic shares the tag: no wildcard */
    dest_t d;
    int src = r.root, tag = r.tag;
    if (mode == RECV_WILD) {
        src = MPI_ANY_SOURCE;
        tag = MPI_ANY_TAG;
    }
    traffic_t t;
    if (is_dest) {
        dest_buffers(&d, &r);
        if (mode == RECV_PREPOST)
            dest_post(&d, &r, src, tag);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (r.traffic)
        traffic_start(&t, &r, i, me, size, 0);
    if (me == r.root) {
        MPI_Request req;
        root_send(&r, &req);
    }
    if (r.traffic)
        traffic_start(&t, &r, i, me, size, 1);
    if (is_dest) {
        switch (mode) {
        case RECV_PREPOST:
            break;
        case RECV_DELAY:
            mt_sleep_ms(1 + (int)((unsigned)(i * 13 + me) % 10));
            dest_post(&d, &r, src, tag);
            break;
        case RECV_PROBE: {
            MPI_Status st;
            MT_CALL(MPI_Probe(r.root, r.tag, r.comm, &st));
            int n = -1;
            MT_CALL(MPI_Get_count(&st, MPI_BYTE, &n));
            MT_EQ("probed bytes", (long long)r.bytes, n);
            MT_EQ("probed source", r.root, st.MPI_SOURCE);
            dest_post(&d, &r, src, tag);
            break;
        }
        case RECV_MPROBE:
            dest_mprobe(&d, &r);
            break;
        case RECV_AFTER_BARRIER:
            break;
        default:
            dest_post(&d, &r, src, tag);
        }
        if (mode != RECV_AFTER_BARRIER)
            dest_finish(&d, &r, i);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (is_dest && mode == RECV_AFTER_BARRIER) {
        dest_post(&d, &r, src, tag);
        dest_finish(&d, &r, i);
    }
    if (r.traffic)
        traffic_finish(&t, &r, i, me, size);
}

static void check_errors(int size)
{
    int me = mt_rank;
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));   /* MPI_COMM_NULL's */
    char b[4] = { 0 };
    int out[1] = { size };
    MT_CLASS_EQ("rank out of range", MPI_ERR_RANK,
                MPIX_Dynbcast(b, 4, MPI_BYTE, out, 1, 1, MPI_COMM_WORLD));
    out[0] = -5;
    MT_CLASS_EQ("negative rank", MPI_ERR_RANK,
                MPIX_Dynbcast(b, 4, MPI_BYTE, out, 1, 1, MPI_COMM_WORLD));
    out[0] = me;
    MT_CLASS_EQ("the root itself", MPI_ERR_RANK,
                MPIX_Dynbcast(b, 4, MPI_BYTE, out, 1, 1, MPI_COMM_WORLD));
    MT_CLASS_EQ("negative ndests", MPI_ERR_ARG,
                MPIX_Dynbcast(b, 4, MPI_BYTE, out, -1, 1, MPI_COMM_WORLD));
    MT_CLASS_EQ("NULL dests", MPI_ERR_ARG,
                MPIX_Dynbcast(b, 4, MPI_BYTE, NULL, 2, 1, MPI_COMM_WORLD));
    MT_CLASS_EQ("negative tag", MPI_ERR_TAG,
                MPIX_Dynbcast(b, 4, MPI_BYTE, NULL, 0, -1, MPI_COMM_WORLD));
    MT_CLASS_EQ("bad datatype", MPI_ERR_TYPE,
                MPIX_Dynbcast(b, 4, MPI_DATATYPE_NULL, NULL, 0, 1, MPI_COMM_WORLD));
    MT_CLASS_EQ("null communicator", MPI_ERR_COMM,
                MPIX_Dynbcast(b, 4, MPI_BYTE, NULL, 0, 1, MPI_COMM_NULL));
    MPI_Request req = MPI_REQUEST_NULL;
    MT_CLASS_EQ("NULL request", MPI_ERR_ARG,
                MPIX_Idynbcast(b, 4, MPI_BYTE, NULL, 0, 1, MPI_COMM_WORLD, NULL));
    if (size >= 2) {
        int dup[3] = { (me + 1) % size, MPI_PROC_NULL, (me + 1) % size };
        MT_CLASS_EQ("duplicate destination", MPI_ERR_ARG,
                    MPIX_Dynbcast(b, 4, MPI_BYTE, dup, 3, 1, MPI_COMM_WORLD));
        MT_CLASS_EQ("duplicate destination (nonblocking)", MPI_ERR_ARG,
                    MPIX_Idynbcast(b, 4, MPI_BYTE, dup, 3, 1, MPI_COMM_WORLD, &req));
        MT_TRUE(req == MPI_REQUEST_NULL, "a failed MPIX_Idynbcast left a request");
    }
    /* Nothing to send: only MPI_PROC_NULL, or no destination at all (MPI_COMM_SELF). */
    int pn[2] = { MPI_PROC_NULL, MPI_PROC_NULL };
    MT_CALL(MPIX_Dynbcast(b, 4, MPI_BYTE, pn, 2, 1, MPI_COMM_WORLD));
    MT_CALL(MPIX_Idynbcast(b, 4, MPI_BYTE, NULL, 0, 1, MPI_COMM_SELF, &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_TRUE(req == MPI_REQUEST_NULL, "the request was not freed by MPI_Wait");
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

/* Receives shorter than the message, posted before (matched on arrival) and after (unexpected),
 * with large and small messages: MPI_ERR_TRUNCATE, the part that fits delivered, and the ranks
 * below still get the whole message. */
static void check_truncate(int size)
{
    static const size_t lens[] = { 100, 100000 };
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int li = 0; li < 2; li++) {
        for (int late = 0; late < 2; late++) {
            size_t len = lens[li];
            uint64_t seed = 0x77000u + (uint64_t)(li * 2 + late);
            int root = (li + late) % size, me = mt_rank;
            int dests[64], nd = 0;
            for (int r = 0; r < size; r++)
                if (r != root)
                    dests[nd++] = r;
            bool short_buf = ((me - root + size) % size) % 2 == 1;   /* every other rank */
            size_t cap = short_buf ? len / 2 : len;
            char *buf = mt_malloc(len);
            memset(buf, 0xEE, len);
            MPI_Request req = MPI_REQUEST_NULL;
            if (me != root && !late)
                MT_CALL(MPI_Irecv(buf, (int)cap, MPI_BYTE, root, 9, MPI_COMM_WORLD, &req));
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            if (me == root) {
                mt_fill(buf, len, seed);
                MT_CALL(MPIX_Dynbcast(buf, (int)len, MPI_BYTE, dests, nd, 9, MPI_COMM_WORLD));
            } else {
                if (late) {
                    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
                    MT_CALL(MPI_Irecv(buf, (int)cap, MPI_BYTE, root, 9, MPI_COMM_WORLD, &req));
                }
                MPI_Status st;
                int rc = MPI_Wait(&req, &st);
                if (short_buf)
                    MT_CLASS_EQ("truncated dynamic broadcast", MPI_ERR_TRUNCATE, rc);
                else
                    MT_CALL(rc);
                mt_verify(buf, cap, seed, "truncated dynamic broadcast, the part that fits");
                if (cap < len)
                    mt_verify_const(buf + cap, len - cap, 0xEE, "past the truncated receive");
            }
            if (me == root && late)
                MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
            free(buf);
        }
    }
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int rounds = (int)mt_init_args(argc, argv, 40);
    mt_init(&argc, &argv);
    const char *seed = getenv("DYNBCAST_SEED");   /* another plan, the same on every rank */
    if (seed)
        rng_state ^= strtoull(seed, NULL, 0) * 0x2545f4914f6cdd1dull;
    MT_TRUE(mt_size <= 64, "at most 64 ranks");
    MT_CALL(MPI_Type_vector(2, 3, 5, MPI_INT, &type_t));
    MPI_Datatype rs;
    MT_CALL(MPI_Type_create_resized(type_t, 0, T_EXT * (MPI_Aint)sizeof(int), &rs));
    MT_CALL(MPI_Type_free(&type_t));
    type_t = rs;
    MT_CALL(MPI_Type_commit(&type_t));
    MPI_Comm rev;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - 1 - mt_rank, &rev));
    check_errors(mt_size);
    if (mt_size >= 2)
        check_truncate(mt_size);
    for (int i = 0; i < rounds; i++)
        run_round(i, MPI_COMM_WORLD, rev, mt_size);
    MT_CALL(MPI_Comm_free(&rev));
    MT_CALL(MPI_Type_free(&type_t));
    long long mine[2] = { got_msgs, got_bytes }, sum[2] = { 0, 0 };
    if (mt_rank == 0) {
        for (int r = 0; r < mt_size; r++) {
            if (r)
                MT_CALL(MPI_Recv(mine, 2, MPI_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            sum[0] += mine[0];
            sum[1] += mine[1];
        }
        printf("dynbcast: %d rounds, %lld messages received, %lld bytes\n", rounds, sum[0], sum[1]);
    } else {
        MT_CALL(MPI_Send(mine, 2, MPI_LONG_LONG, 0, 1, MPI_COMM_WORLD));
    }
    return mt_finish("dynbcast");
}
