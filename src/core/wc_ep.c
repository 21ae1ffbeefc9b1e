/* The endpoint's life: set-up, peers, progress, teardown (wc_ep.h states the contract). */
#include "core/wc_ep.h"
#include "core/wc_core.h"
#include "core/wc_dynbcast.h"
#include "core/wc_pt2pt.h"
#include "core/wc_rma_msg.h"
#include "progress/wp_engine.h"
#include "util/wu_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

wc_ep_t wc_ep_dflt;
uint64_t wc_req_key;

/* wx_fatal_fn of the transports: a record that breaks a transport's format ends the job as a
 * malformed header does. */
static void wc_ep_transport_fatal(const char *msg)
{
    wc_fatal(WU_ERR_INTERNAL, msg);
}

void wc_proto_error(const wc_ep_t *ep, int src, const wc_hdr_t *hdr, const char *fmt, ...)
{
    char what[320], msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(msg, sizeof(msg), "rank %d: protocol error: malformed packet from rank %d: %s "
             "(header: type %u flags 0x%x tag %d ctx %u len %llu sreq 0x%llx addr 0x%llx)",
             ep->rank, src, what, hdr->type, hdr->flags, (int)hdr->tag, hdr->ctx,
             (unsigned long long)hdr->len, (unsigned long long)hdr->sreq,
             (unsigned long long)hdr->addr);
    wc_fatal(WU_ERR_INTERNAL, msg);
}

/* The key of the request tokens (wc_request.h): random per process, never 0. */
static void wc_req_key_init(void)
{
    uint64_t k = 0;
    if (getrandom(&k, sizeof(k), GRND_NONBLOCK) != (ssize_t)sizeof(k)) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
    }
    wc_req_key = k | 1;
}

static wp_task_result_t wc_ep_progress_task(void *arg)
{
    return wc_ep_progress(arg) ? WP_TASK_DONE : WP_TASK_AGAIN;
}

wu_status_t wc_ep_init(wc_ep_t *ep, int rank, int size)
{
    memset(ep, 0, sizeof(*ep));
    if (!wc_req_key)
        wc_req_key_init();
    wx_fatal_fn = wc_ep_transport_fatal;
    ep->rank = rank;
    ep->size = size;
    wt_olock_init(&ep->match_lock);
    wt_spin_init(&ep->coop_lock);
    wu_list_init(&ep->coop);
    atomic_init(&ep->ncoop, 0);
    atomic_init(&ep->npending, 0);
    atomic_init(&ep->ndropped, 0);
    wc_pt2pt_handlers_init(ep);
    wc_handler_register(ep, WC_PKT_DYN, wc_dyn_deliver);
    wc_ctx_init(ep);
    wc_rma_msg_init(ep);
    wu_status_t st = wc_match_create(&ep->match);
    if (st != WU_OK)
        return st;
    ep->cap = size + WC_EP_DYN_MAX;
    atomic_init(&ep->npeers, size);
    atomic_init(&ep->npoll, 0);
    ep->peers = aligned_alloc(WU_CACHELINE, sizeof(wc_peer_t) * (size_t)ep->cap);
    if (!ep->peers) {
        wc_match_destroy(ep->match);
        ep->match = NULL;
        wu_log_error("no memory for %d send queues", size);
        return WU_ERR_NO_MEMORY;
    }
    memset(ep->peers, 0, sizeof(wc_peer_t) * (size_t)ep->cap);
    for (int i = 0; i < ep->cap; i++) {
        wt_olock_init(&ep->peers[i].lock);
        wu_list_init(&ep->peers[i].pending);
        atomic_init(&ep->peers[i].queued, false);
        ep->peers[i].leave_gen = wc_leave_gen_now();
    }
    return WU_OK;
}

wu_status_t wc_ep_create(int rank, int size, wc_ep_t **ep_p)
{
    wc_ep_t *ep = aligned_alloc(WU_CACHELINE, WU_ALIGN_UP(sizeof(*ep), WU_CACHELINE));
    if (!ep) {
        wu_log_error("no memory for an endpoint");
        return WU_ERR_NO_MEMORY;
    }
    wu_status_t st = wc_ep_init(ep, rank, size);
    if (st != WU_OK) {
        free(ep);
        return st;
    }
    *ep_p = ep;
    return WU_OK;
}

void wc_handler_register(wc_ep_t *ep, wc_pkt_type_t type, wc_handler_fn_t fn)
{
    ep->handlers[(uint8_t)type] = fn;
}

void wc_ep_deliver(int src, const void *hdrp, const void *payload, size_t len, void *arg)
{
    wc_ep_t *ep = arg;
    const wc_hdr_t *hdr = hdrp;
    ep->handlers[hdr->type](ep, src, hdr, payload, len);
}

void wc_ep_peer_set(wc_ep_t *ep, int peer, wx_tl_t *tl)
{
    wc_peer_t *p = &ep->peers[peer];
    p->tl = tl;
    p->send = tl->ops->send;
    p->send_fill = tl->ops->send_fill;
    p->direct = (tl->attr.caps & WX_CAP_INLINE_DELIVERY) != 0;
    p->eager_max = tl->attr.eager_max;
    p->bulk_eager_max = tl->attr.bulk_eager_max;
    p->frag_size = tl->attr.frag_size;
    if (p->direct)
        return;
    int n = atomic_load_explicit(&ep->npoll, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        if (ep->poll[i].tl == tl)
            return;
    if (n == WC_EP_TL_MAX)
        wu_log_fatal("more than %d transports to poll", WC_EP_TL_MAX);
    ep->poll[n].tl = tl;
    ep->poll[n].progress = tl->ops->progress;
    tl->ops->set_prefetch(tl, wc_pt2pt_prefetch);
    atomic_store_explicit(&ep->npoll, n + 1, memory_order_release);
}

/* Callers are serialized by core/wc_dyn.c's lock; progress reads npoll and npeers (acquire) and
 * so sees the entries written before them. */
wu_status_t wc_ep_peer_add(wc_ep_t *ep, wx_tl_t *tl, int *peer_p)
{
    int id = atomic_load_explicit(&ep->npeers, memory_order_relaxed);
    if (id >= ep->cap) {
        wu_log_error("more than %d processes of other jobs: the peer table is full", WC_EP_DYN_MAX);
        return WU_ERR_NO_MEMORY;
    }
    wc_ep_peer_set(ep, id, tl);
    atomic_store_explicit(&ep->npeers, id + 1, memory_order_release);
    *peer_p = id;
    return WU_OK;
}

/* The most restrictive limits over the other ranks (self's when alone). */
static void wc_ep_limits_derive(wc_ep_t *ep)
{
    bool first = true;
    for (int r = 0; r < ep->size; r++) {
        if (r == ep->rank && ep->size > 1)
            continue;
        const wx_attr_t *a = &ep->peers[r].tl->attr;
        wc_limits_t *l = &ep->limits;
        if (first) {
            *l = (wc_limits_t){ .eager_max = a->eager_max, .max_payload = a->max_payload,
                                .frag_size = a->frag_size, .get_bulk_min = a->get_bulk_min };
            first = false;
            continue;
        }
        if (a->eager_max < l->eager_max)
            l->eager_max = a->eager_max;
        if (a->max_payload < l->max_payload)
            l->max_payload = a->max_payload;
        if (a->frag_size < l->frag_size)
            l->frag_size = a->frag_size;
        if (!a->get_bulk_min || !l->get_bulk_min)
            l->get_bulk_min = 0;
        else if (a->get_bulk_min > l->get_bulk_min)
            l->get_bulk_min = a->get_bulk_min;
    }
}

void wc_ep_start(wc_ep_t *ep, bool submit)
{
    wc_ep_limits_derive(ep);
    if (submit)
        wc_ep_submit(ep);
}

void wc_ep_submit(wc_ep_t *ep)
{
    wp_ltask_init(&ep->ltask, wc_ep_progress_task, ep, WP_TASK_REPEAT, "pt2pt");
    wp_ltask_submit(&ep->ltask);
    ep->started = true;
}

int wc_ep_progress(wc_ep_t *ep)
{
    int did = 0;
    int npoll = atomic_load_explicit(&ep->npoll, memory_order_acquire);
    for (int i = 0; i < npoll; i++)
        did += ep->poll[i].progress(ep->poll[i].tl);
    if (WU_UNLIKELY(atomic_load_explicit(&ep->npending, memory_order_relaxed) > 0))
        did += wc_pt2pt_pending_drain(ep);
    return did;
}

void wc_ep_fini(wc_ep_t *ep)
{
    if (ep->started) {
        wp_ltask_remove(&ep->ltask);
        ep->started = false;
    }
    wc_pt2pt_release(ep);
}

void wc_ep_destroy(wc_ep_t *ep)
{
    wc_ep_fini(ep);
    free(ep);
}

void wc_ep_unexp_stats(wc_ep_t *ep, size_t *nmsgs_p, size_t *hwm_p)
{
    *nmsgs_p = __atomic_load_n(&ep->unexp_nmsgs, __ATOMIC_RELAXED);
    *hwm_p = __atomic_load_n(&ep->unexp_hwm, __ATOMIC_RELAXED);
}

void wc_ep_unexp_max_set(wc_ep_t *ep, size_t max)
{
    wt_olock_lock(&ep->match_lock);
    ep->unexp_max = max;
    wt_olock_unlock(&ep->match_lock);
}
