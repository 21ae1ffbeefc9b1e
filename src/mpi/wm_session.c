/* Sessions: MPI_Session_init/finalize, their information, process sets, error handlers, and the
 * communicators made from groups without a parent (MPI_Comm_create_from_group,
 * MPI_Intercomm_create_from_groups). docs/sessions.md.
 *
 * Process sets (the same list, in this order, in every process):
 *   mpi://WORLD         every process of the job
 *   mpi://SELF          the calling process
 *   weft://node         the processes on the caller's node (the core's node table, wc_node_of:
 *                       the nodes that decide shm or ofi, docs/ofi.md; WEFT_NODE_SPLIT ones too)
 *   weft://node/<k>     the processes of node k, for k = 0 .. nodes - 1 (numbered by first rank)
 * Names are compared exactly, except the "mpi://" ones, whose case is ignored.
 *
 * Concurrency contract: wm_session.h. The entry points keep no state of their own beyond the
 * objects they create.
 */
#include "mpi/wm_internal.h"
#include "mpi/wm_errhandler.h"
#include "mpi/wm_group.h"
#include "mpi/wm_info.h"
#include "mpi/wm_session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define WM_PSET_FIXED 3   /* WORLD, SELF, node; then one per node */

static void wm_session_destroy(wm_obj_t *o)
{
    wm_session_t *s = (wm_session_t *)o;
    wm_errh_unref(s->errh);
    s->errh = MPI_ERRORS_ARE_FATAL;
    if (s->info != MPI_INFO_NULL)
        PMPI_Info_free(&s->info);
    wm_bsend_session_free(s);
}

/* An error of class cls in a call on session s (its handler), or on no session (handler eh). */
WU_PRINTF(4, 5)
static int wm_session_error(wm_session_t *s, int cls, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[MPI_MAX_ERROR_STRING];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int code = wm_error_code(cls, fn, "%s", msg);
    if (!s)
        return wm_error_raise(NULL, code);
    return wm_error_eh(s->errh, (MPI_Session)s->obj.handle, code);
}

/* The session argument of an entry point: declares `wm_session_t *s` or returns MPI_ERR_SESSION
 * (raised on MPI_COMM_SELF: there is no session to take it). */
#define WM_SESSION_CHECK(fn, h, s)                                                        \
    WM_CHECK_INIT(fn);                                                                    \
    wm_session_t *s = wm_session_get(h);                                                  \
    if (WU_UNLIKELY(!s))                                                                  \
        return wm_error(NULL, MPI_ERR_SESSION, fn, "invalid session %p", (void *)(h))

/* ---- init and finalize ---- */

int wm_impl_MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    int bad = wm_errh_check(errhandler, WM_ERRH_SESSION);
    if (bad != MPI_SUCCESS)   /* no handler to take it: the default one */
        return wm_error_eh(MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL,
                           wm_error_code(bad, fn, "errhandler %p is not a session error handler",
                                         (void *)errhandler));
    MPI_Errhandler eh = errhandler;
    if (!session)
        return wm_error_eh(eh, MPI_SESSION_NULL, wm_error_code(MPI_ERR_ARG, fn, "session is NULL"));
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_error_eh(eh, MPI_SESSION_NULL,
                           wm_error_code(MPI_ERR_INFO, fn, "invalid info %p", (void *)info));
    int level;
    int rc = wm_life_session_open(fn, eh, &level);
    if (rc != MPI_SUCCESS)
        return rc;
    wm_session_t *s = wm_obj_create(WM_OBJ_SESSION, sizeof(*s), wm_session_destroy);
    if (!s) {
        wm_life_session_close();
        return wm_error_eh(eh, MPI_SESSION_NULL,
                           wm_error_code(MPI_ERR_NO_MEM, fn, "no memory for a session"));
    }
    s->errh = errhandler;
    wm_errh_ref(errhandler);
    s->thread_level = level;
    s->info = MPI_INFO_NULL;
    if (info != MPI_INFO_NULL && (rc = PMPI_Info_dup(info, &s->info)) != MPI_SUCCESS) {
        s->info = MPI_INFO_NULL;
        wm_obj_user_free(&s->obj);
        wm_life_session_close();
        return wm_error_eh(eh, MPI_SESSION_NULL, rc);
    }
    *session = (MPI_Session)s->obj.handle;
    return MPI_SUCCESS;
}

/* The standard makes completing every operation of the session's communicators the program's
 * duty before this call, and lets it synchronize; it does not: nothing of the session's is
 * pending in the library once the program has done its part. Groups and communicators still
 * holding the session keep the object (not the handle) alive. */
int wm_impl_MPI_Session_finalize(MPI_Session *session)
{
    static const char fn[] = "MPI_Session_finalize";
    if (!session)
        return wm_error(NULL, MPI_ERR_ARG, fn, "session is NULL");
    WM_SESSION_CHECK(fn, *session, s);
    wm_obj_user_free(&s->obj);
    *session = MPI_SESSION_NULL;
    wm_life_session_close();
    return MPI_SUCCESS;
}

static const char *wm_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

/* info_used: the keys given to MPI_Session_init, then "thread_level" as provided (MPI 4.1 11.3.1:
 * the thread support level is reported under that key). */
int wm_impl_MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Session_get_info";
    WM_SESSION_CHECK(fn, session, s);
    if (!info_used)
        return wm_session_error(s, MPI_ERR_ARG, fn, "info_used is NULL");
    MPI_Info in;
    int rc = s->info != MPI_INFO_NULL ? PMPI_Info_dup(s->info, &in) : PMPI_Info_create(&in);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(in, "thread_level", wm_level_name(s->thread_level));
    if (rc != MPI_SUCCESS)
        return wm_session_error(s, MPI_ERR_NO_MEM, fn, "no memory for the info object");
    *info_used = in;
    return MPI_SUCCESS;
}

/* ---- process sets ---- */

static int wm_pset_count(void)
{
    return WM_PSET_FIXED + wc_node_count();
}

/* The name of pset i (0 <= i < wm_pset_count()) into buf. */
static void wm_pset_name(int i, char *buf, size_t len)
{
    static const char *const fixed[WM_PSET_FIXED] = { "mpi://WORLD", "mpi://SELF", "weft://node" };
    if (i < WM_PSET_FIXED)
        snprintf(buf, len, "%s", fixed[i]);
    else
        snprintf(buf, len, "weft://node/%d", i - WM_PSET_FIXED);
}

/* The members of the pset named name, as world ranks in increasing order: a malloc'd array
 * (*ranks_p) of *n_p entries. MPI_SUCCESS, MPI_ERR_ARG (no such pset) or MPI_ERR_NO_MEM. */
static int wm_pset_members(const char *name, int **ranks_p, int *n_p)
{
    int node = -2;   /* -2: WORLD, -1: SELF, else a node */
    if (strcasecmp(name, "mpi://WORLD") == 0) {
        node = -2;
    } else if (strcasecmp(name, "mpi://SELF") == 0) {
        node = -1;
    } else if (strcmp(name, "weft://node") == 0) {
        node = wc_node_of(wc_world.rank);
    } else if (strncmp(name, "weft://node/", 12) == 0) {
        const char *d = name + 12;
        char *end;
        long k = strtol(d, &end, 10);
        if (*d < '0' || *d > '9' || *end || k < 0 || k >= wc_node_count() ||
            (d[0] == '0' && d[1]))
            return MPI_ERR_ARG;
        node = (int)k;
    } else {
        return MPI_ERR_ARG;
    }
    int *r = malloc(sizeof(int) * ((size_t)wc_world.size + 1));
    if (!r)
        return MPI_ERR_NO_MEM;
    int n = 0;
    if (node == -1)
        r[n++] = wc_world.rank;
    else
        for (int w = 0; w < wc_world.size; w++)
            if (node == -2 || wc_node_of(w) == node)
                r[n++] = w;
    *ranks_p = r;
    *n_p = n;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char fn[] = "MPI_Session_get_num_psets";
    WM_SESSION_CHECK(fn, session, s);
    if (!npset_names)
        return wm_session_error(s, MPI_ERR_ARG, fn, "npset_names is NULL");
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_session_error(s, MPI_ERR_INFO, fn, "invalid info %p", (void *)info);
    *npset_names = wm_pset_count();
    return MPI_SUCCESS;
}

/* *pset_len 0: only the length is returned (with the terminating null, MPI 4.1 11.3.2); else up
 * to *pset_len - 1 characters and a null are written, and *pset_len becomes the full length. */
int wm_impl_MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                                     char *pset_name)
{
    static const char fn[] = "MPI_Session_get_nth_pset";
    WM_SESSION_CHECK(fn, session, s);
    if (!pset_len)
        return wm_session_error(s, MPI_ERR_ARG, fn, "pset_len is NULL");
    if (*pset_len < 0)
        return wm_session_error(s, MPI_ERR_ARG, fn, "pset_len %d is negative", *pset_len);
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_session_error(s, MPI_ERR_INFO, fn, "invalid info %p", (void *)info);
    int count = wm_pset_count();
    if (n < 0 || n >= count)
        return wm_session_error(s, MPI_ERR_ARG, fn, "n %d is not in 0..%d", n, count - 1);
    char name[64];
    wm_pset_name(n, name, sizeof(name));
    int len = (int)strlen(name);
    if (*pset_len > 0) {
        if (!pset_name)
            return wm_session_error(s, MPI_ERR_ARG, fn, "pset_name is NULL");
        int k = len < *pset_len - 1 ? len : *pset_len - 1;
        memcpy(pset_name, name, (size_t)k);
        pset_name[k] = '\0';
    }
    *pset_len = len + 1;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fn[] = "MPI_Session_get_pset_info";
    WM_SESSION_CHECK(fn, session, s);
    if (!pset_name || !info)
        return wm_session_error(s, MPI_ERR_ARG, fn, "%s is NULL", info ? "pset_name" : "info");
    int *ranks, n;
    int rc = wm_pset_members(pset_name, &ranks, &n);
    if (rc != MPI_SUCCESS)
        return wm_session_error(s, rc, fn, rc == MPI_ERR_ARG ? "no process set named \"%.64s\""
                                                             : "no memory (pset \"%.64s\")", pset_name);
    free(ranks);
    char size[16];
    snprintf(size, sizeof(size), "%d", n);
    MPI_Info in;
    rc = PMPI_Info_create(&in);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(in, "mpi_size", size);
    if (rc != MPI_SUCCESS)
        return wm_session_error(s, MPI_ERR_NO_MEM, fn, "no memory for the info object");
    *info = in;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                        MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_from_session_pset";
    WM_SESSION_CHECK(fn, session, s);
    if (!pset_name || !newgroup)
        return wm_session_error(s, MPI_ERR_ARG, fn, "%s is NULL",
                                newgroup ? "pset_name" : "newgroup");
    int *ranks, n;
    int rc = wm_pset_members(pset_name, &ranks, &n);
    if (rc != MPI_SUCCESS)
        return wm_session_error(s, rc, fn, rc == MPI_ERR_ARG ? "no process set named \"%.64s\""
                                                             : "no memory (pset \"%.64s\")", pset_name);
    wm_group_t *g = wm_group_new(ranks, n);
    free(ranks);
    if (!g)
        return wm_session_error(s, MPI_ERR_NO_MEM, fn, "no memory for a group");
    g->session = s;
    wm_obj_retain(&s->obj);
    *newgroup = (MPI_Group)g->obj.handle;
    return MPI_SUCCESS;
}

/* ---- error handlers ---- */

int wm_impl_MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    WM_SESSION_CHECK(fn, session, s);
    int bad = wm_errh_check(errhandler, WM_ERRH_SESSION);
    if (bad != MPI_SUCCESS)
        return wm_session_error(s, bad, fn, bad == MPI_ERR_ARG
                                ? "error handler %p was not made by MPI_Session_create_errhandler"
                                : "invalid error handler %p", (void *)errhandler);
    wm_errh_ref(errhandler);
    MPI_Errhandler old = s->errh;
    s->errh = errhandler;
    wm_errh_unref(old);
    return MPI_SUCCESS;
}

/* The handle returned is a new reference the user frees with MPI_Errhandler_free. */
int wm_impl_MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Session_get_errhandler";
    WM_SESSION_CHECK(fn, session, s);
    if (!errhandler)
        return wm_session_error(s, MPI_ERR_ARG, fn, "errhandler is NULL");
    wm_errh_ref(s->errh);
    *errhandler = s->errh;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char fn[] = "MPI_Session_call_errhandler";
    WM_SESSION_CHECK(fn, session, s);
    wm_error_eh(s->errh, session, errorcode);
    return MPI_SUCCESS;
}

/* ---- communicators from groups ---- */

/* 128 bits naming a creation: two 64-bit multiply-xorshift streams over the words given. Two
 * different creations running at once share their context ids only if all 128 bits collide. */
typedef struct wm_key {
    uint64_t h[2];
} wm_key_t;

static uint64_t wm_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void wm_key_add(wm_key_t *k, uint64_t w)
{
    k->h[0] = wm_mix(k->h[0] ^ w) + 0x9e3779b97f4a7c15ull;
    k->h[1] = wm_mix(k->h[1] + w * 0xff51afd7ed558ccdull) ^ 0xc4ceb9fe1a85ec53ull;
}

static void wm_key_bytes(wm_key_t *k, const char *s)
{
    size_t n = strlen(s);
    wm_key_add(k, n);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, s + i, n - i < 8 ? n - i : 8);
        wm_key_add(k, w);
    }
}

static void wm_key_group(wm_key_t *k, const wm_group_t *g)
{
    wm_key_add(k, (uint64_t)g->size);
    for (int i = 0; i < g->size; i++)
        wm_key_add(k, (uint64_t)(uint32_t)g->ranks[i]);
}

/* Errors of these calls go to the error handler given (MPI 4.1 7.4.2: no communicator exists
 * yet), if it is a valid one. */
WU_PRINTF(4, 5)
static int wm_from_group_error(MPI_Errhandler eh, int cls, const char *fn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[MPI_MAX_ERROR_STRING];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    int code = wm_error_code(cls, fn, "%s", msg);
    if (wm_errh_check(eh, WM_ERRH_COMM) != MPI_SUCCESS)
        return wm_error_raise(NULL, code);
    wm_comm_t tmp = { .errh = eh, .obj.handle = (uintptr_t)MPI_COMM_NULL };
    return wm_error_raise(&tmp, code);
}

/* The checks the two calls share. */
static int wm_from_group_check(const char *fn, const char *stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, const void *out)
{
    int bad = wm_errh_check(errhandler, WM_ERRH_COMM);
    if (bad != MPI_SUCCESS)
        return wm_error(NULL, bad, fn, bad == MPI_ERR_ARG
                        ? "error handler %p was not made by MPI_Comm_create_errhandler"
                        : "invalid error handler %p", (void *)errhandler);
    if (!stringtag)
        return wm_from_group_error(errhandler, MPI_ERR_ARG, fn, "stringtag is NULL");
    if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
        return wm_from_group_error(errhandler, MPI_ERR_ARG, fn,
                                   "stringtag is longer than MPI_MAX_STRINGTAG_LEN - 1 (%d)",
                                   MPI_MAX_STRINGTAG_LEN - 1);
    if (info != MPI_INFO_NULL && !wm_info_get(info))
        return wm_from_group_error(errhandler, MPI_ERR_INFO, fn, "invalid info %p", (void *)info);
    if (!out)
        return wm_from_group_error(errhandler, MPI_ERR_ARG, fn, "the output handle is NULL");
    return MPI_SUCCESS;
}

/* The new communicator d (context id known) takes the handler, the hints and the session. */
static int wm_from_group_finish(const char *fn, wm_comm_t *d, MPI_Info info,
                                MPI_Errhandler errhandler, wm_session_t *session)
{
    wm_errh_unref(d->errh);
    d->errh = errhandler;
    wm_errh_ref(errhandler);
    if (session) {
        d->session = session;
        wm_obj_retain(&session->obj);
    }
    int rc = wm_comm_info_copy(info, &d->info);
    if (rc != MPI_SUCCESS) {
        wm_obj_user_free(&d->obj);
        return wm_from_group_error(errhandler, MPI_ERR_INFO, fn, "the info could not be copied");
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                       MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    WM_CHECK_INIT(fn);
    int rc = wm_from_group_check(fn, stringtag, info, errhandler, newcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    wm_group_t *g = wm_group_get(group);
    if (!g)
        return wm_from_group_error(errhandler, MPI_ERR_GROUP, fn, "invalid group %p", (void *)group);
    if (g->rank == MPI_UNDEFINED)
        return wm_from_group_error(errhandler, MPI_ERR_GROUP, fn,
                                   "the calling process is not in the group");
    wm_key_t k = { { 0x5e55101u, 0x1c7a } };
    wm_key_add(&k, 'C');
    wm_key_bytes(&k, stringtag);
    wm_key_group(&k, g);
    uint32_t ctx = wc_ctx_named(wc_ep_default(), k.h, (uint32_t)g->rank, (uint32_t)g->size, 2);
    wm_comm_t *d = wm_comm_new(&wm_comm_self, ctx | wm_comm_ctx_hints(info), g->ranks, g->size,
                               NULL, 0, false);
    if (!d)
        return wm_from_group_error(errhandler, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    rc = wm_from_group_finish(fn, d, info, errhandler, g->session);
    if (rc == MPI_SUCCESS)
        *newcomm = wm_comm_handle(d);
    return rc;
}

int wm_impl_MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                             MPI_Group remote_group, int remote_leader,
                                             const char *stringtag, MPI_Info info,
                                             MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    WM_CHECK_INIT(fn);
    int rc = wm_from_group_check(fn, stringtag, info, errhandler, newintercomm);
    if (rc != MPI_SUCCESS)
        return rc;
    wm_group_t *lg = wm_group_get(local_group), *rg = wm_group_get(remote_group);
    if (!lg || !rg)
        return wm_from_group_error(errhandler, MPI_ERR_GROUP, fn, "invalid %s %p",
                                   lg ? "remote_group" : "local_group",
                                   lg ? (void *)remote_group : (void *)local_group);
    if (lg->rank == MPI_UNDEFINED)
        return wm_from_group_error(errhandler, MPI_ERR_GROUP, fn,
                                   "the calling process is not in local_group");
    if (rg->size == 0 || rg->rank != MPI_UNDEFINED)
        return wm_from_group_error(errhandler, MPI_ERR_GROUP, fn, "remote_group %s",
                                   rg->size ? "holds the calling process (the groups must be disjoint)"
                                            : "is empty");
    if (local_leader < 0 || local_leader >= lg->size)
        return wm_from_group_error(errhandler, MPI_ERR_RANK, fn,
                                   "local_leader %d is not a rank of local_group (size %d)",
                                   local_leader, lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return wm_from_group_error(errhandler, MPI_ERR_RANK, fn,
                                   "remote_leader %d is not a rank of remote_group (size %d)",
                                   remote_leader, rg->size);
    /* Both sides name the pair alike: the group whose leader is lower in world rank first. */
    bool local_first = lg->ranks[local_leader] < rg->ranks[remote_leader];
    const wm_group_t *a = local_first ? lg : rg, *b = local_first ? rg : lg;
    wm_key_t k = { { 0x5e55101u, 0x1c7a } };
    wm_key_add(&k, 'I');
    wm_key_bytes(&k, stringtag);
    wm_key_group(&k, a);
    wm_key_group(&k, b);
    uint32_t member = (uint32_t)(local_first ? lg->rank : a->size + lg->rank);
    uint32_t ctx = wc_ctx_named(wc_ep_default(), k.h, member, (uint32_t)(a->size + b->size), 2);
    wm_comm_t *d = wm_comm_new(&wm_comm_self, ctx, lg->ranks, lg->size, rg->ranks, rg->size, true);
    if (!d)
        return wm_from_group_error(errhandler, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
    rc = wm_from_group_finish(fn, d, info, errhandler, lg->session ? lg->session : rg->session);
    if (rc == MPI_SUCCESS)
        *newintercomm = wm_comm_handle(d);
    return rc;
}
