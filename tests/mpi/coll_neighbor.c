/* Neighborhood collectives (MPI 4.1 8.6, 8.7): Neighbor_allgather(v) and Neighbor_alltoall(v,w),
 * blocking and nonblocking, int and large-count forms, on a 2-D periodic Cartesian grid, a
 * non-periodic one (MPI_PROC_NULL neighbours, whose blocks must stay untouched), a 3-D grid with a
 * periodic dimension of one process (a process its own -1 and +1 neighbour), a graph (ring) and two
 * distributed graphs (adjacent, and named by other processes). Every received byte is checked, and
 * so are the gaps between the blocks. Argument: the largest block in bytes (default 40000).
 *
 * Which block of a sender lands in slot i of a receiver: Cartesian, the sender's block towards the
 * receiver's side, i.e. slot i ^ 1 (the -1 neighbour sent it to its +1 side); graphs without
 * repeated edges, the position of the receiver among the sender's destinations. */
#include "mpitest.h"

/* MPI_UNWEIGHTED is a small constant address in the standard ABI: GCC takes it for an array of size
 * 0 when it sees it passed as weights. */
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define MAXN 8
#define GUARD 0xEE

typedef struct {
    const char *name;
    MPI_Comm comm;
    int cart;                        /* slot i of a receiver is block i ^ 1 of its sender */
    int loop;                        /* a periodic dimension of 1 or 2 processes */
    int indeg, outdeg;
    int src[MAXN], dst[MAXN];
    int peer_block[MAXN];            /* slot i: the block index at the sender src[i] */
} topo_t;

/* The neighbours of this process in the standard's order, and what each slot receives. */
static void topo_setup(topo_t *t)
{
    int st = -1, n = mt_size;
    MT_CALL(MPI_Topo_test(t->comm, &st));
    if (st == MPI_CART) {
        int nd = 0, dims[MAXN / 2], periods[MAXN / 2], coords[MAXN / 2];
        MT_CALL(MPI_Cartdim_get(t->comm, &nd));
        MT_CALL(MPI_Cart_get(t->comm, MAXN / 2, dims, periods, coords));
        for (int d = 0; d < nd; d++)
            t->loop |= periods[d] && dims[d] <= 2;
        t->cart = 1;
        t->indeg = t->outdeg = 2 * nd;
        for (int d = 0; d < nd; d++) {
            MT_CALL(MPI_Cart_shift(t->comm, d, 1, &t->src[2 * d], &t->src[2 * d + 1]));
            t->dst[2 * d] = t->src[2 * d];
            t->dst[2 * d + 1] = t->src[2 * d + 1];
        }
        for (int i = 0; i < t->indeg; i++)
            t->peer_block[i] = i ^ 1;
        return;
    }
    if (st == MPI_GRAPH) {
        int me = -1;
        MT_CALL(MPI_Comm_rank(t->comm, &me));
        MT_CALL(MPI_Graph_neighbors_count(t->comm, me, &t->indeg));
        MT_CALL(MPI_Graph_neighbors(t->comm, me, MAXN, t->src));
        t->outdeg = t->indeg;
        memcpy(t->dst, t->src, sizeof(t->src));
    } else {
        int w;
        MT_CALL(MPI_Dist_graph_neighbors_count(t->comm, &t->indeg, &t->outdeg, &w));
        MT_CALL(MPI_Dist_graph_neighbors(t->comm, MAXN, t->src, MPI_UNWEIGHTED, MAXN, t->dst,
                                         MPI_UNWEIGHTED));
    }
    /* everyone's destinations, to find my position among my sources' */
    int *all = mt_malloc(sizeof(int) * MAXN * (size_t)n), mine[MAXN];
    for (int j = 0; j < MAXN; j++)
        mine[j] = j < t->outdeg ? t->dst[j] : -1;
    MT_CALL(MPI_Allgather(mine, MAXN, MPI_INT, all, MAXN, MPI_INT, t->comm));
    for (int i = 0; i < t->indeg; i++) {
        t->peer_block[i] = -1;
        for (int j = 0; j < MAXN; j++)
            if (all[t->src[i] * MAXN + j] == mt_rank) {
                MT_TRUE(t->peer_block[i] < 0, "%s: the test needs graphs without repeated edges",
                        t->name);
                t->peer_block[i] = j;
            }
        MT_TRUE(t->peer_block[i] >= 0, "%s: rank %d is a source but has no edge to me", t->name,
                t->src[i]);
    }
    free(all);
}

/* Sizes of the blocks, known to both sides: v forms vary them by sender and block. */
static int vcount(int base, int sender, int block)
{
    return base + (sender * 7 + block * 3) % 11;
}
static uint64_t seed_of(int call, int sender, int block)
{
    return (uint64_t)call * 1000003u + (uint64_t)sender * 1009u + (uint64_t)block * 17u + 1;
}
enum { ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, ALLTOALLW, NCALLS };
static const char *const call_names[NCALLS] = { "Neighbor_allgather", "Neighbor_allgatherv",
                                                "Neighbor_alltoall", "Neighbor_alltoallv",
                                                "Neighbor_alltoallw" };

/* The buffers of one call: send blocks and receive slots placed with a gap of 3 guard bytes. */
typedef struct {
    char *sbuf, *rbuf;
    size_t slen, rlen;
    int scnt[MAXN], sdsp[MAXN], rcnt[MAXN], rdsp[MAXN];   /* bytes */
    MPI_Count scnt_c[MAXN], rcnt_c[MAXN];
    MPI_Aint sdsp_a[MAXN], rdsp_a[MAXN];
    MPI_Datatype stypes[MAXN], rtypes[MAXN];
} bufs_t;

static void bufs_make(bufs_t *b, const topo_t *t, int call, int base, MPI_Datatype byte1)
{
    int nsend = call == ALLGATHER || call == ALLGATHERV ? 1 : t->outdeg;
    size_t off = 3;
    /* send blocks in reverse order in memory, so displacements matter */
    for (int j = nsend - 1; j >= 0; j--) {
        int blk = call == ALLGATHER || call == ALLGATHERV ? 0 : j;
        b->scnt[j] = call == ALLTOALL || call == ALLGATHER ? base : vcount(base, mt_rank, blk);
        b->sdsp[j] = (int)off;
        off += (size_t)b->scnt[j] + 3;
    }
    b->slen = off;
    off = 3;
    for (int i = 0; i < t->indeg; i++) {
        int s = t->src[i];
        int blk = call == ALLGATHER || call == ALLGATHERV ? 0 : t->peer_block[i];
        if (call == ALLTOALL || call == ALLGATHER)
            b->rcnt[i] = base;
        else
            b->rcnt[i] = s == MPI_PROC_NULL ? base : vcount(base, s, blk);
        b->rdsp[i] = (int)off;
        off += (size_t)b->rcnt[i] + 3;
    }
    b->rlen = off;
    b->sbuf = mt_malloc(b->slen);
    b->rbuf = mt_malloc(b->rlen);
    memset(b->sbuf, GUARD, b->slen);
    memset(b->rbuf, GUARD, b->rlen);
    for (int j = 0; j < nsend; j++)
        mt_fill(b->sbuf + b->sdsp[j], (size_t)b->scnt[j], seed_of(call, mt_rank, nsend == 1 ? 0 : j));
    for (int k = 0; k < MAXN; k++) {
        b->scnt_c[k] = b->scnt[k];
        b->rcnt_c[k] = b->rcnt[k];
        b->sdsp_a[k] = b->sdsp[k];
        b->rdsp_a[k] = b->rdsp[k];
        b->stypes[k] = k % 2 ? MPI_BYTE : byte1;   /* a user datatype on every other neighbour */
        b->rtypes[k] = k % 2 ? byte1 : MPI_BYTE;
    }
}

/* The fixed-size forms place slot i at i * count and send block j from j * count. */
static void bufs_fixed(bufs_t *b, const topo_t *t, int base)
{
    for (int j = 0; j < t->outdeg; j++)
        b->sdsp[j] = j * base;
    for (int i = 0; i < t->indeg; i++)
        b->rdsp[i] = i * base;
}

static void bufs_check(bufs_t *b, const topo_t *t, int call, int mode)
{
    char what[160];
    size_t at = 0;
    int fixed = call == ALLTOALL || call == ALLGATHER;
    /* MPICH 4.0 pairs the two blocks exchanged with one process along a periodic dimension of 1 or
     * 2 processes the wrong way round (mpi-forum/mpi-issues#153, an erratum of MPI 4.0): checked
     * only with --weft */
    if (call >= ALLTOALL && t->loop && !mt_weft) {
        free(b->sbuf);
        free(b->rbuf);
        return;
    }
    for (int i = 0; i < t->indeg; i++) {
        int s = t->src[i];
        snprintf(what, sizeof(what), "%s on %s (mode %d), slot %d from %d", call_names[call],
                 t->name, mode, i, s);
        if (!fixed) {
            mt_verify_const(b->rbuf + at, (size_t)b->rdsp[i] - at, GUARD, what);   /* the gap */
            at = (size_t)b->rdsp[i] + (size_t)b->rcnt[i];
        }
        if (s == MPI_PROC_NULL)
            mt_verify_const(b->rbuf + b->rdsp[i], (size_t)b->rcnt[i], GUARD, what);
        else
            mt_verify(b->rbuf + b->rdsp[i], (size_t)b->rcnt[i],
                      seed_of(call, s, call == ALLGATHER || call == ALLGATHERV ? 0 : t->peer_block[i]),
                      what);
    }
    if (!fixed)
        mt_verify_const(b->rbuf + at, b->rlen - at, GUARD, "after the last slot");
    free(b->sbuf);
    free(b->rbuf);
}

/* mode: 0 blocking, 1 nonblocking (all five calls outstanding at once), 2 and 3 the same with the
 * large-count forms. */
static void run_all(topo_t *t, int base, int mode, MPI_Datatype byte1)
{
    bufs_t b[NCALLS];
    MPI_Request rq[NCALLS];
    int nb = mode & 1, big = mode >= 2;
    MPI_Comm c = t->comm;
    for (int k = 0; k < NCALLS; k++) {
        bufs_make(&b[k], t, k, base, byte1);
        if (k == ALLGATHER || k == ALLTOALL) {
            /* contiguous blocks: rebuild the layout the fixed forms use */
            free(b[k].sbuf);
            free(b[k].rbuf);
            int ns = k == ALLGATHER ? 1 : t->outdeg;
            bufs_fixed(&b[k], t, base);
            b[k].slen = (size_t)base * (size_t)(ns ? ns : 1);
            b[k].rlen = (size_t)base * (size_t)(t->indeg ? t->indeg : 1);
            b[k].sbuf = mt_malloc(b[k].slen);
            b[k].rbuf = mt_malloc(b[k].rlen);
            memset(b[k].rbuf, GUARD, b[k].rlen);
            for (int j = 0; j < ns; j++)
                mt_fill(b[k].sbuf + (size_t)j * (size_t)base, (size_t)base, seed_of(k, mt_rank, j));
        }
    }
    int i0 = b[ALLGATHERV].sdsp[0];
    MPI_Request *r = rq;
#define CALL(blocking, nonblocking)                                                                \
    do {                                                                                           \
        if (nb)                                                                                    \
            MT_CALL(nonblocking);                                                                  \
        else                                                                                       \
            MT_CALL(blocking);                                                                     \
        r++;                                                                                       \
    } while (0)
    if (!big) {
        CALL(MPI_Neighbor_allgather(b[0].sbuf, base, MPI_BYTE, b[0].rbuf, base, MPI_BYTE, c),
             MPI_Ineighbor_allgather(b[0].sbuf, base, MPI_BYTE, b[0].rbuf, base, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_allgatherv(b[1].sbuf + i0, b[1].scnt[0], MPI_BYTE, b[1].rbuf, b[1].rcnt,
                                     b[1].rdsp, MPI_BYTE, c),
             MPI_Ineighbor_allgatherv(b[1].sbuf + i0, b[1].scnt[0], MPI_BYTE, b[1].rbuf, b[1].rcnt,
                                      b[1].rdsp, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoall(b[2].sbuf, base, MPI_BYTE, b[2].rbuf, base, MPI_BYTE, c),
             MPI_Ineighbor_alltoall(b[2].sbuf, base, MPI_BYTE, b[2].rbuf, base, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoallv(b[3].sbuf, b[3].scnt, b[3].sdsp, MPI_BYTE, b[3].rbuf, b[3].rcnt,
                                    b[3].rdsp, MPI_BYTE, c),
             MPI_Ineighbor_alltoallv(b[3].sbuf, b[3].scnt, b[3].sdsp, MPI_BYTE, b[3].rbuf,
                                     b[3].rcnt, b[3].rdsp, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoallw(b[4].sbuf, b[4].scnt, b[4].sdsp_a, b[4].stypes, b[4].rbuf,
                                    b[4].rcnt, b[4].rdsp_a, b[4].rtypes, c),
             MPI_Ineighbor_alltoallw(b[4].sbuf, b[4].scnt, b[4].sdsp_a, b[4].stypes, b[4].rbuf,
                                     b[4].rcnt, b[4].rdsp_a, b[4].rtypes, c, r));
    } else {
        CALL(MPI_Neighbor_allgather_c(b[0].sbuf, base, MPI_BYTE, b[0].rbuf, base, MPI_BYTE, c),
             MPI_Ineighbor_allgather_c(b[0].sbuf, base, MPI_BYTE, b[0].rbuf, base, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_allgatherv_c(b[1].sbuf + i0, b[1].scnt[0], MPI_BYTE, b[1].rbuf,
                                       b[1].rcnt_c, b[1].rdsp_a, MPI_BYTE, c),
             MPI_Ineighbor_allgatherv_c(b[1].sbuf + i0, b[1].scnt[0], MPI_BYTE, b[1].rbuf,
                                        b[1].rcnt_c, b[1].rdsp_a, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoall_c(b[2].sbuf, base, MPI_BYTE, b[2].rbuf, base, MPI_BYTE, c),
             MPI_Ineighbor_alltoall_c(b[2].sbuf, base, MPI_BYTE, b[2].rbuf, base, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoallv_c(b[3].sbuf, b[3].scnt_c, b[3].sdsp_a, MPI_BYTE, b[3].rbuf,
                                      b[3].rcnt_c, b[3].rdsp_a, MPI_BYTE, c),
             MPI_Ineighbor_alltoallv_c(b[3].sbuf, b[3].scnt_c, b[3].sdsp_a, MPI_BYTE, b[3].rbuf,
                                       b[3].rcnt_c, b[3].rdsp_a, MPI_BYTE, c, r));
        CALL(MPI_Neighbor_alltoallw_c(b[4].sbuf, b[4].scnt_c, b[4].sdsp_a, b[4].stypes, b[4].rbuf,
                                      b[4].rcnt_c, b[4].rdsp_a, b[4].rtypes, c),
             MPI_Ineighbor_alltoallw_c(b[4].sbuf, b[4].scnt_c, b[4].sdsp_a, b[4].stypes, b[4].rbuf,
                                       b[4].rcnt_c, b[4].rdsp_a, b[4].rtypes, c, r));
    }
#undef CALL
    if (nb)
        MT_CALL(MPI_Waitall(NCALLS, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < NCALLS; k++)
        bufs_check(&b[k], t, k, mode);
}

/* Distributed graph: destinations r+1, r+2 and sources r-1, r-2 (mod n, without repeats). */
static int ring2(int n, int r, int sign, int *out)
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

int main(int argc, char **argv)
{
    long maxb = mt_init_args(argc, argv, 40000);
    mt_init(&argc, &argv);
    int n = mt_size;
    topo_t t[6];
    memset(t, 0, sizeof(t));
    int dims[2] = { 0, 0 };
    MT_CALL(MPI_Dims_create(n, 2, dims));
    t[0].name = "2-D periodic grid";
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){ 1, 1 }, 0, &t[0].comm));
    t[1].name = "2-D non-periodic grid";
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, (int[]){ 0, 0 }, 0, &t[1].comm));
    int d3[3] = { n, 1, 1 };
    t[2].name = "3-D grid n x 1 x 1, periodic in the last two";
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, (int[]){ 0, 1, 1 }, 0, &t[2].comm));
    /* the ring as a graph (a single edge for 2 nodes, none for 1) */
    int index[MAXN], edges[2 * MAXN], ne = 0;
    for (int i = 0; i < n; i++) {
        if (n == 2)
            edges[ne++] = 1 - i;
        else if (n > 2) {
            edges[ne++] = (i + n - 1) % n;
            edges[ne++] = (i + 1) % n;
        }
        index[i] = ne;
    }
    t[3].name = "ring graph";
    MT_CALL(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t[3].comm));
    int src[2], dst[2], ni = ring2(n, mt_rank, -1, src), no = ring2(n, mt_rank, 1, dst);
    t[4].name = "adjacent distributed graph";
    MT_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, src, MPI_UNWEIGHTED, no, dst,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t[4].comm));
    /* the same edges, each process naming those of its left neighbour */
    int me_src[1] = { (mt_rank + n - 1) % n }, deg[1], ldst[2];
    deg[0] = ring2(n, me_src[0], 1, ldst);
    t[5].name = "distributed graph from Dist_graph_create";
    MT_CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me_src, deg, ldst, MPI_UNWEIGHTED,
                                  MPI_INFO_NULL, 0, &t[5].comm));
    for (int k = 0; k < 6; k++)
        topo_setup(&t[k]);

    MPI_Datatype byte1;
    MT_CALL(MPI_Type_contiguous(1, MPI_BYTE, &byte1));
    MT_CALL(MPI_Type_commit(&byte1));
    int bases[3] = { 1, 1000, (int)maxb };
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 6; k++)
            for (int mode = 0; mode < 4; mode++)
                run_all(&t[k], bases[s], mode, byte1);
    /* a duplicate keeps the neighbourhood */
    MPI_Comm dup;
    MT_CALL(MPI_Comm_dup(t[0].comm, &dup));
    topo_t td = t[0];
    td.comm = dup;
    td.name = "duplicate of the periodic grid";
    run_all(&td, 100, 1, byte1);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Type_free(&byte1));

    /* errors: no topology, and MPI_IN_PLACE (not defined for neighborhood collectives) */
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    char x[4] = { 0 }, y[4 * MAXN];
    MT_CLASS_EQ("Neighbor_alltoall on a communicator without topology", MPI_ERR_TOPOLOGY,
                MPI_Neighbor_alltoall(x, 1, MPI_BYTE, y, 1, MPI_BYTE, MPI_COMM_WORLD));
    MPI_Request rq = MPI_REQUEST_NULL;
    MT_CLASS_EQ("Ineighbor_allgather on a communicator without topology", MPI_ERR_TOPOLOGY,
                MPI_Ineighbor_allgather(x, 1, MPI_BYTE, y, 1, MPI_BYTE, MPI_COMM_WORLD, &rq));
    if (mt_weft) {
        MT_CALL(MPI_Comm_set_errhandler(t[0].comm, MPI_ERRORS_RETURN));
        MT_CLASS_EQ("Neighbor_allgather with MPI_IN_PLACE", MPI_ERR_BUFFER,
                    MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_BYTE, y, 1, MPI_BYTE, t[0].comm));
        MT_CLASS_EQ("Neighbor_alltoall with a negative count", MPI_ERR_COUNT,
                    MPI_Neighbor_alltoall(x, -1, MPI_BYTE, y, 1, MPI_BYTE, t[0].comm));
    }
    for (int k = 0; k < 6; k++)
        MT_CALL(MPI_Comm_free(&t[k].comm));
    return mt_finish("coll_neighbor");
}
