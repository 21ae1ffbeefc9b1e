/* Cartesian topologies and MPI_Dims_create (MPI 4.1 8.5.1, 8.5.2, 8.5.5, 8.5.6): Dims_create on the
 * standard's examples and more, Cart_create (periodic and not, grids smaller than the communicator,
 * reorder), Cart_get, Cart_rank and Cart_coords against the row-major numbering, Cart_shift at the
 * edges, Cart_sub, Cart_map, Topo_test, the topology surviving Comm_dup, and the error classes
 * under MPI_ERRORS_RETURN. Runs at any number of ranks. */
#include "mpitest.h"

/* An error whose class the standard leaves open between peers: any error, and under --weft the
 * class Weft gives. */
#define EXPECT_ERR(what, weft_cls, code)                                                           \
    do {                                                                                           \
        int rc_ = (code);                                                                          \
        MT_TRUE(rc_ != MPI_SUCCESS, "%s expected an error got MPI_SUCCESS", (what));               \
        if (mt_weft)                                                                               \
            MT_CLASS_EQ((what), (weft_cls), rc_);                                                  \
    } while (0)

static void dims_case(int nnodes, int ndims, const int *in, const int *expect)
{
    int d[8];
    if (ndims > 0)
        memcpy(d, in, sizeof(int) * (size_t)ndims);
    MT_CALL(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        if (d[i] != expect[i])
            MT_FAIL("Dims_create(%d, %d) dims[%d] expected %d got %d", nnodes, ndims, i, expect[i],
                    d[i]);
}

static void check_dims_create(void)
{
    /* the standard's examples (8.5.2) */
    dims_case(6, 2, (int[]){ 0, 0 }, (int[]){ 3, 2 });
    dims_case(7, 2, (int[]){ 0, 0 }, (int[]){ 7, 1 });
    dims_case(6, 3, (int[]){ 0, 3, 0 }, (int[]){ 2, 3, 1 });
    int d3[3] = { 0, 3, 0 };
    MT_TRUE(MPI_Dims_create(7, 3, d3) != MPI_SUCCESS, "Dims_create(7, 3, {0,3,0}) expected an error");
    /* as close to each other as possible, non-increasing */
    dims_case(12, 2, (int[]){ 0, 0 }, (int[]){ 4, 3 });
    dims_case(12, 3, (int[]){ 0, 0, 0 }, (int[]){ 3, 2, 2 });
    dims_case(16, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 2, 2 });
    dims_case(8, 3, (int[]){ 0, 0, 0 }, (int[]){ 2, 2, 2 });
    dims_case(64, 3, (int[]){ 0, 0, 0 }, (int[]){ 4, 4, 4 });
    dims_case(1, 4, (int[]){ 0, 0, 0, 0 }, (int[]){ 1, 1, 1, 1 });
    dims_case(30, 2, (int[]){ 0, 0 }, (int[]){ 6, 5 });
    dims_case(24, 2, (int[]){ 0, 2 }, (int[]){ 12, 2 });
    dims_case(24, 3, (int[]){ 2, 0, 0 }, (int[]){ 2, 4, 3 });
    dims_case(6, 2, (int[]){ 2, 3 }, (int[]){ 2, 3 });
    dims_case(1, 0, NULL, NULL);
    int e[2] = { 0, 0 };
    EXPECT_ERR("Dims_create ndims -1", MPI_ERR_DIMS, MPI_Dims_create(4, -1, e));
    e[0] = 3, e[1] = 0;
    MT_CLASS_EQ("Dims_create(10, {3, 0})", MPI_ERR_DIMS, MPI_Dims_create(10, 2, e));
    e[0] = 2, e[1] = 3;
    MT_CLASS_EQ("Dims_create(10, {2, 3})", MPI_ERR_DIMS, MPI_Dims_create(10, 2, e));
}

/* Every check of a 2-D grid dims x periods made from MPI_COMM_WORLD without reordering. */
static void check_grid(MPI_Comm cart, const int dims[2], const int periods[2])
{
    int st = -1, nd = -1, r = -1, sz = -1;
    MT_CALL(MPI_Topo_test(cart, &st));
    MT_EQ("Topo_test of a Cartesian communicator", MPI_CART, st);
    MT_CALL(MPI_Cartdim_get(cart, &nd));
    MT_EQ("Cartdim_get", 2, nd);
    MT_CALL(MPI_Comm_rank(cart, &r));
    MT_CALL(MPI_Comm_size(cart, &sz));
    MT_EQ("Cart_create without reorder keeps the rank", mt_rank, r);
    MT_EQ("size of the grid", dims[0] * dims[1], sz);
    int gd[2], gp[2], gc[2];
    MT_CALL(MPI_Cart_get(cart, 2, gd, gp, gc));
    for (int i = 0; i < 2; i++) {
        MT_EQ("Cart_get dims", dims[i], gd[i]);
        MT_EQ("Cart_get periods", periods[i] != 0, gp[i] != 0);
    }
    /* row-major numbering */
    MT_EQ("Cart_get coords[0]", r / dims[1], gc[0]);
    MT_EQ("Cart_get coords[1]", r % dims[1], gc[1]);
    for (int q = 0; q < sz; q++) {
        int c[2], back = -1;
        MT_CALL(MPI_Cart_coords(cart, q, 2, c));
        MT_EQ("Cart_coords[0]", q / dims[1], c[0]);
        MT_EQ("Cart_coords[1]", q % dims[1], c[1]);
        MT_CALL(MPI_Cart_rank(cart, c, &back));
        MT_EQ("Cart_rank(Cart_coords(q))", q, back);
    }
    /* periodic dimensions wrap in Cart_rank */
    for (int i = 0; i < 2; i++) {
        if (!periods[i])
            continue;
        int c[2] = { gc[0], gc[1] }, w = -1;
        c[i] += 3 * dims[i];
        MT_CALL(MPI_Cart_rank(cart, c, &w));
        MT_EQ("Cart_rank beyond a periodic dimension", r, w);
        c[i] = gc[i] - dims[i];
        MT_CALL(MPI_Cart_rank(cart, c, &w));
        MT_EQ("Cart_rank below a periodic dimension", r, w);
    }
    /* Cart_shift: every direction, displacements 0, +-1, +-2, beyond the grid */
    for (int dir = 0; dir < 2; dir++)
        for (int disp = -5; disp <= 5; disp++) {
            int src = -2, dst = -2;
            MT_CALL(MPI_Cart_shift(cart, dir, disp, &src, &dst));
            int ex[2];
            for (int k = 0; k < 2; k++) {
                int y = gc[dir] + (k ? disp : -disp), c[2] = { gc[0], gc[1] };
                if (y < 0 || y >= dims[dir]) {
                    if (!periods[dir]) {
                        ex[k] = MPI_PROC_NULL;
                        continue;
                    }
                    y = ((y % dims[dir]) + dims[dir]) % dims[dir];
                }
                c[dir] = y;
                ex[k] = c[0] * dims[1] + c[1];
            }
            if (src != ex[0] || dst != ex[1])
                MT_FAIL("Cart_shift(direction %d, disp %d) expected (%d, %d) got (%d, %d)", dir,
                        disp, ex[0], ex[1], src, dst);
        }
    /* the topology survives Comm_dup, and a duplicate's queries agree */
    MPI_Comm dup;
    MT_CALL(MPI_Comm_dup(cart, &dup));
    MT_CALL(MPI_Topo_test(dup, &st));
    MT_EQ("Topo_test of a duplicate", MPI_CART, st);
    int dd[2], dp[2], dc[2];
    MT_CALL(MPI_Cart_get(dup, 2, dd, dp, dc));
    for (int i = 0; i < 2; i++) {
        MT_EQ("Cart_get dims of the duplicate", dims[i], dd[i]);
        MT_EQ("Cart_get periods of the duplicate", periods[i] != 0, dp[i] != 0);
        MT_EQ("Cart_get coords of the duplicate", gc[i], dc[i]);
    }
    int s1, d1, s2, d2;
    MT_CALL(MPI_Cart_shift(cart, 0, 1, &s1, &d1));
    MT_CALL(MPI_Cart_shift(dup, 0, 1, &s2, &d2));
    MT_TRUE(s1 == s2 && d1 == d2, "Cart_shift of the duplicate expected (%d, %d) got (%d, %d)",
            s1, d1, s2, d2);
    MT_CALL(MPI_Comm_free(&dup));
    /* Comm_idup copies it too; Comm_split does not */
    MPI_Request rq;
    MT_CALL(MPI_Comm_idup(cart, &dup, &rq));
    MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Topo_test(dup, &st));
    MT_EQ("Topo_test of an idup", MPI_CART, st);
    MT_CALL(MPI_Cart_get(dup, 2, dd, dp, dc));
    MT_TRUE(dc[0] == gc[0] && dc[1] == gc[1], "Cart_get coords of an idup expected (%d, %d) got (%d, %d)",
            gc[0], gc[1], dc[0], dc[1]);
    MT_CALL(MPI_Comm_free(&dup));
    MT_CALL(MPI_Comm_split(cart, 0, 0, &dup));
    MT_CALL(MPI_Topo_test(dup, &st));
    MT_EQ("Topo_test after Comm_split", MPI_UNDEFINED, st);
    MT_CALL(MPI_Comm_free(&dup));
    /* Cart_sub: keep dimension 0 (a column: the processes with my coordinate 1), then none */
    MPI_Comm sub;
    MT_CALL(MPI_Cart_sub(cart, (int[]){ 1, 0 }, &sub));
    MT_CALL(MPI_Comm_size(sub, &sz));
    MT_CALL(MPI_Comm_rank(sub, &r));
    MT_EQ("Cart_sub size", dims[0], sz);
    MT_EQ("Cart_sub rank", gc[0], r);
    MT_CALL(MPI_Cartdim_get(sub, &nd));
    MT_EQ("Cartdim_get of a sub-grid", 1, nd);
    MT_CALL(MPI_Cart_get(sub, 1, gd, gp, gc + 1));
    MT_EQ("Cart_get dims of a sub-grid", dims[0], gd[0]);
    MT_EQ("Cart_get periods of a sub-grid", periods[0] != 0, gp[0] != 0);
    MT_EQ("Cart_get coords of a sub-grid", gc[0], gc[1]);
    /* the members of the sub-grid are exactly the column: exchange world ranks along it */
    int *world = mt_malloc(sizeof(int) * (size_t)sz);
    MT_CALL(MPI_Allgather(&mt_rank, 1, MPI_INT, world, 1, MPI_INT, sub));
    for (int q = 0; q < sz; q++)
        MT_EQ("world rank of a sub-grid member", q * dims[1] + mt_rank % dims[1], world[q]);
    free(world);
    MT_CALL(MPI_Comm_free(&sub));
    /* keeping no dimension: a zero-dimensional grid of one process each (MPICH 4.0 gives
     * MPI_COMM_NULL to all but one, hence --weft) */
    MT_CALL(MPI_Cart_sub(cart, (int[]){ 0, 0 }, &sub));
    MT_TRUE(sub != MPI_COMM_NULL || !mt_weft, "Cart_sub keeping no dimension expected a communicator");
    if (sub != MPI_COMM_NULL) {
        MT_CALL(MPI_Comm_size(sub, &sz));
        MT_EQ("Cart_sub keeping no dimension: size", 1, sz);
        MT_CALL(MPI_Cartdim_get(sub, &nd));
        MT_EQ("Cart_sub keeping no dimension: Cartdim_get", 0, nd);
        MT_CALL(MPI_Comm_free(&sub));
    }
}

static void check_errors(MPI_Comm cart)
{
    int v = 0, c[2] = { 0, 0 }, d[2] = { 1, 1 }, p[2] = { 0, 0 };
    MPI_Comm out = MPI_COMM_NULL;
    MT_CLASS_EQ("Cartdim_get on a communicator without topology", MPI_ERR_TOPOLOGY,
                MPI_Cartdim_get(MPI_COMM_WORLD, &v));
    MT_CLASS_EQ("Cart_shift on a communicator without topology", MPI_ERR_TOPOLOGY,
                MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &v, &v));
    MT_CLASS_EQ("Graphdims_get on a Cartesian communicator", MPI_ERR_TOPOLOGY,
                MPI_Graphdims_get(cart, &v, &v));
    MT_CLASS_EQ("Cart_coords of rank -1", MPI_ERR_RANK, MPI_Cart_coords(cart, -1, 2, c));
    MT_CLASS_EQ("Cart_coords of rank size", MPI_ERR_RANK, MPI_Cart_coords(cart, mt_size, 2, c));
    d[0] = mt_size + 1;
    if (mt_weft)
        MT_CLASS_EQ("Cart_create with a grid larger than the communicator", MPI_ERR_TOPOLOGY,
                    MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &out));
    MT_TRUE(MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &out) != MPI_SUCCESS,
            "Cart_create with a grid larger than the communicator expected an error");
    d[0] = 0;
    if (mt_weft) {
        MT_CLASS_EQ("Cart_create with dims[0] = 0", MPI_ERR_DIMS,
                    MPI_Cart_create(MPI_COMM_WORLD, 2, d, p, 0, &out));
        MT_CLASS_EQ("Cart_create with ndims -1", MPI_ERR_DIMS,
                    MPI_Cart_create(MPI_COMM_WORLD, -1, d, p, 0, &out));
        MT_CLASS_EQ("Cart_shift direction 2 of 2", MPI_ERR_ARG, MPI_Cart_shift(cart, 2, 1, &v, &v));
        MT_CLASS_EQ("Cart_get with maxdims 1 of 2", MPI_ERR_ARG, MPI_Cart_get(cart, 1, d, p, c));
    }
    MT_TRUE(out == MPI_COMM_NULL, "a failed Cart_create expected to leave comm_cart unset");
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* errors tied to no communicator (Dims_create) go to MPI_COMM_SELF (MPI 4.1 9.3) */
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    check_dims_create();

    int st = -2;
    MT_CALL(MPI_Topo_test(MPI_COMM_WORLD, &st));
    MT_EQ("Topo_test of MPI_COMM_WORLD", MPI_UNDEFINED, st);

    /* 2-D grids over every process: periodic, not periodic, mixed */
    int dims[2] = { 0, 0 };
    MT_CALL(MPI_Dims_create(mt_size, 2, dims));
    static const int per[3][2] = { { 1, 1 }, { 0, 0 }, { 1, 0 } };
    MPI_Comm keep = MPI_COMM_NULL;
    for (int k = 0; k < 3; k++) {
        MPI_Comm cart;
        MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per[k], 0, &cart));
        MT_TRUE(cart != MPI_COMM_NULL, "Cart_create over every process expected a communicator");
        check_grid(cart, dims, per[k]);
        if (k == 0)
            keep = cart;
        else
            MT_CALL(MPI_Comm_free(&cart));
    }
    MT_CALL(MPI_Comm_set_errhandler(keep, MPI_ERRORS_RETURN));
    check_errors(keep);

    /* reorder allowed: the new ranks may move, but the coordinates agree with the numbering */
    MPI_Comm re;
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per[0], 1, &re));
    int r = -1, c[2], back = -1;
    MT_CALL(MPI_Comm_rank(re, &r));
    MT_CALL(MPI_Cart_coords(re, r, 2, c));
    MT_CALL(MPI_Cart_rank(re, c, &back));
    MT_EQ("Cart_rank(Cart_coords(own rank)) with reorder", r, back);
    if (mt_weft)
        MT_EQ("rank with reorder (Weft keeps the identity)", mt_rank, r);
    MT_CALL(MPI_Comm_free(&re));

    /* a grid of one process: the others get MPI_COMM_NULL */
    MPI_Comm one;
    int d1[1] = { 1 }, p1[1] = { 0 }, in = 0, nin = 0;
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &one));
    in = one != MPI_COMM_NULL;
    MT_CALL(MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("processes in a grid of 1", 1, nin);
    if (one != MPI_COMM_NULL) {
        int sz = -1;
        MT_CALL(MPI_Comm_size(one, &sz));
        MT_EQ("size of a grid of 1", 1, sz);
        int s = -2, d = -2;
        MT_CALL(MPI_Cart_shift(one, 0, 1, &s, &d));
        MT_TRUE(s == MPI_PROC_NULL && d == MPI_PROC_NULL,
                "Cart_shift in a non-periodic grid of 1 expected MPI_PROC_NULL twice");
        MT_CALL(MPI_Comm_free(&one));
    }
    if (mt_weft)
        MT_EQ("rank 0 is the process of a grid of 1", mt_rank == 0, in);

    /* a 3-D grid with a periodic dimension of size 1: the process is its own neighbour there */
    int d3[3] = { 0, 0, 1 }, p3[3] = { 0, 1, 1 };
    MT_CALL(MPI_Dims_create(mt_size, 3, d3));
    MT_EQ("Dims_create keeps a given dimension", 1, d3[2]);
    MPI_Comm c3;
    MT_CALL(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &c3));
    int s = -2, d = -2;
    MT_CALL(MPI_Cart_shift(c3, 2, 1, &s, &d));
    MT_TRUE(s == mt_rank && d == mt_rank,
            "Cart_shift along a periodic dimension of 1 expected (%d, %d) got (%d, %d)", mt_rank,
            mt_rank, s, d);
    MT_CALL(MPI_Comm_free(&c3));

    /* Cart_map: a rank in the grid or MPI_UNDEFINED, as many in it as the grid holds */
    int nr = -2, dm[1] = { mt_size > 1 ? mt_size - 1 : 1 };
    MT_CALL(MPI_Cart_map(MPI_COMM_WORLD, 1, dm, p1, &nr));
    MT_TRUE(nr == MPI_UNDEFINED || (nr >= 0 && nr < dm[0]),
            "Cart_map expected a rank below %d or MPI_UNDEFINED, got %d", dm[0], nr);
    in = nr != MPI_UNDEFINED;
    MT_CALL(MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("processes Cart_map places", dm[0], nin);
    if (mt_weft)
        MT_EQ("Cart_map (Weft: the identity)", mt_rank < dm[0] ? mt_rank : MPI_UNDEFINED, nr);

    MT_CALL(MPI_Comm_free(&keep));
    return mt_finish("topo_cart");
}
