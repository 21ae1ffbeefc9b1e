/* Wildcard receives: MPI_ANY_SOURCE, MPI_ANY_TAG and both, alone and mixed with specific receives.
 * Rank 0 receives from every other rank; status fields (MPI_SOURCE, MPI_TAG, count) must describe the
 * message actually delivered, and messages of one source arrive in their send order whenever a
 * receive could match several of them. Argument: messages per sender (default 200). */
#include "mpitest.h"

#define NTAG 5
#define BIG 40000 /* above Weft's default eager limit */

struct hdr {
    int src, seq, tag, size;
};

static int msg_tag(int src, int i) { return (i * 3 + src) % NTAG; }
static int msg_size(int src, int i)
{
    int n = (int)sizeof(struct hdr) + (i * 37 + src * 11) % 300;
    return i % 17 == 5 ? BIG + i : n; /* a few rendezvous messages among eager ones */
}

/* Payload: a header naming the message, then a pattern seeded by (src, seq). */
static void make_msg(uint8_t *buf, int src, int i)
{
    struct hdr h = {src, i, msg_tag(src, i), msg_size(src, i)};
    mt_fill(buf, h.size, (uint64_t)src << 32 | (unsigned)i);
    memcpy(buf, &h, sizeof h);
}

/* Checks a received message against its status and returns its header. */
static struct hdr check_msg(const char *what, const uint8_t *buf, const MPI_Status *st)
{
    struct hdr h;
    int cnt = -1;
    memcpy(&h, buf, sizeof h);
    MT_CALL(MPI_Get_count(st, MPI_BYTE, &cnt));
    if (cnt != h.size || st->MPI_SOURCE != h.src || st->MPI_TAG != h.tag)
        MT_FAIL("%s status expected (source %d, tag %d, count %d) got (%d, %d, %d)", what, h.src, h.tag,
                h.size, st->MPI_SOURCE, st->MPI_TAG, cnt);
    MT_TRUE(h.src > 0 && h.src < mt_size && h.seq >= 0 && h.tag == msg_tag(h.src, h.seq) &&
                h.size == msg_size(h.src, h.seq),
            "%s header expected a sent message got (src %d, seq %d, tag %d, size %d)", what, h.src, h.seq,
            h.tag, h.size);
    uint8_t *copy = mt_malloc(h.size);
    mt_fill(copy, h.size, (uint64_t)h.src << 32 | (unsigned)h.seq);
    memcpy(copy, &h, sizeof h);
    MT_TRUE(memcmp(copy, buf, h.size) == 0, "%s payload of (src %d, seq %d) expected pattern got other bytes",
            what, h.src, h.seq);
    free(copy);
    return h;
}

/* Every sender posts n messages with Isend; rank 0 receives them all with (source, tag) chosen by
 * `mode` and checks that per-source order holds within what each receive could match. */
static void stream(int n, int mode, uint8_t *rbuf)
{
    const char *names[] = {"ANY_SOURCE+ANY_TAG", "ANY_SOURCE+tag", "source+ANY_TAG"};
    const char *what = names[mode];
    if (mt_rank != 0) {
        uint8_t **bufs = mt_malloc(sizeof(uint8_t *) * n);
        MPI_Request *reqs = mt_malloc(sizeof(MPI_Request) * n);
        for (int i = 0; i < n; i++) {
            bufs[i] = mt_malloc(msg_size(mt_rank, i));
            make_msg(bufs[i], mt_rank, i);
            MT_CALL(MPI_Isend(bufs[i], msg_size(mt_rank, i), MPI_BYTE, 0, msg_tag(mt_rank, i),
                              MPI_COMM_WORLD, &reqs[i]));
        }
        MT_CALL(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < n; i++)
            free(bufs[i]);
        free(bufs);
        free(reqs);
        return;
    }
    int nsrc = mt_size - 1;
    /* next[src][tag]: the sequence number expected next from src among messages with that tag
     * (mode 1), or among all its messages (modes 0 and 2, next[src][0]). */
    int (*next)[NTAG] = calloc(mt_size, sizeof *next);
    int total = n * nsrc;
    MPI_Status st;
    if (mode == 0) {
        for (int k = 0; k < total; k++) {
            MT_CALL(MPI_Recv(rbuf, BIG + n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            struct hdr h = check_msg(what, rbuf, &st);
            MT_EQ("ANY_SOURCE+ANY_TAG sequence number", next[h.src][0], h.seq);
            next[h.src][0]++;
        }
    } else if (mode == 1) {
        for (int t = 0; t < NTAG; t++) {
            int count = 0;
            for (int s = 1; s < mt_size; s++)
                for (int i = 0; i < n; i++)
                    count += msg_tag(s, i) == t;
            for (int k = 0; k < count; k++) {
                MT_CALL(MPI_Recv(rbuf, BIG + n, MPI_BYTE, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st));
                struct hdr h = check_msg(what, rbuf, &st);
                MT_EQ("ANY_SOURCE+tag tag", t, h.tag);
                while (msg_tag(h.src, next[h.src][t]) != t) /* skip seqs with other tags */
                    next[h.src][t]++;
                MT_EQ("ANY_SOURCE+tag sequence number", next[h.src][t], h.seq);
                next[h.src][t]++;
            }
        }
    } else {
        for (int s = mt_size - 1; s >= 1; s--) {
            for (int i = 0; i < n; i++) {
                MT_CALL(MPI_Recv(rbuf, BIG + n, MPI_BYTE, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                struct hdr h = check_msg(what, rbuf, &st);
                MT_EQ("source+ANY_TAG source", s, h.src);
                MT_EQ("source+ANY_TAG sequence number", i, h.seq);
            }
        }
    }
    free(next);
}

/* Posted receives are matched in the order they were posted: rank 1 sends four messages with tag 5
 * after rank 0 posted (1,5), (ANY,ANY), (1,ANY), (ANY,5); message k must land in receive k. */
static void posted_order(void)
{
    int val[4] = {-1, -1, -1, -1};
    if (mt_rank == 0) {
        MPI_Request r[4];
        MPI_Status st[4];
        MT_CALL(MPI_Irecv(&val[0], 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[0]));
        MT_CALL(MPI_Irecv(&val[1], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
        MT_CALL(MPI_Irecv(&val[2], 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &r[2]));
        MT_CALL(MPI_Irecv(&val[3], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[3]));
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Waitall(4, r, st));
        for (int k = 0; k < 4; k++) {
            MT_EQ("posted receive order: value in receive", k, val[k]);
            int cnt;
            MT_CALL(MPI_Get_count(&st[k], MPI_INT, &cnt));
            MT_EQ("posted receive order: count in MPI_INT", 1, cnt);
            MT_EQ("posted receive order: MPI_SOURCE", 1, st[k].MPI_SOURCE);
            MT_EQ("posted receive order: MPI_TAG", 5, st[k].MPI_TAG);
        }
    } else {
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (mt_rank == 1)
            for (int k = 0; k < 4; k++)
                MT_CALL(MPI_Send(&k, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* Unexpected messages are matched in arrival order: rank 1 sends tags 7, 8, 7, 8 (values 0..3) before
 * rank 0 posts anything; then (1,8) takes 1, (ANY,ANY) takes 0, (ANY,7) takes 2, (1,ANY) takes 3. */
static void unexpected_order(void)
{
    if (mt_rank == 1) {
        MPI_Request r[4];
        int v[4] = {0, 1, 2, 3};
        for (int k = 0; k < 4; k++)
            MT_CALL(MPI_Isend(&v[k], 1, MPI_INT, 0, k % 2 ? 8 : 7, MPI_COMM_WORLD, &r[k]));
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    } else if (mt_rank == 0) {
        static const struct { int src, tag, val, tag_got; } plan[4] = {
            {1, 8, 1, 8}, {MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 7}, {MPI_ANY_SOURCE, 7, 2, 7}, {1, MPI_ANY_TAG, 3, 8}};
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        for (int k = 0; k < 4; k++) {
            int v = -1;
            MPI_Status st;
            MT_CALL(MPI_Recv(&v, 1, MPI_INT, plan[k].src, plan[k].tag, MPI_COMM_WORLD, &st));
            MT_EQ("unexpected order: value", plan[k].val, v);
            MT_EQ("unexpected order: MPI_TAG", plan[k].tag_got, st.MPI_TAG);
            MT_EQ("unexpected order: MPI_SOURCE", 1, st.MPI_SOURCE);
        }
    } else {
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* A wildcard receive posted first and a specific one posted second, both matching rank 1's only
 * message: the wildcard wins; the specific one takes rank 1's next message. With 3+ ranks the
 * ANY_SOURCE receive must also not take a message that only matches by tag elsewhere. */
static void wildcard_then_specific(void)
{
    if (mt_rank == 0) {
        int a = -1, b = -1;
        MPI_Request r[2];
        MPI_Status st[2];
        MT_CALL(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &r[0]));
        MT_CALL(MPI_Irecv(&b, 1, MPI_INT, 1, 11, MPI_COMM_WORLD, &r[1]));
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Wait(&r[0], &st[0]));
        MT_EQ("wildcard-first: value of the ANY_SOURCE receive", 100, a);
        MT_EQ("wildcard-first: source of the ANY_SOURCE receive", 1, st[0].MPI_SOURCE);
        int flag = 1;
        MT_CALL(MPI_Test(&r[1], &flag, &st[1]));
        MT_EQ("wildcard-first: specific receive completed before its message was sent", 0, flag);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        MT_CALL(MPI_Wait(&r[1], &st[1]));
        MT_EQ("wildcard-first: value of the specific receive", 101, b);
        /* messages of tag 12 from ranks 2.. are received with ANY_SOURCE after all of the above */
        for (int s = 2; s < mt_size; s++) {
            MPI_Status s2;
            int v = -1;
            MT_CALL(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &s2));
            MT_EQ("tag-12 value matches its source", 200 + s2.MPI_SOURCE, v);
        }
    } else {
        if (mt_rank >= 2) {
            int v = 200 + mt_rank;
            MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 12, MPI_COMM_WORLD)); /* small: never matches tag 11 */
        }
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (mt_rank == 1) {
            int v = 100;
            MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
        }
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        if (mt_rank == 1) {
            int v = 101;
            MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 11, MPI_COMM_WORLD));
        }
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* Get_count and Get_elements in units of the receive type; MPI_UNDEFINED when bytes do not divide. */
static void counts(void)
{
    if (mt_rank == 1) {
        double d[7] = {0};
        char c[13] = {0};
        MT_CALL(MPI_Send(d, 7, MPI_DOUBLE, 0, 20, MPI_COMM_WORLD));
        MT_CALL(MPI_Send(c, 13, MPI_CHAR, 0, 21, MPI_COMM_WORLD));
    } else if (mt_rank == 0) {
        double d[16];
        MPI_Status st;
        int cnt;
        MT_CALL(MPI_Recv(d, 16, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MT_CALL(MPI_Get_count(&st, MPI_DOUBLE, &cnt));
        MT_EQ("Get_count(MPI_DOUBLE) of 7 doubles", 7, cnt);
        MT_CALL(MPI_Get_elements(&st, MPI_DOUBLE, &cnt));
        MT_EQ("Get_elements(MPI_DOUBLE) of 7 doubles", 7, cnt);
        MT_CALL(MPI_Get_count(&st, MPI_BYTE, &cnt));
        MT_EQ("Get_count(MPI_BYTE) of 7 doubles", 7 * (int)sizeof(double), cnt);
        MT_CALL(MPI_Recv(d, 16 * (int)sizeof(double), MPI_CHAR, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MT_EQ("MPI_TAG of the char message", 21, st.MPI_TAG);
        MT_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
        MT_EQ("Get_count(MPI_INT) of 13 bytes", MPI_UNDEFINED, cnt);
        MT_CALL(MPI_Get_count(&st, MPI_CHAR, &cnt));
        MT_EQ("Get_count(MPI_CHAR) of 13 chars", 13, cnt);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n = (int)mt_init_args(argc, argv, 200);
    MT_TRUE(mt_size >= 2, "run with at least 2 ranks");
    uint8_t *rbuf = mt_malloc(BIG + n);
    for (int mode = 0; mode < 3; mode++) {
        stream(n, mode, rbuf);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    }
    posted_order();
    unexpected_order();
    wildcard_then_specific();
    counts();
    free(rbuf);
    return mt_finish("p2p_wildcard");
}
