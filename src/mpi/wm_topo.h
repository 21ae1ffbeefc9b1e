/* Process topologies (docs/topologies.md): the Cartesian, graph or distributed-graph structure a
 * communicator carries, and the neighbour lists the neighborhood collectives use.
 *
 * A topology is one malloc'd block owned by its communicator (wm_comm_t.topo): built before the
 * communicator's handle is returned, copied by Comm_dup/idup, freed by the communicator's destroy
 * function. Reordering is the identity: rank i of the new communicator is rank i of the old one
 * (the standard allows it; Cart_map and Graph_map say the same).
 *
 * Concurrency contract: immutable once attached; any thread reads it without a lock.
 */
#ifndef WM_TOPO_H
#define WM_TOPO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct wm_topo {
    int kind;            /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    size_t bytes;        /* of the whole block, for copies */
    /* Cartesian */
    int ndims;
    int *dims, *periods, *coords;   /* coords: this process's */
    /* graph: the whole graph as given to Graph_create */
    int nnodes, nedges;
    int *index, *edges;
    /* every kind: this process's neighbours, in the standard's order (MPI 4.1 8.6): sources
     * receive, destinations send. Cartesian: for each dimension the -1 then the +1 neighbour
     * (MPI_PROC_NULL off a non-periodic edge), the same list for both; graph: Graph_neighbors for
     * both; distributed graph: as created. */
    int indegree, outdegree;
    int *sources, *destinations;
    int *sweights, *dweights;        /* distributed graph, weighted only; else NULL */
    bool weighted;
    /* Order in which to post the receives (a permutation of 0..indegree-1): messages between one
     * pair of processes match in the order they are sent, so where one process is both the -1
     * and the +1 neighbour of a periodic dimension (sizes 1 and 2), the receive for the +1 slot
     * is posted first: that neighbour sends to its -1 side first, and what a process sends
     * towards -1 arrives from the receiver's +1 side (mpi-forum/mpi-issues#153). */
    int *recv_order;
} wm_topo_t;

struct wm_comm;

/* A new topology block with room for every array (arrays of size 0 are NULL; weights only when
 * weighted), recv_order the identity. NULL: no memory. */
wm_topo_t *wm_topo_alloc(int kind, int ndims, int nnodes, int nedges, int indegree, int outdegree,
                         bool weighted);
/* A copy of t (one block), NULL on no memory. */
wm_topo_t *wm_topo_dup(const wm_topo_t *t);

/* The communicator of a new topology: the processes of c with color 0, ordered by key (Comm_split
 * on c; MPI_UNDEFINED: *out_p = NULL). Collective over c. Returns an MPI error code (raised). */
int wm_topo_comm(const char *fn, struct wm_comm *c, int color, int key, struct wm_comm **out_p);
/* Attach t to d (taking it) and return d's handle in *newcomm; on t NULL (no memory), free d and
 * raise MPI_ERR_NO_MEM on c. */
int wm_topo_attach(const char *fn, struct wm_comm *c, struct wm_comm *d, wm_topo_t *t,
                   MPI_Comm *newcomm);

/* The topology of c if it has one of kind `kind` (0: any), else raise MPI_ERR_TOPOLOGY naming fn
 * and return NULL with *rc_p set. */
const wm_topo_t *wm_topo_need(struct wm_comm *c, const char *fn, int kind, int *rc_p);

#endif
