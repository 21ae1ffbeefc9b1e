/* The shared-memory transport behind the operations table (wx_transport.h). The state stays the
 * one instance of wx_shm.c; this file adapts the cold calls and derives the attributes. The hot
 * ones (send, send_fill, progress) are wx_shm.c's own wx_shm_tl_* forms: no wrapper hop.
 *
 * wx_shm.c numbers the ranks of its segment 0..n-1. When the bootstrap is a node's view of a
 * larger job (bs->world_rank), this file translates: job rank to node rank on the way out
 * (wx_shm_local, which the hot sends of wx_shm.c read too), node rank to job rank for the
 * callbacks (wx_shm_world). Both tables are written by wx_shm_create and read-only afterwards. */
#include "transport/shm/wx_shm_tl.h"
#include "transport/shm/wx_shm_priv.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <stdatomic.h>
#include <stdlib.h>

int *wx_shm_local;               /* [job size]: node rank of a job rank, -1 off the node */
int *wx_shm_world;               /* [node size]: job rank of a node rank */
static wx_recv_fn_t wx_shm_user_cb;
static wx_prefetch_fn_t wx_shm_user_prefetch;
static bool wx_shm_mapped;       /* a node's view: the callbacks go through the tables */

static void wx_shm_tl_deliver(int src, const void *hdr, const void *payload, size_t len, void *arg)
{
    wx_shm_user_cb(wx_shm_world[src], hdr, payload, len, arg);
}

static bool wx_shm_tl_prefetch(void *arg, int src, const void *hdr, int stage)
{
    return wx_shm_user_prefetch(arg, wx_shm_world[src], hdr, stage);
}

static wu_status_t wx_shm_tl_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey,
                                 uint64_t off, size_t len)
{
    (void)tl;
    return wx_shm_get(wx_shm_local[src], buf, rkey->addr + off, len);   /* CMA reads by address: no key */
}

static wu_status_t wx_shm_tl_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov,
                                  const wx_rkey_t *rkey, uint64_t off, size_t len)
{
    (void)tl;
    return wx_shm_getv(wx_shm_local[src], iov, niov, rkey->addr + off, len);
}

static wu_status_t wx_shm_tl_put(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey,
                                 uint64_t off, size_t len)
{
    (void)tl;
    return wx_shm_put(wx_shm_local[dst], buf, rkey->addr + off, len);
}

static wu_status_t wx_shm_tl_coop_open(wx_tl_t *tl, uint64_t *tok_p)
{
    (void)tl;
    return wx_shm_coop_open(tok_p);
}

static void wx_shm_tl_coop_close(wx_tl_t *tl, uint64_t tok)
{
    (void)tl;
    wx_shm_coop_close(tok);
}

static bool wx_shm_tl_coop_valid(wx_tl_t *tl, int owner, uint64_t tok)
{
    (void)tl;
    return wx_shm_coop_valid(wx_shm_local[owner], tok);
}

static uint32_t wx_shm_tl_coop_claim(wx_tl_t *tl, int owner, uint64_t tok, uint32_t n,
                                     uint32_t max, uint32_t *idx_p)
{
    (void)tl;
    return wx_shm_coop_claim(wx_shm_local[owner], tok, n, max, idx_p);
}

static bool wx_shm_tl_coop_finish(wx_tl_t *tl, int owner, uint64_t tok, uint32_t n, uint32_t k,
                                  bool failed, bool *failed_p)
{
    (void)tl;
    return wx_shm_coop_finish(wx_shm_local[owner], tok, n, k, failed, failed_p);
}

static uint32_t wx_shm_tl_coop_count(wx_tl_t *tl, int owner, uint64_t tok, int which, uint32_t k)
{
    (void)tl;
    return wx_shm_coop_count(wx_shm_local[owner], tok,
                             which == WX_COOP_FSENT ? WX_SHM_COOP_FSENT : WX_SHM_COOP_CONSUMED, k);
}

static uint32_t wx_shm_tl_coop_next(wx_tl_t *tl, int owner, uint64_t tok)
{
    (void)tl;
    return wx_shm_coop_next(wx_shm_local[owner], tok);
}

static wu_status_t wx_shm_tl_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p)
{
    (void)len;
    if (!(tl->attr.caps & WX_CAP_GET))
        return WU_ERR_UNSUPPORTED;
    *rkey_p = (wx_rkey_t){ .addr = (uint64_t)(uintptr_t)buf, .key = 0 };
    return WU_OK;
}

static uint32_t wx_shm_tl_db_arm(wx_tl_t *tl)
{
    (void)tl;
    return wx_shm_doorbell_arm();
}

static void wx_shm_tl_db_disarm(wx_tl_t *tl)
{
    (void)tl;
    wx_shm_doorbell_disarm();
}

static void wx_shm_tl_db_sleep(wx_tl_t *tl, uint32_t seq, uint64_t timeout_ns)
{
    (void)tl;
    wx_shm_doorbell_sleep(seq, timeout_ns);
}

static void wx_shm_tl_db_ring(wx_tl_t *tl)
{
    (void)tl;
    wx_shm_doorbell_ring(wx_shm.rank);
}

static void wx_shm_tl_offer_watch(wx_tl_t *tl, bool on)
{
    (void)tl;
    wx_shm_offer_watch(on);
}

static void wx_shm_tl_offer_busy(wx_tl_t *tl, uint64_t now_ns)
{
    (void)tl;
    wx_shm_offer_busy(now_ns);
}

static uint32_t wx_shm_tl_offer_seq(wx_tl_t *tl)
{
    (void)tl;
    return wx_shm_offer_seq();
}

static void wx_shm_tl_offer_sleep(wx_tl_t *tl, uint32_t seq, uint64_t deadline_ns)
{
    (void)tl;
    wx_shm_offer_sleep(seq, deadline_ns);
}

static void wx_shm_tl_offer_wake(wx_tl_t *tl, int dst)
{
    (void)tl;
    wx_shm_offer_wake(wx_shm_local[dst]);
}

static void wx_shm_tl_cpu_set(wx_tl_t *tl, int cpu)
{
    (void)tl;
    wx_shm_cpu_set(cpu);
}

static int wx_shm_tl_peer_cpu(wx_tl_t *tl, int peer)
{
    (void)tl;
    return wx_shm_peer_cpu(wx_shm_local[peer]);
}

static void wx_shm_tl_set_prefetch(wx_tl_t *tl, wx_prefetch_fn_t fn)
{
    (void)tl;
    wx_shm_user_prefetch = fn;
    wx_shm_set_prefetch(fn && wx_shm_mapped ? wx_shm_tl_prefetch : fn);
}

static void wx_shm_tl_finalize(wx_tl_t *tl)
{
    (void)tl;
    wx_shm_finalize();
    free(wx_shm_local);
    free(wx_shm_world);
    wx_shm_local = wx_shm_world = NULL;
}

static const wx_ops_t wx_shm_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_shm_tl_send,
    .send_fill = wx_shm_tl_send_fill,
    .progress = wx_shm_tl_progress,
    .get = wx_shm_tl_get,
    .getv = wx_shm_tl_getv,
    .get_start = wx_no_get_start,
    .put = wx_shm_tl_put,
    .mem_reg = wx_shm_tl_mem_reg,
    .mem_dereg = wx_no_mem_dereg,   /* nothing was registered */
    .db_arm = wx_shm_tl_db_arm,
    .db_disarm = wx_shm_tl_db_disarm,
    .db_sleep = wx_shm_tl_db_sleep,
    .db_ring = wx_shm_tl_db_ring,
    .set_prefetch = wx_shm_tl_set_prefetch,
    .finalize = wx_shm_tl_finalize,
    .coop_open = wx_shm_tl_coop_open,
    .coop_close = wx_shm_tl_coop_close,
    .coop_valid = wx_shm_tl_coop_valid,
    .coop_claim = wx_shm_tl_coop_claim,
    .coop_finish = wx_shm_tl_coop_finish,
    .coop_count = wx_shm_tl_coop_count,
    .coop_next = wx_shm_tl_coop_next,
    .win_reg = wx_no_win_reg,
    .win_dereg = wx_no_win_dereg,
    .win_write = wx_no_win_write,
    .offer_watch = wx_shm_tl_offer_watch,
    .offer_busy = wx_shm_tl_offer_busy,
    .offer_seq = wx_shm_tl_offer_seq,
    .offer_sleep = wx_shm_tl_offer_sleep,
    .offer_wake = wx_shm_tl_offer_wake,
    .cpu_set = wx_shm_tl_cpu_set,
    .peer_cpu = wx_shm_tl_peer_cpu,
};

static wx_tl_t wx_shm_tl;

static size_t wx_shm_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* The rank translation tables (identity for a job-wide bootstrap). */
static wu_status_t wx_shm_maps(const wx_bootstrap_t *bs)
{
    int nworld = bs->world_rank ? bs->world_size : bs->size;
    wx_shm_local = malloc(sizeof(int) * (size_t)nworld);
    wx_shm_world = malloc(sizeof(int) * (size_t)bs->size);
    if (!wx_shm_local || !wx_shm_world) {
        free(wx_shm_local);
        free(wx_shm_world);
        wx_shm_local = wx_shm_world = NULL;
        wu_log_error("no memory for the shared-memory transport's rank tables");
        return WU_ERR_NO_MEMORY;
    }
    wx_shm_mapped = bs->world_rank != NULL;
    for (int r = 0; r < nworld; r++)
        wx_shm_local[r] = bs->world_rank ? -1 : r;
    for (int i = 0; i < bs->size; i++) {
        wx_shm_world[i] = bs->world_rank ? bs->world_rank[i] : i;
        wx_shm_local[wx_shm_world[i]] = i;
    }
    return WU_OK;
}

wu_status_t wx_shm_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    wu_status_t st = wx_shm_maps(bs);
    if (st != WU_OK)
        return st;
    /* a node's only rank makes no segment but fences as often as the other nodes' ranks */
    for (int i = 0; bs->world_rank && bs->size == 1 && i < WX_SHM_INIT_FENCES && st == WU_OK; i++)
        st = bs->fence();
    wx_shm_user_cb = cb;
    if (st == WU_OK)
        st = wx_shm_init(bs, bs->world_rank ? wx_shm_tl_deliver : cb, cb_arg);
    if (st != WU_OK) {
        free(wx_shm_local);
        free(wx_shm_world);
        wx_shm_local = wx_shm_world = NULL;
        return st;
    }
    size_t maxp = wx_shm_max_payload();
    wx_attr_t a = { .name = "shm", .caps = WX_CAP_ORDERED | WX_CAP_DOORBELL | WX_CAP_PEER_CPU,
                    .max_payload = maxp };
    a.eager_max = wx_shm_min((size_t)wu_config_int(WU_CONFIG_SHM_EAGER_MAX), maxp);
    a.frag_size = wx_shm_min((size_t)wu_config_int(WU_CONFIG_SHM_FRAG_SIZE), maxp);
    if (a.frag_size == 0)
        a.frag_size = 4096;
    /* collectives exchanging blocks: no handshake up to the largest packet, at most 64 KiB */
    a.bulk_eager_max = wx_shm_min(maxp, 65536);
    if (a.bulk_eager_max < a.eager_max)
        a.bulk_eager_max = a.eager_max;
    a.inline_max = 8;   /* header and 8 payload bytes are one cache line (wx_shm_ring_inl.h) */
    if (wx_shm_has_cma()) {
        a.caps |= WX_CAP_GET | WX_CAP_PUT | WX_CAP_SINGLE_COPY;
        a.get_min = (size_t)wu_config_int(WU_CONFIG_SHM_CMA_MIN);
        a.get_bulk_min = (size_t)wu_config_int(WU_CONFIG_SHM_CMA_COLL_MIN);
        a.coop_min = (size_t)wu_config_int(WU_CONFIG_SHM_COOP_MIN);
        a.coop_chunk = a.frag_size;   /* a chunk is one FRAG when it goes through the ring */
        if (a.coop_min) {
            a.caps |= WX_CAP_COOP;
            if (a.coop_min <= a.eager_max)
                a.coop_min = a.eager_max + 1;
        }
    }
    wx_shm_tl = (wx_tl_t){ .ops = &wx_shm_ops, .attr = a, .priv = &wx_shm };
    *tl_p = &wx_shm_tl;
    return WU_OK;
}
