/* The loopback transport (wx_loop.h). */
#include "transport/loop/wx_loop.h"
#include "util/wu_log.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct wx_loop_slot {
    char   hdr[WX_HDR_SIZE];
    size_t len;
    char  *payload;          /* max_payload bytes */
} wx_loop_slot_t;

/* Ordered pair (src -> dst): written at tail by src's sends, read at head by dst's progress. */
typedef struct wx_loop_queue {
    _Atomic uint64_t head;
    _Atomic uint64_t tail;
    wx_loop_slot_t  *slots;  /* [queue_cap] */
} wx_loop_queue_t;

typedef struct wx_loop {
    wx_tl_t            tl;
    wx_loop_fabric_t  *fab;
    int                rank;
    bool               in_progress;   /* progress only: a nested call delivers nothing */
    wx_recv_fn_t       cb;
    void              *cb_arg;
} wx_loop_t;

struct wx_loop_fabric {
    wx_loop_config_t cfg;
    wx_loop_queue_t *q;      /* [src * nranks + dst] */
};

static wx_loop_queue_t *wx_loop_q(const wx_loop_fabric_t *f, int src, int dst)
{
    return &f->q[src * f->cfg.nranks + dst];
}

/* Reserve the tail slot of (rank -> dst), or NULL when the queue is full. */
static wx_loop_slot_t *wx_loop_reserve(wx_loop_t *l, int dst, size_t len)
{
    const wx_loop_fabric_t *f = l->fab;
    if (dst < 0 || dst >= f->cfg.nranks || dst == l->rank || len > f->cfg.max_payload)
        wu_log_fatal("loop transport: bad packet from %d to %d (%zu bytes)", l->rank, dst, len);
    wx_loop_queue_t *q = wx_loop_q(f, l->rank, dst);
    uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (t - atomic_load_explicit(&q->head, memory_order_acquire) >= f->cfg.queue_cap)
        return NULL;
    return &q->slots[t % f->cfg.queue_cap];
}

static void wx_loop_commit(wx_loop_t *l, int dst)
{
    wx_loop_queue_t *q = wx_loop_q(l->fab, l->rank, dst);
    atomic_fetch_add_explicit(&q->tail, 1, memory_order_release);
}

static wu_status_t wx_loop_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                                size_t len)
{
    wx_loop_t *l = tl->priv;
    wx_loop_slot_t *s = wx_loop_reserve(l, dst, len);
    if (!s)
        return WU_ERR_AGAIN;
    memcpy(s->hdr, hdr, WX_HDR_SIZE);
    if (len)
        memcpy(s->payload, payload, len);
    s->len = len;
    wx_loop_commit(l, dst);
    return WU_OK;
}

static wu_status_t wx_loop_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                     wx_fill_fn_t fill, void *arg)
{
    wx_loop_t *l = tl->priv;
    wx_loop_slot_t *s = wx_loop_reserve(l, dst, len);
    if (!s)
        return WU_ERR_AGAIN;
    memcpy(s->hdr, hdr, WX_HDR_SIZE);
    if (len)
        fill(arg, s->payload, len);
    s->len = len;
    wx_loop_commit(l, dst);
    return WU_OK;
}

/* Deliver what each incoming queue held on entry (packets the callback sends wait for the next
 * call, so a callback that answers cannot keep progress busy forever). */
static int wx_loop_progress(wx_tl_t *tl)
{
    wx_loop_t *l = tl->priv;
    const wx_loop_fabric_t *f = l->fab;
    if (l->in_progress)
        return 0;
    l->in_progress = true;
    int n = 0;
    for (int src = 0; src < f->cfg.nranks; src++) {
        if (src == l->rank)
            continue;
        wx_loop_queue_t *q = wx_loop_q(f, src, l->rank);
        uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
        uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
        for (; h != t; h++, n++) {
            wx_loop_slot_t *s = &q->slots[h % f->cfg.queue_cap];
            l->cb(src, s->hdr, s->len ? s->payload : NULL, s->len, l->cb_arg);
            atomic_store_explicit(&q->head, h + 1, memory_order_release);
        }
    }
    l->in_progress = false;
    return n;
}

static wu_status_t wx_loop_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p)
{
    (void)len;
    if (!(tl->attr.caps & WX_CAP_GET))
        return WU_ERR_UNSUPPORTED;
    *rkey_p = (wx_rkey_t){ .addr = (uint64_t)(uintptr_t)buf, .key = 0 };
    return WU_OK;
}

static void wx_loop_finalize(wx_tl_t *tl)
{
    free(tl->priv);
}

static const wx_ops_t wx_loop_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_loop_send,
    .send_fill = wx_loop_send_fill,
    .progress = wx_loop_progress,
    .get = wx_mem_get,
    .getv = wx_mem_getv,
    .get_start = wx_no_get_start,
    .put = wx_no_put,
    .mem_reg = wx_loop_mem_reg,
    .mem_dereg = wx_no_mem_dereg,
    .db_arm = wx_no_db_arm,
    .db_disarm = wx_no_db_disarm,
    .db_sleep = wx_no_db_sleep,
    .db_ring = wx_no_db_ring,
    .set_prefetch = wx_no_set_prefetch,
    .finalize = wx_loop_finalize,
    .win_reg = wx_no_win_reg,
    .win_dereg = wx_no_win_dereg,
    .win_write = wx_no_win_write,
};

wu_status_t wx_loop_fabric_create(const wx_loop_config_t *cfg, wx_loop_fabric_t **fab_p)
{
    if (cfg->nranks < 1 || cfg->queue_cap < 1 || cfg->eager_max > cfg->max_payload ||
        cfg->frag_size > cfg->max_payload || cfg->frag_size == 0) {
        wu_log_error("loop transport: bad configuration");
        return WU_ERR_INVALID;
    }
    wx_loop_fabric_t *f = calloc(1, sizeof(*f));
    size_t nq = (size_t)cfg->nranks * (size_t)cfg->nranks;
    if (!f || !(f->q = calloc(nq, sizeof(*f->q))))
        goto err_mem;
    f->cfg = *cfg;
    for (size_t i = 0; i < nq; i++) {
        if (!(f->q[i].slots = calloc(cfg->queue_cap, sizeof(wx_loop_slot_t))))
            goto err_mem;
        for (unsigned k = 0; k < cfg->queue_cap; k++)
            if (!(f->q[i].slots[k].payload = malloc(cfg->max_payload ? cfg->max_payload : 1)))
                goto err_mem;
    }
    *fab_p = f;
    return WU_OK;

err_mem:
    if (f)
        wx_loop_fabric_destroy(f);
    wu_log_error("loop transport: out of memory");
    return WU_ERR_NO_MEMORY;
}

void wx_loop_fabric_destroy(wx_loop_fabric_t *f)
{
    size_t nq = (size_t)f->cfg.nranks * (size_t)f->cfg.nranks;
    for (size_t i = 0; f->q && i < nq; i++) {
        for (unsigned k = 0; f->q[i].slots && k < f->cfg.queue_cap; k++)
            free(f->q[i].slots[k].payload);
        free(f->q[i].slots);
    }
    free(f->q);
    free(f);
}

wu_status_t wx_loop_create(wx_loop_fabric_t *fab, int rank, wx_recv_fn_t cb, void *cb_arg,
                           wx_tl_t **tl_p)
{
    wx_loop_t *l = calloc(1, sizeof(*l));
    if (!l) {
        wu_log_error("loop transport: out of memory");
        return WU_ERR_NO_MEMORY;
    }
    l->fab = fab;
    l->rank = rank;
    l->cb = cb;
    l->cb_arg = cb_arg;
    const wx_loop_config_t *c = &fab->cfg;
    wx_attr_t a = {
        .name = "loop",
        .caps = WX_CAP_ORDERED | (c->get ? WX_CAP_GET | WX_CAP_SINGLE_COPY : 0),
        .max_payload = c->max_payload,
        .eager_max = c->eager_max,
        .bulk_eager_max = c->eager_max,
        .inline_max = 0,
        .frag_size = c->frag_size,
        .get_min = c->get ? 1 : 0,
        .get_bulk_min = c->get ? 1 : 0,
    };
    l->tl = (wx_tl_t){ .ops = &wx_loop_ops, .attr = a, .priv = l };
    *tl_p = &l->tl;
    return WU_OK;
}
