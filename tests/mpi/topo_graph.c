/* Graph and distributed-graph topologies (MPI 4.1 8.5.3, 8.5.4, 8.5.5): Graph_create and its
 * queries (Graphdims_get, Graph_get, Graph_neighbors(_count)), Graph_map, graphs smaller than the
 * communicator, Dist_graph_create_adjacent (neighbours in the order given, weights),
 * Dist_graph_create (edges named by any process, weighted and not), Topo_test, the topologies
 * surviving Comm_dup, and the error classes under MPI_ERRORS_RETURN. Any number of ranks. */
#include "mpitest.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are small constant addresses in the standard ABI: GCC takes
 * them for arrays of size 0 when it sees them passed as weights. */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

/* The ring: node i's neighbours are i-1 and i+1 (one of them for 2 nodes, none for 1). */
static int ring_neighbors(int n, int i, int *nb)
{
    if (n == 1)
        return 0;
    if (n == 2) {
        nb[0] = 1 - i;
        return 1;
    }
    nb[0] = (i + n - 1) % n;
    nb[1] = (i + 1) % n;
    return 2;
}

static void check_graph(void)
{
    int n = mt_size, *index = mt_malloc(sizeof(int) * (size_t)n), edges[64], ne = 0;
    for (int i = 0; i < n; i++) {
        ne += ring_neighbors(n, i, edges + ne);
        index[i] = ne;
    }
    MPI_Comm g;
    MT_CALL(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    for (int pass = 0; pass < 2; pass++) {
        int st = -1, nn = -1, nedges = -1, r = -1;
        MT_CALL(MPI_Topo_test(g, &st));
        MT_EQ("Topo_test of a graph communicator", MPI_GRAPH, st);
        MT_CALL(MPI_Comm_rank(g, &r));
        MT_EQ("Graph_create without reorder keeps the rank", mt_rank, r);
        MT_CALL(MPI_Graphdims_get(g, &nn, &nedges));
        MT_EQ("Graphdims_get nnodes", n, nn);
        MT_EQ("Graphdims_get nedges", ne, nedges);
        int gi[64], ge[64];
        MT_CALL(MPI_Graph_get(g, n, ne, gi, ge));
        for (int i = 0; i < n; i++)
            MT_EQ("Graph_get index", index[i], gi[i]);
        for (int j = 0; j < ne; j++)
            MT_EQ("Graph_get edges", edges[j], ge[j]);
        for (int q = 0; q < n; q++) {
            int cnt = -1, nb[4], want[2], k = ring_neighbors(n, q, want);
            MT_CALL(MPI_Graph_neighbors_count(g, q, &cnt));
            MT_EQ("Graph_neighbors_count", k, cnt);
            MT_CALL(MPI_Graph_neighbors(g, q, 4, nb));
            for (int j = 0; j < k; j++)
                MT_EQ("Graph_neighbors, in the order of edges", want[j], nb[j]);
        }
        if (pass == 0) {   /* the same on a duplicate */
            MPI_Comm d;
            MT_CALL(MPI_Comm_dup(g, &d));
            MT_CALL(MPI_Comm_free(&g));
            g = d;
        }
    }
    MT_CALL(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    int v, nb[4];
    MT_CLASS_EQ("Cartdim_get on a graph communicator", MPI_ERR_TOPOLOGY, MPI_Cartdim_get(g, &v));
    MT_CLASS_EQ("Dist_graph_neighbors_count on a graph communicator", MPI_ERR_TOPOLOGY,
                MPI_Dist_graph_neighbors_count(g, &v, &v, &v));
    MT_CLASS_EQ("Graphdims_get without topology", MPI_ERR_TOPOLOGY,
                MPI_Graphdims_get(MPI_COMM_WORLD, &v, &v));
    if (mt_weft) {
        MT_CLASS_EQ("Graph_neighbors of node -1", MPI_ERR_RANK, MPI_Graph_neighbors(g, -1, 4, nb));
        MT_CLASS_EQ("Graph_neighbors_count of node n", MPI_ERR_RANK,
                    MPI_Graph_neighbors_count(g, n, &v));
    } else {
        MT_TRUE(MPI_Graph_neighbors(g, -1, 4, nb) != MPI_SUCCESS,
                "Graph_neighbors of node -1 expected an error");
    }
    MT_CALL(MPI_Comm_free(&g));

    /* a graph of one node: the other processes get MPI_COMM_NULL; Graph_map agrees on the count */
    int i1[1] = { 0 }, in, nin = 0, nr = -2;
    MT_CALL(MPI_Graph_create(MPI_COMM_WORLD, 1, i1, edges, 0, &g));
    in = g != MPI_COMM_NULL;
    MT_CALL(MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("processes in a graph of one node", 1, nin);
    if (g != MPI_COMM_NULL) {
        int cnt = -1;
        MT_CALL(MPI_Graph_neighbors_count(g, 0, &cnt));
        MT_EQ("neighbours in a graph of one node", 0, cnt);
        MT_CALL(MPI_Comm_free(&g));
    }
    MT_CALL(MPI_Graph_map(MPI_COMM_WORLD, 1, i1, edges, &nr));
    in = nr != MPI_UNDEFINED;
    MT_TRUE(nr == MPI_UNDEFINED || nr == 0, "Graph_map to one node expected 0 or MPI_UNDEFINED got %d",
            nr);
    MT_CALL(MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("processes Graph_map places on one node", 1, nin);
    MT_CLASS_EQ("Graph_create with more nodes than processes", MPI_ERR_ARG,
                MPI_Graph_create(MPI_COMM_WORLD, n + 1, index, edges, 0, &g));
    free(index);
}

/* Adjacent: sources r-1, r-2 and destinations r+1, r+2 (fewer when they coincide), weighted. */
static int dist_lists(int n, int r, int sign, int *out)
{
    int k = 0;
    for (int d = 1; d <= 2; d++) {
        int q = ((r + sign * d) % n + n) % n, dup = 0;
        for (int j = 0; j < k; j++)
            dup |= out[j] == q;
        if (!dup)
            out[k++] = q;
    }
    return k;
}

static void check_dist_adjacent(void)
{
    int n = mt_size, src[2], dst[2], sw[2], dw[2];
    int ni = dist_lists(n, mt_rank, -1, src), no = dist_lists(n, mt_rank, 1, dst);
    for (int j = 0; j < 2; j++) {
        sw[j] = 100 * mt_rank + j;
        dw[j] = 200 * mt_rank + j;
    }
    MPI_Comm g, d;
    MT_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, src, sw, no, dst, dw, MPI_INFO_NULL, 0,
                                           &g));
    MT_CALL(MPI_Comm_dup(g, &d));
    MPI_Comm cs[2] = { g, d };
    for (int k = 0; k < 2; k++) {
        int st = -1, in = -1, out = -1, w = -1, s2[4], sw2[4], d2[4], dw2[4];
        MT_CALL(MPI_Topo_test(cs[k], &st));
        MT_EQ("Topo_test of a distributed graph", MPI_DIST_GRAPH, st);
        MT_CALL(MPI_Dist_graph_neighbors_count(cs[k], &in, &out, &w));
        MT_EQ("indegree", ni, in);
        MT_EQ("outdegree", no, out);
        MT_TRUE(w, "weighted expected true");
        MT_CALL(MPI_Dist_graph_neighbors(cs[k], 4, s2, sw2, 4, d2, dw2));
        for (int j = 0; j < ni; j++) {
            MT_EQ("sources in the order given", src[j], s2[j]);
            MT_EQ("source weights", sw[j], sw2[j]);
        }
        for (int j = 0; j < no; j++) {
            MT_EQ("destinations in the order given", dst[j], d2[j]);
            MT_EQ("destination weights", dw[j], dw2[j]);
        }
    }
    MT_CALL(MPI_Comm_free(&d));
    MT_CALL(MPI_Comm_free(&g));
    /* unweighted */
    MT_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, src, MPI_UNWEIGHTED, no, dst,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &g));
    int in = -1, out = -1, w = -1;
    MT_CALL(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    MT_TRUE(!w && in == ni && out == no, "unweighted adjacent graph expected (%d, %d, 0) got (%d, %d, %d)",
            ni, no, in, out, w);
    MT_CALL(MPI_Comm_free(&g));
    /* errors (MPICH 4.0 checks neither) */
    int bad[1] = { n };
    if (mt_weft)
        MT_CLASS_EQ("Dist_graph_create_adjacent with a source beyond the ranks", MPI_ERR_RANK,
                    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, NULL,
                                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    if (mt_weft)
        MT_CLASS_EQ("Dist_graph_create_adjacent with indegree -1", MPI_ERR_ARG,
                    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, src, MPI_UNWEIGHTED, 0, NULL,
                                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
}

static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Dist_graph_create: edge r -> r+1 and r -> r+2 (mod n, distinct), weight 1000 s + t, each named by
 * process (s + 1) mod n (not its source); then every edge named by rank 0 alone. The order of the
 * neighbours is not defined: compare them sorted, weights with them. */
static void check_dist_create(int by_root, int weighted)
{
    int n = mt_size, srcs[1], degs[1], dsts[2], ws[2], nsrc = 0;
    int *asrc = NULL, *adeg = NULL, *adst = NULL, *aw = NULL;
    if (!by_root) {
        srcs[0] = (mt_rank + n - 1) % n;   /* the process I name the edges of */
        degs[0] = dist_lists(n, srcs[0], 1, dsts);
        for (int j = 0; j < degs[0]; j++)
            ws[j] = 1000 * srcs[0] + dsts[j];
        nsrc = 1;
    } else if (mt_rank == 0) {
        asrc = mt_malloc(sizeof(int) * (size_t)n);
        adeg = mt_malloc(sizeof(int) * (size_t)n);
        adst = mt_malloc(sizeof(int) * 2 * (size_t)n);
        aw = mt_malloc(sizeof(int) * 2 * (size_t)n);
        int e = 0;
        for (int s = 0; s < n; s++) {
            asrc[s] = s;
            adeg[s] = dist_lists(n, s, 1, adst + e);
            for (int j = 0; j < adeg[s]; j++, e++)
                aw[e] = 1000 * s + adst[e];
        }
        nsrc = n;
    }
    const int *S = by_root ? asrc : srcs, *D = by_root ? adeg : degs, *T = by_root ? adst : dsts;
    const int *W = weighted ? (by_root ? (nsrc ? aw : MPI_WEIGHTS_EMPTY) : ws) : MPI_UNWEIGHTED;
    MPI_Comm g;
    MT_CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, nsrc, S, D, T, W, MPI_INFO_NULL, 0, &g));
    int st = -1, in = -1, out = -1, w = -1;
    MT_CALL(MPI_Topo_test(g, &st));
    MT_EQ("Topo_test after Dist_graph_create", MPI_DIST_GRAPH, st);
    MT_CALL(MPI_Dist_graph_neighbors_count(g, &in, &out, &w));
    int wsrc[2], wdst[2];
    int ni = dist_lists(n, mt_rank, -1, wsrc), no = dist_lists(n, mt_rank, 1, wdst);
    MT_EQ("Dist_graph_create indegree", ni, in);
    MT_EQ("Dist_graph_create outdegree", no, out);
    MT_EQ("Dist_graph_create weighted", weighted, w != 0);
    int s2[4], sw2[4], d2[4], dw2[4];
    MT_CALL(MPI_Dist_graph_neighbors(g, 4, s2, weighted ? sw2 : MPI_UNWEIGHTED, 4, d2,
                                     weighted ? dw2 : MPI_UNWEIGHTED));
    for (int j = 0; weighted && j < in; j++)
        MT_EQ("weight of an incoming edge", 1000 * s2[j] + mt_rank, sw2[j]);
    for (int j = 0; weighted && j < out; j++)
        MT_EQ("weight of an outgoing edge", 1000 * mt_rank + d2[j], dw2[j]);
    qsort(s2, (size_t)in, sizeof(int), cmp_int);
    qsort(d2, (size_t)out, sizeof(int), cmp_int);
    qsort(wsrc, (size_t)ni, sizeof(int), cmp_int);
    qsort(wdst, (size_t)no, sizeof(int), cmp_int);
    for (int j = 0; j < ni; j++)
        MT_EQ("a source (sorted)", wsrc[j], s2[j]);
    for (int j = 0; j < no; j++)
        MT_EQ("a destination (sorted)", wdst[j], d2[j]);
    MT_CALL(MPI_Comm_free(&g));
    free(asrc);
    free(adeg);
    free(adst);
    free(aw);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    check_graph();
    check_dist_adjacent();
    for (int by_root = 0; by_root < 2; by_root++)
        for (int weighted = 0; weighted < 2; weighted++)
            check_dist_create(by_root, weighted);
    return mt_finish("topo_graph");
}
