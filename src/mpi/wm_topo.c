/* Process topologies, the common part (wm_topo.h): the topology block, its copy for Comm_dup, the
 * communicator a topology constructor returns, and MPI_Topo_test. Cartesian topologies and
 * Dims_create: wm_topo_cart.c; graph and distributed graph: wm_topo_graph.c. */
#include "mpi/wm_topo.h"
#include "mpi/wm_internal.h"

#include <stdlib.h>
#include <string.h>

wm_topo_t *wm_topo_alloc(int kind, int ndims, int nnodes, int nedges, int indegree, int outdegree,
                         bool weighted)
{
    size_t nints = 3 * (size_t)ndims + (size_t)nnodes + (size_t)nedges + 2 * (size_t)indegree +
                   (size_t)outdegree + (weighted ? (size_t)indegree + (size_t)outdegree : 0);
    size_t bytes = sizeof(wm_topo_t) + nints * sizeof(int);
    wm_topo_t *t = calloc(1, bytes);
    if (!t)
        return NULL;
    t->kind = kind;
    t->bytes = bytes;
    t->ndims = ndims;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    int *p = (int *)(t + 1);
#define WM_TOPO_TAKE(field, n) \
    do { t->field = (n) > 0 ? p : NULL; p += (n); } while (0)
    WM_TOPO_TAKE(dims, ndims);
    WM_TOPO_TAKE(periods, ndims);
    WM_TOPO_TAKE(coords, ndims);
    WM_TOPO_TAKE(index, nnodes);
    WM_TOPO_TAKE(edges, nedges);
    WM_TOPO_TAKE(sources, indegree);
    WM_TOPO_TAKE(destinations, outdegree);
    WM_TOPO_TAKE(recv_order, indegree);
    if (weighted) {
        WM_TOPO_TAKE(sweights, indegree);
        WM_TOPO_TAKE(dweights, outdegree);
    }
#undef WM_TOPO_TAKE
    for (int i = 0; i < indegree; i++)
        t->recv_order[i] = i;
    return t;
}

wm_topo_t *wm_topo_dup(const wm_topo_t *t)
{
    wm_topo_t *d = malloc(t->bytes);
    if (!d)
        return NULL;
    memcpy(d, t, t->bytes);
    /* the arrays live in the block: move every pointer by the same distance */
    ptrdiff_t delta = (char *)d - (const char *)t;
    int **fields[] = { &d->dims, &d->periods, &d->coords, &d->index, &d->edges, &d->sources,
                       &d->destinations, &d->sweights, &d->dweights, &d->recv_order };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (*fields[i])
            *fields[i] = (int *)((char *)*fields[i] + delta);
    return d;
}

static const char *wm_topo_kind_name(int kind)
{
    return kind == MPI_CART ? "a Cartesian" : kind == MPI_GRAPH ? "a graph" : "a distributed graph";
}

const wm_topo_t *wm_topo_need(wm_comm_t *c, const char *fn, int kind, int *rc_p)
{
    const wm_topo_t *t = c->topo;
    if (WU_LIKELY(t && (!kind || t->kind == kind)))
        return t;
    if (!t)
        *rc_p = wm_error(c, MPI_ERR_TOPOLOGY, fn, "communicator %s has no process topology%s%s%s",
                         c->name[0] ? c->name : "(unnamed)", kind ? " (needs " : "",
                         kind ? wm_topo_kind_name(kind) : "", kind ? " one)" : "");
    else
        *rc_p = wm_error(c, MPI_ERR_TOPOLOGY, fn, "communicator %s has %s topology, not %s one",
                         c->name[0] ? c->name : "(unnamed)", wm_topo_kind_name(t->kind),
                         wm_topo_kind_name(kind));
    return NULL;
}

int wm_topo_comm(const char *fn, wm_comm_t *c, int color, int key, wm_comm_t **out_p)
{
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn,
                        "%s is an intercommunicator: topologies are defined on intracommunicators",
                        c->name);
    int rc = wm_comm_split(c, color, key, out_p);
    return rc;
}

int wm_topo_attach(const char *fn, wm_comm_t *c, wm_comm_t *d, wm_topo_t *t, MPI_Comm *newcomm)
{
    if (!t) {
        wm_obj_user_free(&d->obj);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for the topology");
    }
    d->topo = t;
    *newcomm = wm_comm_handle(d);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char fn[] = "MPI_Topo_test";
    WM_COMM_CHECK(fn, comm, c);
    if (!status)
        return wm_error(c, MPI_ERR_ARG, fn, "status is NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
