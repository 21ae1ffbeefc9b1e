/* The shared-memory transport's constructor: all the core needs to know of it. */
#ifndef WX_SHM_TL_H
#define WX_SHM_TL_H

#include "transport/wx_transport.h"

/* wx_create_fn_t: attach the segment of bs's ranks (collective over bs; wx_shm.h, wx_shm_init) and
 * return the transport behind its operations table. bs may be a node's view of the job
 * (bs->world_rank, bs->job_id unique per node): the segment then spans that node's ranks, and a
 * node's only rank makes none but calls bs->fence WX_SHM_INIT_FENCES times like the others.
 * Attributes from WEFT_SHM_EAGER_MAX, _FRAG_SIZE, _CMA, _CMA_MIN, _CMA_COLL_MIN (docs/tuning.md).
 * One instance per process. */
#define WX_SHM_INIT_FENCES 3   /* fences of wx_shm_init with peers (fewer only when it fails) */
wu_status_t wx_shm_create(const wx_bootstrap_t *bs, wx_recv_fn_t cb, void *cb_arg, wx_tl_t **tl_p);

#endif
