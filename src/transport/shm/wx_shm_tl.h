/* The shared-memory transport's constructor: all the core needs to know of it. */
#ifndef WX_SHM_TL_H
#define WX_SHM_TL_H

#include "transport/wx_transport.h"

/* wx_create_fn_t: attach the job's segment (collective over bs; wx_shm.h, wx_shm_init) and return
 * the transport behind its operations table. Attributes from WEFT_SHM_EAGER_MAX, _FRAG_SIZE,
 * _CMA, _CMA_MIN, _CMA_COLL_MIN (docs/tuning.md). One instance per process. */
wu_status_t wx_shm_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p);

#endif
