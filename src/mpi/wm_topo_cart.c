/* Cartesian topologies (MPI 4.1 8.5.1, 8.5.5, 8.5.6) and MPI_Dims_create.
 *
 * Ranks are laid out row-major (the last dimension varies fastest), as the standard's examples
 * do. Reordering is the identity: rank r of the old communicator keeps rank r when r is below
 * the grid's size, and the others get MPI_COMM_NULL (Cart_map says the same). */
#include "mpi/wm_topo.h"
#include "mpi/wm_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the grid ---- */

/* Checks ndims, dims and periods of Cart_create/Cart_map and returns the number of processes of
 * the grid in *nnodes_p. */
static int wm_cart_check(wm_comm_t *c, const char *fn, int ndims, const int dims[],
                         const int periods[], int *nnodes_p)
{
    if (ndims < 0)
        return wm_error(c, MPI_ERR_DIMS, fn, "ndims %d is negative", ndims);
    if (ndims > 0 && (!dims || !periods))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", dims ? "periods" : "dims");
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return wm_error(c, MPI_ERR_DIMS, fn, "dims[%d] = %d: every dimension needs at least "
                            "one process", i, dims[i]);
        n *= dims[i];
        if (n > c->size)
            break;
    }
    if (n > c->size)
        return wm_error(c, MPI_ERR_TOPOLOGY, fn,
                        "the grid needs %s%lld processes, communicator %s has %d",
                        n > INT_MAX ? "more than " : "", n, c->name, c->size);
    *nnodes_p = (int)n;
    return MPI_SUCCESS;
}

static void wm_cart_coords_of(const wm_topo_t *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* The rank at coords after wrapping the periodic dimensions; MPI_PROC_NULL if a coordinate of a
 * non-periodic dimension is outside the grid. */
static int wm_cart_rank_of(const wm_topo_t *t, const int *coords)
{
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return MPI_PROC_NULL;
            x %= d;
            if (x < 0)
                x += d;
        }
        r = r * d + x;
    }
    return r;
}

/* The neighbour at displacement disp along dimension dim of the process at coords. */
static int wm_cart_neighbor(const wm_topo_t *t, const int *coords, int dim, int disp)
{
    int tmp[t->ndims > 0 ? t->ndims : 1];
    memcpy(tmp, coords, sizeof(int) * (size_t)t->ndims);
    tmp[dim] += disp;
    return wm_cart_rank_of(t, tmp);
}

/* A Cartesian topology for the process of rank `rank`: dims, periods (normalized to 0/1), its
 * coordinates, and its neighbour lists. */
static wm_topo_t *wm_cart_topo(int ndims, const int dims[], const int periods[], int rank)
{
    wm_topo_t *t = wm_topo_alloc(MPI_CART, ndims, 0, 0, 2 * ndims, 2 * ndims, false);
    if (!t)
        return NULL;
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    wm_cart_coords_of(t, rank, t->coords);
    for (int i = 0; i < ndims; i++) {
        int lo = wm_cart_neighbor(t, t->coords, i, -1), hi = wm_cart_neighbor(t, t->coords, i, 1);
        t->sources[2 * i] = t->destinations[2 * i] = lo;
        t->sources[2 * i + 1] = t->destinations[2 * i + 1] = hi;
        /* one process on both sides: it sends to its -1 side first, which is our +1 slot */
        if (lo == hi && lo != MPI_PROC_NULL) {
            t->recv_order[2 * i] = 2 * i + 1;
            t->recv_order[2 * i + 1] = 2 * i;
        }
    }
    return t;
}

/* ---- constructors ---- */

int wm_impl_MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                            int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    WM_COMM_CHECK(fn, comm_old, c);
    (void)reorder;   /* identity: allowed whatever reorder says */
    int n, rc;
    if (!comm_cart)
        return wm_error(c, MPI_ERR_ARG, fn, "comm_cart is NULL");
    if (c->inter)
        return wm_error(c, MPI_ERR_COMM, fn, "comm_old %s is an intercommunicator", c->name);
    if ((rc = wm_cart_check(c, fn, ndims, dims, periods, &n)))
        return rc;
    wm_comm_t *d;
    if ((rc = wm_topo_comm(fn, c, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, &d)))
        return rc;
    if (!d) {
        *comm_cart = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    return wm_topo_attach(fn, c, d, wm_cart_topo(ndims, dims, periods, d->rank), comm_cart);
}

int wm_impl_MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", newcomm ? "remain_dims" : "newcomm");
    /* color: the coordinates along the dropped dimensions; key: the rank, which orders the kept
     * coordinates row-major as well */
    int color = 0, nd = 0;
    int dims[t->ndims > 0 ? t->ndims : 1], periods[t->ndims > 0 ? t->ndims : 1];
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            dims[nd] = t->dims[i];
            periods[nd++] = t->periods[i];
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    wm_comm_t *d;
    if ((rc = wm_topo_comm(fn, c, color, c->rank, &d)))
        return rc;
    return wm_topo_attach(fn, c, d, wm_cart_topo(nd, dims, periods, d->rank), newcomm);
}

int wm_impl_MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                         int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    WM_COMM_CHECK(fn, comm, c);
    int n, rc;
    if (!newrank)
        return wm_error(c, MPI_ERR_ARG, fn, "newrank is NULL");
    if ((rc = wm_cart_check(c, fn, ndims, dims, periods, &n)))
        return rc;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- queries ---- */

int wm_impl_MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char fn[] = "MPI_Cartdim_get";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (!ndims)
        return wm_error(c, MPI_ERR_ARG, fn, "ndims is NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (maxdims < t->ndims)
        return wm_error(c, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims,
                        t->ndims);
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL",
                        !dims ? "dims" : !periods ? "periods" : "coords");
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}

int wm_impl_MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (!rank || (t->ndims > 0 && !coords))
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", rank ? "coords" : "rank");
    for (int i = 0; i < t->ndims; i++)
        if (!t->periods[i] && (coords[i] < 0 || coords[i] >= t->dims[i]))
            return wm_error(c, MPI_ERR_ARG, fn,
                            "coords[%d] = %d is outside the non-periodic dimension of size %d", i,
                            coords[i], t->dims[i]);
    *rank = wm_cart_rank_of(t, coords);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (rank < 0 || rank >= c->size)
        return wm_error(c, MPI_ERR_RANK, fn, "invalid rank %d (%s has %d ranks)", rank, c->name,
                        c->size);
    if (maxdims < t->ndims)
        return wm_error(c, MPI_ERR_ARG, fn, "maxdims %d is less than the %d dimensions", maxdims,
                        t->ndims);
    if (t->ndims > 0 && !coords)
        return wm_error(c, MPI_ERR_ARG, fn, "coords is NULL");
    wm_cart_coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source,
                           int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    WM_COMM_CHECK(fn, comm, c);
    int rc = MPI_SUCCESS;
    const wm_topo_t *t = wm_topo_need(c, fn, MPI_CART, &rc);
    if (!t)
        return rc;
    if (!rank_source || !rank_dest)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", rank_source ? "rank_dest" : "rank_source");
    if (direction < 0 || direction >= t->ndims)
        return wm_error(c, MPI_ERR_ARG, fn, "direction %d is not a dimension (0..%d)", direction,
                        t->ndims - 1);
    /* a displacement beyond the grid wraps (periodic) or leaves it (MPI_PROC_NULL); the
     * arithmetic stays in long long so INT_MIN does not overflow */
    long long dd = t->dims[direction], x = t->coords[direction];
    int out[2];
    for (int k = 0; k < 2; k++) {
        long long y = x + (k ? (long long)disp : -(long long)disp);
        if (y < 0 || y >= dd) {
            if (!t->periods[direction]) {
                out[k] = MPI_PROC_NULL;
                continue;
            }
            y %= dd;
            if (y < 0)
                y += dd;
        }
        int tmp[t->ndims];
        memcpy(tmp, t->coords, sizeof(int) * (size_t)t->ndims);
        tmp[direction] = (int)y;
        out[k] = wm_cart_rank_of(t, tmp);
    }
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}

/* ---- Dims_create ---- */

/* The search of the most balanced factorization: factors in non-increasing order, smallest
 * difference between the largest and the smallest, then the smallest sum of squares. Candidates
 * are the divisors of the number to split (divs, descending). */
typedef struct wm_dims_search {
    int k;
    int *cur, *best;
    const int *divs;
    int ndivs;
    long long best_spread, best_sq;
    bool found;
} wm_dims_search_t;

static void wm_dims_try(wm_dims_search_t *s, int i, int n, int maxf)
{
    if (i == s->k - 1) {
        if (n > maxf)
            return;
        s->cur[i] = n;
        long long spread = (long long)s->cur[0] - n, sq = 0;
        for (int j = 0; j < s->k; j++)
            sq += (long long)s->cur[j] * s->cur[j];
        if (!s->found || spread < s->best_spread ||
            (spread == s->best_spread && sq < s->best_sq)) {
            memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
            s->best_spread = spread;
            s->best_sq = sq;
            s->found = true;
        }
        return;
    }
    int left = s->k - i;
    for (int d = 0; d < s->ndivs; d++) {
        int f = s->divs[d];
        if (f > maxf || n % f)
            continue;
        /* the factor here is at least the (k - i)-th root of n, since the rest are not larger */
        long long p = 1;
        for (int j = 0; j < left && p < n; j++)
            p *= f;
        if (p < n)
            break;
        /* the spread is at least the largest factor minus this one, and grows as f shrinks */
        if (s->found && (long long)(i ? s->cur[0] : f) - f > s->best_spread)
            break;
        s->cur[i] = f;
        wm_dims_try(s, i + 1, n / f, f);
    }
}

/* The divisors of n (> 0), descending, into a malloc'd array; NULL on no memory. */
static int *wm_dims_divisors(int n, int *count_p)
{
    int cap = 64, k = 0;
    int *d = malloc(sizeof(int) * (size_t)cap);
    for (long long f = 1; d && f * f <= n; f++) {
        if (n % f)
            continue;
        if (k + 2 > cap) {
            int *g = realloc(d, sizeof(int) * (size_t)(cap *= 2));
            if (!g) {
                free(d);
                return NULL;
            }
            d = g;
        }
        d[k++] = (int)f;
        if (f * f != n)
            d[k++] = (int)(n / f);
    }
    if (!d)
        return NULL;
    for (int i = 1; i < k; i++)   /* insertion sort, descending: a few hundred at most */
        for (int j = i; j > 0 && d[j] > d[j - 1]; j--) {
            int x = d[j];
            d[j] = d[j - 1];
            d[j - 1] = x;
        }
    *count_p = k;
    return d;
}

int wm_impl_MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    WM_CHECK_INIT(fn);
    if (ndims < 0)
        return wm_error(NULL, MPI_ERR_DIMS, fn, "ndims %d is negative", ndims);
    if (nnodes < 0)
        return wm_error(NULL, MPI_ERR_ARG, fn, "nnodes %d is negative", nnodes);
    if (ndims > 0 && !dims)
        return wm_error(NULL, MPI_ERR_ARG, fn, "dims is NULL");
    long long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return wm_error(NULL, MPI_ERR_DIMS, fn, "dims[%d] = %d is negative", i, dims[i]);
        if (dims[i] == 0)
            free_dims++;
        else if (fixed <= nnodes)
            fixed *= dims[i];
    }
    if (fixed == 0 || (nnodes == 0 ? free_dims == 0 : nnodes % fixed != 0))
        return wm_error(NULL, MPI_ERR_DIMS, fn,
                        "nnodes %d is not a multiple of the product of the dimensions given",
                        nnodes);
    if (!free_dims) {
        if (fixed != nnodes)
            return wm_error(NULL, MPI_ERR_DIMS, fn,
                            "the dimensions given make %lld processes, not nnodes %d", fixed,
                            nnodes);
        return MPI_SUCCESS;
    }
    if (nnodes == 0)
        return MPI_SUCCESS;   /* no process: the free dimensions stay 0 */
    int rest = (int)(nnodes / fixed), ndivs = 0;
    int *cur = malloc(2 * sizeof(int) * (size_t)free_dims);
    int *divs = wm_dims_divisors(rest, &ndivs);
    if (!cur || !divs) {
        free(cur);
        free(divs);
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory");
    }
    wm_dims_search_t s = { .k = free_dims, .cur = cur, .best = cur + free_dims, .divs = divs,
                           .ndivs = ndivs };
    wm_dims_try(&s, 0, rest, rest);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    free(cur);
    free(divs);
    return MPI_SUCCESS;
}
