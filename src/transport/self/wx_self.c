/* The self transport: delivery inside send. */
#include "transport/self/wx_self.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <stdlib.h>
#include <string.h>

#define WX_SELF_PAYLOAD_MAX ((size_t)64 << 20)

typedef struct wx_self {
    wx_tl_t tl;
    int rank;
    wx_recv_fn_t cb;
    void *cb_arg;
} wx_self_t;

static wu_status_t wx_self_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload,
                                size_t len)
{
    wx_self_t *s = tl->priv;
    (void)dst;
    s->cb(s->rank, hdr, payload, len, s->cb_arg);
    return WU_OK;
}

/* The payload is filled into a staging buffer (on the stack up to 512 bytes): the receive side
 * may keep it as an unexpected message, so it must not be the sender's memory. */
static wu_status_t wx_self_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len,
                                     wx_fill_fn_t fill, void *arg)
{
    wx_self_t *s = tl->priv;
    char small[512];
    (void)dst;
    if (len == 0) {
        s->cb(s->rank, hdr, NULL, 0, s->cb_arg);
        return WU_OK;
    }
    char *tmp = len <= sizeof(small) ? small : malloc(len);
    if (!tmp)
        return WU_ERR_NO_MEMORY;
    fill(arg, tmp, len);
    s->cb(s->rank, hdr, tmp, len, s->cb_arg);
    if (tmp != small)
        free(tmp);
    return WU_OK;
}

static wu_status_t wx_self_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p)
{
    (void)tl, (void)len;
    *rkey_p = (wx_rkey_t){ .addr = (uint64_t)(uintptr_t)buf, .key = 0 };
    return WU_OK;
}

static void wx_self_finalize(wx_tl_t *tl)
{
    free(tl->priv);
}

static const wx_ops_t wx_self_ops = {
    .size = sizeof(wx_ops_t),
    .send = wx_self_send,
    .send_fill = wx_self_send_fill,
    .progress = wx_no_progress,
    .get = wx_mem_get,
    .getv = wx_mem_getv,
    .get_start = wx_no_get_start,
    .put = wx_mem_put,
    .mem_reg = wx_self_mem_reg,
    .mem_dereg = wx_no_mem_dereg,
    .db_arm = wx_no_db_arm,
    .db_disarm = wx_no_db_disarm,
    .db_sleep = wx_no_db_sleep,
    .db_ring = wx_no_db_ring,
    .set_prefetch = wx_no_set_prefetch,
    .finalize = wx_self_finalize,
    .win_reg = wx_no_win_reg,
    .win_dereg = wx_no_win_dereg,
    .win_write = wx_no_win_write,
};

wu_status_t wx_self_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    wx_self_t *s = calloc(1, sizeof(*s));
    if (!s) {
        wu_log_error("no memory for the self transport");
        return WU_ERR_NO_MEMORY;
    }
    s->rank = bs->rank;
    s->cb = cb;
    s->cb_arg = cb_arg;
    long eager = wu_config_int(WU_CONFIG_SHM_EAGER_MAX);
    long frag = wu_config_int(WU_CONFIG_SHM_FRAG_SIZE);
    size_t maxp = (size_t)(eager > frag ? eager : frag);
    if (maxp > WX_SELF_PAYLOAD_MAX)
        maxp = WX_SELF_PAYLOAD_MAX;
    wx_attr_t a = {
        .name = "self",
        .caps = WX_CAP_GET | WX_CAP_PUT | WX_CAP_SINGLE_COPY | WX_CAP_ORDERED |
                WX_CAP_INLINE_DELIVERY,
        .max_payload = maxp,
        .eager_max = (size_t)eager,
        .bulk_eager_max = (size_t)eager,
        .inline_max = maxp,
        .frag_size = frag > 0 ? (size_t)frag : 4096,
    };
    s->tl = (wx_tl_t){ .ops = &wx_self_ops, .attr = a, .priv = s };
    *tl_p = &s->tl;
    return WU_OK;
}
