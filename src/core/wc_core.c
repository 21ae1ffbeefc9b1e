/* World bootstrap and teardown: PMI, the default endpoint (wc_ep.h) and its transports. This is
 * the one file of the core that knows which transports exist: it creates them and chooses one per
 * peer of the default endpoint. */
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "thread/wt_thread.h"
#include "pmi/wi_pmi.h"
#include "progress/wp_engine.h"
#include "transport/self/wx_self.h"
#include "transport/shm/wx_shm_tl.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

wc_world_t wc_world;
_Atomic uint32_t wc_leave_gen;
static wx_tl_t *wc_tl_self, *wc_tl_shm;

/* The doorbell that sleepers watch (wc_wait.h states the contract). */
static void wc_doorbell_choose(void)
{
    if (wc_tl_shm)
        wc_wait_set_doorbell((wc_tl_shm->attr.caps & WX_CAP_DOORBELL) ? wc_tl_shm : NULL,
                             !(wc_tl_shm->attr.caps & WX_CAP_DOORBELL));
    else
        wc_wait_set_doorbell(NULL, false);
}

wu_status_t wc_init(bool thread_multiple)
{
    wu_status_t st;
    int rank, size;
    bool singleton;

    wu_config_init();
    st = wi_pmi_init(&rank, &size, &singleton);
    if (st != WU_OK)
        return st;
    wc_world.rank = rank;
    wc_world.size = size;
    wc_world.appnum = wi_pmi_appnum();
    wc_world.singleton = singleton;
    char prefix[32];
    snprintf(prefix, sizeof(prefix), "weft:%d", rank);
    wu_log_set_prefix(prefix);

    wp_engine_config_t pcfg;
    wp_engine_config_from_env(&pcfg);
    if (!thread_multiple) {
        if (!getenv("WEFT_PROGRESS_IDLE"))
            pcfg.idle_threads = false;
        if (!getenv("WEFT_PROGRESS_TIMER"))
            pcfg.timer_thread = false;
    }
    wt_thread_set_multi(thread_multiple || pcfg.idle_threads || pcfg.timer_thread);
    if ((st = wp_engine_init(&pcfg)) != WU_OK)
        goto err_pmi;
    wc_ep_t *ep = wc_ep_default();
    st = wc_ep_init(ep, rank, size);
    if (st != WU_OK)
        goto err_pmi;

    wc_spin_ns = (uint64_t)wu_config_int(WU_CONFIG_SPIN_US) * 1000u;
    {
        /* every rank of the job shares this machine (one node: the shared-memory transport) */
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        const char *v = wu_config_str(WU_CONFIG_WAIT_YIELD);   /* auto, or 0 / 1 force it */
        wc_idle_yield = strcmp(v, "auto") ? atoi(v) != 0 : ncpu > 0 && size > ncpu;
    }
    wc_wait_init();
    wx_bootstrap_t bs = {
        .rank = rank, .size = size, .job_id = wi_pmi_kvsname(),
        .put = wi_pmi_put, .get = wi_pmi_get, .fence = wi_pmi_fence,
    };
    st = wx_self_create(&bs, wc_ep_deliver, ep, &wc_tl_self);
    if (st != WU_OK)
        goto err_pt2pt;
    if (size > 1) {
        st = wx_shm_create(&bs, wc_ep_deliver, ep, &wc_tl_shm);
        if (st != WU_OK)
            goto err_self;
    }
    for (int r = 0; r < size; r++)
        wc_ep_peer_set(ep, r, r == rank ? wc_tl_self : wc_tl_shm);
    wc_doorbell_choose();
    wc_ep_start(ep, true);
    wu_debug("core up: rank %d of %d, peers by %s, eager max %zu, bulk get from %zu", rank, size,
             wc_tl_shm ? wc_tl_shm->attr.name : "-", ep->limits.eager_max, ep->limits.get_bulk_min);
    return WU_OK;

err_self:
    wc_tl_self->ops->finalize(wc_tl_self);
    wc_tl_self = NULL;
err_pt2pt:
    wc_ep_fini(ep);
err_pmi:
    wi_pmi_finalize();
    return st;
}

wu_status_t wc_finalize(void)
{
    wc_ep_t *ep = wc_ep_default();
    if (ep->started) {
        wp_ltask_remove(&ep->ltask);
        ep->started = false;
    }
    if (wc_tl_shm)
        wc_tl_shm->ops->finalize(wc_tl_shm);
    wc_tl_self->ops->finalize(wc_tl_self);
    wc_tl_shm = wc_tl_self = NULL;
    wc_ep_fini(ep);
    wp_engine_finalize();
    return wi_pmi_finalize();
}

void wc_quiesce(bool exiting)
{
    /* seq_cst, and before the purges take the peer locks: see wc_pt2pt.c's contract */
    uint32_t gen = atomic_fetch_add(&wc_leave_gen, 1) + 1;
    size_t dropped, withdrawn;
    wc_pt2pt_quiesce(wc_ep_default(), &dropped, &withdrawn);
    /* Runs that began before the bump (a delivery into a receive just swept, a schedule's step)
     * end now; later runs see the bump. */
    wp_engine_sync();
    if (exiting)
        wp_engine_stop_threads();
    wu_debug("leaving (generation %u): %zu queued packets of abandoned sends dropped, %zu posted "
             "receives withdrawn%s", gen, dropped, withdrawn,
             exiting ? ", progress threads stopped" : "");
}

void wc_abort(int code, const char *msg)
{
    wi_pmi_abort(code, msg);
    _exit(code ? code : 1);
}
