/* Graph and distributed-graph topologies (MPI 4.1 8.5.3, 8.5.4, 8.5.5, 8.5.6).
 *
 * A graph topology keeps the whole graph (Graph_get returns it) and this process's neighbours.
 * A distributed graph keeps only this process's sources and destinations: Dist_graph_create, where
 * any process may name any edge, sends each edge to its two ends with one Alltoall of counts and
 * one Alltoallv of (end, peer, weight) records on the new communicator. Each process appends the
 * records it receives in the order of the contributing ranks, then of their arguments, so the
 * edges between two processes come in the same order in the sender's destinations and the
 * receiver's sources: the neighborhood collectives rely on it when a pair has several edges. */
#include "mpi/wm_topo.h"
#include "mpi/wm_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- graph ---- */

static int wm_graph_check(wm_comm_t *c, const char *fn, int nnodes, const int index[],
                          const int edges[])
{
    if (nnodes < 0 || nnodes > c->size)
        return wm_error(c, MPI_ERR_ARG, fn, "nnodes %d is outside 0..%d (the size of %s)", nnodes,
                        c->size, c->name);
    if (nnodes > 0 && (!index || (!edges && index[nnodes - 1] > 0)))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", index ? "edges" : "index");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return wm_error(c, MPI_ERR_ARG, fn, "index[%d] = %d is less than %s", i, index[i],
                            i ? "the entry before it" : "0");
    for (int j = 0; nnodes > 0 && j < index[nnodes - 1]; j++)
        if (edges[j] < 0 || edges[j] >= nnodes)
            return wm_error(c, MPI_ERR_ARG, fn, "edges[%d] = %d is not a node (0..%d)", j, edges[j],
                            nnodes - 1);
    return MPI_SUCCESS;
}

static wm_topo_t *wm_graph_topo(int nnodes, const int index[], const int edges[], int rank)
{
    int nedges = nnodes ? index[nnodes - 1] : 0;
    int first = rank ? index[rank - 1] : 0, deg = index[rank] - first;
    wm_topo_t *t = wm_topo_alloc(MPI_GRAPH, 0, nnodes, nedges, deg, deg, false);
    if (!t)
        return NULL;
    memcpy(t->index, index, sizeof(int) * (size_t)nnodes);
    if (nedges)
        memcpy(t->edges, edges, sizeof(int) * (size_t)nedges);
    for (int i = 0; i < deg; i++)
        t->sources[i] = t->destinations[i] = edges[first + i];
    return t;
}

int wm_impl_MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                             int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    WM_COMM_CHECK(fn, comm_old, c);
    (void)reorder;   /* identity */
    int rc;
    if (!comm_graph)
        return wm_error(c, MPI_ERR_ARG, fn, "comm_graph is NULL");
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "comm_old %s is an intercommunicator", c->name);
    if ((rc = wm_graph_check(c, fn, nnodes, index, edges)))
        return rc;
    wm_comm_t *d;
    if ((rc = wm_topo_comm(fn, c, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, &d)))
        return rc;
    if (!d) {
        *comm_graph = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    return wm_topo_attach(fn, c, d, wm_graph_topo(nnodes, index, edges, d->rank), comm_graph);
}

int wm_impl_MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                          int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    WM_COMM_CHECK(fn, comm, c);
    int rc;
    if (!newrank)
        return wm_error(c, MPI_ERR_ARG, fn, "newrank is NULL");
    if ((rc = wm_graph_check(c, fn, nnodes, index, edges)))
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if (!nnodes || !nedges)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", nnodes ? "nedges" : "nnodes");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if (maxindex < 0 || maxedges < 0)
        return wm_error(c, MPI_ERR_ARG, fn, "%s %d is negative", maxindex < 0 ? "maxindex" : "maxedges",
                        maxindex < 0 ? maxindex : maxedges);
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < t->nedges ? maxedges : t->nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", ni > 0 && !index ? "index" : "edges");
    if (ni)
        memcpy(index, t->index, sizeof(int) * (size_t)ni);
    if (ne)
        memcpy(edges, t->edges, sizeof(int) * (size_t)ne);
    return MPI_SUCCESS;
}

/* Graph_neighbors(_count): any node of the graph, not only the caller. */
static int wm_graph_node(wm_comm_t *c, const char *fn, int rank, const wm_topo_t **t_p,
                         int *first_p, int *deg_p)
{
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_GRAPH, &rc);
    if (!t)
        return rc;
    if (rank < 0 || rank >= t->nnodes)
        return wm_error(c, MPI_ERR_RANK, fn, "invalid rank %d (the graph has %d nodes)", rank,
                        t->nnodes);
    *t_p = t;
    *first_p = rank ? t->index[rank - 1] : 0;
    *deg_p = t->index[rank] - *first_p;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    WM_COMM_CHECK(fn, comm, c);
    const wm_topo_t *t;
    int first, deg, rc = wm_graph_node(c, fn, rank, &t, &first, &deg);
    if (rc)
        return rc;
    if (!nneighbors)
        return wm_error(c, MPI_ERR_ARG, fn, "nneighbors is NULL");
    *nneighbors = deg;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    WM_COMM_CHECK(fn, comm, c);
    const wm_topo_t *t;
    int first, deg, rc = wm_graph_node(c, fn, rank, &t, &first, &deg);
    if (rc)
        return rc;
    if (maxneighbors < 0)
        return wm_error(c, MPI_ERR_ARG, fn, "maxneighbors %d is negative", maxneighbors);
    int n = maxneighbors < deg ? maxneighbors : deg;
    if (n > 0 && !neighbors)
        return wm_error(c, MPI_ERR_ARG, fn, "neighbors is NULL");
    if (n)
        memcpy(neighbors, t->edges + first, sizeof(int) * (size_t)n);
    return MPI_SUCCESS;
}

/* ---- distributed graph ---- */

/* A list of n ranks of c (MPI_ERR_RANK) with weights (MPI_ERR_ARG if negative) unless unweighted. */
static int wm_dist_check_list(wm_comm_t *c, const char *fn, const char *what, int n,
                              const int ranks[], const int weights[], bool weighted)
{
    if (n < 0)
        return wm_error(c, MPI_ERR_ARG, fn, "%s degree %d is negative", what, n);
    if (n > 0 && !ranks)
        return wm_error(c, MPI_ERR_ARG, fn, "the %s array is NULL", what);
    if (n > 0 && weighted && (!weights || weights == MPI_WEIGHTS_EMPTY))
        return wm_error(c, MPI_ERR_ARG, fn, "the %s weights are %s", what,
                        weights ? "MPI_WEIGHTS_EMPTY for a non-empty list" : "NULL");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return wm_error(c, MPI_ERR_RANK, fn, "%s[%d] = %d is not a rank of %s (%d ranks)", what,
                            i, ranks[i], c->name, c->size);
        if (weighted && weights[i] < 0)
            return wm_error(c, MPI_ERR_ARG, fn, "%s weight %d is negative (%d)", what, i,
                            weights[i]);
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                           const int sourceweights[], int outdegree,
                                           const int destinations[], const int destweights[],
                                           MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    WM_COMM_CHECK(fn, comm_old, c);
    (void)info;      /* no hint changes the layout */
    (void)reorder;   /* identity */
    int rc;
    if (!comm_dist_graph)
        return wm_error(c, MPI_ERR_ARG, fn, "comm_dist_graph is NULL");
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "comm_old %s is an intercommunicator", c->name);
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    if ((rc = wm_dist_check_list(c, fn, "sources", indegree, sources, sourceweights, weighted)) ||
        (rc = wm_dist_check_list(c, fn, "destinations", outdegree, destinations, destweights,
                                 weighted)))
        return rc;
    wm_comm_t *d;
    if ((rc = wm_topo_comm(fn, c, 0, c->rank, &d)))
        return rc;
    wm_topo_t *t = wm_topo_alloc(MPI_DIST_GRAPH, 0, 0, 0, indegree, outdegree, weighted);
    if (t) {
        if (indegree)
            memcpy(t->sources, sources, sizeof(int) * (size_t)indegree);
        if (outdegree)
            memcpy(t->destinations, destinations, sizeof(int) * (size_t)outdegree);
        if (weighted && indegree)
            memcpy(t->sweights, sourceweights, sizeof(int) * (size_t)indegree);
        if (weighted && outdegree)
            memcpy(t->dweights, destweights, sizeof(int) * (size_t)outdegree);
    }
    return wm_topo_attach(fn, c, d, t, comm_dist_graph);
}

/* Records of Dist_graph_create's exchange: the receiver is the source (OUT: peer is a destination)
 * or the destination (IN: peer is a source) of the edge. */
enum { WM_DIST_OUT = 0, WM_DIST_IN = 1 };
#define WM_DIST_REC 3   /* ints per record: end, peer, weight */

/* Every edge named by this process's arguments to the two processes at its ends, then the edges
 * this process is an end of, into a new topology *t_p. */
static int wm_dist_exchange(const char *fn, wm_comm_t *c, wm_comm_t *d, int n, const int sources[],
                            const int degrees[], const int destinations[], const int weights[],
                            bool weighted, wm_topo_t **t_p)
{
    int size = d->size, rc = MPI_SUCCESS;
    MPI_Comm h = wm_comm_handle(d);
    int *scnt = calloc(4 * (size_t)size, sizeof(int));
    int *sdispl = scnt + size, *rcnt = scnt + 2 * size, *rdispl = scnt + 3 * size;
    int *sbuf = NULL, *rbuf = NULL, *fill = NULL;
    if (!scnt)
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d ranks", size);
    long long nedges = 0;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scnt[sources[i]] += WM_DIST_REC;
            scnt[destinations[e]] += WM_DIST_REC;
            nedges++;
        }
    for (int p = 1; p < size; p++)
        sdispl[p] = sdispl[p - 1] + scnt[p - 1];
    sbuf = malloc(sizeof(int) * (size_t)(2 * WM_DIST_REC * nedges + 1));
    fill = malloc(sizeof(int) * (size_t)size);
    if (!sbuf || !fill) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %lld edges", nedges);
        goto out;
    }
    memcpy(fill, sdispl, sizeof(int) * (size_t)size);
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], t = destinations[e], w = weighted ? weights[e] : 1;
            int *r = sbuf + fill[s];
            r[0] = WM_DIST_OUT, r[1] = t, r[2] = w;
            fill[s] += WM_DIST_REC;
            r = sbuf + fill[t];
            r[0] = WM_DIST_IN, r[1] = s, r[2] = w;
            fill[t] += WM_DIST_REC;
        }
    if ((rc = PMPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, h)))
        goto out;
    for (int p = 1; p < size; p++)
        rdispl[p] = rdispl[p - 1] + rcnt[p - 1];
    int total = rdispl[size - 1] + rcnt[size - 1];
    rbuf = malloc(sizeof(int) * ((size_t)total + 1));
    if (!rbuf) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for %d edge records", total / WM_DIST_REC);
        /* the peers still exchange with this process: take part with an empty receive */
        memset(rcnt, 0, sizeof(int) * (size_t)size);
        PMPI_Alltoallv(sbuf, scnt, sdispl, MPI_INT, NULL, rcnt, rdispl, MPI_INT, h);
        goto out;
    }
    if ((rc = PMPI_Alltoallv(sbuf, scnt, sdispl, MPI_INT, rbuf, rcnt, rdispl, MPI_INT, h)))
        goto out;
    int indeg = 0, outdeg = 0;
    for (int k = 0; k < total; k += WM_DIST_REC)
        *(rbuf[k] == WM_DIST_IN ? &indeg : &outdeg) += 1;
    wm_topo_t *t = wm_topo_alloc(MPI_DIST_GRAPH, 0, 0, 0, indeg, outdeg, weighted);
    if (!t) {
        rc = wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for the topology");
        goto out;
    }
    indeg = outdeg = 0;
    for (int k = 0; k < total; k += WM_DIST_REC) {
        if (rbuf[k] == WM_DIST_IN) {
            if (weighted)
                t->sweights[indeg] = rbuf[k + 2];
            t->sources[indeg++] = rbuf[k + 1];
        } else {
            if (weighted)
                t->dweights[outdeg] = rbuf[k + 2];
            t->destinations[outdeg++] = rbuf[k + 1];
        }
    }
    *t_p = t;
out:
    free(scnt);
    free(sbuf);
    free(rbuf);
    free(fill);
    return rc;
}

int wm_impl_MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                  const int degrees[], const int destinations[],
                                  const int weights[], MPI_Info info, int reorder,
                                  MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    WM_COMM_CHECK(fn, comm_old, c);
    (void)info;
    (void)reorder;   /* identity */
    int rc;
    if (!comm_dist_graph)
        return wm_error(c, MPI_ERR_ARG, fn, "comm_dist_graph is NULL");
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "comm_old %s is an intercommunicator", c->name);
    if (n < 0)
        return wm_error(c, MPI_ERR_ARG, fn, "n %d is negative", n);
    if (n > 0 && (!sources || !degrees))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", sources ? "degrees" : "sources");
    bool weighted = weights != MPI_UNWEIGHTED;
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return wm_error(c, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i, degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > (1 << 28))
        return wm_error(c, MPI_ERR_ARG, fn, "%lld edges are more than this call handles", nedges);
    if ((rc = wm_dist_check_list(c, fn, "sources", n, sources, NULL, false)) ||
        (rc = wm_dist_check_list(c, fn, "destinations", (int)nedges, destinations, weights,
                                 weighted)))
        return rc;
    wm_comm_t *d;
    if ((rc = wm_topo_comm(fn, c, 0, c->rank, &d)))
        return rc;
    wm_topo_t *t = NULL;
    if ((rc = wm_dist_exchange(fn, c, d, n, sources, degrees, destinations, weights, weighted, &t))) {
        wm_obj_user_free(&d->obj);
        return rc;
    }
    return wm_topo_attach(fn, c, d, t, comm_dist_graph);
}

int wm_impl_MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                           int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_DIST_GRAPH, &rc);
    if (!t)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL",
                        !indegree ? "indegree" : !outdegree ? "outdegree" : "weighted");
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                     int sourceweights[], int maxoutdegree, int destinations[],
                                     int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_DIST_GRAPH, &rc);
    if (!t)
        return rc;
    if (maxindegree < 0 || maxoutdegree < 0)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is negative",
                        maxindegree < 0 ? "maxindegree" : "maxoutdegree");
    int ni = maxindegree < t->indegree ? maxindegree : t->indegree;
    int no = maxoutdegree < t->outdegree ? maxoutdegree : t->outdegree;
    if ((ni > 0 && !sources) || (no > 0 && !destinations))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", ni > 0 && !sources ? "sources" : "destinations");
    if (ni)
        memcpy(sources, t->sources, sizeof(int) * (size_t)ni);
    if (no)
        memcpy(destinations, t->destinations, sizeof(int) * (size_t)no);
    if (t->weighted) {
        if (ni && sourceweights && sourceweights != MPI_UNWEIGHTED &&
            sourceweights != MPI_WEIGHTS_EMPTY)
            memcpy(sourceweights, t->sweights, sizeof(int) * (size_t)ni);
        if (no && destweights && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY)
            memcpy(destweights, t->dweights, sizeof(int) * (size_t)no);
    }
    return MPI_SUCCESS;
}
