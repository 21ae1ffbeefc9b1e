#ifndef WM_COMM_H
#define WM_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "core/wc_dyn.h"
#include "mpi/wm_object.h"
#include "util/wu_compiler.h"

/* Communicators (docs/communicators.md).
 * Concurrency contract: a communicator's fields are written only while it is being created (by
 * the creating thread, before its handle is returned; the context id of a Comm_idup by the core
 * when its request completes, before the user may use the handle) and by Comm_set_name/
 * set_errhandler/set_info (the application does not race those with other uses); any thread may
 * read them.
 */
/* ---- communicators ---- */
/* Context ids: point-to-point traffic of a communicator uses ctx, its collectives ctx|WM_CTX_COLL.
 * The library's own traffic never receives with a wildcard, so collective contexts are matched
 * exactly (WC_CTX_EXACT, core/wc_match.h): an early collective message costs one hash insertion. */
#define WM_CTX_COLL (0x80000000u | WC_CTX_EXACT)
#define WM_CTX_WORLD 0u
#define WM_CTX_SELF  2u

typedef struct wm_comm {
    wm_obj_t       obj;           /* first: lifetime and handle (wm_object.h) */
    uint32_t       ctx;
    int            rank, size;
    const int     *world_ranks;   /* local rank -> world rank; NULL: identity */
    /* Point-to-point peers: the remote group of an intercommunicator, else the same as above. */
    int            remote_size;
    const int     *remote_world_ranks;
    bool           inter;
    bool           tcomm;         /* a thread communicator (wm_threadcomm.c): the entry points
                                     hand it to wm_tc_* (tc below) */
    MPI_Errhandler errh;          /* a reference held (wm_errh_ref), dropped by destroy */
    MPI_Info       info;          /* hints of Comm_set_info & co: a handle owned by the
                                     communicator, MPI_INFO_NULL for none */
    int           *ranks_mem;     /* malloc'd block behind world_ranks/remote_world_ranks */
    struct wm_topo *topo;         /* process topology (wm_topo.h), owned; NULL: none */
    char           name[MPI_MAX_OBJECT_NAME];
    /* The next collective's sequence number (wm_coll.c): every member counts the collective calls
     * on the communicator alike, so the numbers agree; any thread (fetch-and-add). */
    _Atomic uint32_t coll_seq;
    /* A blocking collective failed on this rank without running all its steps (no memory while
     * building or starting it): the peers' messages of that call may still arrive under the shared
     * blocking tag, so later blocking collectives on c are refused rather than matched with them. */
    _Atomic bool     coll_broken;
    /* The node-aware layout of c for hierarchical collectives (wm_coll_hier.c): made on first use
     * by any thread (compare-and-swap), freed with c. */
    struct wm_coll_hier *_Atomic coll_hier;
    /* The buffer of MPI_Comm_attach_buffer (wm_bsend.c), used by buffered sends on c instead of
     * the process's; NULL: none. Set and cleared by attach and detach (release), read by the
     * buffered sends (acquire); freed with c. */
    struct wm_bbuf *_Atomic bbuf;
    /* The session the communicator derives from (MPI_Comm_create_from_group & co, and their
     * descendants), a structural reference (wm_obj_retain) dropped by destroy; NULL: the world
     * model. Its buffer (MPI_Session_attach_buffer) serves buffered sends with no buffer of c's. */
    struct wm_session *session;
    /* Thread communicators only (tcomm): wm_threadcomm.c's state, owned by it. */
    struct wm_tc *tc;
} wm_comm_t;

extern wm_comm_t wm_comm_world, wm_comm_self;

static inline MPI_Comm wm_comm_handle(const wm_comm_t *c)
{
    return (MPI_Comm)c->obj.handle;
}

/* The communicator of handle h, or NULL if h is not a valid communicator. */
static inline wm_comm_t *wm_comm_get(MPI_Comm h)
{
    if (WU_LIKELY(h == MPI_COMM_WORLD))
        return &wm_comm_world;
    if (h == MPI_COMM_SELF)
        return &wm_comm_self;
    return (wm_comm_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_COMM);
}

static inline int wm_comm_world_rank(const wm_comm_t *c, int r)
{
    return c->world_ranks ? c->world_ranks[r] : r;
}

static inline int wm_comm_local_rank(const wm_comm_t *c, int world)
{
    if (!c->world_ranks)
        return world;
    for (int i = 0; i < c->size; i++)
        if (c->world_ranks[i] == world)
            return i;
    return MPI_UNDEFINED;
}

/* Is process a before process b in the order every member of a communicator agrees on? World
 * ranks of this job compare as numbers; a process of another job (dynamic processes: ids from
 * wc_world.size on, core/wc_dyn.h) by its job and rank there, the same in every job. */
static inline bool wm_world_lt(int a, int b)
{
    if (WU_LIKELY(a < wc_world.size && b < wc_world.size))
        return a < b;
    return wc_dyn_cmp(a, b) < 0;
}

/* Point-to-point: world rank of peer r (remote group for intercommunicators). */
static inline int wm_comm_peer_world(const wm_comm_t *c, int r)
{
    return c->remote_world_ranks ? c->remote_world_ranks[r] : r;
}

/* Point-to-point: peer rank (remote group for intercommunicators) of a world rank. */
static inline int wm_comm_peer_rank(const wm_comm_t *c, int world)
{
    if (!c->remote_world_ranks)
        return world;
    for (int i = 0; i < c->remote_size; i++)
        if (c->remote_world_ranks[i] == world)
            return i;
    return MPI_UNDEFINED;
}

/* ---- communicator management (wm_comm*.c) ---- */

/* Tags of the library's messages on a communicator's collective context (wm_internal.h ranges):
 * communicator management keeps to WM_TAG_COMM_BASE + 0..255; Comm_create_group and
 * Intercomm_create carry the user's tag as WM_TAG_USER_BIT | tag (above every user and library
 * tag: user tags stop at WM_TAG_UB 0x3fffffff). */
enum {
    WM_TAG_CTXID = 0x3fff0001,          /* context id from the allocating leader */
    WM_TAG_SPLIT_GATHER,
    WM_TAG_SPLIT_BCAST,
    WM_TAG_CREATE_BCAST,
    WM_TAG_INTER_LEADERS,               /* leader <-> leader of an intercommunicator */
    WM_TAG_INTER_BCAST,                 /* leader -> its local group */
    WM_TAG_HW_GATHER,
    WM_TAG_HW_BCAST,
    WM_TAG_DISCONNECT,
};
#define WM_TAG_USER_BIT 0x40000000

/* A new communicator: local group `local` (n world ranks), and for an intercommunicator the
 * remote group `remote` (rn); both copied. Inherits parent's error handler. NULL: no memory. */
wm_comm_t *wm_comm_new(const wm_comm_t *parent, uint32_t ctx, const int *local, int n,
                       const int *remote, int rn, bool inter);

/* A copy of info for a communicator to own (MPI_INFO_NULL stays so); the MPI error code. */
int wm_comm_info_copy(MPI_Info info, MPI_Info *out);
/* The context-id bits of a new communicator with hints info (WC_CTX_EXACT or 0). */
uint32_t wm_comm_ctx_hints(MPI_Info info);

/* Context id agreed by every member of c (both groups of an intercommunicator): blocking. */
uint32_t wm_ctx_agree(wm_comm_t *c);
/* Does c hold processes of several jobs (dynamic processes)? */
bool wm_comm_multi_job(const wm_comm_t *c);

/* Blocking internal messages of len bytes to/from a world rank. */
wu_status_t wm_cx_send(const void *buf, size_t len, int world_dst, int tag, uint32_t ctx);
wu_status_t wm_cx_recv(void *buf, size_t len, int world_src, int tag, uint32_t ctx);
/* Binomial broadcast of len bytes among the n processes ranks[] (world ranks), me and root
 * indices into it. */
wu_status_t wm_cx_bcast(void *buf, size_t len, const int *ranks, int n, int me, int root, int tag,
                        uint32_t ctx);
/* Gather len bytes from each of the n processes to root (into buf[i * len] at root; the caller's
 * own block must already be in place there). */
wu_status_t wm_cx_gather(void *buf, size_t len, const int *ranks, int n, int me, int root, int tag,
                         uint32_t ctx);

/* Intercommunicator c: the local leader swaps len_out bytes of outb for len_in bytes of the
 * remote leader's, then broadcasts them to its group (local: c's local world ranks). */
wu_status_t wm_inter_swap(wm_comm_t *c, const void *outb, size_t len_out, void *in, size_t len_in,
                          const int *local);

/* c's local group as world ranks (NULL world_ranks expanded): a malloc'd array, NULL on no memory. */
int *wm_comm_local_ranks(const wm_comm_t *c);

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two lists of world ranks. */
int wm_ranks_compare(const int *a, int na, const int *b, int nb);

/* Comm_split's work (also Split_type's): color MPI_UNDEFINED gives *out = NULL. */
int wm_comm_split(wm_comm_t *c, int color, int key, wm_comm_t **out);
/* The same on an intercommunicator (wm_comm_inter.c), and Comm_create's: g is a subset of c's local
 * group (struct wm_group, wm_group.h). */
int wm_comm_split_inter(wm_comm_t *c, int color, int key, wm_comm_t **out);
struct wm_group;
int wm_comm_create_inter(wm_comm_t *c, const struct wm_group *g, wm_comm_t **out);

#endif
