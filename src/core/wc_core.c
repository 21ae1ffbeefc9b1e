/* World bootstrap and teardown: PMI, the transports, the progression task. */
#include "core/wc_core.h"
#include "core/wc_pt2pt.h"
#include "thread/wt_thread.h"
#include "pmi/wi_pmi.h"
#include "progress/wp_engine.h"
#include "transport/shm/wx_shm.h"
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
static wp_ltask_t wc_progress_ltask;

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
    st = wc_pt2pt_init();
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
    wc_world.eager_max = (size_t)wu_config_int(WU_CONFIG_SHM_EAGER_MAX);
    wc_world.frag_size = (size_t)wu_config_int(WU_CONFIG_SHM_FRAG_SIZE);
    wc_world.bulk_eager_max = wc_world.eager_max;
    if (size > 1) {
        wx_bootstrap_t bs = {
            .rank = rank, .size = size, .job_id = wi_pmi_kvsname(),
            .put = wi_pmi_put, .get = wi_pmi_get, .fence = wi_pmi_fence,
        };
        st = wx_shm_init(&bs, wc_pt2pt_deliver, NULL);
        if (st != WU_OK)
            goto err_pt2pt;
        wc_pt2pt_enable_prefetch();
        wc_world.cma = wx_shm_has_cma();
        wc_world.cma_min = (size_t)wu_config_int(WU_CONFIG_SHM_CMA_MIN);
        wc_world.cma_bulk_min =
            wc_world.cma ? (size_t)wu_config_int(WU_CONFIG_SHM_CMA_COLL_MIN) : 0;
        if (wc_world.cma_min == 0)
            wc_world.cma = false;
        size_t maxp = wx_shm_max_payload();
        if (wc_world.eager_max > maxp)
            wc_world.eager_max = maxp;
        if (wc_world.frag_size > maxp)
            wc_world.frag_size = maxp;
        /* collectives exchanging blocks: no handshake up to the largest packet, at most 64 KiB */
        wc_world.bulk_eager_max = maxp < 65536 ? maxp : 65536;
        if (wc_world.bulk_eager_max < wc_world.eager_max)
            wc_world.bulk_eager_max = wc_world.eager_max;
    }
    if (wc_world.frag_size == 0)
        wc_world.frag_size = 4096;

    wp_ltask_init(&wc_progress_ltask, wc_pt2pt_progress_task, NULL, WP_TASK_REPEAT, "pt2pt");
    wp_ltask_submit(&wc_progress_ltask);
    wu_debug("core up: rank %d of %d, eager max %zu, cma %d", rank, size, wc_world.eager_max,
             (int)wc_world.cma);
    return WU_OK;

err_pt2pt:
    wc_pt2pt_finalize();
err_pmi:
    wi_pmi_finalize();
    return st;
}

wu_status_t wc_finalize(void)
{
    wp_ltask_remove(&wc_progress_ltask);
    if (wc_world.size > 1)
        wx_shm_finalize();
    wc_pt2pt_finalize();
    wp_engine_finalize();
    return wi_pmi_finalize();
}

void wc_quiesce(bool exiting)
{
    /* seq_cst, and before the purges take the peer locks: see wc_pt2pt.c's contract */
    uint32_t gen = atomic_fetch_add(&wc_leave_gen, 1) + 1;
    size_t dropped, withdrawn;
    wc_pt2pt_quiesce(&dropped, &withdrawn);
    /* Runs that began before the bump (a delivery into a receive just swept, a schedule's step)
     * end now; later runs see the bump. */
    wp_engine_sync();
    if (exiting)
        wp_engine_stop_threads();
    wu_debug("leaving (generation %u): %zu queued packets of abandoned sends dropped, %zu posted "
             "receives withdrawn%s", gen, dropped, withdrawn,
             exiting ? ", progress threads stopped" : "");
}

uint32_t wc_ctx_alloc(uint32_t n)
{
    static _Atomic uint32_t local_next = 16;   /* a job of one rank */
    if (wc_world.size > 1)
        return wx_shm_ctx_alloc(n);
    return atomic_fetch_add(&local_next, n);
}

void wc_abort(int code, const char *msg)
{
    wi_pmi_abort(code, msg);
    _exit(code ? code : 1);
}
