/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv.
 * - Probe/Iprobe report the next message without receiving it; a Recv with the probed source and tag
 *   and a buffer of exactly the probed size gets that very message.
 * - A message matched by Mprobe/Improbe belongs to its message handle: no later receive, probe or
 *   matched probe may take it, even a wildcard one that would match it; Mrecv/Imrecv deliver it.
 * - MPI_PROC_NULL: Probe/Iprobe complete at once, Mprobe/Improbe give MPI_MESSAGE_NO_PROC, and Mrecv of
 *   it completes with the MPI_PROC_NULL status.
 * Rank 0 receives from all others. Argument: messages per sender (default 100). */
#include "mpitest.h"

#define BIG 70000

struct hdr {
    int src, seq, size, pad;
};

static int msg_size(int src, int i)
{
    return i % 9 == 4 ? BIG + src * 100 + i : (int)sizeof(struct hdr) + (i * 13 + src) % 200;
}
static int msg_tag(int i) { return i % 4; }
static uint64_t msg_seed(int src, int i) { return (uint64_t)src << 32 | (unsigned)i; }

/* Builds message (src, seq): a header naming it, then a pattern. */
static void make_msg(uint8_t *buf, int src, int seq)
{
    struct hdr h = {src, seq, msg_size(src, seq), 0};
    mt_fill(buf, h.size, msg_seed(src, seq));
    memcpy(buf, &h, sizeof h);
}

static void send_stream(int n, int tag_base)
{
    uint8_t **bufs = mt_malloc(sizeof(uint8_t *) * n);
    MPI_Request *r = mt_malloc(sizeof(MPI_Request) * n);
    for (int i = 0; i < n; i++) {
        int sz = msg_size(mt_rank, i);
        bufs[i] = mt_malloc(sz);
        make_msg(bufs[i], mt_rank, i);
        MT_CALL(MPI_Isend(bufs[i], sz, MPI_BYTE, 0, tag_base + msg_tag(i), MPI_COMM_WORLD, &r[i]));
    }
    MT_CALL(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        free(bufs[i]);
    free(bufs);
    free(r);
}

/* Checks a delivered message against its status and its pattern, marks it seen (exactly once) and
 * checks per-source order: `next[src]` is the sequence number src's next message must carry. */
static void take(const char *what, const uint8_t *buf, const MPI_Status *st, int tag_base, int *next,
                 uint8_t *seen, int n)
{
    struct hdr h;
    int cnt = -1;
    memcpy(&h, buf, sizeof h);
    MT_CALL(MPI_Get_count(st, MPI_BYTE, &cnt));
    MT_TRUE(h.src >= 1 && h.src < mt_size && h.seq >= 0 && h.seq < n,
            "%s header expected a sent message got (src %d, seq %d)", what, h.src, h.seq);
    if (st->MPI_SOURCE != h.src || st->MPI_TAG != tag_base + msg_tag(h.seq) || cnt != msg_size(h.src, h.seq))
        MT_FAIL("%s status expected (source %d, tag %d, count %d) got (%d, %d, %d)", what, h.src,
                tag_base + msg_tag(h.seq), msg_size(h.src, h.seq), st->MPI_SOURCE, st->MPI_TAG, cnt);
    MT_EQ("times this message was delivered before", 0, seen[h.src * n + h.seq]);
    seen[h.src * n + h.seq] = 1;
    if (next) {
        MT_EQ("sequence number of the source's next message", next[h.src], h.seq);
        next[h.src]++;
    }
    uint8_t *ref = mt_malloc(cnt);
    make_msg(ref, h.src, h.seq);
    MT_TRUE(memcmp(ref, buf, cnt) == 0, "%s payload of (src %d, seq %d) expected its pattern got other bytes",
            what, h.src, h.seq);
    free(ref);
}

/* Probe then Recv of the probed size; Iprobe loop then Recv. All with ANY_SOURCE/ANY_TAG probes. */
static void probe_recv(int n, int use_iprobe)
{
    const int tag_base = use_iprobe ? 10 : 0;
    if (mt_rank != 0) {
        send_stream(n, tag_base);
        return;
    }
    int total = n * (mt_size - 1);
    int *next = calloc(mt_size, sizeof(int));
    for (int k = 0; k < total; k++) {
        MPI_Status pst, st;
        int flag = 0;
        if (use_iprobe) {
            while (!flag)
                MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &pst));
            /* probing again without receiving must report the same message */
            MPI_Status again;
            MT_CALL(MPI_Iprobe(pst.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &again));
            MT_EQ("second Iprobe flag", 1, flag);
            MT_EQ("second Iprobe MPI_TAG", pst.MPI_TAG, again.MPI_TAG);
        } else {
            MT_CALL(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pst));
        }
        int cnt = -1;
        MT_CALL(MPI_Get_count(&pst, MPI_BYTE, &cnt));
        int src = pst.MPI_SOURCE;
        MT_TRUE(src >= 1 && src < mt_size, "probed MPI_SOURCE expected 1..%d got %d", mt_size - 1, src);
        int seq = next[src]++;
        if (pst.MPI_TAG != tag_base + msg_tag(seq) || cnt != msg_size(src, seq))
            MT_FAIL("probe of (src %d, seq %d) expected (tag %d, count %d) got (%d, %d)", src, seq,
                    tag_base + msg_tag(seq), msg_size(src, seq), pst.MPI_TAG, cnt);
        uint8_t *buf = mt_malloc(cnt);
        MT_CALL(MPI_Recv(buf, cnt, MPI_BYTE, src, pst.MPI_TAG, MPI_COMM_WORLD, &st));
        MT_STATUS("Recv after probe", st, src, pst.MPI_TAG, cnt);
        struct hdr h;
        memcpy(&h, buf, sizeof h);
        MT_EQ("sequence number of the probed message", seq, h.seq);
        MT_EQ("source in the probed message", src, h.src);
        free(buf);
    }
    free(next);
}

/* Matched probes with ANY_SOURCE from several senders. Each step:
 *  1. Mprobe/Improbe(ANY_SOURCE, ANY_TAG) matches message M of source s;
 *  2. a wildcard Irecv W is posted: it would match M, so it must get another message;
 *  3. an Improbe(s, ANY_TAG) must not see M either: it finds s's next message or nothing;
 *  4. Mrecv/Imrecv(M) delivers M with the probed status; W and the message of step 3 follow.
 * W and step 3 run only while enough messages remain to satisfy them. Delivery order per source is
 * matching order (M, then W, then step 3's), and every message is delivered exactly once. */
static void mprobe_steal(int n, int use_improbe)
{
    const int tag_base = use_improbe ? 30 : 20;
    if (mt_rank != 0) {
        send_stream(n, tag_base);
        return;
    }
    const int maxsz = BIG + 100 * mt_size + n;
    int total = n * (mt_size - 1), delivered = 0;
    uint8_t *seen = calloc((size_t)mt_size * n, 1);
    int *next = calloc(mt_size, sizeof(int));
    uint8_t *buf = mt_malloc(maxsz), *wbuf = mt_malloc(maxsz), *buf2 = mt_malloc(maxsz);

    while (delivered < total) {
        MPI_Message msg = MPI_MESSAGE_NULL, m2 = MPI_MESSAGE_NULL;
        MPI_Request w = MPI_REQUEST_NULL;
        MPI_Status pst, st, wst, st2;
        int flag = 0, flag2 = 0, cnt = -1;

        if (use_improbe) {
            while (!flag)
                MT_CALL(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &pst));
        } else {
            MT_CALL(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &pst));
        }
        MT_TRUE(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC,
                "matched probe expected a message handle got MPI_MESSAGE_NULL or MPI_MESSAGE_NO_PROC");
        MT_CALL(MPI_Get_count(&pst, MPI_BYTE, &cnt));
        int left = total - delivered - 1; /* unclaimed messages besides M */
        if (left >= 1)
            MT_CALL(MPI_Irecv(wbuf, maxsz, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &w));
        if (left >= 2)
            MT_CALL(MPI_Improbe(pst.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag2, &m2, &st2));

        if (use_improbe) {
            MPI_Request r;
            MT_CALL(MPI_Imrecv(buf, cnt, MPI_BYTE, &msg, &r));
            MT_TRUE(msg == MPI_MESSAGE_NULL, "message handle after MPI_Imrecv expected MPI_MESSAGE_NULL");
            MT_CALL(MPI_Wait(&r, &st));
        } else {
            MT_CALL(MPI_Mrecv(buf, cnt, MPI_BYTE, &msg, &st));
            MT_TRUE(msg == MPI_MESSAGE_NULL, "message handle after MPI_Mrecv expected MPI_MESSAGE_NULL");
        }
        MT_STATUS("matched-probe receive", st, pst.MPI_SOURCE, pst.MPI_TAG, cnt);
        take("matched-probe receive", buf, &st, tag_base, next, seen, n);
        delivered++;
        if (w != MPI_REQUEST_NULL) {
            MT_CALL(MPI_Wait(&w, &wst));
            take("wildcard Irecv posted while a message handle was held", wbuf, &wst, tag_base, next,
                 seen, n);
            delivered++;
        }
        if (flag2) {
            int c2 = -1;
            MT_CALL(MPI_Get_count(&st2, MPI_BYTE, &c2));
            MT_CALL(MPI_Mrecv(buf2, c2, MPI_BYTE, &m2, &st2));
            take("Improbe of the same source while a message handle was held", buf2, &st2, tag_base,
                 next, seen, n);
            delivered++;
        }
    }
    for (int s = 1; s < mt_size; s++)
        for (int i = 0; i < n; i++)
            MT_EQ("times a message was delivered", 1, seen[s * n + i]);
    free(buf);
    free(wbuf);
    free(buf2);
    free(seen);
    free(next);
}

static void proc_null(void)
{
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    int flag = 0;
    char buf[4] = {1, 2, 3, 4};

    MT_CALL(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    MT_STATUS_PROC_NULL("Probe(MPI_PROC_NULL)", st);
    MT_CALL(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    MT_EQ("Iprobe(MPI_PROC_NULL) flag", 1, flag);
    MT_STATUS_PROC_NULL("Iprobe(MPI_PROC_NULL)", st);

    MT_CALL(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st));
    MT_TRUE(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) message expected MPI_MESSAGE_NO_PROC");
    MT_STATUS_PROC_NULL("Mprobe(MPI_PROC_NULL)", st);
    MT_CALL(MPI_Mrecv(buf, 4, MPI_CHAR, &msg, &st));
    MT_TRUE(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) message expected MPI_MESSAGE_NULL after");
    MT_STATUS_PROC_NULL("Mrecv(MPI_MESSAGE_NO_PROC)", st);
    MT_EQ("buffer of Mrecv(MPI_MESSAGE_NO_PROC) unchanged", 1, buf[0]);

    flag = 0;
    msg = MPI_MESSAGE_NULL;
    MT_CALL(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    MT_EQ("Improbe(MPI_PROC_NULL) flag", 1, flag);
    MT_TRUE(msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL) message expected MPI_MESSAGE_NO_PROC");
    MT_STATUS_PROC_NULL("Improbe(MPI_PROC_NULL)", st);
    MPI_Request r;
    MT_CALL(MPI_Imrecv(buf, 4, MPI_CHAR, &msg, &r));
    MT_TRUE(msg == MPI_MESSAGE_NULL, "Imrecv(MPI_MESSAGE_NO_PROC) message expected MPI_MESSAGE_NULL after");
    MT_CALL(MPI_Wait(&r, &st));
    MT_STATUS_PROC_NULL("Imrecv(MPI_MESSAGE_NO_PROC)", st);
    MT_EQ("buffer of Imrecv(MPI_MESSAGE_NO_PROC) unchanged", 2, buf[1]);
}

/* Iprobe sees nothing before a message is sent, and a specific-tag probe ignores other tags. */
static void iprobe_empty(void)
{
    int flag = 1;
    MPI_Status st;
    MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
    MT_EQ("Iprobe flag with nothing sent", 0, flag);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 1) {
        int v = 42;
        MT_CALL(MPI_Send(&v, 1, MPI_INT, 0, 998, MPI_COMM_WORLD));
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank == 0) {
        flag = 1;
        MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st));
        MT_EQ("Iprobe(tag 999) flag with only a tag-998 message", 0, flag);
        MPI_Message m;
        flag = 1;
        MT_CALL(MPI_Improbe(1, 999, MPI_COMM_WORLD, &flag, &m, &st));
        MT_EQ("Improbe(tag 999) flag with only a tag-998 message", 0, flag);
        MT_CALL(MPI_Probe(1, 998, MPI_COMM_WORLD, &st));
        MT_STATUS("Probe(1, 998)", st, 1, 998, sizeof(int));
        int v = 0;
        MT_CALL(MPI_Recv(&v, 1, MPI_INT, 1, 998, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("value after probe", 42, v);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int n = (int)mt_init_args(argc, argv, 100);
    MT_TRUE(mt_size >= 2, "run with at least 2 ranks");
    iprobe_empty();
    proc_null();
    probe_recv(n, 0);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    probe_recv(n, 1);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    mprobe_steal(n, 0);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    mprobe_steal(n, 1);
    return mt_finish("p2p_probe");
}
