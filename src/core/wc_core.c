/* World bootstrap and teardown: PMI, the transports, the progression task. This is the one file of
 * the core that knows which transports exist: it creates them, chooses one per peer, registers
 * the packet handlers of the core's protocols, and derives the job-wide limits (wc_limits). */
#include "core/wc_core.h"
#include "core/wc_dynbcast.h"
#include "core/wc_pt2pt.h"
#include "thread/wt_thread.h"
#include "pmi/wi_pmi.h"
#include "progress/wp_engine.h"
#include "transport/ofi/wx_ofi.h"
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
wc_limits_t wc_limits;
_Atomic uint32_t wc_leave_gen;
static wp_ltask_t wc_progress_ltask;
static wx_tl_t *wc_tl_self, *wc_tl_shm, *wc_tl_ofi;
static wx_tl_t **wc_tl_peer;   /* [size]: the transport of each rank, chosen by wc_transports_open */

static size_t wc_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* The job-wide limits from the transports that reach the other ranks (self's with one rank): the
 * most restrictive of them, and the largest bulk single-copy threshold (0 when one has none). The
 * doorbell that sleepers watch (wc_wait.h states the contract): the one transport polled, when it
 * has one; several polled transports, or one without a doorbell, mean timed polling. */
static void wc_limits_derive(void)
{
    wx_tl_t *used[] = { wc_tl_shm, wc_tl_ofi };
    int n = 0;
    wc_limits = (wc_limits_t){ .eager_max = SIZE_MAX, .max_payload = SIZE_MAX,
                               .frag_size = SIZE_MAX, .get_bulk_min = 0 };
    wx_tl_t *polled = NULL;
    for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
        wx_tl_t *tl = used[i];
        if (!tl)
            continue;
        wc_limits.eager_max = wc_min(wc_limits.eager_max, tl->attr.eager_max);
        wc_limits.max_payload = wc_min(wc_limits.max_payload, tl->attr.max_payload);
        wc_limits.frag_size = wc_min(wc_limits.frag_size, tl->attr.frag_size);
        size_t g = tl->attr.get_bulk_min;
        if (n == 0)
            wc_limits.get_bulk_min = g;
        else if (!g || !wc_limits.get_bulk_min)
            wc_limits.get_bulk_min = 0;
        else if (g > wc_limits.get_bulk_min)
            wc_limits.get_bulk_min = g;
        polled = tl;
        n++;
    }
    if (n == 0) {
        wx_tl_t *tl = wc_tl_self;
        wc_limits = (wc_limits_t){
            .eager_max = tl->attr.eager_max,
            .max_payload = tl->attr.max_payload,
            .frag_size = tl->attr.frag_size,
            .get_bulk_min = tl->attr.get_bulk_min,
        };
        wc_wait_set_doorbell(NULL, false);
    } else if (n == 1 && (polled->attr.caps & WX_CAP_DOORBELL)) {
        wc_wait_set_doorbell(polled, false);
    } else {
        wc_wait_set_doorbell(NULL, true);
    }
}

/* WEFT_TRANSPORTS: which transports reach the other ranks. */
typedef enum { WC_TLSEL_AUTO, WC_TLSEL_SHM, WC_TLSEL_OFI } wc_tlsel_t;

static wu_status_t wc_tlsel_parse(wc_tlsel_t *sel_p)
{
    const char *v = wu_config_str(WU_CONFIG_TRANSPORTS);
    if (!strcmp(v, "auto"))
        *sel_p = WC_TLSEL_AUTO;
    else if (!strcmp(v, "self,shm") || !strcmp(v, "shm"))
        *sel_p = WC_TLSEL_SHM;
    else if (!strcmp(v, "self,ofi") || !strcmp(v, "ofi"))
        *sel_p = WC_TLSEL_OFI;
    else {
        wu_log_error("WEFT_TRANSPORTS=%s: expected auto, self,shm or self,ofi", v);
        return WU_ERR_INVALID;
    }
    return WU_OK;
}

/* Create the transports and choose one per peer: self for the rank itself; by WEFT_TRANSPORTS,
 * shm (one node) or ofi for every other rank. Every rank makes the same choice (the environment
 * is the job's), so the constructors' collective exchanges match. */
static wu_status_t wc_transports_open(const wx_bootstrap_t *bs)
{
    wc_tlsel_t sel;
    wu_status_t st = wc_tlsel_parse(&sel);
    if (st != WU_OK)
        return st;
    wc_tl_peer = calloc((size_t)bs->size, sizeof(*wc_tl_peer));
    if (!wc_tl_peer)
        return WU_ERR_NO_MEMORY;
    if ((st = wx_self_create(bs, wc_pt2pt_deliver, NULL, &wc_tl_self)) != WU_OK)
        return st;
    if (bs->size > 1) {
        if (sel == WC_TLSEL_OFI) {
            st = wx_ofi_create(bs, wc_pt2pt_deliver, NULL, &wc_tl_ofi);
            if (st != WU_OK)
                wu_log_error("WEFT_TRANSPORTS=%s: the ofi transport did not start",
                             wu_config_str(WU_CONFIG_TRANSPORTS));
        } else {
            st = wx_shm_create(bs, wc_pt2pt_deliver, NULL, &wc_tl_shm);
        }
        if (st != WU_OK)
            return st;
    }
    for (int r = 0; r < bs->size; r++)
        wc_tl_peer[r] = r == bs->rank ? wc_tl_self : wc_tl_ofi ? wc_tl_ofi : wc_tl_shm;
    return WU_OK;
}

static void wc_transports_close(void)
{
    if (wc_tl_ofi)
        wc_tl_ofi->ops->finalize(wc_tl_ofi);
    if (wc_tl_shm)
        wc_tl_shm->ops->finalize(wc_tl_shm);
    if (wc_tl_self)
        wc_tl_self->ops->finalize(wc_tl_self);
    wc_tl_ofi = wc_tl_shm = wc_tl_self = NULL;
    free(wc_tl_peer);
    wc_tl_peer = NULL;
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
    st = wc_pt2pt_init();
    if (st != WU_OK)
        goto err_pmi;
    wc_handler_register(WC_PKT_DYN, wc_dyn_deliver);
    wc_ctx_init();

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
    st = wc_transports_open(&bs);
    if (st != WU_OK)
        goto err_transports;
    for (int r = 0; r < size; r++)
        wc_pt2pt_peer_set(r, wc_tl_peer[r]);
    wc_limits_derive();

    wp_ltask_init(&wc_progress_ltask, wc_pt2pt_progress_task, NULL, WP_TASK_REPEAT, "pt2pt");
    wp_ltask_submit(&wc_progress_ltask);
    wu_debug("core up: rank %d of %d, peers by %s%s%s, eager max %zu, bulk get from %zu", rank,
             size, wc_tl_shm ? "shm" : "", wc_tl_shm && wc_tl_ofi ? "+" : "",
             wc_tl_ofi ? "ofi" : wc_tl_shm ? "" : "-", wc_limits.eager_max,
             wc_limits.get_bulk_min);
    return WU_OK;

err_transports:
    wc_transports_close();
    wc_pt2pt_finalize();
err_pmi:
    wi_pmi_finalize();
    return st;
}

wu_status_t wc_finalize(void)
{
    wp_ltask_remove(&wc_progress_ltask);
    wc_transports_close();
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

void wc_abort(int code, const char *msg)
{
    wi_pmi_abort(code, msg);
    _exit(code ? code : 1);
}
