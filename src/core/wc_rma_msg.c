/* One-sided operations on targets of other nodes, by messages the target's progress applies (see
 * wc_rma_msg.h). */
#include "core/wc_rma_msg.h"

#include <stdlib.h>
#include <string.h>
#include "core/wc_pt2pt.h"
#include "core/wc_wait.h"
#include "progress/wp_engine.h"
#include "util/wu_log.h"
#include "util/wu_tsan.h"

enum {
    WC_RMA_PUT = 1, WC_RMA_GET, WC_RMA_ACC, WC_RMA_CAS, WC_RMA_LOCK, WC_RMA_UNLOCK, WC_RMA_FLUSH,
    WC_RMA_POST, WC_RMA_COMPLETE,
    WC_RMA_ERR,   /* answer only: a sent-and-forgotten operation failed at the target */
};
#define WC_RMA_F_EXCL 0x1   /* LOCK, UNLOCK: exclusive */
#define WC_RMA_F_IN   0x2   /* ACC: the fragment carries origin data (not MPI_NO_OP) */
#define WC_RMA_F_FETCH 0x4  /* ACC: answer the target's data before the update */

/* The payload of a WC_PKT_RMA packet, followed by nsegs layout segments, then data. */
typedef struct wc_rma_msg {
    uint8_t  op;
    uint8_t  flags;
    uint8_t  contig;      /* target layout: contiguous (nsegs == 0) */
    uint8_t  pad;
    uint32_t win;
    int32_t  origin;      /* the origin's window rank */
    uint32_t nsegs;
    uint64_t token;       /* the origin's wait object (operations answered with data), or 0 */
    uint64_t off, lo, hi; /* wc_rma_where_t */
    uint64_t count;       /* target elements */
    uint64_t total;       /* packed bytes of the whole operation */
    uint64_t pos, n;      /* this fragment: packed offset and bytes */
    uint64_t op_h, basic; /* accumulates: MPI_Op and basic MPI_Datatype handles */
    uint64_t lsize;       /* target layout */
    int64_t  lextent, lcontig_off;
} wc_rma_msg_t;

/* The payload of a WC_PKT_RMA_REP packet, followed by data. */
typedef struct wc_rma_rep {
    uint8_t  op;
    uint8_t  busy;        /* LOCK: not taken */
    uint16_t pad;
    uint32_t win;
    int32_t  err;         /* wu_status_t */
    uint32_t pad2;
    uint64_t token;
    uint64_t pos;         /* packed offset of the data */
} wc_rma_rep_t;

/* An origin's wait for answers. Completed by the delivery thread (one at a time) once all came. */
typedef struct wc_rma_wait {
    wc_request_t req;     /* first: the token names it */
    char        *buf;     /* answers' data at their offsets */
    uint64_t     total;   /* bytes expected */
    uint64_t     arrived;
    uint32_t     nrep;    /* answers received */
    uint32_t     expect;  /* answers expected; 0: done when total bytes arrived (Get) */
    int          err;
    uint8_t      busy;
} wc_rma_wait_t;

/* ---- the window table ---------------------------------------------------------------------- */

#define WC_RMA_WINS 1024
static _Atomic(wc_rma_win_t *) wc_rma_wins[WC_RMA_WINS];
static _Atomic int wc_rma_wins_hw;   /* slots ever used: lookups scan these */

wu_status_t wc_rma_win_register(wc_rma_win_t *w)
{
    /* targets serve origins from their progress: below MPI_THREAD_MULTIPLE the engine has no
     * thread, so a target computing outside MPI would serve nobody without the timer */
    wu_status_t st = wp_engine_start_timer();
    if (st != WU_OK)
        return st;
    for (int i = 0; i < WC_RMA_WINS; i++) {
        wc_rma_win_t *none = NULL;
        if (atomic_compare_exchange_strong_explicit(&wc_rma_wins[i], &none, w, memory_order_release,
                                                    memory_order_relaxed)) {
            int hw = atomic_load_explicit(&wc_rma_wins_hw, memory_order_relaxed);
            while (hw < i + 1 &&
                   !atomic_compare_exchange_weak_explicit(&wc_rma_wins_hw, &hw, i + 1,
                                                          memory_order_release,
                                                          memory_order_relaxed))
                ;
            return WU_OK;
        }
    }
    wu_log_error("RMA: more than %d windows across nodes at once", WC_RMA_WINS);
    return WU_ERR_NO_MEMORY;
}

void wc_rma_win_unregister(wc_rma_win_t *w)
{
    int hw = atomic_load_explicit(&wc_rma_wins_hw, memory_order_acquire);
    for (int i = 0; i < hw; i++)
        if (atomic_load_explicit(&wc_rma_wins[i], memory_order_relaxed) == w) {
            atomic_store_explicit(&wc_rma_wins[i], NULL, memory_order_release);
            return;
        }
}

static wc_rma_win_t *wc_rma_win_find(uint32_t id)
{
    int hw = atomic_load_explicit(&wc_rma_wins_hw, memory_order_acquire);
    for (int i = 0; i < hw; i++) {
        wc_rma_win_t *w = atomic_load_explicit(&wc_rma_wins[i], memory_order_acquire);
        if (w && w->id == id)
            return w;
    }
    return NULL;
}

/* ---- sending ------------------------------------------------------------------------------- */

static size_t wc_rma_maxp(const wc_rma_win_t *w, int t)
{
    return w->ep->peers[w->world[t]].tl->attr.max_payload;
}

static void wc_rma_send(wc_ep_t *ep, int dst, const void *pkt, size_t len, uint8_t type)
{
    wc_hdr_t hdr = { .type = type, .len = len };
    wc_pt2pt_send_ctrl(ep, dst, &hdr, pkt, len);
}

static void wc_rma_msg_base(wc_rma_msg_t *m, const wc_rma_win_t *w, uint8_t op)
{
    memset(m, 0, sizeof(*m));
    m->op = op;
    m->win = w->id;
    m->origin = w->me;
}

static void wc_rma_wait_init(wc_rma_wait_t *wt, void *buf, uint64_t total, uint32_t expect)
{
    memset(wt, 0, sizeof(*wt));
    wt->req.kind = WC_REQ_RECV;
    wc_request_reset(&wt->req);
    wt->buf = buf;
    wt->total = total;
    wt->expect = expect;
    WU_TSAN_RELEASE(wt);
}

static void wc_rma_wait_end(wc_rma_wait_t *wt)
{
    wc_wait(&wt->req);
    WU_TSAN_ACQUIRE(wt);
}

/* An operation on the target's data: its fixed part, then its layout, then fragments of data of
 * at most the room a packet leaves. */
typedef struct wc_rma_pkt {
    char  *buf;
    size_t head;   /* message and layout bytes */
    size_t room;   /* data bytes per packet */
    _Alignas(16) char stack[1024];
} wc_rma_pkt_t;

static wu_status_t wc_rma_pkt_init(wc_rma_pkt_t *p, const wc_rma_win_t *w, int t,
                                   const wc_rma_msg_t *m0, const wc_dtype_t *dt, uint64_t unit,
                                   uint64_t data)
{
    size_t maxp = wc_rma_maxp(w, t);
    uint64_t nsegs = dt->contig ? 0 : dt->nsegs;
    p->head = sizeof(wc_rma_msg_t) + nsegs * sizeof(wc_dtype_seg_t);
    if (p->head + unit > maxp) {
        wu_log_error("RMA: the target datatype (%llu segments) does not fit in a %zu-byte packet",
                     (unsigned long long)nsegs, maxp);
        return WU_ERR_UNSUPPORTED;
    }
    p->room = (maxp - p->head) / unit * unit;
    size_t need = p->head + (data < p->room ? data : p->room);
    p->buf = need <= sizeof(p->stack) ? p->stack : malloc(need);
    if (!p->buf)
        return WU_ERR_NO_MEMORY;
    wc_rma_msg_t m = *m0;
    m.nsegs = (uint32_t)nsegs;
    m.contig = dt->contig;
    m.lsize = dt->size;
    m.lextent = dt->extent;
    m.lcontig_off = dt->contig_off;
    memcpy(p->buf, &m, sizeof(m));
    if (nsegs)
        memcpy(p->buf + sizeof(m), dt->segs, nsegs * sizeof(wc_dtype_seg_t));
    return WU_OK;
}

static void wc_rma_pkt_fini(wc_rma_pkt_t *p)
{
    if (p->buf != p->stack)
        free(p->buf);
}

/* Send the fragment [pos, pos + n) with data (NULL: none). */
static void wc_rma_pkt_send(wc_rma_pkt_t *p, wc_rma_win_t *w, int t, uint64_t pos, uint64_t n,
                            const char *data)
{
    wc_rma_msg_t *m = (wc_rma_msg_t *)p->buf;   /* p->buf is malloc'd or aligned stack */
    m->pos = pos;
    m->n = n;
    if (data)
        memcpy(p->buf + p->head, data, n);
    wc_rma_send(w->ep, w->world[t], p->buf, p->head + (data ? n : 0), WC_PKT_RMA);
}

static void wc_rma_sent(wc_rma_win_t *w, int t)
{
    atomic_fetch_add_explicit(&w->sent[t], 1, memory_order_release);
}

wu_status_t wc_rma_msg_put(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, const void *packed)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, WC_RMA_PUT);
    m.off = at->off, m.lo = at->lo, m.hi = at->hi, m.count = count, m.total = bytes;
    wc_rma_pkt_t p;
    wu_status_t st = wc_rma_pkt_init(&p, w, t, &m, dt, 1, bytes);
    if (st != WU_OK)
        return st;
    for (uint64_t pos = 0; pos < bytes; pos += p.room) {
        uint64_t n = bytes - pos < p.room ? bytes - pos : p.room;
        wc_rma_pkt_send(&p, w, t, pos, n, (const char *)packed + pos);
    }
    wc_rma_pkt_fini(&p);
    wc_rma_sent(w, t);
    return WU_OK;
}

wu_status_t wc_rma_msg_get(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, void *packed)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    wc_rma_wait_t wt;
    wc_rma_wait_init(&wt, packed, bytes, 0);
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, WC_RMA_GET);
    m.off = at->off, m.lo = at->lo, m.hi = at->hi, m.count = count, m.total = bytes;
    m.token = wc_req_token(&wt);
    wc_rma_pkt_t p;
    wu_status_t st = wc_rma_pkt_init(&p, w, t, &m, dt, 1, 0);
    if (st != WU_OK)
        return st;
    wc_rma_pkt_send(&p, w, t, 0, 0, NULL);
    wc_rma_pkt_fini(&p);
    wc_rma_wait_end(&wt);
    return (wu_status_t)wt.err;
}

wu_status_t wc_rma_msg_acc(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, uint64_t op, uint64_t basic, uint64_t esize,
                           const void *in, void *result)
{
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, WC_RMA_ACC);
    m.off = at->off, m.lo = at->lo, m.hi = at->hi, m.count = count, m.total = bytes;
    m.op_h = op, m.basic = basic;
    m.flags = (in ? WC_RMA_F_IN : 0) | (result ? WC_RMA_F_FETCH : 0);
    wc_rma_pkt_t p;
    wu_status_t st = wc_rma_pkt_init(&p, w, t, &m, dt, esize ? esize : 1, in ? bytes : 0);
    if (st != WU_OK)
        return st;
    uint64_t nfrag = (bytes + p.room - 1) / p.room;
    wc_rma_wait_t wt;
    if (result) {
        wc_rma_wait_init(&wt, result, bytes, (uint32_t)nfrag);
        ((wc_rma_msg_t *)p.buf)->token = wc_req_token(&wt);
    }
    for (uint64_t pos = 0; pos < bytes; pos += p.room) {
        uint64_t n = bytes - pos < p.room ? bytes - pos : p.room;
        wc_rma_pkt_send(&p, w, t, pos, n, in ? (const char *)in + pos : NULL);
    }
    wc_rma_pkt_fini(&p);
    if (!result) {
        wc_rma_sent(w, t);
        return WU_OK;
    }
    wc_rma_wait_end(&wt);
    return (wu_status_t)wt.err;
}

wu_status_t wc_rma_msg_cas(wc_rma_win_t *w, int t, const wc_rma_where_t *at, uint64_t size,
                           const void *origin, const void *compare, void *result)
{
    struct {
        wc_rma_msg_t m;
        char data[32];
    } pkt;
    wc_rma_wait_t wt;
    wc_rma_wait_init(&wt, result, size, 1);
    wc_rma_msg_base(&pkt.m, w, WC_RMA_CAS);
    pkt.m.off = at->off, pkt.m.lo = at->lo, pkt.m.hi = at->hi, pkt.m.count = 1;
    pkt.m.total = size, pkt.m.n = size, pkt.m.contig = 1, pkt.m.lsize = size;
    pkt.m.lextent = (int64_t)size;
    pkt.m.token = wc_req_token(&wt);
    memcpy(pkt.data, origin, size);
    memcpy(pkt.data + size, compare, size);
    wc_rma_send(w->ep, w->world[t], &pkt, sizeof(pkt.m) + 2 * size, WC_PKT_RMA);
    wc_rma_wait_end(&wt);
    return (wu_status_t)wt.err;
}

/* A control message answered without data; returns the answer's busy flag. */
static bool wc_rma_ctl(wc_rma_win_t *w, int t, uint8_t op, uint8_t flags)
{
    wc_rma_wait_t wt;
    wc_rma_wait_init(&wt, NULL, 0, 1);
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, op);
    m.flags = flags;
    m.token = wc_req_token(&wt);
    wc_rma_send(w->ep, w->world[t], &m, sizeof(m), WC_PKT_RMA);
    wc_rma_wait_end(&wt);
    return wt.busy;
}

bool wc_rma_msg_lock(wc_rma_win_t *w, int t, bool exclusive)
{
    return !wc_rma_ctl(w, t, WC_RMA_LOCK, exclusive ? WC_RMA_F_EXCL : 0);
}

static wu_status_t wc_rma_err_take(wc_rma_win_t *w)
{
    if (!atomic_load_explicit(&w->err, memory_order_relaxed))
        return WU_OK;
    return (wu_status_t)atomic_exchange_explicit(&w->err, 0, memory_order_acquire);
}

/* Whether t has operations not yet flushed; *s_p: how many were sent. A thread's flush covers
 * what that thread sent before it (counters, not a flag another thread's flush could clear
 * before its own answer came). */
static bool wc_rma_unflushed(wc_rma_win_t *w, int t, uint64_t *s_p)
{
    *s_p = atomic_load_explicit(&w->sent[t], memory_order_acquire);
    return atomic_load_explicit(&w->flushed[t], memory_order_acquire) < *s_p;
}

static void wc_rma_flushed(wc_rma_win_t *w, int t, uint64_t s)
{
    uint64_t d = atomic_load_explicit(&w->flushed[t], memory_order_relaxed);
    while (d < s && !atomic_compare_exchange_weak_explicit(&w->flushed[t], &d, s,
                                                           memory_order_release,
                                                           memory_order_relaxed))
        ;
}

/* ---- the transport's RMA ------------------------------------------------------------------ */

#define WC_RMA_NET_CHUNK (4u << 20)   /* bytes of one fabric write */

static void wc_rma_net_done(void *arg, wu_status_t st)
{
    wc_rma_wtgt_t *g = arg;
    if (st != WU_OK) {
        int none = 0;
        atomic_compare_exchange_strong_explicit(&g->w->err, &none, WU_ERR_IO, memory_order_release,
                                                memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&g->out, 1, memory_order_release);
}

wu_status_t wc_rma_net_put(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, const void *buf)
{
    if (!w->fabric || !dt->contig)
        return WU_ERR_AGAIN;
    uint64_t bytes = count * dt->size;
    uint64_t off = at->off + (uint64_t)dt->contig_off;
    wc_rma_wtgt_t *g = &w->wtgt[t];
    wc_idle_t idle;
    wc_idle_init(&idle);
    for (uint64_t pos = 0; pos < bytes;) {
        size_t n = bytes - pos < WC_RMA_NET_CHUNK ? (size_t)(bytes - pos) : WC_RMA_NET_CHUNK;
        atomic_fetch_add_explicit(&g->out, 1, memory_order_relaxed);
        wu_status_t st = w->tl->ops->win_write(w->tl, w->world[t], (const char *)buf + pos,
                                               &w->rkey[t], off + pos, n, wc_rma_net_done, g);
        if (st == WU_OK) {
            pos += n;
            continue;
        }
        atomic_fetch_sub_explicit(&g->out, 1, memory_order_relaxed);
        if (st != WU_ERR_AGAIN)
            return WU_ERR_IO;
        if (!wc_progress())   /* no room: completions free some */
            wc_idle_block(&idle, NULL, 0);
    }
    return WU_OK;
}

wu_status_t wc_rma_net_get(wc_rma_win_t *w, int t, const wc_rma_where_t *at, const wc_dtype_t *dt,
                           uint64_t count, void *packed)
{
    if (!w->fabric || !dt->contig)
        return WU_ERR_AGAIN;
    uint64_t bytes = count * dt->size;
    if (!bytes)
        return WU_OK;
    wu_status_t st = w->tl->ops->get(w->tl, w->world[t], packed, &w->rkey[t],
                                     at->off + (uint64_t)dt->contig_off, (size_t)bytes);
    return st == WU_OK ? WU_OK : WU_ERR_IO;
}

/* Waits for t's fabric writes (every target's when t is -1). */
static void wc_rma_net_quiet(wc_rma_win_t *w, int t)
{
    if (!w->fabric)
        return;
    wc_idle_t idle;
    wc_idle_init(&idle);
    for (int r = t < 0 ? 0 : t; r < (t < 0 ? w->n : t + 1); r++)
        while (atomic_load_explicit(&w->wtgt[r].out, memory_order_acquire))
            if (!wc_progress())
                wc_idle_block(&idle, NULL, 0);
}

wu_status_t wc_rma_msg_flush_local(wc_rma_win_t *w, int t)
{
    wc_rma_net_quiet(w, t);
    return wc_rma_err_take(w);
}

void wc_rma_msg_unlock(wc_rma_win_t *w, int t, bool exclusive)
{
    wc_rma_net_quiet(w, t);
    /* answered after everything sent before it: a flush too */
    uint64_t s = atomic_load_explicit(&w->sent[t], memory_order_acquire);
    wc_rma_ctl(w, t, WC_RMA_UNLOCK, exclusive ? WC_RMA_F_EXCL : 0);
    wc_rma_flushed(w, t, s);
}

wu_status_t wc_rma_msg_flush(wc_rma_win_t *w, int t)
{
    wc_rma_net_quiet(w, t);
    uint64_t s;
    if (wc_rma_unflushed(w, t, &s)) {
        wc_rma_ctl(w, t, WC_RMA_FLUSH, 0);
        wc_rma_flushed(w, t, s);
    }
    return wc_rma_err_take(w);
}

wu_status_t wc_rma_msg_flush_all(wc_rma_win_t *w, const bool *remote)
{
    /* every FLUSH first, then the answers: one round trip for all the targets */
    wc_rma_net_quiet(w, -1);
    int k = 0;
    for (int t = 0; t < w->n; t++) {
        uint64_t s;
        k += remote[t] && wc_rma_unflushed(w, t, &s);
    }
    if (!k)
        return wc_rma_err_take(w);
    wc_rma_wait_t *wt = malloc(sizeof(*wt) * (size_t)k);
    uint64_t *sv = malloc(sizeof(*sv) * (size_t)k);
    int *tv = malloc(sizeof(*tv) * (size_t)k);
    if (!wt || !sv || !tv) {
        free(wt), free(sv), free(tv);
        for (int t = 0; t < w->n; t++)
            if (remote[t])
                wc_rma_msg_flush(w, t);
        return wc_rma_err_take(w);
    }
    int j = 0;
    for (int t = 0; t < w->n && j < k; t++) {
        if (!remote[t] || !wc_rma_unflushed(w, t, &sv[j]))
            continue;
        tv[j] = t;
        wc_rma_wait_init(&wt[j], NULL, 0, 1);
        wc_rma_msg_t m;
        wc_rma_msg_base(&m, w, WC_RMA_FLUSH);
        m.token = wc_req_token(&wt[j]);
        wc_rma_send(w->ep, w->world[t], &m, sizeof(m), WC_PKT_RMA);
        j++;
    }
    for (int i = 0; i < j; i++) {
        wc_rma_wait_end(&wt[i]);
        wc_rma_flushed(w, tv[i], sv[i]);
    }
    free(wt), free(sv), free(tv);
    return wc_rma_err_take(w);
}

void wc_rma_msg_post(wc_rma_win_t *w, int o)
{
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, WC_RMA_POST);
    wc_rma_send(w->ep, w->world[o], &m, sizeof(m), WC_PKT_RMA);
}

void wc_rma_msg_complete(wc_rma_win_t *w, int t)
{
    /* after the epoch's operations in the pair's order: the target counts it once they are
     * applied; fabric writes are not in that order: delivered first */
    wc_rma_net_quiet(w, t);
    wc_rma_msg_t m;
    wc_rma_msg_base(&m, w, WC_RMA_COMPLETE);
    wc_rma_send(w->ep, w->world[t], &m, sizeof(m), WC_PKT_RMA);
    wc_rma_flushed(w, t, atomic_load_explicit(&w->sent[t], memory_order_acquire));
}

void wc_rma_wait_ge_poll(_Atomic uint32_t *c, uint32_t v)
{
    wc_idle_t idle;
    wc_idle_init(&idle);
    while ((int32_t)(atomic_load_explicit(c, memory_order_acquire) - v) < 0)
        if (!wc_progress())
            wc_idle_block(&idle, NULL, 0);
}

/* ---- the target: handlers ------------------------------------------------------------------- */

static void wc_rma_answer(wc_ep_t *ep, int src, const wc_rma_msg_t *m, uint8_t op, int err,
                          bool busy, uint64_t pos, const void *data, size_t n, char *buf)
{
    /* buf: room for the answer and n data bytes, or NULL when n is small */
    char small[sizeof(wc_rma_rep_t) + 32];
    char *b = buf ? buf : small;
    wc_rma_rep_t r = { .op = op, .busy = busy, .win = m->win, .err = err, .token = m->token,
                       .pos = pos };
    memcpy(b, &r, sizeof(r));
    if (n && data != b + sizeof(r))
        memcpy(b + sizeof(r), data, n);
    wc_rma_send(ep, src, b, sizeof(r) + n, WC_PKT_RMA_REP);
}

/* An operation outside the target's memory: its answer carries the error; an operation nobody
 * waits for reports it to the origin's window. */
static void wc_rma_refuse(wc_ep_t *ep, int src, const wc_rma_msg_t *m, int err)
{
    wc_rma_answer(ep, src, m, m->token ? m->op : WC_RMA_ERR, err, false, 0, NULL, 0, NULL);
}

static bool wc_rma_in_range(const wc_rma_win_t *w, const wc_rma_msg_t *m)
{
    if (m->lo > m->hi)
        return false;
    if (!w->dynamic)
        return m->hi <= w->size;
    const wc_rma_region_t *reg = &w->seg->regions[(size_t)w->me * WC_RMA_REGIONS];
    for (int i = 0; i < WC_RMA_REGIONS; i++) {
        uint64_t rs = atomic_load_explicit(&reg[i].size, memory_order_acquire);
        uint64_t rb = atomic_load_explicit(&reg[i].base, memory_order_relaxed);
        if (rs && m->lo >= rb && m->hi <= rb + rs)
            return true;
    }
    return false;
}

/* n packed bytes at packed offset pos of (addr, count, dt), to or from buf. */
static void wc_rma_here(char *addr, const wc_dtype_t *dt, uint64_t count, uint64_t pos, void *buf,
                        uint64_t n, bool write)
{
    if (dt->contig) {
        char *p = addr + dt->contig_off + pos;
        if (write)
            memcpy(p, buf, n);
        else
            memcpy(buf, p, n);
        return;
    }
    wc_dtype_cursor_t c;
    wc_dtype_cursor_init(&c, dt, addr, count);
    wc_dtype_cursor_seek(&c, pos);
    if (write)
        wc_dtype_unpack(&c, buf, n);
    else
        wc_dtype_pack(&c, buf, n);
}

static void wc_rma_serve_get(wc_ep_t *ep, int src, const wc_rma_msg_t *m, char *addr,
                             const wc_dtype_t *dt)
{
    size_t maxp = ep->peers[src].tl->attr.max_payload;
    size_t room = maxp - sizeof(wc_rma_rep_t);
    char *buf = malloc(maxp);
    if (!buf)
        wu_log_fatal("RMA: out of memory answering a Get of rank %d", src);
    for (uint64_t pos = 0; pos < m->total; pos += room) {
        uint64_t n = m->total - pos < room ? m->total - pos : room;
        wc_rma_here(addr, dt, m->count, pos, buf + sizeof(wc_rma_rep_t), n, false);
        wc_rma_answer(ep, src, m, WC_RMA_GET, 0, false, pos, buf + sizeof(wc_rma_rep_t), n, buf);
    }
    free(buf);
}

static void wc_rma_serve_acc(wc_ep_t *ep, int src, wc_rma_win_t *w, const wc_rma_msg_t *m,
                             char *addr, const wc_dtype_t *dt, const char *data)
{
    /* aligned copies (the reduction reads whole elements): in, the target data updated in cur,
     * and for a fetch the data before the update, answered once the update is written (so a
     * fetching operation is complete at the target when the origin has its result) */
    bool fetch = m->flags & WC_RMA_F_FETCH;
    char *b = malloc(sizeof(wc_rma_rep_t) + m->n + 16), *old = b + sizeof(wc_rma_rep_t);
    char *cur = fetch ? malloc(m->n ? m->n : 1) : old;
    char *in = (m->flags & WC_RMA_F_IN) ? malloc(m->n ? m->n : 1) : NULL;
    if (!b || !cur || ((m->flags & WC_RMA_F_IN) && !in))
        wu_log_fatal("RMA: out of memory applying an accumulate of rank %d", src);
    if (in)
        memcpy(in, data, m->n);
    _Static_assert(sizeof(wc_rma_rep_t) % 16 == 0, "the data after the header is 16-byte aligned");
    wc_rma_peer_t *me = &w->seg->peers[w->me];
    bool ok = true;
    wc_rma_acc_lock(me);
    wc_rma_here(addr, dt, m->count, m->pos, cur, m->n, false);
    if (fetch)
        memcpy(old, cur, m->n);
    if (in) {
        ok = w->reduce(m->op_h, m->basic, in, cur, m->n);
        if (ok)
            wc_rma_here(addr, dt, m->count, m->pos, cur, m->n, true);
    }
    wc_rma_acc_unlock(me);
    if (fetch)
        wc_rma_answer(ep, src, m, WC_RMA_ACC, 0, false, m->pos, old, m->n, b);
    free(in);
    if (cur != old)
        free(cur);
    free(b);
    if (!ok)
        wu_log_fatal("RMA: out of memory reducing an accumulate of rank %d", src);
}

static void wc_rma_serve_cas(wc_ep_t *ep, int src, wc_rma_win_t *w, const wc_rma_msg_t *m,
                             char *addr, const char *data)
{
    char cur[16];
    wc_rma_peer_t *me = &w->seg->peers[w->me];
    wc_rma_acc_lock(me);
    memcpy(cur, addr, m->n);
    if (memcmp(cur, data + m->n, m->n) == 0)
        memcpy(addr, data, m->n);
    wc_rma_acc_unlock(me);
    wc_rma_answer(ep, src, m, WC_RMA_CAS, 0, false, 0, cur, m->n, NULL);
}

static void wc_on_rma(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload, size_t len)
{
    wc_rma_msg_t m;
    if (WU_UNLIKELY(len < sizeof(m) || hdr->len != len))
        wc_proto_error(ep, src, hdr, "RMA packet of %zu bytes (field len: %llu)", len,
                       (unsigned long long)hdr->len);
    memcpy(&m, payload, sizeof(m));
    wc_rma_win_t *w = wc_rma_win_find(m.win);
    if (WU_UNLIKELY(!w || m.origin < 0 || m.origin >= w->n || w->world[m.origin] != src))
        wc_proto_error(ep, src, hdr, "RMA packet for window %u, origin %d: no such window here "
                       "or not that origin", m.win, m.origin);
    wc_rma_peer_t *me = &w->seg->peers[w->me];
    switch (m.op) {
    case WC_RMA_LOCK: {
        bool got = wc_rma_trylock(me, m.flags & WC_RMA_F_EXCL);
        wc_rma_answer(ep, src, &m, m.op, 0, !got, 0, NULL, 0, NULL);
        return;
    }
    case WC_RMA_UNLOCK:
        wc_rma_unlock(me, m.flags & WC_RMA_F_EXCL);
        wc_rma_answer(ep, src, &m, m.op, 0, false, 0, NULL, 0, NULL);
        return;
    case WC_RMA_FLUSH:
        wc_rma_answer(ep, src, &m, m.op, 0, false, 0, NULL, 0, NULL);
        return;
    case WC_RMA_POST:
        atomic_fetch_add_explicit(&w->seg->post[(size_t)w->me * (size_t)w->n + (size_t)m.origin],
                                  1, memory_order_release);
        return;
    case WC_RMA_COMPLETE:
        atomic_fetch_add_explicit(&me->complete, 1, memory_order_release);
        return;
    case WC_RMA_PUT: case WC_RMA_GET: case WC_RMA_ACC: case WC_RMA_CAS:
        break;
    default:
        wc_proto_error(ep, src, hdr, "RMA packet with operation %u", m.op);
    }

    /* data operations: the layout, then the data */
    size_t head = sizeof(m) + (size_t)m.nsegs * sizeof(wc_dtype_seg_t);
    uint64_t dbytes = m.op == WC_RMA_PUT ? m.n : m.op == WC_RMA_CAS ? 2 * m.n
                    : m.op == WC_RMA_ACC && (m.flags & WC_RMA_F_IN) ? m.n : 0;
    if (WU_UNLIKELY(m.nsegs > len || head + dbytes != len || m.pos + m.n > m.total ||
                    (m.op == WC_RMA_CAS && m.n > 16) || (m.contig != 0) != (m.nsegs == 0) ||
                    m.total != m.count * m.lsize))
        wc_proto_error(ep, src, hdr, "RMA packet of %zu bytes: layout of %u segments, fragment "
                       "[%llu, +%llu) of %llu bytes", len, m.nsegs, (unsigned long long)m.pos,
                       (unsigned long long)m.n, (unsigned long long)m.total);
    if (!wc_rma_in_range(w, &m)) {
        wc_rma_refuse(ep, src, &m, WU_ERR_INVALID);
        return;
    }
    wc_dtype_seg_t sstack[8], *segs = sstack;
    if (m.nsegs > 8 && !(segs = malloc(sizeof(*segs) * m.nsegs)))
        wu_log_fatal("RMA: out of memory for a target layout of %u segments", m.nsegs);
    memcpy(segs, (const char *)payload + sizeof(m), sizeof(*segs) * m.nsegs);
    wc_dtype_t dt = { .size = m.lsize, .extent = m.lextent, .contig = m.contig != 0,
                      .contig_off = m.lcontig_off, .nsegs = m.nsegs, .segs = segs };
    char *addr = w->dynamic ? (char *)(uintptr_t)m.off : w->base + m.off;
    const char *data = (const char *)payload + head;
    switch (m.op) {
    case WC_RMA_PUT: wc_rma_here(addr, &dt, m.count, m.pos, (void *)data, m.n, true); break;
    case WC_RMA_GET: wc_rma_serve_get(ep, src, &m, addr, &dt); break;
    case WC_RMA_ACC: wc_rma_serve_acc(ep, src, w, &m, addr, &dt, data); break;
    case WC_RMA_CAS: wc_rma_serve_cas(ep, src, w, &m, addr, data); break;
    }
    if (segs != sstack)
        free(segs);
}

/* At the origin: answers to its waits, or an error of a sent-and-forgotten operation. */
static void wc_on_rma_rep(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                          size_t len)
{
    wc_rma_rep_t r;
    if (WU_UNLIKELY(len < sizeof(r) || hdr->len != len))
        wc_proto_error(ep, src, hdr, "RMA answer of %zu bytes", len);
    memcpy(&r, payload, sizeof(r));
    if (r.op == WC_RMA_ERR) {
        wc_rma_win_t *w = wc_rma_win_find(r.win);
        int none = 0;
        if (w)
            atomic_compare_exchange_strong_explicit(&w->err, &none, r.err, memory_order_release,
                                                    memory_order_relaxed);
        return;
    }
    wc_rma_wait_t *wt = wc_req_untoken(r.token);
    if (wt)
        WU_TSAN_ACQUIRE(wt);
    if (WU_UNLIKELY(!wt || wt->req.kind != WC_REQ_RECV))
        wc_proto_error(ep, src, hdr, "RMA answer names no wait of this rank (token)");
    size_t n = len - sizeof(r);
    if (r.err) {
        wt->err = r.err;
    } else if (n) {
        if (WU_UNLIKELY(!wt->buf || r.pos > wt->total || n > wt->total - r.pos))
            wc_proto_error(ep, src, hdr, "RMA answer of %zu bytes at %llu for %llu", n,
                           (unsigned long long)r.pos, (unsigned long long)wt->total);
        memcpy(wt->buf + r.pos, (const char *)payload + sizeof(r), n);
        wt->arrived += n;
    }
    wt->busy |= r.busy;
    wt->nrep++;
    if (wt->expect ? wt->nrep == wt->expect : (r.err || wt->arrived == wt->total))
        wc_request_done(&wt->req);
}

void wc_rma_msg_init(wc_ep_t *ep)
{
    wc_handler_register(ep, WC_PKT_RMA, wc_on_rma);
    wc_handler_register(ep, WC_PKT_RMA_REP, wc_on_rma_rep);
}
