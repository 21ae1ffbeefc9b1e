/* Groups: ordered sets of processes, held as world ranks.
 * A group is immutable once its handle is returned: any thread may read it without a lock.
 * MPI_GROUP_EMPTY is the static wm_group_empty; every other group is a user object (WM_OBJ_GROUP)
 * whose rank array lives inside its slot when it fits, else in malloc'd memory freed by its
 * destroy function. */
#ifndef WM_GROUP_H
#define WM_GROUP_H

#include <mpi.h>
#include "mpi/wm_object.h"

#define WM_GROUP_INLINE 96

typedef struct wm_group {
    wm_obj_t obj;                  /* first: lifetime and handle (wm_object.h) */
    int      size;
    int      rank;                 /* the calling process's rank in the group, or MPI_UNDEFINED */
    int     *ranks;                /* group rank -> world rank */
    /* MPI_Group_from_session_pset: its session (a structural reference, dropped by destroy), which
     * communicators made from the group derive from; NULL: any other group. */
    struct wm_session *session;
    int      inline_ranks[WM_GROUP_INLINE];
} wm_group_t;

extern wm_group_t wm_group_empty;

void wm_group_init(void);

static inline wm_group_t *wm_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &wm_group_empty;
    return (wm_group_t *)wm_obj_lookup((uintptr_t)h, WM_OBJ_GROUP);
}

/* A new group of the n world ranks (copied); NULL: no memory. */
wm_group_t *wm_group_new(const int *world_ranks, int n);

/* Index of world rank w in ranks[0..n), or MPI_UNDEFINED. */
int wm_ranks_find(const int *ranks, int n, int w);

#endif
