/* Communicators: creation helpers, context ids, the library's internal messages, and the calls that
 * query, duplicate, name, compare and free communicators (split/create: wm_comm_split.c;
 * intercommunicators: wm_comm_inter.c). See docs/communicators.md. */
#include "mpi/wm_internal.h"
#include "mpi/wm_coll.h"
#include "mpi/wm_group.h"
#include "mpi/wm_topo.h"
#include "util/wu_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

_Static_assert(sizeof(wm_comm_t) <= WM_OBJ_SLOT, "wm_comm_t must fit an object slot");
_Static_assert(WM_TAG_CTXID == WM_TAG_COMM_BASE + 1 && WM_TAG_DISCONNECT < WM_TAG_COMM_BASE + 256,
               "communicator tags stay in their range of wm_internal.h");
_Static_assert(WM_TAG_USER_BIT > WM_TAG_UB, "user-tagged internal messages stay above user tags");

wm_comm_t wm_comm_world, wm_comm_self;

/* ---- internal messages ---- */

wu_status_t wm_cx_send(const void *buf, size_t len, int world_dst, int tag, uint32_t ctx)
{
    wc_request_t s;
    wu_status_t st = wc_isend(wc_ep_default(), &s, buf, len, world_dst, tag, ctx, WC_SEND_STANDARD);
    if (st != WU_OK)
        return st;
    wc_wait(&s);
    return (wu_status_t)s.error;
}

wu_status_t wm_cx_recv(void *buf, size_t len, int world_src, int tag, uint32_t ctx)
{
    wc_request_t r;
    wu_status_t st = wc_irecv(wc_ep_default(), &r, buf, len, world_src, tag, ctx);
    if (st != WU_OK)
        return st;
    wc_wait(&r);
    return (wu_status_t)r.error;
}

wu_status_t wm_cx_bcast(void *buf, size_t len, const int *ranks, int n, int me, int root, int tag,
                        uint32_t ctx)
{
    int vr = (me - root + n) % n, mask = 1;
    wu_status_t st = WU_OK;
    while (mask < n) {
        if (vr & mask) {
            st = wm_cx_recv(buf, len, ranks[(vr - mask + root) % n], tag, ctx);
            if (st != WU_OK)
                return st;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n && (st = wm_cx_send(buf, len, ranks[(vr + mask + root) % n], tag, ctx)) != WU_OK)
            return st;
    return WU_OK;
}

wu_status_t wm_cx_gather(void *buf, size_t len, const int *ranks, int n, int me, int root, int tag,
                         uint32_t ctx)
{
    if (me != root)
        return wm_cx_send((char *)buf + (size_t)me * len, len, ranks[root], tag, ctx);
    wc_request_t *rq = calloc((size_t)n, sizeof(*rq));
    bool *posted = calloc((size_t)n, sizeof(*posted));
    wu_status_t st = rq && posted ? WU_OK : WU_ERR_NO_MEMORY;
    for (int i = 0; i < n && st == WU_OK; i++)
        if (i != root && (st = wc_irecv(wc_ep_default(), &rq[i], (char *)buf + (size_t)i * len, len, ranks[i], tag, ctx)) == WU_OK)
            posted[i] = true;
    for (int i = 0; i < n && posted; i++) {
        if (!posted[i])
            continue;
        wc_wait(&rq[i]);
        if (rq[i].error != WU_OK && st == WU_OK)
            st = (wu_status_t)rq[i].error;
    }
    free(rq);
    free(posted);
    return st;
}

/* ---- creation and destruction ---- */

/* Releases an info handle the communicator owns, like MPI_Info_free but without raising an error:
 * at MPI_Finalize the info object may already be gone (objects are then destroyed in any order). */
static void wm_comm_info_drop(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return;
    wm_obj_t *o = wm_obj_lookup((uintptr_t)info, WM_OBJ_INFO);
    if (o)
        wm_obj_user_free(o);
}

static void wm_comm_destroy(wm_obj_t *o)
{
    wm_comm_t *c = (wm_comm_t *)o;
    wm_coll_hier_free(c);
    free(c->ranks_mem);
    c->ranks_mem = NULL;
    free(c->topo);
    c->topo = NULL;
    wm_errh_unref(c->errh);
    wm_comm_info_drop(c->info);
    c->info = MPI_INFO_NULL;
    wm_bsend_comm_free(c);
    if (c->session)
        wm_obj_release((wm_obj_t *)c->session);
    c->session = NULL;
}

wm_comm_t *wm_comm_new(const wm_comm_t *parent, uint32_t ctx, const int *local, int n,
                       const int *remote, int rn, bool inter)
{
    size_t total = (size_t)n + (inter ? (size_t)rn : 0);
    int *mem = malloc(sizeof(int) * (total + 1));
    if (!mem)
        return NULL;
    wm_comm_t *d = wm_obj_create(WM_OBJ_COMM, sizeof(*d), wm_comm_destroy);
    if (!d) {
        free(mem);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        mem[i] = local ? local[i] : i;
    if (inter)
        memcpy(mem + n, remote, sizeof(int) * (size_t)rn);
    d->ranks_mem = mem;
    d->ctx = ctx;
    d->size = n;
    d->world_ranks = mem;
    d->rank = wm_ranks_find(mem, n, wc_world.rank);
    d->inter = inter;
    d->remote_size = inter ? rn : n;
    d->remote_world_ranks = inter ? mem + n : mem;
    d->errh = parent->errh;
    wm_errh_ref(d->errh);
    d->session = parent->session;
    if (d->session)
        wm_obj_retain((wm_obj_t *)d->session);
    d->info = MPI_INFO_NULL;
    d->name[0] = '\0';
    return d;
}

int *wm_comm_local_ranks(const wm_comm_t *c)
{
    int *r = malloc(sizeof(int) * ((size_t)c->size + 1));
    if (r)
        for (int i = 0; i < c->size; i++)
            r[i] = wm_comm_world_rank(c, i);
    return r;
}

/* ---- context ids ---- */

/* Context ids come from the job-wide counter (wc_ctx_alloc: no two calls anywhere in the job get
 * the same ids), so agreeing on one only takes one process allocating it and telling the others:
 * the leader, rank 0 of c (of an intercommunicator: the lower in world rank of the two groups'
 * rank 0), sends it to every other member of c (both groups) on c's collective context. Collective
 * calls on one communicator are ordered alike on every member and messages of one (context,
 * source, tag) do not overtake, so each member receives the id of this very call, whatever other
 * threads do on other communicators at the same time. */
static int wm_ctx_leader(const wm_comm_t *c)
{
    int l = wm_comm_world_rank(c, 0);
    if (c->inter && wm_world_lt(c->remote_world_ranks[0], l))
        l = c->remote_world_ranks[0];
    return l;
}

/* The leader's sends: to every other member of c. */
static wu_status_t wm_ctx_send_all(wm_comm_t *c, const uint32_t *ctx, wc_request_t *reqs, int *nreq)
{
    int n = 0;
    uint32_t coll = c->ctx | WM_CTX_COLL;
    for (int side = 0; side < (c->inter ? 2 : 1); side++) {
        int cnt = side ? c->remote_size : c->size;
        for (int r = 0; r < cnt; r++) {
            int w = side ? c->remote_world_ranks[r] : wm_comm_world_rank(c, r);
            if (w == wc_world.rank)
                continue;
            wu_status_t st = wc_isend(wc_ep_default(), &reqs[n], ctx, sizeof(*ctx), w, WM_TAG_CTXID, coll, WC_SEND_STANDARD);
            if (st != WU_OK) {
                *nreq = n;
                return st;
            }
            n++;
        }
    }
    *nreq = n;
    return WU_OK;
}

/* Does c hold processes of several jobs (dynamic processes)? */
bool wm_comm_multi_job(const wm_comm_t *c)
{
    for (int side = 0; side < (c->inter ? 2 : 1); side++) {
        int n = side ? c->remote_size : c->size;
        for (int r = 0; r < n; r++)
            if ((side ? c->remote_world_ranks[r] : wm_comm_world_rank(c, r)) >= wc_world.size)
                return true;
    }
    return false;
}

/* A context id free in every job of c (docs/dynamic.md, "Context ids across jobs"): each job's
 * counter is its own, so the leader proposes an id taken from its job's counter and one
 * representative per other job (its member of lowest rank there) takes the first id at or above
 * it from its job's (wc_ctx_alloc_min). When all answer the proposal itself, it is free
 * everywhere; otherwise the leader proposes again from the highest answer. Every id taken on
 * the way stays unused, which costs nothing but ids. */
static uint32_t wm_ctx_agree_jobs(wm_comm_t *c, int leader)
{
    wc_ep_t *ep = wc_ep_default();
    uint32_t coll = c->ctx | WM_CTX_COLL, msg[2];
    int total = c->size + (c->inter ? c->remote_size : 0);
    int *members = malloc(sizeof(int) * (size_t)total);
    int *rank = malloc(sizeof(int) * (size_t)total);
    char (*job)[160] = malloc(160 * (size_t)total);
    if (!members || !rank || !job)
        wu_log_fatal("no memory for a context id agreement");
    /* every member's (job, rank there): the same facts on every member, so all choose the same
     * representatives (a process of this job reached through another connection included) */
    int li = -1, me = -1;
    for (int i = 0; i < total; i++) {
        members[i] = i < c->size ? wm_comm_world_rank(c, i) : c->remote_world_ranks[i - c->size];
        if (!wc_dyn_job_of(members[i], job[i], sizeof(job[i]), &rank[i]))
            wu_log_fatal("a process of another job that was never named (peer id %d)", members[i]);
        if (members[i] == leader)
            li = i;
        if (members[i] == wc_world.rank)
            me = i;
    }
    /* representative of its job: not the leader's job, and the lowest rank of it in c */
    bool *rep = calloc((size_t)total, sizeof(bool));
    if (!rep)
        wu_log_fatal("no memory for a context id agreement");
    for (int i = 0; i < total; i++) {
        rep[i] = strcmp(job[i], job[li]) != 0;
        for (int k = 0; k < total && rep[i]; k++)
            if (k != i && !strcmp(job[k], job[i]) && rank[k] < rank[i])
                rep[i] = false;
    }
    uint32_t cand = 0;
    if (leader != wc_world.rank) {
        for (;;) {
            wm_cx_recv(msg, sizeof(msg), leader, WM_TAG_CTXID, coll);
            if (msg[1] || !rep[me]) {
                cand = msg[0];
                break;
            }
            msg[0] = wc_ctx_alloc_min(ep, 2, msg[0]);
            wm_cx_send(msg, sizeof(msg), leader, WM_TAG_CTXID, coll);
        }
    } else {
        cand = wc_ctx_alloc_min(ep, 2, 0);
        for (;;) {
            uint32_t hi = cand;
            bool agreed = true;
            msg[0] = cand;
            msg[1] = 0;
            for (int k = 0; k < total; k++)
                if (rep[k])
                    wm_cx_send(msg, sizeof(msg), members[k], WM_TAG_CTXID, coll);
            for (int k = 0; k < total; k++) {
                if (!rep[k])
                    continue;
                uint32_t ans[2];
                wm_cx_recv(ans, sizeof(ans), members[k], WM_TAG_CTXID, coll);
                agreed &= ans[0] == cand;
                hi = ans[0] > hi ? ans[0] : hi;
            }
            if (agreed)
                break;
            cand = wc_ctx_alloc_min(ep, 2, hi);
        }
        msg[0] = cand;
        msg[1] = 1;
        for (int i = 0; i < total; i++)
            if (members[i] != wc_world.rank)
                wm_cx_send(msg, sizeof(msg), members[i], WM_TAG_CTXID, coll);
    }
    free(rep);
    free(job);
    free(rank);
    free(members);
    return cand;
}

uint32_t wm_ctx_agree(wm_comm_t *c)
{
    uint32_t ctx = 0;
    int leader = wm_ctx_leader(c);
    if (WU_UNLIKELY(wm_comm_multi_job(c)))
        return wm_ctx_agree_jobs(c, leader);
    if (leader != wc_world.rank) {
        wm_cx_recv(&ctx, sizeof(ctx), leader, WM_TAG_CTXID, c->ctx | WM_CTX_COLL);
        return ctx;
    }
    ctx = wc_ctx_alloc(wc_ep_default(), 2);
    int total = c->size + (c->inter ? c->remote_size : 0), n = 0;
    wc_request_t one, *reqs = total > 1 ? calloc((size_t)total, sizeof(*reqs)) : &one;
    if (!reqs) {
        /* no memory for the array: one send at a time */
        wc_request_t s;
        for (int side = 0; side < (c->inter ? 2 : 1); side++)
            for (int r = 0; r < (side ? c->remote_size : c->size); r++) {
                int w = side ? c->remote_world_ranks[r] : wm_comm_world_rank(c, r);
                if (w != wc_world.rank && wc_isend(wc_ep_default(), &s, &ctx, sizeof(ctx), w, WM_TAG_CTXID,
                                                   c->ctx | WM_CTX_COLL, WC_SEND_STANDARD) == WU_OK)
                    wc_wait(&s);
            }
        return ctx;
    }
    wm_ctx_send_all(c, &ctx, reqs, &n);
    for (int i = 0; i < n; i++)
        wc_wait(&reqs[i]);
    if (reqs != &one)
        free(reqs);
    return ctx;
}

/* ---- queries ---- */

/* MPI_<NAME>(comm, int *ARG): *ARG = VALUE of the checked communicator c. */
#define WM_COMM_QUERY(NAME, ARG, VALUE)                                        \
    int wm_impl_##NAME(MPI_Comm comm, int *ARG)                                \
    {                                                                          \
        WM_COMM_CHECK(#NAME, comm, c);                                         \
        if (!ARG)                                                              \
            return wm_error(c, MPI_ERR_ARG, #NAME, #ARG " is NULL");           \
        *ARG = (VALUE);                                                        \
        return MPI_SUCCESS;                                                    \
    }

WM_COMM_QUERY(MPI_Comm_rank, rank, WU_UNLIKELY(c->tcomm) ? wm_tc_rank(c) : c->rank)
WM_COMM_QUERY(MPI_Comm_size, size, WU_UNLIKELY(c->tcomm) ? wm_tc_size(c) : c->size)
WM_COMM_QUERY(MPI_Comm_test_inter, flag, c->inter)

int wm_impl_MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Comm_remote_size";
    WM_COMM_CHECK(fn, comm, c);
    if (!c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "%s is not an intercommunicator", c->name);
    if (!size)
        return wm_error(c, MPI_ERR_ARG, fn, "size is NULL");
    *size = c->remote_size;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_get_parent(MPI_Comm *parent)
{
    static const char fn[] = "MPI_Comm_get_parent";
    WM_CHECK_INIT(fn);
    if (!parent)
        return wm_error(NULL, MPI_ERR_ARG, fn, "parent is NULL");
    *parent = wm_dpm_parent();   /* MPI_COMM_NULL unless spawned (wm_dpm.c) */
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char fn[] = "MPI_Comm_compare";
    WM_CHECK_INIT(fn);
    wm_comm_t *a = wm_comm_get(comm1), *b = wm_comm_get(comm2);
    if (!a || !b)
        return wm_error(a ? a : b, MPI_ERR_COMM, fn, "invalid communicator %p (%s)",
                        (void *)(a ? comm2 : comm1), a ? "comm2" : "comm1");
    if (!result)
        return wm_error(a, MPI_ERR_ARG, fn, "result is NULL");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->inter != b->inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int *la = wm_comm_local_ranks(a), *lb = wm_comm_local_ranks(b);
    int res = la && lb ? wm_ranks_compare(la, a->size, lb, b->size) : -1;
    free(la);
    free(lb);
    if (res < 0)
        return wm_error(a, MPI_ERR_NO_MEM, fn, "no memory");
    if (a->inter && res != MPI_UNEQUAL) {
        int r2 = wm_ranks_compare(a->remote_world_ranks, a->remote_size, b->remote_world_ranks,
                                  b->remote_size);
        if (r2 == MPI_UNEQUAL || (r2 == MPI_SIMILAR && res == MPI_IDENT))
            res = r2;
    }
    *result = res == MPI_IDENT ? MPI_CONGRUENT : res;
    return MPI_SUCCESS;
}

/* ---- names ---- */

int wm_impl_MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char fn[] = "MPI_Comm_set_name";
    WM_COMM_CHECK(fn, comm, c);
    if (!comm_name)
        return wm_error(c, MPI_ERR_ARG, fn, "comm_name is NULL");
    /* longer names are truncated (MPI 4.1 section 7.8) */
    snprintf(c->name, sizeof(c->name), "%s", comm_name);
    return MPI_SUCCESS;
}

/* MPI 4.1 (section 7.8, change B.1.2 item 18): MPI_COMM_NULL is a valid argument, named
 * "MPI_COMM_NULL"; any other invalid handle is MPI_ERR_COMM. */
int wm_impl_MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char fn[] = "MPI_Comm_get_name";
    if (comm == MPI_COMM_NULL) {
        WM_CHECK_INIT(fn);
        if (!comm_name || !resultlen)
            return wm_error(NULL, MPI_ERR_ARG, fn, "%s is NULL", comm_name ? "resultlen" : "comm_name");
        strcpy(comm_name, "MPI_COMM_NULL");
        *resultlen = (int)strlen(comm_name);
        return MPI_SUCCESS;
    }
    WM_COMM_CHECK(fn, comm, c);
    if (!comm_name || !resultlen)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", comm_name ? "resultlen" : "comm_name");
    size_t n = strnlen(c->name, sizeof(c->name) - 1);
    memcpy(comm_name, c->name, n);
    comm_name[n] = '\0';
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

/* ---- info hints ---- */

/* A copy of info for a communicator to own (MPI_INFO_NULL stays so). The info functions raise
 * their own errors; this returns the code. */
int wm_comm_info_copy(MPI_Info info, MPI_Info *out)
{
    *out = MPI_INFO_NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    return PMPI_Info_dup(info, out);
}

int wm_impl_MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char fn[] = "MPI_Comm_set_info";
    WM_COMM_CHECK(fn, comm, c);
    MPI_Info copy;
    int rc = wm_comm_info_copy(info, &copy);
    if (rc != MPI_SUCCESS)
        return wm_error(c, MPI_ERR_INFO, fn, "the info argument could not be copied");
    MPI_Info old = c->info;
    c->info = copy;
    wm_comm_info_drop(old);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Comm_get_info";
    WM_COMM_CHECK(fn, comm, c);
    if (!info_used)
        return wm_error(c, MPI_ERR_ARG, fn, "info_used is NULL");
    int rc = c->info != MPI_INFO_NULL ? PMPI_Info_dup(c->info, info_used) : PMPI_Info_create(info_used);
    if (rc != MPI_SUCCESS)
        return wm_error(c, MPI_ERR_INFO, fn, "no info object for the hints");
    return MPI_SUCCESS;
}

/* ---- duplication ---- */

/* Whether hint `key` of info is "true" (MPI_INFO_NULL, a missing key or another value: false). */
static bool wm_comm_hint_true(MPI_Info info, const char *key)
{
    char val[8];
    int len = (int)sizeof(val), flag = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get_string(info, key, &len, val, &flag) != MPI_SUCCESS ||
        !flag)
        return false;
    return strcasecmp(val, "true") == 0;
}

/* Context-id bits a new communicator with these hints gets. With mpi_assert_no_any_source and
 * mpi_assert_no_any_tag the communicator is matched exactly (WC_CTX_EXACT): an unexpected message
 * is indexed once instead of four times, and the MPI layer refuses wildcards on it. The standard
 * asks for the same hints on every member, so every member computes the same bits; hints set
 * later by MPI_Comm_set_info are recorded but do not change the context id of a live
 * communicator. mpi_assert_allow_overtaking has no faster path here: one ring per pair delivers
 * in order at no cost, so it is accepted and recorded only. */
uint32_t wm_comm_ctx_hints(MPI_Info info)
{
    return wm_comm_hint_true(info, "mpi_assert_no_any_source") &&
                   wm_comm_hint_true(info, "mpi_assert_no_any_tag")
               ? WC_CTX_EXACT
               : 0;
}

/* A duplicate of c with context id ctx (0: not known yet), hints `info` (copied), c's attributes
 * copied. Returns an MPI error code (raised on c). */
static int wm_comm_dup_obj(const char *fn, wm_comm_t *c, uint32_t ctx, MPI_Info info, bool use_info,
                           wm_comm_t **out)
{
    wm_comm_t *d = wm_comm_new(c, ctx, c->world_ranks, c->size, c->remote_world_ranks, c->remote_size,
                               c->inter);
    if (!d)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    int rc = wm_comm_info_copy(use_info ? info : c->info, &d->info);
    /* a duplicate keeps the topology (MPI 4.1 7.4.2) */
    if (rc == MPI_SUCCESS && c->topo && !(d->topo = wm_topo_dup(c->topo)))
        rc = wm_error_code(MPI_ERR_NO_MEM, fn, "no memory for the topology");
    if (rc == MPI_SUCCESS)
        rc = wm_attr_copy_all(&c->obj, &d->obj);
    if (rc != MPI_SUCCESS) {
        wm_obj_user_free(&d->obj);
        return wm_error_raise(c, rc);
    }
    *out = d;
    return MPI_SUCCESS;
}

static int wm_comm_dup_common(const char *fn, MPI_Comm comm, MPI_Info info, bool use_info,
                              MPI_Comm *newcomm)
{
    WM_COMM_CHECK(fn, comm, c);
    if (WU_UNLIKELY(c->tcomm))
        return wm_tc_dup(fn, c, newcomm);   /* hints are not used on a threadcomm */
    if (!newcomm)
        return wm_error(c, MPI_ERR_ARG, fn, "newcomm is NULL");
    /* the context id first: every member takes part even if its copy fails below */
    uint32_t ctx = wm_ctx_agree(c);
    wm_comm_t *d;
    int rc = wm_comm_dup_obj(fn, c, ctx, info, use_info, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    d->ctx |= wm_comm_ctx_hints(d->info);
    *newcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return wm_comm_dup_common("MPI_Comm_dup", comm, MPI_INFO_NULL, false, newcomm);
}

int wm_impl_MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    return wm_comm_dup_common("MPI_Comm_dup_with_info", comm, info, true, newcomm);
}

/* Comm_idup: the new communicator exists at once; its context id is what the request waits for.
 * A member other than the leader posts a receive of the id straight into the new communicator
 * (the request is an ordinary receive request of the MPI layer, completed and retired by the wait
 * and test calls); the leader allocates the id, starts its sends detached (they free themselves)
 * and returns a request that is already complete. The request names both communicators, so the
 * parent may be freed before it completes. */
typedef struct wm_ctx_send {
    wc_request_t req;
    uint32_t ctx;
} wm_ctx_send_t;

static void wm_ctx_send_done(wc_request_t *req)
{
    free(WU_CONTAINER_OF(req, wm_ctx_send_t, req));
}

static int wm_comm_idup_common(const char *fn, MPI_Comm comm, MPI_Info info, bool use_info,
                               MPI_Comm *newcomm, MPI_Request *request)
{
    WM_COMM_CHECK(fn, comm, c);
    if (!newcomm || !request)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", newcomm ? "request" : "newcomm");
    wm_request_t *r = wm_request_alloc();
    if (!r)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
    wm_comm_t *d;
    int rc = wm_comm_dup_obj(fn, c, 0, info, use_info, &d);
    if (rc != MPI_SUCCESS) {
        wm_request_release(r);
        return rc;
    }
    r->comm = c;
    r->type = MPI_BYTE;
    r->active = true;
    wm_request_use(r, WM_REQ_OBJ_COMM, &c->obj);
    wm_request_use(r, WM_REQ_OBJ_TYPE, &d->obj);
    uint32_t coll = c->ctx | WM_CTX_COLL;
    int leader = wm_ctx_leader(c);
    wu_status_t st = WU_OK;
    if (leader != wc_world.rank) {
        r->kind = WM_REQ_RECV;
        r->buf = &d->ctx;
        r->count = sizeof(d->ctx);
        r->peer = c->inter ? wm_comm_peer_rank(c, leader) : wm_comm_local_rank(c, leader);
        r->tag = WM_TAG_CTXID;
        st = wc_irecv(wc_ep_default(), &r->core, &d->ctx, sizeof(d->ctx), leader, WM_TAG_CTXID, coll);
    } else {
        r->kind = WM_REQ_DONE;
        d->ctx = wc_ctx_alloc(wc_ep_default(), 2) | wm_comm_ctx_hints(d->info);
        for (int side = 0; side < (c->inter ? 2 : 1) && st == WU_OK; side++) {
            for (int i = 0; i < (side ? c->remote_size : c->size) && st == WU_OK; i++) {
                int w = side ? c->remote_world_ranks[i] : wm_comm_world_rank(c, i);
                if (w == wc_world.rank)
                    continue;
                wm_ctx_send_t *s = calloc(1, sizeof(*s));
                if (!s) {
                    st = WU_ERR_NO_MEMORY;
                    break;
                }
                s->ctx = d->ctx;
                st = wc_isend(wc_ep_default(), &s->req, &s->ctx, sizeof(s->ctx), w, WM_TAG_CTXID, coll, WC_SEND_STANDARD);
                if (st == WU_OK)
                    wc_request_detach(&s->req, wm_ctx_send_done);
                else
                    free(s);
            }
        }
    }
    if (st != WU_OK) {
        /* a local failure (no memory): the job cannot agree on this communicator any more */
        wm_request_release(r);
        wm_obj_user_free(&d->obj);
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    }
    *newcomm = wm_comm_handle(d);
    *request = wm_request_handle(r);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return wm_comm_idup_common("MPI_Comm_idup", comm, MPI_INFO_NULL, false, newcomm, request);
}

int wm_impl_MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                    MPI_Request *request)
{
    return wm_comm_idup_common("MPI_Comm_idup_with_info", comm, info, true, newcomm, request);
}

/* ---- free ---- */

/* The communicator argument of Comm_free/Comm_disconnect: a valid user communicator. */
static int wm_comm_user_arg(const char *fn, MPI_Comm *comm, wm_comm_t **c_p)
{
    if (!comm)
        return wm_error(NULL, MPI_ERR_ARG, fn, "comm is NULL");
    wm_comm_t *c = wm_comm_get(*comm);
    if (!c)
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator %p", (void *)*comm);
    if (c->obj.predefined)
        return wm_error(c, MPI_ERR_COMM, fn, "%s is predefined and cannot be freed", c->name);
    *c_p = c;
    return MPI_SUCCESS;
}

/* The user's handle goes: attributes are deleted (a failing callback fails the call), then the
 * handle. Pending requests on c keep it alive (the collector): the free may come first. */
static int wm_comm_user_release(wm_comm_t *c, MPI_Comm *comm)
{
    int rc = wm_attr_delete_all(&c->obj);
    if (rc != MPI_SUCCESS)
        return wm_error_raise(c, rc);
    wm_obj_user_free(&c->obj);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_free(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_free";
    WM_CHECK_INIT(fn);
    wm_comm_t *c;
    int rc = wm_comm_user_arg(fn, comm, &c);
    if (!rc && WU_UNLIKELY(c->tcomm))
        return wm_tc_comm_free(fn, c, comm);
    return rc ? rc : wm_comm_user_release(c, comm);
}

/* ---- disconnect ---- */

static void wm_disc_mark(wm_obj_t *o, void *arg)
{
    struct { wm_obj_t *target; bool found; } *s = arg;
    if (o == s->target)
        s->found = true;
}

/* Comm_disconnect: every request still naming c (buffered sends, freed requests: the application
 * must have completed its own) completes first, then the members synchronize (so what they sent is
 * matched), then c is freed like Comm_free. */
int wm_impl_MPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char fn[] = "MPI_Comm_disconnect";
    WM_CHECK_INIT(fn);
    wm_comm_t *c;
    int rc = wm_comm_user_arg(fn, comm, &c);
    if (rc)
        return rc;
    struct { wm_obj_t *target; bool found; } s = { &c->obj, true };
    wc_idle_t idle;
    wc_idle_init(&idle);
    for (;;) {
        s.found = false;
        wm_request_scan_objs(wm_disc_mark, &s);
        if (!s.found)
            break;
        if (!wc_progress())
            wc_idle_block(&idle, NULL, 0);
    }
    wu_status_t st = WU_OK;
    if (!c->inter) {
        wm_barrier(c);
    } else {
        int *local = wm_comm_local_ranks(c);
        char dummy = 0, in = 0;
        if (!local)
            return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory");
        st = wm_cx_gather(&dummy, 0, local, c->size, c->rank, 0, WM_TAG_DISCONNECT, c->ctx | WM_CTX_COLL);
        if (st == WU_OK)
            st = wm_inter_swap(c, &dummy, 1, &in, 1, local);
        free(local);
    }
    if (st != WU_OK)
        return wm_error(c, wm_status_to_class(st), fn, "%s", wu_status_str(st));
    return wm_comm_user_release(c, comm);
}
