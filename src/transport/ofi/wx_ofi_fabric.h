/* libfabric for the ofi transport, loaded with dlopen when the transport starts rather than linked.
 *
 * Why: Debian's libfabric links the PSM libraries, and libinfinipath's constructor calibrates a
 * clock with ~800 sleeps (about 0.2 s) in every process that loads it, before main. Linked, that
 * cost every Weft program, on one node too, where no byte goes through libfabric (a job of 2 ranks
 * took 0.21 s instead of 0.01 s). Loaded on demand, only jobs across nodes pay it, once.
 *
 * Weft calls five functions that libfabric exports; the rest of its API is inline calls through the
 * objects' operation tables. Those five are renamed here to wrappers (wx_ofi_fabric.c) that call
 * the library's symbols at the versions these headers were written for (dlvsym), so the ABI is the
 * one the code was compiled against. Include this header instead of <rdma/...> in the transport. */
#ifndef WX_OFI_FABRIC_H
#define WX_OFI_FABRIC_H

#define fi_getinfo  wx_fi_getinfo
#define fi_freeinfo wx_fi_freeinfo
#define fi_dupinfo  wx_fi_dupinfo
#define fi_fabric   wx_fi_fabric
#define fi_strerror wx_fi_strerror

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "util/wu_status.h"

/* Load libfabric (once per process; any thread, concurrent callers wait for the first). WU_OK, or
 * WU_ERR_NOT_FOUND after logging why (library or symbol missing). The wrappers must not be called
 * before it returned WU_OK. */
wu_status_t wx_ofi_fabric_load(void);

#endif
