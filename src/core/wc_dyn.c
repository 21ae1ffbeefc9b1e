/* Peer ids for processes of other jobs (wc_dyn.h states the contract). */
#include "core/wc_dyn.h"
#include "core/wc_core.h"
#include "thread/wt_thread.h"
#include "transport/sock/wx_sock.h"
#include "pmi/wi_pmi.h"
#include "util/wu_log.h"

#include <unistd.h>

#include <stdio.h>
#include <string.h>

#define WC_DYN_ADDR_MAX 64

/* mu guards everything below; tl is read without it once set (written once, under mu, before
 * any id that uses it is handed out). */
static wt_mutex_t wc_dyn_mu = WT_MUTEX_INITIALIZER;
static wx_tl_t *wc_dyn_tl;
static int wc_dyn_n;
#define WC_DYN_JOB_MAX 160
static struct {
    char addr[WC_DYN_ADDR_MAX];
    int  id;
    int  rank;                        /* in its job; -1 until named */
    char job[WC_DYN_JOB_MAX];
} wc_dyn_tab[WC_EP_DYN_MAX];
static char wc_dyn_myjob[WC_DYN_JOB_MAX];

static int wc_dyn_peer_locked(const char *addr, int *id_p);

/* Inside the transport's progress: a connection's hello. */
static int wc_dyn_resolve(const char *addr, void *arg)
{
    (void)arg;
    int id = -1;
    wt_mutex_lock_always(&wc_dyn_mu);
    if (wc_dyn_peer_locked(addr, &id) != WU_OK)
        id = -1;
    wt_mutex_unlock_always(&wc_dyn_mu);
    return id;
}

static wu_status_t wc_dyn_start_locked(void)
{
    if (wc_dyn_tl)
        return WU_OK;
    wc_ep_t *ep = wc_ep_default();
    wu_status_t st = wx_sock_create(ep->cap, wc_ep_deliver, ep, wc_dyn_resolve, NULL, &wc_dyn_tl);
    if (st != WU_OK)
        return st;
    /* the sockets have no doorbell: a sleeper must poll them too */
    wc_wait_timed_poll();
    return WU_OK;
}

static int wc_dyn_peer_locked(const char *addr, int *id_p)
{
    wu_status_t st = wc_dyn_start_locked();
    if (st != WU_OK)
        return st;
    if (!strcmp(addr, wx_sock_addr(wc_dyn_tl))) {
        *id_p = wc_world.rank;
        return WU_OK;
    }
    for (int i = 0; i < wc_dyn_n; i++)
        if (!strcmp(wc_dyn_tab[i].addr, addr)) {
            *id_p = wc_dyn_tab[i].id;
            return WU_OK;
        }
    if (strlen(addr) >= WC_DYN_ADDR_MAX || wc_dyn_n == WC_EP_DYN_MAX) {
        wu_log_error("cannot add process %.80s: %s", addr,
                     wc_dyn_n == WC_EP_DYN_MAX ? "too many processes of other jobs" : "bad address");
        return WU_ERR_INVALID;
    }
    wc_ep_t *ep = wc_ep_default();
    /* the address first: the id becomes usable (npeers) only in wc_ep_peer_add */
    int id = wc_ep_npeers(ep);
    if ((st = wx_sock_peer_add(wc_dyn_tl, id, addr)) != WU_OK ||
        (st = wc_ep_peer_add(ep, wc_dyn_tl, &id)) != WU_OK)
        return st;
    snprintf(wc_dyn_tab[wc_dyn_n].addr, WC_DYN_ADDR_MAX, "%s", addr);
    wc_dyn_tab[wc_dyn_n].rank = -1;
    wc_dyn_tab[wc_dyn_n].job[0] = '\0';
    wc_dyn_tab[wc_dyn_n++].id = id;
    *id_p = id;
    return WU_OK;
}

wu_status_t wc_dyn_addr(const char **addr_p)
{
    wt_mutex_lock_always(&wc_dyn_mu);
    wu_status_t st = wc_dyn_start_locked();
    if (st == WU_OK)
        *addr_p = wx_sock_addr(wc_dyn_tl);
    wt_mutex_unlock_always(&wc_dyn_mu);
    return st;
}

wu_status_t wc_dyn_peer(const char *addr, int *id_p)
{
    wt_mutex_lock_always(&wc_dyn_mu);
    wu_status_t st = wc_dyn_peer_locked(addr, id_p);
    wt_mutex_unlock_always(&wc_dyn_mu);
    return st;
}

void wc_dyn_fini(void)
{
    wt_mutex_lock_always(&wc_dyn_mu);
    if (wc_dyn_tl)
        wc_dyn_tl->ops->finalize(wc_dyn_tl);
    wc_dyn_tl = NULL;
    wc_dyn_n = 0;
    wt_mutex_unlock_always(&wc_dyn_mu);
}

const char *wc_dyn_job(void)
{
    wt_mutex_lock_always(&wc_dyn_mu);
    if (!wc_dyn_myjob[0]) {
        /* the same in every process of the job, on every host: our mpiexec's job names
         * ("weft-<pid>-<32 random bits>") are unique as they are; another launcher's (Hydra's
         * kvs_<pid>_...) only with the host name, which is then that of each process's host */
        const char *kvs = wi_pmi_kvsname();
        char host[64] = "?";
        gethostname(host, sizeof(host) - 1);
        if (!strncmp(kvs, "weft-", 5))
            snprintf(wc_dyn_myjob, sizeof(wc_dyn_myjob), "%s", kvs);
        else
            snprintf(wc_dyn_myjob, sizeof(wc_dyn_myjob), "%s/%s", host, kvs);
    }
    wt_mutex_unlock_always(&wc_dyn_mu);
    return wc_dyn_myjob;
}

void wc_dyn_peer_name(int id, const char *job, int rank)
{
    wt_mutex_lock_always(&wc_dyn_mu);
    for (int i = 0; i < wc_dyn_n; i++)
        if (wc_dyn_tab[i].id == id) {
            snprintf(wc_dyn_tab[i].job, WC_DYN_JOB_MAX, "%s", job);
            wc_dyn_tab[i].rank = rank;
        }
    wt_mutex_unlock_always(&wc_dyn_mu);
}

int wc_dyn_cmp(int a, int b)
{
    int ws = wc_world.size;
    if (a < ws && b < ws)
        return (a > b) - (a < b);
    const char *ja = NULL, *jb = NULL;
    int ra = a, rb = b;
    const char *mine = wc_dyn_job();
    wt_mutex_lock_always(&wc_dyn_mu);
    if (a < ws)
        ja = mine;
    if (b < ws)
        jb = mine;
    for (int i = 0; i < wc_dyn_n; i++) {
        if (wc_dyn_tab[i].id == a && wc_dyn_tab[i].rank >= 0) {
            ja = wc_dyn_tab[i].job;
            ra = wc_dyn_tab[i].rank;
        }
        if (wc_dyn_tab[i].id == b && wc_dyn_tab[i].rank >= 0) {
            jb = wc_dyn_tab[i].job;
            rb = wc_dyn_tab[i].rank;
        }
    }
    int c = !ja || !jb ? (ja ? -1 : jb ? 1 : (a > b) - (a < b)) : strcmp(ja, jb);
    if (c == 0)
        c = (ra > rb) - (ra < rb);
    wt_mutex_unlock_always(&wc_dyn_mu);
    return c;
}

bool wc_dyn_job_of(int id, char *buf, size_t len, int *rank_p)
{
    if (id < wc_world.size) {
        snprintf(buf, len, "%s", wc_dyn_job());
        *rank_p = id;
        return true;
    }
    bool found = false;
    wt_mutex_lock_always(&wc_dyn_mu);
    for (int i = 0; i < wc_dyn_n && !found; i++)
        if (wc_dyn_tab[i].id == id && wc_dyn_tab[i].rank >= 0) {
            snprintf(buf, len, "%s", wc_dyn_tab[i].job);
            *rank_p = wc_dyn_tab[i].rank;
            found = true;
        }
    wt_mutex_unlock_always(&wc_dyn_mu);
    return found;
}
