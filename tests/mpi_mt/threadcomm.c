/* Thread communicators (MPIX_Threadcomm_*, docs/threadcomm.md): every process starts T threads
 * (--threads) that become the ranks of a threadcomm over MPI_COMM_WORLD, then check in each region:
 *   - point-to-point in a ring with every send mode (Send, Ssend, Bsend, Rsend and the I forms)
 *     at 8 B, 3000 B and 1 MiB, Sendrecv, Sendrecv_replace, derived datatypes on both sides;
 *   - wildcards: all ranks send numbered messages to rank 0, which takes them with MPI_ANY_SOURCE
 *     and MPI_ANY_TAG, Probe and Iprobe, checking statuses, contents and per-source order;
 *   - Testany/Testsome/Waitall over thread-rank requests; a stream of 200 nonblocking messages of
 *     0 to 2099 bytes (around the eager limit), half sent before the receives are posted;
 *     MPI_Request_free of a pending receive and of a pending send, MPI_Request_get_status,
 *     MPI_Cancel (a local receive completes normally), truncation reported by MPI_Wait;
 *   - thread-ranks of other processes: every kind of receive and probe mixed on local and remote
 *     senders (order, no loss), Issend completion, truncation (remote_mix);
 *   - Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, Alltoall, Scan, Exscan,
 *     Reduce_scatter_block, Reduce_scatter (also in place), Gatherv, Scatterv, Allgatherv,
 *     Alltoallv, Alltoallw (per-peer types, byte displacements), blocking and nonblocking,
 *     with results computed from the ranks;
 *   - Comm_dup, Comm_split (reversed keys) and a nested split of the split, used for traffic
 *     and collectives, then freed;
 *   - with several processes, thread 0 of each process exchanges with the other processes on
 *     MPI_COMM_WORLD (process ranks) while the thread-ranks talk.
 * Regions: --regions R on one threadcomm, then a second threadcomm made and freed after it. Every
 * rank's checks are on values it can compute. --single: MPI_Init_thread(MPI_THREAD_SINGLE) (the
 * threadcomm must work below MPI_THREAD_MULTIPLE; no process-rank traffic inside regions then).
 * Uses Weft's extension: under another MPI it is skipped. */
#include "mttest.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#if __has_include(<weft.h>)
#include <weft.h>
#endif

#ifndef WEFT_MPIX_THREADCOMM
int main(void)
{
    printf("SKIP: MPIX_Threadcomm_* not available\n");
    return MTT_SKIP;
}
#else

static MPI_Comm tc;
static int single;

static const int sizes[] = { 8, 3000, 1 << 20 };

static void ring_modes(int r, int n)
{
    int to = (r + 1) % n, from = (r - 1 + n) % n;
    size_t max = 1 << 20;
    char *sb = malloc(max), *rb = malloc(max);
    MT_TRUE(sb && rb, "malloc");
    for (int si = 0; si < 3; si++) {
        int len = sizes[si];
        for (int mode = 0; mode < 8; mode++) {
            if ((mode == 2 || mode == 6) && len > 3000)
                continue;   /* buffered: small only (attached buffer) */
            mtt_at("ring mode %ld size %ld", mode, len);
            uint64_t seed = mtt_seed(r, mode, len, 1), rseed = mtt_seed(from, mode, len, 1);
            mtt_fill(sb, (size_t)len, seed);
            memset(rb, 0, (size_t)len);
            MPI_Request rq[2];
            MPI_Status st;
            MT_CALL(MPI_Irecv(rb, len, MPI_BYTE, from, 10 + mode, tc, &rq[0]));
            if (mode == 3 || mode == 7)   /* ready: the receive is posted everywhere first */
                MT_CALL(MPI_Barrier(tc));
            switch (mode) {
            case 0: MT_CALL(MPI_Send(sb, len, MPI_BYTE, to, 10 + mode, tc)); break;
            case 1: MT_CALL(MPI_Ssend(sb, len, MPI_BYTE, to, 10 + mode, tc)); break;
            case 2: MT_CALL(MPI_Bsend(sb, len, MPI_BYTE, to, 10 + mode, tc)); break;
            case 3: MT_CALL(MPI_Rsend(sb, len, MPI_BYTE, to, 10 + mode, tc)); break;
            case 4: MT_CALL(MPI_Isend(sb, len, MPI_BYTE, to, 10 + mode, tc, &rq[1])); break;
            case 5: MT_CALL(MPI_Issend(sb, len, MPI_BYTE, to, 10 + mode, tc, &rq[1])); break;
            case 6: MT_CALL(MPI_Ibsend(sb, len, MPI_BYTE, to, 10 + mode, tc, &rq[1])); break;
            case 7: MT_CALL(MPI_Irsend(sb, len, MPI_BYTE, to, 10 + mode, tc, &rq[1])); break;
            }
            if (mode >= 4) {
                MPI_Status sts[2];
                MT_CALL(MPI_Waitall(2, rq, sts));
                st = sts[0];
            } else {
                MT_CALL(MPI_Wait(&rq[0], &st));
            }
            MTT_STATUS("ring recv", mode, len, st, from, 10 + mode, len);
            mtt_check(rb, (size_t)len, rseed, "ring data", mode, len);
        }
        /* Sendrecv and Sendrecv_replace */
        mtt_fill(sb, (size_t)len, mtt_seed(r, 99, len, 2));
        MPI_Status st;
        MT_CALL(MPI_Sendrecv(sb, len, MPI_BYTE, to, 5, rb, len, MPI_BYTE, from, 5, tc, &st));
        MTT_STATUS("sendrecv", 0, len, st, from, 5, len);
        mtt_check(rb, (size_t)len, mtt_seed(from, 99, len, 2), "sendrecv data", 0, len);
        MT_CALL(MPI_Sendrecv_replace(sb, len, MPI_BYTE, to, 6, from, 6, tc, &st));
        mtt_check(sb, (size_t)len, mtt_seed(from, 99, len, 2), "sendrecv_replace data", 0, len);
    }
    free(sb);
    free(rb);
}

static void datatypes(int r, int n)
{
    int to = (r + 1) % n, from = (r - 1 + n) % n;
    MPI_Datatype vec;
    MT_CALL(MPI_Type_vector(4, 2, 5, MPI_INT, &vec));
    MT_CALL(MPI_Type_commit(&vec));
    int a[20], b[8], c[20];
    for (int i = 0; i < 20; i++)
        a[i] = r * 1000 + i;
    /* vector -> contiguous */
    MT_CALL(MPI_Sendrecv(a, 1, vec, to, 7, b, 8, MPI_INT, from, 7, tc, MPI_STATUS_IGNORE));
    for (int k = 0; k < 8; k++)
        MT_EQ("vector to contiguous", from * 1000 + (k / 2) * 5 + k % 2, b[k]);
    /* contiguous -> vector, large enough to be pinned: 1 element of a big vector type */
    for (int i = 0; i < 20; i++)
        c[i] = -1;
    MT_CALL(MPI_Sendrecv(b, 8, MPI_INT, to, 8, c, 1, vec, from, 8, tc, MPI_STATUS_IGNORE));
    int pf = (from - 1 + n) % n;   /* b at from came from pf */
    for (int k = 0; k < 8; k++)
        MT_EQ("contiguous to vector", pf * 1000 + (k / 2) * 5 + k % 2, c[(k / 2) * 5 + k % 2]);
    MT_EQ("vector gap untouched", -1, c[2]);
    /* a nonblocking receive's datatype freed before the message comes */
    MPI_Datatype tv;
    MT_CALL(MPI_Type_vector(4, 2, 5, MPI_INT, &tv));
    MT_CALL(MPI_Type_commit(&tv));
    MPI_Request q;
    int d2[20], e[8];
    for (int i = 0; i < 20; i++)
        d2[i] = -1;
    MT_CALL(MPI_Irecv(d2, 1, tv, from, 11, tc, &q));
    MT_CALL(MPI_Type_free(&tv));
    MT_CALL(MPI_Barrier(tc));
    for (int k = 0; k < 8; k++)
        e[k] = r * 10 + k;
    MT_CALL(MPI_Send(e, 8, MPI_INT, to, 11, tc));
    MT_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int k = 0; k < 8; k++)
        MT_EQ("freed vector type", from * 10 + k, d2[(k / 2) * 5 + k % 2]);
    /* vector -> vector, 64 Ki elements (pinned, non-contiguous on both sides) */
    int cnt = 1 << 16;
    int *big = malloc(sizeof(int) * 5 * (size_t)cnt), *bigr = malloc(sizeof(int) * 5 * (size_t)cnt);
    MPI_Datatype v2;
    MT_CALL(MPI_Type_vector(cnt, 1, 5, MPI_INT, &v2));
    MT_CALL(MPI_Type_commit(&v2));
    for (int i = 0; i < 5 * cnt; i++)
        big[i] = r + 3 * i;
    MT_CALL(MPI_Sendrecv(big, 1, v2, to, 9, bigr, 1, v2, from, 9, tc, MPI_STATUS_IGNORE));
    for (int i = 0; i < cnt; i++)
        if (bigr[5 * i] != from + 15 * i)
            MT_EQ("vector to vector", from + 15 * i, bigr[5 * i]);
    free(big);
    free(bigr);
    MT_CALL(MPI_Type_free(&v2));
    MT_CALL(MPI_Type_free(&vec));
}

#define WMSG 6

static void wildcards(int r, int n)
{
    if (r != 0) {
        MPI_Request rq[WMSG];
        long buf[WMSG][4];
        for (int k = 0; k < WMSG; k++) {
            for (int j = 0; j < 4; j++)
                buf[k][j] = r * 100 + k * 10 + j;
            if (k % 2)
                MT_CALL(MPI_Isend(buf[k], 4, MPI_LONG, 0, 100 + k % 3, tc, &rq[k]));
            else
                MT_CALL(MPI_Issend(buf[k], 4, MPI_LONG, 0, 100 + k % 3, tc, &rq[k]));
        }
        MT_CALL(MPI_Waitall(WMSG, rq, MPI_STATUSES_IGNORE));
        MT_CALL(MPI_Barrier(tc));   /* rank 0's wildcards must not see the next phase's messages */
        return;
    }
    char *seen = calloc((size_t)n * WMSG, 1);   /* [source][k]: received */
    for (int got = 0; got < (n - 1) * WMSG; got++) {
        MPI_Status st;
        long buf[4];
        int count;
        if (got % 3 == 0) {
            MT_CALL(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st));
            MT_CALL(MPI_Get_count(&st, MPI_LONG, &count));
            MT_TRUE(count == 4, "probe count expected 4 got %d (source %d tag %d)", count,
                    st.MPI_SOURCE, st.MPI_TAG);
            MT_CALL(MPI_Recv(buf, 4, MPI_LONG, st.MPI_SOURCE, st.MPI_TAG, tc, &st));
        } else if (got % 3 == 1) {
            int flag = 0;
            while (!flag)
                MT_CALL(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &flag, &st));
            MT_CALL(MPI_Recv(buf, 4, MPI_LONG, MPI_ANY_SOURCE, st.MPI_TAG, tc, &st));
        } else {
            MT_CALL(MPI_Recv(buf, 4, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st));
        }
        int s = st.MPI_SOURCE;
        MT_TRUE(s > 0 && s < n, "source expected 1..%d got %d", n - 1, s);
        MT_CALL(MPI_Get_count(&st, MPI_LONG, &count));
        MT_EQ("count", 4, count);
        /* per-source order holds for messages a receive could take in either order: a receive
         * with MPI_ANY_TAG takes the oldest of its source not yet received; a tag-specific one
         * (after Iprobe: MPI_ANY_SOURCE may take another source's message than the probed one)
         * may pass older messages of another tag */
        int k = (int)((buf[0] - s * 100) / 10);
        MT_EQ("tag of message", 100 + k % 3, st.MPI_TAG);
        MT_TRUE(k >= 0 && k < WMSG && !seen[s * WMSG + k], "message %d of source %d twice", k, s);
        for (int j = 0; j < k && got % 3 != 1; j++)
            MT_TRUE(seen[s * WMSG + j], "message %d of source %d before %d", k, s, j);
        seen[s * WMSG + k] = 1;
        for (int j = 0; j < 4; j++)
            MT_EQ("wildcard data", s * 100 + k * 10 + j, buf[j]);
    }
    free(seen);
    MT_CALL(MPI_Barrier(tc));
}

static void test_some(int r, int n)
{
    /* every rank posts receives from all, sends to all; completes them with Testany/Testsome */
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    for (int i = 0; i < n; i++) {
        out[i] = r * 7 + i;
        in[i] = -1;
        MT_CALL(MPI_Irecv(&in[i], 1, MPI_INT, i, 3, tc, &rq[i]));
    }
    for (int i = 0; i < n; i++)
        MT_CALL(MPI_Isend(&out[i], 1, MPI_INT, i, 3, tc, &rq[n + i]));
    int left = 2 * n, idx, flag, outc, idxs[64 * 2];
    while (left > 0) {
        MT_CALL(MPI_Testany(2 * n, rq, &idx, &flag, MPI_STATUS_IGNORE));
        if (flag && idx != MPI_UNDEFINED)
            left--;
        if (2 * n <= 128) {
            MT_CALL(MPI_Testsome(2 * n, rq, &outc, idxs, MPI_STATUSES_IGNORE));
            if (outc != MPI_UNDEFINED)
                left -= outc;
        }
        if (flag && idx == MPI_UNDEFINED)
            break;
    }
    for (int i = 0; i < n; i++)
        MT_EQ("testsome data", i * 7 + r, in[i]);
    free(in);
    free(out);
    free(rq);
}

#define STREAM 200
#define STREAM_MAX 2100

static int stream_len(int k)
{
    return k * 37 % STREAM_MAX;
}

static void requests(int r, int n)
{
    int to = (r + 1) % n, from = (r - 1 + n) % n;
    /* the stream: the first half leaves before the receives are posted (unexpected: copied up to
     * the eager limit, pinned above it), the second half finds them posted */
    char *sb = malloc((size_t)STREAM * STREAM_MAX), *rb = malloc((size_t)STREAM * STREAM_MAX);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * 2 * STREAM);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * STREAM);
    MT_TRUE(sb && rb && rq && sts, "malloc");
    for (int k = 0; k < STREAM; k++) {
        mtt_fill(sb + (size_t)k * STREAM_MAX, (size_t)stream_len(k), mtt_seed(r, k, 50, 3));
        if (k < STREAM / 2)
            MT_CALL(MPI_Isend(sb + (size_t)k * STREAM_MAX, stream_len(k), MPI_BYTE, to, 50, tc,
                              &rq[STREAM + k]));
    }
    MT_CALL(MPI_Barrier(tc));
    for (int k = 0; k < STREAM; k++)
        MT_CALL(MPI_Irecv(rb + (size_t)k * STREAM_MAX, STREAM_MAX, MPI_BYTE, from, 50, tc, &rq[k]));
    for (int k = STREAM / 2; k < STREAM; k++)
        MT_CALL(MPI_Isend(sb + (size_t)k * STREAM_MAX, stream_len(k), MPI_BYTE, to, 50, tc,
                          &rq[STREAM + k]));
    MT_CALL(MPI_Waitall(2 * STREAM, rq, sts));
    for (int k = 0; k < STREAM; k++) {
        MTT_STATUS("stream", k, stream_len(k), sts[k], from, 50, stream_len(k));
        mtt_check(rb + (size_t)k * STREAM_MAX, (size_t)stream_len(k), mtt_seed(from, k, 50, 3),
                  "stream data", k, stream_len(k));
    }
    free(sb);
    free(rb);
    free(rq);
    free(sts);

    /* MPI_Request_free of a pending receive: the message still lands (seen once a later message
     * of the same sender has arrived); of a pending send, pinned (4 KiB, unexpected): the receiver
     * completes it and the request goes back to the pool from the receiver's thread */
    MPI_Request q;
    MPI_Status st;
    int fin = -1, fout = r, after = r + 1000, got = -1;
    char pin[4096], pr[4096];
    mtt_fill(pin, sizeof(pin), mtt_seed(r, 61, 0, 4));
    MT_CALL(MPI_Irecv(&fin, 1, MPI_INT, from, 60, tc, &q));
    MT_CALL(MPI_Request_free(&q));
    MT_TRUE(q == MPI_REQUEST_NULL, "freed request is MPI_REQUEST_NULL");
    MT_CALL(MPI_Isend(pin, (int)sizeof(pin), MPI_BYTE, to, 61, tc, &q));
    MT_CALL(MPI_Request_free(&q));
    MT_CALL(MPI_Send(&fout, 1, MPI_INT, to, 60, tc));
    MT_CALL(MPI_Send(&after, 1, MPI_INT, to, 62, tc));
    MT_CALL(MPI_Recv(&got, 1, MPI_INT, from, 62, tc, MPI_STATUS_IGNORE));
    MT_EQ("message after the freed receive's", from + 1000, got);
    MT_EQ("freed receive's data", from, fin);
    MT_CALL(MPI_Barrier(tc));   /* the 4 KiB sends are pinned at their receivers now */
    MT_CALL(MPI_Recv(pr, (int)sizeof(pr), MPI_BYTE, from, 61, tc, &st));
    MTT_STATUS("freed send", 61, 0, st, from, 61, (int)sizeof(pr));
    mtt_check(pr, sizeof(pr), mtt_seed(from, 61, 0, 4), "freed send's data", 61, 0);
    MT_CALL(MPI_Barrier(tc));   /* pin is read by now */

    /* MPI_Request_get_status leaves the request active; MPI_Wait then completes it */
    int gin = -1, gout = r * 3, flag = 0;
    MT_CALL(MPI_Irecv(&gin, 1, MPI_INT, from, 63, tc, &q));
    MT_CALL(MPI_Request_get_status(q, &flag, &st));
    MT_CALL(MPI_Send(&gout, 1, MPI_INT, to, 63, tc));
    while (!flag)
        MT_CALL(MPI_Request_get_status(q, &flag, &st));
    MTT_STATUS("get_status", 63, 0, st, from, 63, (int)sizeof(int));
    MT_TRUE(q != MPI_REQUEST_NULL, "get_status keeps the request");
    MT_CALL(MPI_Wait(&q, &st));
    MTT_STATUS("wait after get_status", 63, 0, st, from, 63, (int)sizeof(int));
    MT_EQ("get_status data", from * 3, gin);

    /* MPI_Cancel of a receive: from a thread-rank of the same process it completes normally; from
     * another process (the library's own receive on a pair communicator) it may be cancelled,
     * and the message then goes to the next receive */
    int cin = -1, cout = r * 5, canc = 1;
    MT_CALL(MPI_Irecv(&cin, 1, MPI_INT, from, 64, tc, &q));
    MT_CALL(MPI_Cancel(&q));
    MT_CALL(MPI_Send(&cout, 1, MPI_INT, to, 64, tc));
    MT_CALL(MPI_Wait(&q, &st));
    MT_CALL(MPI_Test_cancelled(&st, &canc));
    if (canc)
        MT_CALL(MPI_Recv(&cin, 1, MPI_INT, from, 64, tc, &st));
    MT_EQ("data after cancel", from * 5, cin);

    /* truncation: MPI_Wait returns MPI_ERR_TRUNCATE (the threadcomm has MPI_ERRORS_RETURN from
     * MPI_COMM_WORLD) and the request is gone */
    int small = -1;
    char big[8] = { 0 };
    MT_CALL(MPI_Irecv(&small, 1, MPI_INT, from, 65, tc, &q));
    MT_CALL(MPI_Send(big, 8, MPI_BYTE, to, 65, tc));
    MT_CLASS_EQ("truncated receive", MPI_ERR_TRUNCATE, MPI_Wait(&q, &st));
    MT_TRUE(q == MPI_REQUEST_NULL, "truncated request is MPI_REQUEST_NULL");
    MT_CALL(MPI_Barrier(tc));
}

/* Thread-ranks of other processes (the pair communicators, docs/threadcomm.md): rank n-1 takes
 * XMSG messages from every other rank, local and remote, with every kind of receive mixed
 * (nonblocking wildcards completed by MPI_Waitall, blocking ones, tag- and source-specific ones,
 * Probe, Iprobe), checking no loss, no double match, and the order of each (source, tag) stream
 * and, for MPI_ANY_TAG, of each source; then every rank with the rank of the next process: an
 * Issend that is not complete before its receive is posted, and truncation reported on the
 * direct path, the wildcard path and by a blocking receive. With one process it is all local. */
#define XMSG 8

static void remote_check(int n, const int b[2], const MPI_Status *st, int want_tag, int *nextk,
                         char *seen)
{
    int s = st->MPI_SOURCE, t = st->MPI_TAG - 200, k = b[1];
    MT_TRUE(s >= 0 && s < n - 1, "source expected 0..%d got %d", n - 2, s);
    MT_EQ("payload's source", s, b[0]);
    MT_TRUE(k >= 0 && k < XMSG && t == k % 2, "message %d of %d has tag %d", k, s, 200 + t);
    MT_TRUE(!seen[s * XMSG + k], "message %d of source %d matched twice", k, s);
    seen[s * XMSG + k] = 1;
    /* its (source, tag) stream in order; with MPI_ANY_TAG the oldest of the source */
    MT_EQ("order of the (source, tag) stream", nextk[2 * s + t], k);
    if (want_tag == MPI_ANY_TAG) {
        int o = nextk[2 * s + (1 - t)];
        MT_TRUE(o >= XMSG || o > k, "ANY_TAG from %d took %d before older %d", s, k, o);
    }
    nextk[2 * s + t] += 2;
}

static void remote_mix(int r, int n)
{
    int R = n - 1;
    MPI_Status st;
    if (r != R) {
        MPI_Request rq[XMSG];
        int buf[XMSG][2];
        for (int k = 0; k < XMSG; k++) {
            buf[k][0] = r;
            buf[k][1] = k;
            if (k % 4 == 0)
                MT_CALL(MPI_Issend(buf[k], 2, MPI_INT, R, 200 + k % 2, tc, &rq[k]));
            else
                MT_CALL(MPI_Isend(buf[k], 2, MPI_INT, R, 200 + k % 2, tc, &rq[k]));
        }
        MT_CALL(MPI_Waitall(XMSG, rq, MPI_STATUSES_IGNORE));
    } else if (n > 1) {
        int total = (n - 1) * XMSG, got = 0;
        char *seen = calloc((size_t)total, 1);
        int *nextk = malloc(sizeof(int) * 2 * (size_t)n);
        MT_TRUE(seen && nextk, "malloc");
        for (int s = 0; s < n; s++)
            nextk[2 * s] = 0, nextk[2 * s + 1] = 1;
        MPI_Request wq[3];
        MPI_Status wst[3];
        int wb[3][2];
        for (int i = 0; i < 3; i++)
            MT_CALL(MPI_Irecv(wb[i], 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &wq[i]));
        MT_CALL(MPI_Waitall(3, wq, wst));
        for (int i = 0; i < 3; i++, got++)
            remote_check(n, wb[i], &wst[i], MPI_ANY_TAG, nextk, seen);
        for (int it = 0; got < total; it++) {
            int b[2] = { -1, -1 }, s = it % (n - 1), t = it % 2, flag = 0;
            bool has_s = nextk[2 * s] < XMSG || nextk[2 * s + 1] < XMSG;
            bool has_t = false;
            for (int x = 0; x < n - 1; x++)
                has_t = has_t || nextk[2 * x + t] < XMSG;
            int kind = it % 6;
            if ((kind == 1 && !has_t) || ((kind == 2 || kind == 4) && !has_s) ||
                (kind == 5 && nextk[2 * s + t] >= XMSG))
                kind = 0;
            int wtag = MPI_ANY_TAG;
            switch (kind) {
            case 0:
                MT_CALL(MPI_Recv(b, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &st));
                break;
            case 1:
                wtag = 200 + t;
                MT_CALL(MPI_Recv(b, 2, MPI_INT, MPI_ANY_SOURCE, wtag, tc, &st));
                break;
            case 2:
                MT_CALL(MPI_Recv(b, 2, MPI_INT, s, MPI_ANY_TAG, tc, &st));
                MT_EQ("source-specific receive's source", s, st.MPI_SOURCE);
                break;
            case 3: {
                MPI_Status ps;
                int count = -1;
                MT_CALL(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, tc, &ps));
                MT_CALL(MPI_Get_count(&ps, MPI_INT, &count));
                MT_EQ("probed count", 2, count);
                MT_CALL(MPI_Recv(b, 2, MPI_INT, ps.MPI_SOURCE, ps.MPI_TAG, tc, &st));
                MT_EQ("probed source received", ps.MPI_SOURCE, st.MPI_SOURCE);
                MT_EQ("probed tag received", ps.MPI_TAG, st.MPI_TAG);
                wtag = ps.MPI_TAG;
                break;
            }
            case 4: {
                MPI_Status ps;
                while (!flag)
                    MT_CALL(MPI_Iprobe(s, MPI_ANY_TAG, tc, &flag, &ps));
                MT_EQ("iprobed source", s, ps.MPI_SOURCE);
                MT_CALL(MPI_Recv(b, 2, MPI_INT, s, ps.MPI_TAG, tc, &st));
                MT_EQ("iprobed tag received", ps.MPI_TAG, st.MPI_TAG);
                break;   /* Iprobe with MPI_ANY_TAG: the oldest of s */
            }
            default: {
                MPI_Request q;
                wtag = 200 + t;
                MT_CALL(MPI_Irecv(b, 2, MPI_INT, s, wtag, tc, &q));
                MT_CALL(MPI_Wait(&q, &st));
                MT_EQ("specific receive's source", s, st.MPI_SOURCE);
                break;
            }
            }
            remote_check(n, b, &st, wtag, nextk, seen);
            got++;
        }
        free(seen);
        free(nextk);
    }
    MT_CALL(MPI_Barrier(tc));

    int to = (r + mtt_nthreads) % n, from = (r - mtt_nthreads + n) % n;
    int sv = r, rv = -1, flag = 0, small = -1;
    char big[8] = { 0 };
    MPI_Request sq, q;
    MT_CALL(MPI_Issend(&sv, 1, MPI_INT, to, 210, tc, &sq));
    for (int i = 0; i < 200 && !flag; i++)
        MT_CALL(MPI_Test(&sq, &flag, MPI_STATUS_IGNORE));
    MT_EQ("Issend complete before its receive is posted", 0, flag);
    MT_CALL(MPI_Barrier(tc));
    MT_CALL(MPI_Recv(&rv, 1, MPI_INT, MPI_ANY_SOURCE, 210, tc, &st));
    MT_EQ("Issend's data", from, rv);
    MT_EQ("Issend's source", from, st.MPI_SOURCE);
    MT_CALL(MPI_Wait(&sq, MPI_STATUS_IGNORE));

    MT_CALL(MPI_Irecv(&small, 1, MPI_INT, from, 211, tc, &q));
    MT_CALL(MPI_Send(big, 8, MPI_BYTE, to, 211, tc));
    MT_CLASS_EQ("truncated receive from a source", MPI_ERR_TRUNCATE, MPI_Wait(&q, &st));
    MT_CALL(MPI_Irecv(&small, 1, MPI_INT, MPI_ANY_SOURCE, 212, tc, &q));
    MT_CALL(MPI_Send(big, 8, MPI_BYTE, to, 212, tc));
    MT_CLASS_EQ("truncated wildcard receive", MPI_ERR_TRUNCATE, MPI_Wait(&q, &st));
    MT_CALL(MPI_Send(big, 8, MPI_BYTE, to, 213, tc));
    MT_CLASS_EQ("truncated blocking receive", MPI_ERR_TRUNCATE,
                MPI_Recv(&small, 1, MPI_INT, from, 213, tc, &st));
    MT_CALL(MPI_Barrier(tc));

    /* a large message on a derived communicator (carried by the hidden process communicator) does
     * not hold its sender back from a later one on the threadcomm (a pair communicator) that the
     * receiver waits for first, blocked in the library */
    MPI_Comm dup;
    MT_CALL(MPI_Comm_dup(tc, &dup));
    int blen = 1 << 20;
    char *bs = malloc((size_t)blen), *br = malloc((size_t)blen);
    MT_TRUE(bs && br, "malloc");
    memset(bs, r & 0x7f, (size_t)blen);
    memset(br, 0xff, (size_t)blen);
    MT_CALL(MPI_Isend(bs, blen, MPI_BYTE, to, 214, dup, &sq));
    MT_CALL(MPI_Send(&sv, 1, MPI_INT, to, 215, tc));
    MT_CALL(MPI_Recv(&rv, 1, MPI_INT, from, 215, tc, &st));
    MT_CALL(MPI_Recv(br, blen, MPI_BYTE, from, 214, dup, &st));
    MT_CALL(MPI_Wait(&sq, MPI_STATUS_IGNORE));
    MT_EQ("large message on a derived communicator, first byte", from & 0x7f, br[0]);
    MT_EQ("large message on a derived communicator, last byte", from & 0x7f, br[blen - 1]);
    free(bs);
    free(br);
    /* nonblocking on the derived communicator, completed by MPI_Waitall alone (the progress
     * thread takes the message and the Issend's ACK out of the hidden process communicator) */
    MPI_Request dq[2];
    int din = -1, dout = r;
    MT_CALL(MPI_Irecv(&din, 1, MPI_INT, from, 216, dup, &dq[0]));
    MT_CALL(MPI_Issend(&dout, 1, MPI_INT, to, 216, dup, &dq[1]));
    MT_CALL(MPI_Waitall(2, dq, MPI_STATUSES_IGNORE));
    MT_EQ("Issend on a derived communicator", from, din);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Barrier(tc));
}

static void collectives(MPI_Comm c, int nb)
{
    int r, n;
    MT_CALL(MPI_Comm_rank(c, &r));
    MT_CALL(MPI_Comm_size(c, &n));
    MPI_Request rq;
#define RUN(blocking, nonblocking)                                                                 \
    do {                                                                                           \
        if (nb) {                                                                                  \
            MT_CALL(nonblocking);                                                                  \
            MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));                                             \
        } else {                                                                                   \
            MT_CALL(blocking);                                                                     \
        }                                                                                          \
    } while (0)
    mtt_at("collectives nb %ld size %ld", nb, n);
    RUN(MPI_Barrier(c), MPI_Ibarrier(c, &rq));
    for (int root = 0; root < n; root += (n > 3 ? n / 3 : 1)) {
        int cnt = 1000;
        int *v = malloc(sizeof(int) * (size_t)cnt * (size_t)n), *w = malloc(sizeof(int) * (size_t)cnt * (size_t)n);
        for (int i = 0; i < cnt; i++)
            v[i] = r == root ? root * 3 + i : -1;
        RUN(MPI_Bcast(v, cnt, MPI_INT, root, c), MPI_Ibcast(v, cnt, MPI_INT, root, c, &rq));
        for (int i = 0; i < cnt; i++)
            MT_EQ("bcast", root * 3 + i, v[i]);
        for (int i = 0; i < cnt; i++)
            v[i] = r + i;
        RUN(MPI_Reduce(v, w, cnt, MPI_INT, MPI_SUM, root, c),
            MPI_Ireduce(v, w, cnt, MPI_INT, MPI_SUM, root, c, &rq));
        if (r == root)
            for (int i = 0; i < cnt; i++)
                MT_EQ("reduce", n * (n - 1) / 2 + n * i, w[i]);
        RUN(MPI_Gather(v, cnt, MPI_INT, w, cnt, MPI_INT, root, c),
            MPI_Igather(v, cnt, MPI_INT, w, cnt, MPI_INT, root, c, &rq));
        if (r == root)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < cnt; i += 97)
                    MT_EQ("gather", j + i, w[j * cnt + i]);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < cnt; i++)
                w[j * cnt + i] = r == root ? j * 5 + i : -1;
        RUN(MPI_Scatter(w, cnt, MPI_INT, v, cnt, MPI_INT, root, c),
            MPI_Iscatter(w, cnt, MPI_INT, v, cnt, MPI_INT, root, c, &rq));
        for (int i = 0; i < cnt; i++)
            MT_EQ("scatter", r * 5 + i, v[i]);
        free(v);
        free(w);
    }
    double d[3] = { r, 1.0, r * 0.5 }, e[3];
    RUN(MPI_Allreduce(d, e, 3, MPI_DOUBLE, MPI_SUM, c),
        MPI_Iallreduce(d, e, 3, MPI_DOUBLE, MPI_SUM, c, &rq));
    MT_TRUE(e[0] == n * (n - 1) / 2.0 && e[1] == n && e[2] == n * (n - 1) / 4.0, "allreduce sums");
    int mx = r, mxo;
    RUN(MPI_Allreduce(&mx, &mxo, 1, MPI_INT, MPI_MAX, c),
        MPI_Iallreduce(&mx, &mxo, 1, MPI_INT, MPI_MAX, c, &rq));
    MT_EQ("allreduce max", n - 1, mxo);
    int sc = -1, ex = -1;
    RUN(MPI_Scan(&r, &sc, 1, MPI_INT, MPI_SUM, c), MPI_Iscan(&r, &sc, 1, MPI_INT, MPI_SUM, c, &rq));
    MT_EQ("scan", r * (r + 1) / 2, sc);
    RUN(MPI_Exscan(&r, &ex, 1, MPI_INT, MPI_SUM, c),
        MPI_Iexscan(&r, &ex, 1, MPI_INT, MPI_SUM, c, &rq));
    if (r > 0)
        MT_EQ("exscan", r * (r - 1) / 2, ex);
    int *rsb = malloc(sizeof(int) * 2 * (size_t)n), rsbo[2];
    for (int j = 0; j < 2 * n; j++)
        rsb[j] = r + j;
    RUN(MPI_Reduce_scatter_block(rsb, rsbo, 2, MPI_INT, MPI_SUM, c),
        MPI_Ireduce_scatter_block(rsb, rsbo, 2, MPI_INT, MPI_SUM, c, &rq));
    for (int j = 0; j < 2; j++)
        MT_EQ("reduce_scatter_block", n * (n - 1) / 2 + n * (2 * r + j), rsbo[j]);
    free(rsb);
    int *ag = malloc(sizeof(int) * 2 * (size_t)n), *aa = malloc(sizeof(int) * (size_t)n),
        *ab = malloc(sizeof(int) * (size_t)n);
    int mine[2] = { r, -r };
    RUN(MPI_Allgather(mine, 2, MPI_INT, ag, 2, MPI_INT, c),
        MPI_Iallgather(mine, 2, MPI_INT, ag, 2, MPI_INT, c, &rq));
    for (int j = 0; j < n; j++) {
        MT_EQ("allgather", j, ag[2 * j]);
        MT_EQ("allgather", -j, ag[2 * j + 1]);
    }
    for (int j = 0; j < n; j++)
        aa[j] = r * 1000 + j;
    RUN(MPI_Alltoall(aa, 1, MPI_INT, ab, 1, MPI_INT, c),
        MPI_Ialltoall(aa, 1, MPI_INT, ab, 1, MPI_INT, c, &rq));
    for (int j = 0; j < n; j++)
        MT_EQ("alltoall", j * 1000 + r, ab[j]);
    free(ag);
    free(aa);
    free(ab);
    /* v forms: rank j's block has j + 1 elements, at displacement j (j + 1) / 2 + j (a gap of one) */
    int tot = n * (n + 1) / 2 + n;
    int *cnts = malloc(sizeof(int) * (size_t)n), *dis = malloc(sizeof(int) * (size_t)n);
    int *vb = malloc(sizeof(int) * (size_t)tot), *mineb = malloc(sizeof(int) * (size_t)(n + 1));
    for (int j = 0; j < n; j++) {
        cnts[j] = j + 1;
        dis[j] = j * (j + 1) / 2 + j;
    }
    for (int k = 0; k <= r; k++)
        mineb[k] = r * 100 + k;
    int root = n - 1;
    for (int i = 0; i < tot; i++)
        vb[i] = -5;
    RUN(MPI_Gatherv(mineb, r + 1, MPI_INT, vb, cnts, dis, MPI_INT, root, c),
        MPI_Igatherv(mineb, r + 1, MPI_INT, vb, cnts, dis, MPI_INT, root, c, &rq));
    if (r == root)
        for (int j = 0; j < n; j++) {
            for (int k = 0; k <= j; k++)
                MT_EQ("gatherv", j * 100 + k, vb[dis[j] + k]);
            MT_EQ("gatherv gap", -5, vb[dis[j] + j + 1]);
        }
    for (int j = 0; j < n; j++)
        for (int k = 0; k <= j; k++)
            vb[dis[j] + k] = r == root ? j * 7 + k : -1;
    for (int k = 0; k <= r; k++)
        mineb[k] = -1;
    RUN(MPI_Scatterv(vb, cnts, dis, MPI_INT, mineb, r + 1, MPI_INT, root, c),
        MPI_Iscatterv(vb, cnts, dis, MPI_INT, mineb, r + 1, MPI_INT, root, c, &rq));
    for (int k = 0; k <= r; k++)
        MT_EQ("scatterv", r * 7 + k, mineb[k]);
    for (int k = 0; k <= r; k++)
        mineb[k] = r * 100 + k;
    RUN(MPI_Allgatherv(mineb, r + 1, MPI_INT, vb, cnts, dis, MPI_INT, c),
        MPI_Iallgatherv(mineb, r + 1, MPI_INT, vb, cnts, dis, MPI_INT, c, &rq));
    for (int j = 0; j < n; j++)
        for (int k = 0; k <= j; k++)
            MT_EQ("allgatherv", j * 100 + k, vb[dis[j] + k]);
    /* alltoallv: to rank j, j + 1 elements at dis[j]; from rank j, r + 1 elements at (r + 1) j */
    int *sv = malloc(sizeof(int) * (size_t)tot), *rv = malloc(sizeof(int) * (size_t)(n * (r + 1)));
    int *rc2 = malloc(sizeof(int) * (size_t)n), *rd2 = malloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++) {
        for (int k = 0; k <= j; k++)
            sv[dis[j] + k] = r * 1000 + j * 10 + k;
        rc2[j] = r + 1;
        rd2[j] = (r + 1) * j;
    }
    RUN(MPI_Alltoallv(sv, cnts, dis, MPI_INT, rv, rc2, rd2, MPI_INT, c),
        MPI_Ialltoallv(sv, cnts, dis, MPI_INT, rv, rc2, rd2, MPI_INT, c, &rq));
    for (int j = 0; j < n; j++)
        for (int k = 0; k <= r; k++)
            MT_EQ("alltoallv", j * 1000 + r * 10 + k, rv[(r + 1) * j + k]);
    free(sv);
    free(rv);
    free(rc2);
    free(rd2);
    /* reduce_scatter: rank j gets cnts[j] = j + 1 elements, the block at j (j + 1) / 2 of the
     * reduced vector of n (n + 1) / 2; the blocking form also in place */
    int rtot = n * (n + 1) / 2, *rsi = malloc(sizeof(int) * (size_t)rtot), rso[64];
    MT_TRUE(n <= 63, "n <= 63");
    for (int i = 0; i < rtot; i++)
        rsi[i] = r + i;
    RUN(MPI_Reduce_scatter(rsi, rso, cnts, MPI_INT, MPI_SUM, c),
        MPI_Ireduce_scatter(rsi, rso, cnts, MPI_INT, MPI_SUM, c, &rq));
    for (int k = 0; k <= r; k++)
        MT_EQ("reduce_scatter", n * (n - 1) / 2 + n * (r * (r + 1) / 2 + k), rso[k]);
    if (!nb) {
        MT_CALL(MPI_Reduce_scatter(MPI_IN_PLACE, rsi, cnts, MPI_INT, MPI_SUM, c));
        for (int k = 0; k <= r; k++)
            MT_EQ("reduce_scatter in place", n * (n - 1) / 2 + n * (r * (r + 1) / 2 + k), rsi[k]);
    }
    free(rsi);
    /* alltoallw: two ints r*100 + j*10 + {0,1} to each rank j, sent as 2 MPI_INT (even j) or one
     * strided pair (odd j) from byte displacement 4 j ints; received as 2 MPI_INT (j % 3 != 0) or
     * one strided pair (j % 3 == 0) at byte displacement 4 j ints */
    MPI_Datatype pair;
    MT_CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    MT_CALL(MPI_Type_commit(&pair));
    int *wsb = malloc(sizeof(int) * 4 * (size_t)n), *wrb = malloc(sizeof(int) * 4 * (size_t)n);
    int *wsc = malloc(sizeof(int) * 4 * (size_t)n), *wsd = wsc + n, *wrc = wsc + 2 * n,
        *wrd = wsc + 3 * n;
    MPI_Datatype *wst = malloc(sizeof(MPI_Datatype) * 2 * (size_t)n), *wrt = wst + n;
    for (int j = 0; j < n; j++) {
        int odd = j % 2, third = j % 3 == 0;
        wsb[4 * j] = r * 100 + j * 10;
        wsb[4 * j + (odd ? 2 : 1)] = r * 100 + j * 10 + 1;
        wsc[j] = odd ? 1 : 2;
        wst[j] = odd ? pair : MPI_INT;
        wsd[j] = 4 * j * (int)sizeof(int);
        wrc[j] = third ? 1 : 2;
        wrt[j] = third ? pair : MPI_INT;
        wrd[j] = 4 * j * (int)sizeof(int);
        for (int k = 0; k < 4; k++)
            wrb[4 * j + k] = -1;
    }
    RUN(MPI_Alltoallw(wsb, wsc, wsd, wst, wrb, wrc, wrd, wrt, c),
        MPI_Ialltoallw(wsb, wsc, wsd, wst, wrb, wrc, wrd, wrt, c, &rq));
    for (int j = 0; j < n; j++) {
        MT_EQ("alltoallw first", j * 100 + r * 10, wrb[4 * j]);
        MT_EQ("alltoallw second", j * 100 + r * 10 + 1, wrb[4 * j + (j % 3 == 0 ? 2 : 1)]);
    }
    free(wsb);
    free(wrb);
    free(wsc);
    free(wst);
    MT_CALL(MPI_Type_free(&pair));
    free(cnts);
    free(dis);
    free(vb);
    free(mineb);
#undef RUN
}

static void splits(int r, int n)
{
    MPI_Comm dup, half, quarter;
    MT_CALL(MPI_Comm_dup(tc, &dup));
    int dr, ds;
    MT_CALL(MPI_Comm_rank(dup, &dr));
    MT_CALL(MPI_Comm_size(dup, &ds));
    MT_EQ("dup rank", r, dr);
    MT_EQ("dup size", n, ds);
    /* traffic on dup and tc with the same tags does not mix */
    int x = r, y = -1, z = -1;
    MPI_Request rq[2];
    MT_CALL(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 1, dup, &rq[0]));
    MT_CALL(MPI_Irecv(&z, 1, MPI_INT, MPI_ANY_SOURCE, 1, tc, &rq[1]));
    int nx = x + 100;
    MT_CALL(MPI_Send(&nx, 1, MPI_INT, (r + 1) % n, 1, tc));
    MT_CALL(MPI_Send(&x, 1, MPI_INT, (r + 1) % n, 1, dup));
    MT_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MT_EQ("dup message", (r - 1 + n) % n, y);
    MT_EQ("tc message", (r - 1 + n) % n + 100, z);
    collectives(dup, 1);
    /* split by parity, reversed order */
    MT_CALL(MPI_Comm_split(tc, r % 2, -r, &half));
    int hr, hs, expect_s = (n - r % 2 + 1) / 2;
    MT_CALL(MPI_Comm_rank(half, &hr));
    MT_CALL(MPI_Comm_size(half, &hs));
    MT_EQ("split size", expect_s, hs);
    /* members of my color in decreasing parent rank: the highest is rank 0 */
    int last = r % 2 + 2 * (expect_s - 1);
    MT_EQ("split rank", (last - r) / 2, hr);
    int sum;
    MT_CALL(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, half));
    int want = 0;
    for (int i = r % 2; i < n; i += 2)
        want += i;
    MT_EQ("split allreduce", want, sum);
    collectives(half, 0);
    /* nested: split the half again, with MPI_UNDEFINED for its last rank */
    int color = hr == hs - 1 && hs > 1 ? MPI_UNDEFINED : hr % 2;
    MT_CALL(MPI_Comm_split(half, color, hr, &quarter));
    if (color == MPI_UNDEFINED) {
        MT_TRUE(quarter == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
    } else {
        int qr, qs;
        MT_CALL(MPI_Comm_rank(quarter, &qr));
        MT_CALL(MPI_Comm_size(quarter, &qs));
        MT_EQ("nested rank", hr / 2, qr);
        int parent_r = -1;
        MT_CALL(MPI_Allreduce(&r, &parent_r, 1, MPI_INT, MPI_MAX, quarter));
        MT_TRUE(parent_r >= r, "nested allreduce max");
        collectives(quarter, 1);
        MT_CALL(MPI_Comm_free(&quarter));
    }
    MT_CALL(MPI_Comm_free(&half));
    MT_CALL(MPI_Comm_free(&dup));
}

static int regions = 2;

static void region(int tid, void *arg)
{
    (void)arg;
    MT_CALL(MPIX_Threadcomm_start(tc));
    int r, n;
    MT_CALL(MPI_Comm_rank(tc, &r));
    MT_CALL(MPI_Comm_size(tc, &n));
    MT_EQ("threadcomm size", mt_size * mtt_nthreads, n);
    MT_TRUE(r >= mt_rank * mtt_nthreads && r < (mt_rank + 1) * mtt_nthreads,
            "thread-rank %d outside process %d's block", r, mt_rank);
    /* process-rank traffic beside the thread-ranks' (MPI_THREAD_MULTIPLE only) */
    MPI_Request wr[2];
    int wout = mt_rank, win = -1;
    bool world = !single && tid == 0 && mt_size > 1;
    if (world) {
        MT_CALL(MPI_Irecv(&win, 1, MPI_INT, (mt_rank - 1 + mt_size) % mt_size, 77, MPI_COMM_WORLD, &wr[0]));
        MT_CALL(MPI_Isend(&wout, 1, MPI_INT, (mt_rank + 1) % mt_size, 77, MPI_COMM_WORLD, &wr[1]));
    }
    ring_modes(r, n);
    datatypes(r, n);
    wildcards(r, n);
    test_some(r, n);
    requests(r, n);
    remote_mix(r, n);
    collectives(tc, 0);
    collectives(tc, 1);
    splits(r, n);
    /* calls a threadcomm does not implement are refused, not run on the process communicator */
    int flag = 0;
    MPI_Message msg;
    MPI_Request preq;
    MT_CLASS_EQ("MPI_Barrier_init on a threadcomm", MPI_ERR_UNSUPPORTED_OPERATION,
                MPI_Barrier_init(tc, MPI_INFO_NULL, &preq));
    MT_CLASS_EQ("MPI_Improbe on a threadcomm", MPI_ERR_UNSUPPORTED_OPERATION,
                MPI_Improbe(MPI_ANY_SOURCE, 0, tc, &flag, &msg, MPI_STATUS_IGNORE));
    if (world) {
        MT_CALL(MPI_Waitall(2, wr, MPI_STATUSES_IGNORE));
        MT_EQ("world ring", (mt_rank - 1 + mt_size) % mt_size, win);
    }
    MT_CALL(MPIX_Threadcomm_finish(tc));
    MT_TRUE(MPI_Comm_rank(tc, &r) != MPI_SUCCESS || r == MPI_UNDEFINED,
            "rank after finish expected MPI_UNDEFINED");
}

int main(int argc, char **argv)
{
    long nums[1] = { 2 };
    mtt_args(argc, argv, nums, 1);
    regions = (int)nums[0];
    single = mtt_flag(argc, argv, "--single");
    if (single) {
        MT_CALL(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &mtt_provided));
        MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
        MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
        mtt_wd.t0 = MPI_Wtime();
        mtt_watchdog_start();
    } else {
        mtt_init(&argc, &argv);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bsize = mtt_nthreads * 8 * (3000 + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    MT_CALL(MPI_Buffer_attach(bbuf, bsize));
    for (int pass = 0; pass < 2; pass++) {
        mtt_at("threadcomm pass %ld%.0ld", pass, 0);
        MT_CALL(MPIX_Threadcomm_init(MPI_COMM_WORLD, mtt_nthreads, &tc));
        int sz;
        MT_CALL(MPI_Comm_size(tc, &sz));
        MT_EQ("size before start", mt_size * mtt_nthreads, sz);
        for (int g = 0; g < (pass == 0 ? regions : 1); g++)
            mtt_run(mtt_nthreads, region, NULL);
        MT_CALL(MPIX_Threadcomm_free(&tc));
        MT_TRUE(tc == MPI_COMM_NULL, "freed threadcomm is MPI_COMM_NULL");
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));   /* process ranks between threadcomms */
    }
    MT_CALL(MPI_Buffer_detach(&bbuf, &bsize));
    free(bbuf);
    return mtt_finish(single ? "threadcomm --single" : "threadcomm");
}
#endif
