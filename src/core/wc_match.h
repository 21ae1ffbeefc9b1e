/* Constant-time tag matching with wildcards (NewMadeleine, ../shared/seeds/
 * newmadeleine-tagmatching-collectives.txt). One engine per receiving endpoint; the context id
 * (communicator) is part of every key.
 *
 * Posted receives are kept in one of four structures by kind: fully specified (ctx,src,tag),
 * ANY_TAG per (ctx,src), ANY_SOURCE per (ctx,tag), and both wildcards per ctx. Unexpected messages
 * are linked into all four views at once. Every entry carries a sequence number drawn from one
 * counter of the engine at insertion, so the oldest candidate wins and MPI's non-overtaking order
 * holds whatever mix of wildcards is used. All operations are O(1) expected (hash + list heads);
 * none walks a list.
 *
 * Concurrency contract: not synchronized. The owner of the engine (the core, under the engine's lock
 * in the threaded build) serializes every call. Entries are owned by the caller (embedded in
 * requests or unexpected-message descriptors); the engine only links them.
 */
#ifndef WC_MATCH_H
#define WC_MATCH_H

#include <stdint.h>
#include <stdbool.h>
#include "util/wu_list.h"
#include "util/wu_status.h"

#define WC_ANY_SOURCE (-1)
#define WC_ANY_TAG    (-1)

/* A context id with this bit set is matched exactly: its receives and probes never use
 * WC_ANY_SOURCE or WC_ANY_TAG (the communicator was created with the info hints
 * mpi_assert_no_any_source and mpi_assert_no_any_tag, or it carries the library's own collective
 * traffic). An unexpected message of such a context is then linked into its exact view only: one
 * hash insertion and one unlink instead of four. Looking one up with a wildcard finds nothing; the
 * MPI layer refuses wildcards on such communicators. */
#define WC_CTX_EXACT 0x40000000u

typedef struct wc_match_entry {
    uint32_t ctx;
    int32_t  src;      /* a rank, or WC_ANY_SOURCE for a posted receive */
    int32_t  tag;      /* >= 0, or WC_ANY_TAG for a posted receive */
    uint32_t aux;      /* a posted receive: the engine's, 1 if wc_match_post_watched posted it;
                        * an unexpected message: the caller's (the engine never reads it) */
    uint64_t seq;      /* set by the engine */
    /* Owned by the engine. A posted receive uses owner (the engine it is posted in) and link[0];
     * an unexpected message links all four views. The fields a posted receive touches come
     * first: matching it touches the first 48 bytes of the entry. */
    void    *owner;
    wu_list_t link[4];
} wc_match_entry_t;

typedef struct wc_match wc_match_t;   /* opaque */

wu_status_t wc_match_create(wc_match_t **m_p);
void wc_match_destroy(wc_match_t *m);

/* Posted receives. Before posting, the caller searches the unexpected messages
 * (wc_match_unexpected_find); post only if nothing matched. */
wu_status_t wc_match_post(wc_match_t *m, wc_match_entry_t *recv);
/* The same, and the receive is counted among the watched ones until it leaves the engine (taken
 * by a message, removed or swept): the core watches for the rendezvous offers that such receives
 * wait for (wc_pt2pt.c, "offers announced to a computing receiver"). */
wu_status_t wc_match_post_watched(wc_match_t *m, wc_match_entry_t *recv);
/* How many watched receives are posted. */
size_t wc_match_watched(const wc_match_t *m);
/* A message (ctx, src, tag) arrived: remove and return the oldest posted receive that matches it,
 * or NULL. src and tag are never wildcards here. */
wc_match_entry_t *wc_match_posted_take(wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag);
/* Prefetch for a message (ctx, src, tag) that will be matched soon: stage 0 prefetches its exact
 * bin; stage 1 reads the bin and returns the posted receive that is its head (not removed), or NULL,
 * so the caller can prefetch it. Hints only: wildcards are not considered. */
void wc_match_prefetch_bin(const wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag);
wc_match_entry_t *wc_match_posted_peek_exact(const wc_match_t *m, uint32_t ctx, int32_t src,
                                             int32_t tag);
/* Remove a posted receive that has not matched (MPI_Cancel). Returns false if it is not posted. */
bool wc_match_posted_remove(wc_match_t *m, wc_match_entry_t *recv);

/* Remove every posted receive for which drop(recv, arg) returns true; returns how many. Walks the
 * whole table: for a process that is leaving (wc_quiesce), not for the message path. */
size_t wc_match_posted_sweep(wc_match_t *m, bool (*drop)(wc_match_entry_t *recv, void *arg),
                             void *arg);

/* Unexpected messages. */
wu_status_t wc_match_unexpected_add(wc_match_t *m, wc_match_entry_t *msg);
/* The oldest unexpected message matching the receive pattern (src/tag may be wildcards), or NULL.
 * take=true removes it (receive, mprobe); take=false leaves it (probe). */
wc_match_entry_t *wc_match_unexpected_find(wc_match_t *m, uint32_t ctx, int32_t src, int32_t tag,
                                           bool take);

/* The newest unexpected message of the exact key (ctx, src, tag) (no wildcards) for which
 * pick(msg, arg) is true, removed from the engine, or NULL. Walks that key's messages from the
 * newest: for MPI_Cancel of a send, not for the message path. */
wc_match_entry_t *wc_match_unexpected_take_newest(wc_match_t *m, uint32_t ctx, int32_t src,
                                                  int32_t tag,
                                                  bool (*pick)(wc_match_entry_t *msg, void *arg),
                                                  void *arg);

/* Take every unexpected message out of the engine and hand it to take(msg, arg); returns how many.
 * Walks the whole table: for teardown (messages nobody received), not for the message path. */
size_t wc_match_unexpected_sweep(wc_match_t *m, void (*take)(wc_match_entry_t *msg, void *arg),
                                 void *arg);

/* Counts, for tests and leak checks at finalize. */
size_t wc_match_posted_count(const wc_match_t *m);
size_t wc_match_unexpected_count(const wc_match_t *m);

#endif
