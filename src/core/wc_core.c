/* World bootstrap and teardown: PMI, the default endpoint (wc_ep.h) and its transports. This is
 * the one file of the core that knows which transports exist: it creates them, chooses one per
 * peer of the default endpoint (self, shm on the node, tcp or ofi across nodes) and the doorbell that
 * sleepers watch; the endpoint derives the job-wide limits from its peers' transports. */
#include "core/wc_core.h"
#include "core/wc_dyn.h"
#include "core/wc_pt2pt.h"
#include "thread/wt_thread.h"
#include "pmi/wi_pmi.h"
#include "progress/wp_engine.h"
#include "transport/ofi/wx_ofi.h"
#include "transport/self/wx_self.h"
#include "transport/sock/wx_tcp.h"
#include "transport/shm/wx_shm_tl.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <sys/stat.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

wc_world_t wc_world;
_Atomic uint32_t wc_leave_gen;
static wx_tl_t *wc_tl_self, *wc_tl_shm, *wc_tl_ofi, *wc_tl_tcp;
static wx_tl_t **wc_tl_peer;   /* [size]: the transport of each rank, chosen by wc_transports_open */
static bool wc_tl_used_shm, wc_tl_used_net;   /* some peer is reached by it (net: tcp or ofi) */

/* The doorbell that sleepers watch (wc_wait.h states the contract): the one transport polled, when
 * it has one; several polled transports, or one without a doorbell, mean timed polling. */
static void wc_doorbell_choose(void)
{
    wx_tl_t *net = wc_tl_ofi ? wc_tl_ofi : wc_tl_tcp;
    wx_tl_t *used[] = { wc_tl_used_shm ? wc_tl_shm : NULL, wc_tl_used_net ? net : NULL };
    int n = 0;
    wx_tl_t *polled = NULL;
    for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
        if (used[i]) {
            polled = used[i];
            n++;
        }
    }
    if (n == 0)
        wc_wait_set_doorbell(NULL, false);
    else if (n == 1 && (polled->attr.caps & WX_CAP_DOORBELL))
        wc_wait_set_doorbell(polled, false);
    else
        wc_wait_set_doorbell(NULL, true);
}

/* WEFT_TRANSPORTS: which transports reach the other ranks. Parsed into what reaches the ranks of
 * other nodes (net: tcp or ofi; none for shm only) and whether it reaches every other rank, even on
 * the node (all: self,tcp and self,ofi). auto is resolved here, the same way on every rank of a
 * job whose nodes are alike: tcp when the node has no RDMA device and FI_PROVIDER is unset
 * (wx_tcp_auto_preferred), else ofi; tcp also when Weft was built without libfabric. */
typedef enum { WC_NET_NONE, WC_NET_TCP, WC_NET_OFI } wc_net_t;
typedef struct wc_tlsel {
    wc_net_t net;
    bool all;
    bool autosel;
} wc_tlsel_t;

static wu_status_t wc_tlsel_parse(wc_tlsel_t *sel_p)
{
    const char *v = wu_config_str(WU_CONFIG_TRANSPORTS);
    wc_tlsel_t sel = { WC_NET_NONE, false, false };
    if (!strcmp(v, "auto")) {
        char why[160];
        sel.autosel = true;
        sel.net = wx_tcp_auto_preferred(why, sizeof(why)) || !wx_ofi_built ? WC_NET_TCP
                                                                           : WC_NET_OFI;
    } else if (!strcmp(v, "self,shm") || !strcmp(v, "shm")) {
        sel.net = WC_NET_NONE;
    } else if (!strcmp(v, "shm,tcp")) {
        sel.net = WC_NET_TCP;
    } else if (!strcmp(v, "shm,ofi")) {
        sel.net = WC_NET_OFI;
    } else if (!strcmp(v, "self,tcp") || !strcmp(v, "tcp")) {
        sel = (wc_tlsel_t){ WC_NET_TCP, true, false };
    } else if (!strcmp(v, "self,ofi") || !strcmp(v, "ofi")) {
        sel = (wc_tlsel_t){ WC_NET_OFI, true, false };
    } else {
        wu_log_error("WEFT_TRANSPORTS=%s: expected auto, self,shm, shm,tcp, shm,ofi, self,tcp or "
                     "self,ofi", v);
        return WU_ERR_INVALID;
    }
    *sel_p = sel;
    return WU_OK;
}

/* Will the job use ofi, as far as can be told before wc_nodes_discover? WEFT_TRANSPORTS=self,ofi
 * says so; auto (when it resolves to ofi) and shm,ofi ask the launcher: our mpiexec and Hydra give
 * every rank MPI_LOCALNRANKS (the ranks on its host), Slurm SLURM_STEP_NUM_NODES. Only a hint, used
 * to start libfabric early (wx_ofi_prefetch): two host names may still be one node, and
 * WEFT_NODE_SPLIT makes nodes no launcher knows of; the node table decides. Never true when tcp
 * reaches the other nodes: then libfabric is not even loaded. */
static bool wc_ofi_likely(int size)
{
    wc_tlsel_t sel;
    const char *v;
    if (size < 2 || wc_tlsel_parse(&sel) != WU_OK || sel.net != WC_NET_OFI)
        return false;   /* a bad value is reported later */
    if (sel.all)
        return true;
    if ((v = getenv("MPI_LOCALNRANKS")) && *v) {
        long n = strtol(v, NULL, 10);
        if (n > 0 && n < size)
            return true;
    }
    return (v = getenv("SLURM_STEP_NUM_NODES")) && strtol(v, NULL, 10) > 1;
}

/* ---- nodes ------------------------------------------------------------------------------------ */

/* Which ranks share this rank's node: those that publish the same identity, the host name plus
 * the device and inode of /dev/shm (two network namespaces with one host name but private /dev/shm
 * are two nodes: their shared memory cannot meet). WEFT_NODE_SPLIT=k, a test hook, adds
 * "rank / k" so that one machine plays several nodes (-k: "rank % k", nodes of round-robin ranks). Written by wc_nodes_discover, read-only
 * afterwards. */
#define WC_NODE_ID_MAX 320
#define WC_NODE_NAMED  4          /* nodes named in messages */
typedef struct wc_nodes {
    int  nnodes;
    int *node_of;                 /* [size]: node index of each rank, numbered by first rank */
    int *local;                   /* [nlocal]: the job ranks of this rank's node, ascending */
    int  nlocal, local_rank;
    int  nmachine;                /* ranks on this machine: nlocal, or more under WEFT_NODE_SPLIT */
    char job_id[WI_PMI_KVSNAME_MAX + 16];   /* the job's name plus this node's index, for shm */
    char named[WC_NODE_NAMED][WC_NODE_ID_MAX];   /* identities of the first nodes */
    int  named_ranks[WC_NODE_NAMED];
} wc_nodes_t;
static wc_nodes_t wc_nodes;

static void wc_node_identity(int rank, char *id, size_t len)
{
    char host[256] = "?";
    struct stat st;
    gethostname(host, sizeof(host) - 1);
    int n = stat("/dev/shm", &st) == 0
                ? snprintf(id, len, "%s:%llx:%llx", host, (unsigned long long)st.st_dev,
                           (unsigned long long)st.st_ino)
                : snprintf(id, len, "%s:-", host);
    long split = wu_config_int(WU_CONFIG_NODE_SPLIT);
    if (split != 0 && n > 0 && (size_t)n < len)
        snprintf(id + n, len - (size_t)n, ":sim%ld", split > 0 ? rank / split : rank % -split);
}

/* The length of an identity's machine part: without WEFT_NODE_SPLIT's ":sim<k>". */
static size_t wc_node_machine_len(const char *id)
{
    const char *sim = strstr(id, ":sim");
    return sim ? (size_t)(sim - id) : strlen(id);
}

/* Collective: every rank publishes its identity, fences and reads all (one get per rank: the same
 * count as the ofi addresses, see docs/ofi.md for 10,000 ranks). */
static wu_status_t wc_nodes_discover(int rank, int size)
{
    wu_status_t st = WU_OK;
    char (*ids)[WC_NODE_ID_MAX] = NULL;   /* [nnodes]: each node's identity */
    memset(&wc_nodes, 0, sizeof(wc_nodes));
    wc_nodes.node_of = calloc((size_t)size, sizeof(int));
    wc_nodes.local = calloc((size_t)size, sizeof(int));
    ids = malloc(sizeof(*ids) * (size_t)size);
    if (!wc_nodes.node_of || !wc_nodes.local || !ids) {
        st = WU_ERR_NO_MEMORY;
        goto out;
    }
    char mine[WC_NODE_ID_MAX], id[WC_NODE_ID_MAX];
    wc_node_identity(rank, mine, sizeof(mine));
    if (size > 1 && ((st = wi_pmi_put("node", mine)) != WU_OK || (st = wi_pmi_fence()) != WU_OK))
        goto out;
    for (int r = 0; r < size; r++) {
        if (r == rank) {
            strcpy(id, mine);
        } else if ((st = wi_pmi_get(r, "node", id, sizeof(id))) != WU_OK) {
            wu_log_error("no node identity from rank %d", r);
            goto out;
        }
        int node = 0;
        while (node < wc_nodes.nnodes && strcmp(ids[node], id))
            node++;
        if (node == wc_nodes.nnodes) {
            strcpy(ids[wc_nodes.nnodes++], id);
            if (node < WC_NODE_NAMED)
                strcpy(wc_nodes.named[node], id);
        }
        if (node < WC_NODE_NAMED)
            wc_nodes.named_ranks[node]++;
        wc_nodes.node_of[r] = node;
        size_t m = wc_node_machine_len(mine);
        wc_nodes.nmachine += wc_node_machine_len(id) == m && !strncmp(id, mine, m);
    }
    for (int r = 0; r < size; r++) {
        if (wc_nodes.node_of[r] != wc_nodes.node_of[rank])
            continue;
        if (r == rank)
            wc_nodes.local_rank = wc_nodes.nlocal;
        wc_nodes.local[wc_nodes.nlocal++] = r;
    }
    snprintf(wc_nodes.job_id, sizeof(wc_nodes.job_id), "%s-n%d", wi_pmi_kvsname(),
             wc_nodes.node_of[rank]);
out:
    free(ids);
    return st;
}

int wc_node_count(void)
{
    return wc_nodes.nnodes;
}

int wc_node_of(int rank)
{
    if (!wc_nodes.node_of || rank < 0 || rank >= wc_world.size)
        return -1;
    return wc_nodes.node_of[rank];
}

/* "2 nodes: a (ranks 0-1: 2 ranks), b (2 ranks)" into buf, for messages. */
static const char *wc_nodes_describe(char *buf, size_t len)
{
    int n = snprintf(buf, len, "%d nodes:", wc_nodes.nnodes);
    for (int k = 0; k < wc_nodes.nnodes && k < WC_NODE_NAMED && n > 0 && (size_t)n < len; k++)
        n += snprintf(buf + n, len - (size_t)n, "%s %s (%d ranks)", k ? "," : "",
                      wc_nodes.named[k], wc_nodes.named_ranks[k]);
    if (wc_nodes.nnodes > WC_NODE_NAMED && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, ", ...");
    return buf;
}

/* shm's bootstrap for a node's view: ranks within the node. */
static wu_status_t wc_node_get(int rank, const char *key, char *val, size_t len)
{
    return wi_pmi_get(wc_nodes.local[rank], key, val, len);
}

/* ---- settings that must agree ------------------------------------------------------------ */

/* The protocol settings (scope JOB in wu_config_vars.h: eager limits, fragment sizes, CMA, the
 * transports) decide how both ends of a message behave; ranks that disagree would wait for each
 * other forever in the first rendezvous or collective. Every rank publishes its values with its
 * node identity (the same fence), and every rank but 0 compares them with rank 0's: one get each.
 * A rank that differs stops the job naming the variable, both values and both ranks. */
static wu_status_t wc_settings_put(int size)
{
    char v[512];
    wu_config_job_encode(v, sizeof(v));
    return size > 1 ? wi_pmi_put("cfg", v) : WU_OK;
}

static wu_status_t wc_settings_check(int rank, int size)
{
    char mine[512], root[512], a[64], b[64];
    wu_config_id_t id;
    if (rank == 0 || size == 1)
        return WU_OK;
    wu_config_job_encode(mine, sizeof(mine));
    wu_status_t st = wi_pmi_get(0, "cfg", root, sizeof(root));
    if (st != WU_OK) {
        wu_log_error("no settings from rank 0 (%s)", wu_status_str(st));
        return st;
    }
    st = wu_config_job_diff(mine, root, &id, a, b, sizeof(a));
    if (st == WU_ERR_NOT_FOUND)
        return WU_OK;
    if (st == WU_OK)
        wu_log_error("WEFT_%s is %s on rank %d but %s on rank 0: it chooses a protocol, so it must "
                     "be the same on every rank (docs/tuning.md)", wu_config_desc(id)->name, a,
                     rank, b);
    else
        wu_log_error("rank 0 runs another build of Weft (its settings read \"%s\", ours \"%s\")",
                     root, mine);
    return WU_ERR_INVALID;
}

/* The limits of a job on several nodes: each rank's (derived from its peers' transports) differ,
 * since a node's only rank has no shm peer and nodes may differ in size; collectives choose their
 * algorithm by the limits and the dynamic broadcast sizes packets that other ranks forward, so
 * every rank must use the same. Each publishes its own, and takes the most restrictive of all
 * (one get per rank, as for the node identities). Collective, at start-up, before the progress
 * task runs. */
static wu_status_t wc_limits_agree(wc_ep_t *ep)
{
    wc_limits_t *l = &ep->limits;
    char v[128];
    snprintf(v, sizeof(v), "%zu,%zu,%zu,%zu", l->eager_max, l->max_payload, l->frag_size,
             l->get_bulk_min);
    wu_status_t st = wi_pmi_put("limits", v);
    if (st == WU_OK)
        st = wi_pmi_fence();
    for (int r = 0; r < ep->size && st == WU_OK; r++) {
        if (r == ep->rank)
            continue;
        size_t e, m, f, g;
        if ((st = wi_pmi_get(r, "limits", v, sizeof(v))) != WU_OK)
            break;
        if (sscanf(v, "%zu,%zu,%zu,%zu", &e, &m, &f, &g) != 4) {
            wu_log_error("rank %d published malformed limits \"%s\"", r, v);
            return WU_ERR_INVALID;
        }
        l->eager_max = e < l->eager_max ? e : l->eager_max;
        l->max_payload = m < l->max_payload ? m : l->max_payload;
        l->frag_size = f < l->frag_size ? f : l->frag_size;
        l->get_bulk_min = !g || !l->get_bulk_min ? 0 : g > l->get_bulk_min ? g : l->get_bulk_min;
    }
    if (st != WU_OK)
        wu_log_error("the limits of the job's ranks could not be exchanged (%s)",
                     wu_status_str(st));
    return st;
}

/* Create the transports and choose one per peer: self for the rank itself; by WEFT_TRANSPORTS,
 * shm for the ranks of this node and ofi for the others (auto), shm for all (one node only), or ofi
 * for all. The choice is the same on every rank (the environment and the node table are the
 * job's), so every rank calls the same constructors and the same number of fences: shm is created
 * on every rank when some node has several ranks (a node's only rank fences with the others), ofi
 * on every rank when some peer needs it. */
static wu_status_t wc_transports_open(wc_ep_t *ep, const wx_bootstrap_t *bs)
{
    wc_tlsel_t sel;
    char where[4 * WC_NODE_ID_MAX + 64];
    wu_status_t st = wc_tlsel_parse(&sel);
    if (st != WU_OK)
        return st;
    wc_tl_peer = calloc((size_t)bs->size, sizeof(*wc_tl_peer));
    if (!wc_tl_peer)
        return WU_ERR_NO_MEMORY;
    if ((st = wc_settings_put(bs->size)) != WU_OK ||
        (st = wc_nodes_discover(bs->rank, bs->size)) != WU_OK ||
        (st = wc_settings_check(bs->rank, bs->size)) != WU_OK)
        return st;
    bool multi = wc_nodes.nnodes > 1;
    if (multi && sel.net == WC_NET_NONE) {
        wu_log_error("WEFT_TRANSPORTS=%s, but the ranks are on %s: shared memory cannot reach "
                     "across nodes", wu_config_str(WU_CONFIG_TRANSPORTS),
                     wc_nodes_describe(where, sizeof(where)));
        return WU_ERR_UNSUPPORTED;
    }
    if (sel.net == WC_NET_OFI && (multi || sel.all) && !wx_ofi_built) {
        wu_log_error("WEFT_TRANSPORTS=%s and the ranks are on %s, but this Weft was built without "
                     "libfabric (the ofi transport): use tcp (WEFT_TRANSPORTS=shm,tcp or auto)",
                     wu_config_str(WU_CONFIG_TRANSPORTS), wc_nodes_describe(where, sizeof(where)));
        return WU_ERR_UNSUPPORTED;
    }
    bool use_net = bs->size > 1 && sel.net != WC_NET_NONE && (sel.all || multi);
    bool use_ofi = use_net && sel.net == WC_NET_OFI;
    bool use_tcp = use_net && sel.net == WC_NET_TCP;
    /* Started ahead, on the launcher's word, or now, to overlap shm's set-up. One not needed
     * (two host names, one node) ends here, not later: no libfabric may still be starting when
     * the program exits, perhaps without MPI_Finalize (its destructors would race the thread). */
    if (use_ofi)
        wx_ofi_prefetch(bs->rank, bs->size);
    else
        wx_ofi_prefetch_end();
    bool use_shm = false;
    if (!sel.all)
        for (int r = 0; r < bs->size && !use_shm; r++)
            use_shm = r != bs->rank && wc_nodes.node_of[r] == wc_nodes.node_of[bs->rank];
    /* some node with several ranks: every rank takes part in shm's fences */
    bool shm_any = false;
    if (!sel.all && bs->size > wc_nodes.nnodes)
        shm_any = true;

    if ((st = wx_self_create(bs, wc_ep_deliver, ep, &wc_tl_self)) != WU_OK)
        return st;
    if (shm_any) {
        wx_bootstrap_t nbs = *bs;
        if (multi) {
            nbs.rank = wc_nodes.local_rank;
            nbs.size = wc_nodes.nlocal;
            nbs.job_id = wc_nodes.job_id;
            nbs.get = wc_node_get;
            nbs.world_rank = wc_nodes.local;
            nbs.world_size = bs->size;
        }
        if ((st = wx_shm_create(&nbs, wc_ep_deliver, ep, &wc_tl_shm)) != WU_OK)
            return st;
    }
    if (use_ofi) {
        st = wx_ofi_create(bs, wc_ep_deliver, ep, &wc_tl_ofi);
        if (st != WU_OK) {
            wu_log_error("the ofi transport did not start (WEFT_TRANSPORTS=%s; ranks on %s)",
                         wu_config_str(WU_CONFIG_TRANSPORTS),
                         wc_nodes_describe(where, sizeof(where)));
            return st;
        }
    }
    if (use_tcp) {
        st = wx_tcp_create(bs, wc_ep_deliver, ep, &wc_tl_tcp);
        if (st != WU_OK) {
            wu_log_error("the tcp transport did not start (WEFT_TRANSPORTS=%s; ranks on %s)",
                         wu_config_str(WU_CONFIG_TRANSPORTS),
                         wc_nodes_describe(where, sizeof(where)));
            return st;
        }
    }
    for (int r = 0; r < bs->size; r++) {
        if (r == bs->rank)
            wc_tl_peer[r] = wc_tl_self;
        else if (use_shm && wc_nodes.node_of[r] == wc_nodes.node_of[bs->rank])
            wc_tl_peer[r] = wc_tl_shm;
        else
            wc_tl_peer[r] = use_ofi ? wc_tl_ofi : wc_tl_tcp;
    }
    wc_tl_used_shm = use_shm;
    wc_tl_used_net = use_net;
    return WU_OK;
}

static void wc_transports_close(void)
{
    wx_ofi_prefetch_end();   /* start-up failed before wx_ofi_create took it */
    if (wc_tl_ofi)
        wc_tl_ofi->ops->finalize(wc_tl_ofi);
    if (wc_tl_tcp)
        wc_tl_tcp->ops->finalize(wc_tl_tcp);
    if (wc_tl_shm)
        wc_tl_shm->ops->finalize(wc_tl_shm);
    if (wc_tl_self)
        wc_tl_self->ops->finalize(wc_tl_self);
    wc_tl_ofi = wc_tl_tcp = wc_tl_shm = wc_tl_self = NULL;
    free(wc_tl_peer);
    wc_tl_peer = NULL;
    wc_tl_used_shm = wc_tl_used_net = false;
    free(wc_nodes.node_of);
    free(wc_nodes.local);
    wc_nodes.node_of = wc_nodes.local = NULL;
    wc_nodes.nnodes = 0;
}

wu_status_t wc_init(bool thread_multiple)
{
    wu_status_t st;
    int rank, size;
    bool singleton;

    if ((st = wu_config_init()) != WU_OK)
        return st;   /* each bad variable was named */
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
    if (wc_ofi_likely(size))
        wx_ofi_prefetch(rank, size);   /* libfabric's slow start, behind the fences to come */

    wp_engine_config_t pcfg;
    wp_engine_config_from_env(&pcfg);
    if (!thread_multiple) {
        if (!wu_config_is_set(WU_CONFIG_PROGRESS_IDLE))
            pcfg.idle_threads = false;
        if (!wu_config_is_set(WU_CONFIG_PROGRESS_TIMER))
            pcfg.timer_thread = false;
    }
    wt_thread_set_multi(thread_multiple || pcfg.idle_threads || pcfg.timer_thread);
    if ((st = wp_engine_init(&pcfg)) != WU_OK)
        goto err_pmi;
    wc_ep_t *ep = wc_ep_default();
    st = wc_ep_init(ep, rank, size);
    if (st != WU_OK)
        goto err_pmi;
    ep->unexp_max = (size_t)wu_config_int(WU_CONFIG_UNEXPECTED_MAX);

    wc_wait_spin_set((uint64_t)wu_config_int(WU_CONFIG_SPIN_US));
    wc_wait_spin_max_set((uint64_t)wu_config_int(WU_CONFIG_SPIN_MAX_US));
    wc_wait_init();
    wx_bootstrap_t bs = {
        .rank = rank, .size = size, .job_id = wi_pmi_kvsname(),
        .put = wi_pmi_put, .get = wi_pmi_get, .fence = wi_pmi_fence,
    };
    st = wc_transports_open(ep, &bs);
    if (st != WU_OK)
        goto err_transports;
    for (int r = 0; r < size; r++)
        wc_ep_peer_set(ep, r, wc_tl_peer[r]);
    wc_world.nnodes = wc_nodes.nnodes;
    {
        /* the ranks of this machine share its CPUs, also those of the nodes WEFT_NODE_SPLIT
         * makes of it (counting only the node's ranks, 4 ranks of 2 such nodes on 2 CPUs never
         * yielded: mpi.ofi.nodes2.mt_tags took twice as long) */
        wc_wait_yield_set(wc_wait_yield_mode(), wc_nodes.nmachine);
    }
    wc_doorbell_choose();
    wc_offer_init(wc_tl_used_shm ? wc_tl_shm : NULL);
    wc_wait_set_cpu_tl(wc_tl_used_shm ? wc_tl_shm : NULL);
    wc_ep_start(ep, false);
    if (wc_nodes.nnodes > 1 && (st = wc_limits_agree(ep)) != WU_OK)
        goto err_transports;
    wc_ep_submit(ep);
    const char *net = wc_tl_ofi ? "ofi" : wc_tl_tcp ? "tcp" : NULL;
    wu_debug("core up: rank %d of %d, peers by %s%s%s, eager max %zu, bulk get from %zu", rank,
             size, wc_tl_shm ? "shm" : "", wc_tl_shm && net ? "+" : "",
             net ? net : wc_tl_shm ? "" : "-", ep->limits.eager_max, ep->limits.get_bulk_min);
    return WU_OK;

err_transports:
    wc_wait_set_cpu_tl(NULL);
    wc_offer_fini();
    wc_transports_close();
    wc_ep_fini(ep);
err_pmi:
    wx_ofi_prefetch_end();
    wi_pmi_finalize();
    return st;
}

int wc_wait_yield_mode(void)
{
    static const int mode[] = { -1, 1, 0 };   /* WEFT_WAIT_YIELD's words: auto|1|0 */
    return mode[wu_config_int(WU_CONFIG_WAIT_YIELD)];
}

long wc_machine_ranks(void)
{
    return wc_nodes.nmachine;
}

wu_status_t wc_finalize(void)
{
    wc_ep_t *ep = wc_ep_default();
    if (ep->started) {
        wp_ltask_remove(&ep->ltask);
        ep->started = false;
    }
    wc_dyn_fini();
    wc_wait_set_cpu_tl(NULL);
    wc_offer_fini();
    wc_transports_close();
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

void (*wc_fatal_fn)(wu_status_t st, const char *msg);

void wc_fatal(wu_status_t st, const char *msg)
{
    if (wc_fatal_fn)
        wc_fatal_fn(st, msg);
    wu_log_fatal("%s (%s)", msg, wu_status_str(st));
}

void wc_abort(int code, const char *msg)
{
    wi_pmi_abort(code, msg);
    _exit(code ? code : 1);
}
