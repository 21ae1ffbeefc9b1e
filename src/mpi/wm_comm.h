#ifndef WM_COMM_H
#define WM_COMM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/wc_core.h"
#include "mpi/wm_object.h"
#include "util/wu_compiler.h"

/* Communicators.
 * Concurrency contract: a communicator's fields are written only while it is being created (by
 * the creating thread, before its handle is returned) and by Comm_set_name/set_errhandler/
 * set_info; any thread may read them.
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
    MPI_Errhandler errh;
    char           name[MPI_MAX_OBJECT_NAME];
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


#endif
