/* Persistent neighborhood collectives (MPI 4.0 MPI_Neighbor_*_init) against their blocking forms,
 * 10 starts each with new contents, on a periodic Cartesian grid, a graph (a ring with chords)
 * and a distributed graph (each rank sends to up to two others, the neighbours differing in
 * number). Argument: the count per neighbour. */
#include "mpitest.h"

#define ITERS 10
#define MAXN 64

static int g_n;

static void fill(int *b, size_t n, long it)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (int)((mt_rank * 131 + (long)i * 7 + it * 13) % 1000);
}

static void degrees(MPI_Comm c, int *in, int *out)
{
    int topo;
    MT_CALL(MPI_Topo_test(c, &topo));
    if (topo == MPI_CART) {
        int nd;
        MT_CALL(MPI_Cartdim_get(c, &nd));
        *in = *out = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        int nn;
        MT_CALL(MPI_Graph_neighbors_count(c, mt_rank, &nn));
        *in = *out = nn;
    } else {
        int w;
        MT_CALL(MPI_Dist_graph_neighbors_count(c, in, out, &w));
    }
}

static void compare(const char *what, const char *topo, long it, const int *p, const int *b,
                    size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != b[i])
            MT_FAIL("%s on %s start %ld: element %zu of %zu expected %d (blocking) got %d", what,
                    topo, it, i, n, b[i], p[i]);
}

static void test_topo(MPI_Comm c, const char *topo)
{
    int in, out;
    degrees(c, &in, &out);
    int n = g_n;
    size_t sn = (size_t)(out + 1) * (n + 3), rn = (size_t)(in + 1) * (n + 3) * 2;
    int *ps = mt_malloc(sn * sizeof(int)), *bs = mt_malloc(sn * sizeof(int));
    int *pr = mt_malloc(rn * sizeof(int)), *br = mt_malloc(rn * sizeof(int));
    int rc[MAXN], rd[MAXN], sc[MAXN], sd[MAXN];
    MPI_Count crc[MAXN], csc[MAXN];
    MPI_Aint crd[MAXN], csd[MAXN], wsd[MAXN], wrd[MAXN];
    MPI_Datatype st[MAXN], rt[MAXN];
    /* v forms: every block has n elements (the counts must agree with the peers', which a
     * per-rank choice would not ensure on a graph), placed with gaps */
    for (int i = 0; i < MAXN; i++) {
        sc[i] = rc[i] = n;
        sd[i] = i * (n + 2);
        rd[i] = i * (n + 3);
        crc[i] = csc[i] = n;
        csd[i] = sd[i], crd[i] = rd[i];
        wsd[i] = (MPI_Aint)sd[i] * (MPI_Aint)sizeof(int);
        wrd[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
        st[i] = rt[i] = MPI_INT;
    }
    for (int k = 0; k < 7; k++) {
        MPI_Request q;
        const char *what;
        for (size_t i = 0; i < sn; i++)
            ps[i] = bs[i] = 0;
        switch (k) {
        case 0:
            what = "Neighbor_allgather_init";
            MT_CALL(MPI_Neighbor_allgather_init(ps, n, MPI_INT, pr, n, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        case 1:
            what = "Neighbor_allgather_init_c";
            MT_CALL(MPI_Neighbor_allgather_init_c(ps, n, MPI_INT, pr, n, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        case 2:
            what = "Neighbor_allgatherv_init";
            MT_CALL(MPI_Neighbor_allgatherv_init(ps, n, MPI_INT, pr, rc, rd, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        case 3:
            what = "Neighbor_alltoall_init";
            MT_CALL(MPI_Neighbor_alltoall_init(ps, n, MPI_INT, pr, n, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        case 4:
            what = "Neighbor_alltoallv_init";
            MT_CALL(MPI_Neighbor_alltoallv_init(ps, sc, sd, MPI_INT, pr, rc, rd, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        case 5:
            what = "Neighbor_alltoallv_init_c";
            MT_CALL(MPI_Neighbor_alltoallv_init_c(ps, csc, csd, MPI_INT, pr, crc, crd, MPI_INT, c, MPI_INFO_NULL, &q));
            break;
        default:
            what = "Neighbor_alltoallw_init";
            MT_CALL(MPI_Neighbor_alltoallw_init(ps, sc, wsd, st, pr, rc, wrd, rt, c, MPI_INFO_NULL, &q));
            break;
        }
        for (long it = 0; it < ITERS; it++) {
            fill(ps, sn, it + k * 100);
            memcpy(bs, ps, sn * sizeof(int));
            for (size_t i = 0; i < rn; i++)
                pr[i] = br[i] = -5;
            MT_CALL(MPI_Start(&q));
            MT_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
            switch (k) {
            case 0: case 1:
                MT_CALL(MPI_Neighbor_allgather(bs, n, MPI_INT, br, n, MPI_INT, c));
                break;
            case 2:
                MT_CALL(MPI_Neighbor_allgatherv(bs, n, MPI_INT, br, rc, rd, MPI_INT, c));
                break;
            case 3:
                MT_CALL(MPI_Neighbor_alltoall(bs, n, MPI_INT, br, n, MPI_INT, c));
                break;
            case 4: case 5:
                MT_CALL(MPI_Neighbor_alltoallv(bs, sc, sd, MPI_INT, br, rc, rd, MPI_INT, c));
                break;
            default:
                MT_CALL(MPI_Neighbor_alltoallw(bs, sc, wsd, st, br, rc, wrd, rt, c));
                break;
            }
            compare(what, topo, it, pr, br, rn);
        }
        MT_CALL(MPI_Request_free(&q));
    }
    free(ps), free(bs), free(pr), free(br);
    if (mt_rank == 0)
        printf("  %s: ok\n", topo);
}

int main(int argc, char **argv)
{
    g_n = (int)mt_init_args(argc, argv, 1000);
    mt_init(&argc, &argv);
    MT_TRUE(mt_size <= MAXN / 4, "at most %d ranks", MAXN / 4);
    /* Cartesian: 2-D periodic grid */
    int dims[2] = { 0, 0 }, per[2] = { 1, 1 };
    MT_CALL(MPI_Dims_create(mt_size, 2, dims));
    MPI_Comm cart;
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &cart));
    test_topo(cart, "cart");
    MT_CALL(MPI_Comm_free(&cart));
    /* graph: ring, plus a chord between rank 0 and the rank opposite it */
    int index[MAXN], edges[4 * MAXN], ne = 0, nn = mt_size;
    for (int r = 0; r < nn; r++) {
        if (nn > 1) {
            edges[ne++] = (r + 1) % nn;
            edges[ne++] = (r + nn - 1) % nn;
        }
        if (nn >= 4 && r == 0)
            edges[ne++] = nn / 2;
        if (nn >= 4 && r == nn / 2)
            edges[ne++] = 0;
        index[r] = ne;
    }
    MPI_Comm graph;
    MT_CALL(MPI_Graph_create(MPI_COMM_WORLD, nn, index, edges, 0, &graph));
    test_topo(graph, "graph");
    MT_CALL(MPI_Comm_free(&graph));
    /* distributed graph: rank r sends to r+1, and also to r+2 when r is even */
    int srcs[2], dsts[2], ni = 0, no = 0;
    dsts[no++] = (mt_rank + 1) % nn;
    if (mt_rank % 2 == 0)
        dsts[no++] = (mt_rank + 2) % nn;
    srcs[ni++] = (mt_rank + nn - 1) % nn;
    if (((mt_rank + nn - 2) % nn) % 2 == 0)
        srcs[ni++] = (mt_rank + nn - 2) % nn;
    MPI_Comm dg;
    int wts[2] = { 1, 1 };
    MT_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, srcs, wts, no, dsts, wts,
                                           MPI_INFO_NULL, 0, &dg));
    test_topo(dg, "dist_graph");
    MT_CALL(MPI_Comm_free(&dg));
    return mt_finish("coll_persist_neighbor");
}
