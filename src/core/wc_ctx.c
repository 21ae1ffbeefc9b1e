/* Context ids: a service of world rank 0 (docs/communicators.md, "Context ids").
 *
 * World rank 0 owns the job's counter and hands out ranges from it: to its own threads directly,
 * to other ranks in answer to a CTX_REQ packet (len: how many; sreq: the asker's request),
 * answered inside its progress by a CTX_REP (sreq: that request; addr: the first id). The asker
 * waits on that request like on any receive (wc_wait: spin, then sleep on the doorbell), so it
 * polls its own progress meanwhile and nothing it owes others stalls. Rank 0 answers whenever it
 * polls: inside any MPI call that waits or tests, or from its progress threads; an asker can wait
 * only on a rank 0 that computes outside MPI. Any number of threads of any rank may ask at once:
 * each has its own request and rank 0's counter is atomic.
 *
 * Ids are unique job-wide: every range comes from the one counter. They stay below WC_CTX_EXACT,
 * the first of the bits the MPI layer ORs into an id (hints, the collective context).
 */
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "core/wc_wait.h"
#include "util/wu_log.h"
#include "util/wu_tsan.h"

#include <stdatomic.h>
#include <string.h>

#define WC_CTX_FIRST 16u   /* below: the predefined communicators' ids (MPI layer) */

/* The counter is rank 0's endpoint's ctx_next (any thread, and its delivery thread). */
static uint32_t wc_ctx_take(wc_ep_t *ep, uint32_t n)
{
    uint32_t base = atomic_fetch_add_explicit(&ep->ctx_next, n, memory_order_relaxed);
    if (base + (uint64_t)n > WC_CTX_EXACT)
        wu_log_fatal("out of context ids (%u taken, %u asked)", base, n);
    return base;
}

/* The counter moved past min first: ids at or above both the counter and min (dynamic processes:
 * an id free in two jobs, docs/dynamic.md). */
static uint32_t wc_ctx_take_min(wc_ep_t *ep, uint32_t n, uint32_t min)
{
    uint32_t cur = atomic_load_explicit(&ep->ctx_next, memory_order_relaxed);
    while (cur < min &&
           !atomic_compare_exchange_weak_explicit(&ep->ctx_next, &cur, min, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    return wc_ctx_take(ep, n);
}

/* At rank 0, inside delivery: answer at once (queued behind the asker's pending packets if the
 * transport has no room). */
static void wc_on_ctx_req(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                          size_t len)
{
    (void)payload, (void)len;
    if (WU_UNLIKELY(ep->rank != 0 || hdr->len == 0 || hdr->len > WC_CTX_EXACT - WC_CTX_FIRST ||
                    hdr->addr > WC_CTX_EXACT))
        wc_proto_error(ep, src, hdr, "CTX_REQ for %llu context ids (field len) to rank %d (only "
                       "rank 0 hands them out, at most %u)", (unsigned long long)hdr->len,
                       ep->rank, WC_CTX_EXACT - WC_CTX_FIRST);
    wc_hdr_t rep = { .type = WC_PKT_CTX_REP, .sreq = hdr->sreq,
                     .addr = wc_ctx_take_min(ep, (uint32_t)hdr->len, (uint32_t)hdr->addr) };
    wc_pt2pt_send_ctrl_hdr(ep, src, &rep);
}

/* At the asker, inside delivery: the asking thread's request gets the first id. */
static void wc_on_ctx_rep(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                          size_t len)
{
    wc_request_t *req = wc_req_untoken(hdr->sreq);
    (void)payload, (void)len;
    if (req)
        WU_TSAN_ACQUIRE(req);   /* before reading kind: released when the request was asked */
    if (WU_UNLIKELY(!req || req->kind != WC_REQ_RECV))
        wc_proto_error(ep, src, hdr, "CTX_REP names no request of this rank (field sreq)");
    req->st_bytes = (size_t)hdr->addr;
    wc_request_done(req);   /* release: the waiter reads st_bytes after seeing it complete */
}

void wc_ctx_init(wc_ep_t *ep)
{
    atomic_store(&ep->ctx_next, WC_CTX_FIRST);
    wc_handler_register(ep, WC_PKT_CTX_REQ, wc_on_ctx_req);
    wc_handler_register(ep, WC_PKT_CTX_REP, wc_on_ctx_rep);
    wc_ctx_named_init(ep);   /* its answers are CTX_REP too */
}

uint32_t wc_ctx_alloc(wc_ep_t *ep, uint32_t n)
{
    return wc_ctx_alloc_min(ep, n, 0);
}

uint32_t wc_ctx_alloc_min(wc_ep_t *ep, uint32_t n, uint32_t min)
{
    if (ep->rank == 0)
        return wc_ctx_take_min(ep, n, min);
    wc_request_t req;
    memset(&req, 0, sizeof(req));
    req.kind = WC_REQ_RECV;
    wc_request_reset(&req);
    WU_TSAN_RELEASE(&req);
    wc_hdr_t ask = { .type = WC_PKT_CTX_REQ, .len = n, .sreq = wc_req_token(&req), .addr = min };
    wc_pt2pt_send_ctrl_hdr(ep, 0, &ask);
    wc_wait(&req);
    return (uint32_t)req.st_bytes;
}
