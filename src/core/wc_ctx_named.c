/* Context ids agreed by name, with no communicator to agree over (MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups; docs/sessions.md, "Context ids without a parent").
 *
 * Every member of the new communicator asks world rank 0 for the ids of a key: a 128-bit hash of
 * what the members have in common (the call's kind, its stringtag, its groups' world ranks), with
 * its own index among the nmembers members. Rank 0 keeps one entry per (key, generation): the
 * first member to ask creates it and takes the ids from the job's counter (wc_ctx_alloc), every
 * member gets the same ids, and the entry goes when all nmembers have asked. A member that asks
 * again with the same key (the program creates a second communicator with the same stringtag and
 * group) while some members have not yet asked for the first one is told apart by its index: it
 * is already marked in the older entry, so it gets the next generation's. This needs every member
 * to make its calls with one key in the same order, which MPI requires (two concurrent calls with
 * the same stringtag and group are erroneous).
 *
 * Wire: CTX_NAMED_REQ (addr, len: the key; tag: the member's index; reserved2: nmembers;
 * reserved: how many ids; sreq: the asker's request), answered by the CTX_REP of wc_ctx.c.
 *
 * Concurrency contract: wc_ctx_named may be called by any thread of any rank, any number at once
 * (each waits on its own request). Rank 0's table is guarded by wc_named_lock, taken by its
 * delivery (any thread that polls) and by its own callers; nothing else touches it.
 */
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "core/wc_wait.h"
#include "thread/wt_thread.h"
#include "util/wu_log.h"
#include "util/wu_tsan.h"

#include <stdlib.h>
#include <string.h>

typedef struct wc_named {
    struct wc_named *next;
    uint64_t key[2];
    uint32_t nmembers, asked;
    uint32_t ctx;
    uint64_t *marks;          /* one bit per member index: has asked */
} wc_named_t;

/* Process-wide rather than in the endpoint: only the world rank 0 endpoint of a job uses it, and
 * keeping it here leaves wc_ep_t untouched. Several rank-0 endpoints of different jobs in one
 * process (unit tests) would share it; their keys would have to differ. */
static wt_mutex_t wc_named_lock = WT_MUTEX_INITIALIZER;
static wc_named_t *wc_named_list;   /* wc_named_lock; rank 0 only; oldest generation first */

/* Rank 0: the ids of (key, member), from the oldest entry of key the member has not asked yet.
 * UINT32_MAX: no memory (fatal for the caller). */
static uint32_t wc_named_lookup(wc_ep_t *ep, const uint64_t key[2], uint32_t member,
                                uint32_t nmembers, uint32_t n)
{
    if (member >= nmembers)
        wu_log_fatal("context id by name: member %u of %u", member, nmembers);
    wt_mutex_lock(&wc_named_lock);
    wc_named_t **pp = &wc_named_list, *e;
    for (e = *pp; e; pp = &e->next, e = *pp)
        if (e->key[0] == key[0] && e->key[1] == key[1] && e->nmembers == nmembers &&
            !(e->marks[member / 64] & (1ull << (member % 64))))
            break;
    if (!e) {
        e = calloc(1, sizeof(*e));
        uint64_t *marks = calloc((nmembers + 63) / 64, sizeof(uint64_t));
        if (!e || !marks)
            wu_log_fatal("context id by name: no memory");
        e->key[0] = key[0];
        e->key[1] = key[1];
        e->nmembers = nmembers;
        e->marks = marks;
        e->ctx = wc_ctx_alloc(ep, n);   /* rank 0: an atomic add, no waiting */
        *pp = e;                        /* appended: generations stay in order */
    }
    e->marks[member / 64] |= 1ull << (member % 64);
    uint32_t ctx = e->ctx;
    if (++e->asked == e->nmembers) {
        *pp = e->next;
        free(e->marks);
        free(e);
    }
    wt_mutex_unlock(&wc_named_lock);
    return ctx;
}

/* At rank 0, inside delivery. */
static void wc_on_ctx_named_req(wc_ep_t *ep, int src, const wc_hdr_t *hdr, const void *payload,
                                size_t len)
{
    (void)payload, (void)len;
    if (WU_UNLIKELY(ep->rank != 0 || hdr->tag < 0 || (uint32_t)hdr->tag >= hdr->reserved2 ||
                    hdr->reserved == 0))
        wc_proto_error(ep, src, hdr, "CTX_NAMED_REQ of member %d of %u for %u context ids (fields "
                       "tag, reserved2, reserved) to rank %d (only rank 0 hands them out)",
                       (int)hdr->tag, (unsigned)hdr->reserved2, (unsigned)hdr->reserved, ep->rank);
    uint64_t key[2] = { hdr->addr, hdr->len };
    wc_hdr_t rep = { .type = WC_PKT_CTX_REP, .sreq = hdr->sreq,
                     .addr = wc_named_lookup(ep, key, (uint32_t)hdr->tag, hdr->reserved2,
                                             hdr->reserved) };
    wc_pt2pt_send_ctrl_hdr(ep, src, &rep);
}

void wc_ctx_named_init(wc_ep_t *ep)
{
    wc_handler_register(ep, WC_PKT_CTX_NAMED_REQ, wc_on_ctx_named_req);
}

uint32_t wc_ctx_named(wc_ep_t *ep, const uint64_t key[2], uint32_t member, uint32_t nmembers,
                      uint32_t n)
{
    if (ep->rank == 0)
        return wc_named_lookup(ep, key, member, nmembers, n);
    wc_request_t req;
    memset(&req, 0, sizeof(req));
    req.kind = WC_REQ_RECV;
    wc_request_reset(&req);
    WU_TSAN_RELEASE(&req);
    wc_hdr_t ask = { .type = WC_PKT_CTX_NAMED_REQ, .tag = (int32_t)member, .reserved2 = nmembers,
                     .reserved = (uint16_t)n, .addr = key[0], .len = key[1],
                     .sreq = wc_req_token(&req) };
    wc_pt2pt_send_ctrl_hdr(ep, 0, &ask);
    wc_wait(&req);   /* answered by wc_ctx.c's CTX_REP handler */
    return (uint32_t)req.st_bytes;
}
