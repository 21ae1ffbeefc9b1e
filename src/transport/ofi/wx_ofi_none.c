/* The libfabric transport of a Weft built without libfabric (CMake did not find it, or
 * WEFT_WITH_OFI=off): the constructor says so and fails. */
#include "transport/ofi/wx_ofi.h"
#include "util/wu_log.h"

const bool wx_ofi_built = false;

wu_status_t wx_ofi_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p)
{
    (void)bs, (void)cb, (void)cb_arg, (void)tl_p;
    wu_log_error("this Weft was built without libfabric (the ofi transport): rebuild it with "
                 "libfabric-dev installed (CMake: WEFT_WITH_OFI=on)");
    return WU_ERR_UNSUPPORTED;
}

wu_status_t wx_ofi_providers(wx_ofi_offer_fn_t fn, void *arg)
{
    (void)fn, (void)arg;
    return WU_ERR_UNSUPPORTED;
}

void wx_ofi_prefetch(int rank, int size)
{
    (void)rank, (void)size;
}

void wx_ofi_prefetch_end(void)
{
}

uint64_t wx_ofi_dropped(void)
{
    return 0;
}
