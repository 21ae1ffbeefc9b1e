/* The shared-memory transport behind the operations table (wx_transport.h). The state stays the
 * one instance of wx_shm.c; this file adapts the cold calls and derives the attributes. The hot
 * ones (send, send_fill, progress) are wx_shm.c's own wx_shm_tl_* forms: no wrapper hop. */
#include "transport/shm/wx_shm_tl.h"
#include "transport/shm/wx_shm_priv.h"
#include "util/wu_config.h"

#include <stdatomic.h>

static wu_status_t wx_shm_tl_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey,
                                 uint64_t off, size_t len)
{
    (void)tl;
    return wx_shm_get(src, buf, rkey->addr + off, len);   /* CMA reads by address: no key */
}

static wu_status_t wx_shm_tl_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov,
                                  const wx_rkey_t *rkey, uint64_t off, size_t len)
{
    (void)tl;
    return wx_shm_getv(src, iov, niov, rkey->addr + off, len);
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

static void wx_shm_tl_set_prefetch(wx_tl_t *tl, wx_prefetch_fn_t fn)
{
    (void)tl;
    wx_shm_set_prefetch(fn);
}

static void wx_shm_tl_finalize(wx_tl_t *tl)
{
    (void)tl;
    wx_shm_finalize();
}

static const wx_ops_t wx_shm_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_shm_tl_send,
    .send_fill = wx_shm_tl_send_fill,
    .progress = wx_shm_tl_progress,
    .get = wx_shm_tl_get,
    .getv = wx_shm_tl_getv,
    .put = wx_no_put,
    .mem_reg = wx_shm_tl_mem_reg,
    .mem_dereg = wx_no_mem_dereg,   /* nothing was registered */
    .db_arm = wx_shm_tl_db_arm,
    .db_disarm = wx_shm_tl_db_disarm,
    .db_sleep = wx_shm_tl_db_sleep,
    .db_ring = wx_shm_tl_db_ring,
    .set_prefetch = wx_shm_tl_set_prefetch,
    .finalize = wx_shm_tl_finalize,
};

static wx_tl_t wx_shm_tl;

static size_t wx_shm_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

wu_status_t wx_shm_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    wu_status_t st = wx_shm_init(bs, cb, cb_arg);
    if (st != WU_OK)
        return st;
    size_t maxp = wx_shm_max_payload();
    wx_attr_t a = { .name = "shm", .caps = WX_CAP_ORDERED | WX_CAP_DOORBELL, .max_payload = maxp };
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
        a.caps |= WX_CAP_GET | WX_CAP_SINGLE_COPY;
        a.get_min = (size_t)wu_config_int(WU_CONFIG_SHM_CMA_MIN);
        a.get_bulk_min = (size_t)wu_config_int(WU_CONFIG_SHM_CMA_COLL_MIN);
    }
    wx_shm_tl = (wx_tl_t){ .ops = &wx_shm_ops, .attr = a, .priv = &wx_shm };
    *tl_p = &wx_shm_tl;
    return WU_OK;
}
