/* The stubs of wx_transport.h: what a transport lacks fails cleanly (libfabric's fi_no_*); and the
 * get, getv and put of transports whose peers share this address space. */
#include "transport/wx_transport.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "util/wu_log.h"

void (*wx_fatal_fn)(const char *msg);

void wx_protocol_error(int src, const char *fmt, ...)
{
    char what[384], msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    char from[32] = "an unknown rank";
    if (src >= 0)
        snprintf(from, sizeof(from), "rank %d", src);
    snprintf(msg, sizeof(msg), "protocol error: malformed packet from %s: %s", from, what);
    if (wx_fatal_fn)
        wx_fatal_fn(msg);
    wu_log_error("%s", msg);
    _exit(1);
}

wu_status_t wx_no_send(wx_tl_t *tl, int dst, const void *hdr, const void *payload, size_t len)
{
    (void)tl, (void)dst, (void)hdr, (void)payload, (void)len;
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_no_send_fill(wx_tl_t *tl, int dst, const void *hdr, size_t len, wx_fill_fn_t fill,
                            void *arg)
{
    (void)tl, (void)dst, (void)hdr, (void)len, (void)fill, (void)arg;
    return WU_ERR_UNSUPPORTED;
}

int wx_no_progress(wx_tl_t *tl)
{
    (void)tl;
    return 0;
}

wu_status_t wx_no_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                      size_t len)
{
    (void)tl, (void)src, (void)buf, (void)rkey, (void)off, (void)len;
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_no_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov, const wx_rkey_t *rkey,
                       uint64_t off, size_t len)
{
    (void)tl, (void)src, (void)iov, (void)niov, (void)rkey, (void)off, (void)len;
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_no_get_start(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                            size_t len, wx_get_done_fn_t done, void *arg)
{
    (void)tl, (void)src, (void)buf, (void)rkey, (void)off, (void)len, (void)done, (void)arg;
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_no_put(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey, uint64_t off,
                      size_t len)
{
    (void)tl, (void)dst, (void)buf, (void)rkey, (void)off, (void)len;
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_no_mem_reg(wx_tl_t *tl, const void *buf, size_t len, wx_rkey_t *rkey_p)
{
    (void)tl, (void)buf, (void)len, (void)rkey_p;
    return WU_ERR_UNSUPPORTED;
}

void wx_no_mem_dereg(wx_tl_t *tl, const wx_rkey_t *rkey)
{
    (void)tl, (void)rkey;
}

uint32_t wx_no_db_arm(wx_tl_t *tl)
{
    (void)tl;
    return 0;
}

void wx_no_db_disarm(wx_tl_t *tl)
{
    (void)tl;
}

void wx_no_db_sleep(wx_tl_t *tl, uint32_t seq, uint64_t timeout_ns)
{
    (void)tl, (void)seq, (void)timeout_ns;
}

void wx_no_db_ring(wx_tl_t *tl)
{
    (void)tl;
}

void wx_no_set_prefetch(wx_tl_t *tl, wx_prefetch_fn_t fn)
{
    (void)tl, (void)fn;
}

void wx_no_finalize(wx_tl_t *tl)
{
    (void)tl;
}

/* ---- peers in this address space ---- */

wu_status_t wx_mem_get(wx_tl_t *tl, int src, void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len)
{
    (void)tl, (void)src;
    memcpy(buf, (const char *)(uintptr_t)rkey->addr + off, len);
    return WU_OK;
}

wu_status_t wx_mem_getv(wx_tl_t *tl, int src, struct iovec *iov, int niov, const wx_rkey_t *rkey,
                        uint64_t off, size_t len)
{
    const char *from = (const char *)(uintptr_t)rkey->addr + off;
    (void)tl, (void)src;
    for (int i = 0; i < niov && len; i++) {
        size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;
        memcpy(iov[i].iov_base, from, n);
        from += n;
        len -= n;
    }
    return WU_OK;
}

wu_status_t wx_mem_put(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey, uint64_t off,
                       size_t len)
{
    (void)tl, (void)dst;
    memcpy((char *)(uintptr_t)rkey->addr + off, buf, len);
    return WU_OK;
}

wu_status_t wx_no_win_reg(wx_tl_t *tl, void *buf, size_t len, wx_rkey_t *rkey_p, void **handle_p)
{
    (void)tl, (void)buf, (void)len, (void)rkey_p, (void)handle_p;
    return WU_ERR_UNSUPPORTED;
}

void wx_no_win_dereg(wx_tl_t *tl, void *handle)
{
    (void)tl, (void)handle;
}

wu_status_t wx_no_win_write(wx_tl_t *tl, int dst, const void *buf, const wx_rkey_t *rkey,
                            uint64_t off, size_t len, wx_get_done_fn_t done, void *arg)
{
    (void)tl, (void)dst, (void)buf, (void)rkey, (void)off, (void)len, (void)done, (void)arg;
    return WU_ERR_UNSUPPORTED;
}

bool wx_has_win_ops(const wx_tl_t *tl)
{
    const wx_ops_t *o = tl->ops;
    return o->size >= offsetof(wx_ops_t, win_write) + sizeof(o->win_write) && o->win_reg &&
           o->win_dereg && o->win_write;
}
