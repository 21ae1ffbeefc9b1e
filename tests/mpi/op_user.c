/* User operations and reductions on derived datatypes through MPI_Reduce_local:
 *  - a non-commutative user op (2x2 integer matrix product): inout = in op inout, in on the left;
 *  - MPI_Op_commutative, MPI_Op_create_c (the MPI_Count length reaches the function);
 *  - user and predefined ops on derived types (vector with gaps, contiguous pairs, structs);
 *  - errors: op not defined on the type (MPI_ERR_OP naming both), bad count, type, op, freed op,
 *    freeing a predefined op.
 * The derived-type cases are skipped if the implementation does not have the constructors yet.
 * Checks of Weft's error classes for freed handles and its messages run with --weft.
 */
#include "mpitest.h"

#include <stddef.h>

static MPI_Datatype seen_type;
static MPI_Count seen_len_c;
static int calls;

/* 2x2 matrices of ints, row-major: c = a * b, associative, not commutative */
static void matmul(const int *a, int *b)
{
    int c[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                 a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
    memcpy(b, c, sizeof c);
}

/* On MPI_INT: len ints, 4 per matrix. */
static void matmul_ints(void *in, void *inout, int *len, MPI_Datatype *t)
{
    seen_type = *t;
    calls++;
    for (int i = 0; i + 3 < *len; i += 4)
        matmul((int *)in + i, (int *)inout + i);
}

/* On a 4-int derived type: len matrices. */
static void matmul_mats(void *in, void *inout, int *len, MPI_Datatype *t)
{
    seen_type = *t;
    calls++;
    for (int i = 0; i < *len; i++)
        matmul((int *)in + 4 * i, (int *)inout + 4 * i);
}

static void isum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *t)
{
    seen_type = *t;
    seen_len_c = *len;
    calls++;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* On a vector of ints (count 3, blocklen 1, stride 2): len vectors of extent 5 ints. */
static void vec_max(void *in, void *inout, int *len, MPI_Datatype *t)
{
    seen_type = *t;
    calls++;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 3; k++) {
            int *a = (int *)in + 5 * e + 2 * k, *b = (int *)inout + 5 * e + 2 * k;
            if (*a > *b)
                *b = *a;
        }
}

static void mat_fill(int *m, int n, int seed)
{
    for (int i = 0; i < 4 * n; i++)
        m[i] = (i * 7 + seed * 3) % 5 - 2;
}

static void check_matmul(const int *a, const int *b0, const int *got, int n, const char *what)
{
    for (int k = 0; k < n; k++) {
        int e[4];
        memcpy(e, b0 + 4 * k, sizeof e);
        matmul(a + 4 * k, e);
        for (int j = 0; j < 4; j++)
            if (got[4 * k + j] != e[j])
                MT_FAIL("%s matrix %d entry %d: expected in*inout = %d got %d (inout*in would be "
                        "another value)", what, k, j, e[j], got[4 * k + j]);
    }
}

static void expect_err(const char *what, int cls, int rc, const char *needle1, const char *needle2)
{
    MT_CLASS_EQ(what, cls, rc);
    if (mt_weft && (needle1 || needle2)) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        if ((needle1 && !strstr(msg, needle1)) || (needle2 && !strstr(msg, needle2)))
            MT_FAIL("%s: message expected to name %s and %s, got \"%s\"", what,
                    needle1 ? needle1 : "-", needle2 ? needle2 : "-", msg);
    }
}

/* MPI_SUCCESS, or 0 after printing why the derived-type part is skipped. */
static int have(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return 1;
    if (mt_rank == 0)
        printf("op_user: skipped %s (constructor returned %s)\n", what, mt_class_name(mt_class(rc)));
    return 0;
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    enum { N = 9 };
    int a[4 * N], b[4 * N], b0[4 * N];

    /* non-commutative user op on MPI_INT */
    MPI_Op mm;
    MT_CALL(MPI_Op_create(matmul_ints, 0, &mm));
    int commute = -1;
    MT_CALL(MPI_Op_commutative(mm, &commute));
    MT_EQ("MPI_Op_commutative of a non-commutative user op", 0, commute);
    MT_CALL(MPI_Op_commutative(MPI_SUM, &commute));
    MT_EQ("MPI_Op_commutative(MPI_SUM)", 1, commute);
    mat_fill(a, N, 1);
    mat_fill(b, N, 2);
    memcpy(b0, b, sizeof b);
    calls = 0;
    MT_CALL(MPI_Reduce_local(a, b, 4 * N, MPI_INT, mm));
    MT_TRUE(calls >= 1, "the user function was not called");
    MT_TRUE(seen_type == MPI_INT, "the user function expected datatype MPI_INT got another handle");
    check_matmul(a, b0, b, N, "matmul on MPI_INT");

    /* commutative user op, large-count form */
    MPI_Op sc;
    MT_CALL(MPI_Op_create_c(isum_c, 1, &sc));
    MT_CALL(MPI_Op_commutative(sc, &commute));
    MT_EQ("MPI_Op_commutative of a commutative user op", 1, commute);
    int x[100], y[100];
    for (int i = 0; i < 100; i++)
        x[i] = i, y[i] = 1000 * i;
    seen_len_c = -1;
    MT_CALL(MPI_Reduce_local_c(x, y, 100, MPI_INT, sc));
    MT_EQ("MPI_Count length seen by an MPI_Op_create_c function", 100, seen_len_c);
    for (int i = 0; i < 100; i++)
        MT_EQ("user sum (MPI_Op_create_c)", 1001 * i, y[i]);
    MT_CALL(MPI_Reduce_local(x, y, 100, MPI_INT, sc));   /* int-count entry, large-count fn */
    for (int i = 0; i < 100; i++)
        MT_EQ("user sum (MPI_Op_create_c through MPI_Reduce_local)", 1002 * i, y[i]);

    /* derived types */
    MPI_Datatype mat;
    if (have(MPI_Type_contiguous(4, MPI_INT, &mat), "derived datatypes")) {
        MT_CALL(MPI_Type_commit(&mat));
        MPI_Op mm2;
        MT_CALL(MPI_Op_create(matmul_mats, 0, &mm2));
        mat_fill(a, N, 3);
        mat_fill(b, N, 4);
        memcpy(b0, b, sizeof b);
        MT_CALL(MPI_Reduce_local(a, b, N, mat, mm2));
        MT_TRUE(seen_type == mat, "the user function expected the derived datatype's handle");
        check_matmul(a, b0, b, N, "matmul on a contiguous derived type");
        MT_CALL(MPI_Op_free(&mm2));
        MT_CALL(MPI_Type_free(&mat));
    }
    /* Predefined ops on derived types whose elements are all one predefined type: Weft allows
     * them (as accumulate functions must); MPICH 4.0 rejects them in reductions. */
    if (have(MPI_Type_contiguous(4, MPI_INT, &mat), "derived datatypes")) {
        MT_CALL(MPI_Type_commit(&mat));
        memcpy(b, b0, sizeof b);
        if (mt_weft) {
            MT_CALL(MPI_Reduce_local(a, b, N, mat, MPI_SUM));
            for (int i = 0; i < 4 * N; i++)
                MT_EQ("MPI_SUM on contiguous(4, MPI_INT)", a[i] + b0[i], b[i]);
        }
        MT_CALL(MPI_Type_free(&mat));

        /* vector with gaps: the gaps are not touched */
        MPI_Datatype vec, vec5;
        MT_CALL(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
        MT_CALL(MPI_Type_create_resized(vec, 0, 5 * sizeof(int), &vec5));
        MT_CALL(MPI_Type_commit(&vec5));
        enum { E = 7 };
        int va[5 * E], vb[5 * E];
        for (int i = 0; i < 5 * E; i++)
            va[i] = (i * 11) % 13 - 6, vb[i] = (i * 5) % 9 - 4;
        int vb0[5 * E];
        memcpy(vb0, vb, sizeof vb);
        if (mt_weft) {
            MT_CALL(MPI_Reduce_local(va, vb, E, vec5, MPI_PROD));
            for (int i = 0; i < 5 * E; i++) {
                int j = i % 5;
                int data = j == 0 || j == 2 || j == 4;
                MT_EQ(data ? "MPI_PROD on a vector of MPI_INT" : "gap of a vector after MPI_PROD",
                      data ? va[i] * vb0[i] : vb0[i], vb[i]);
            }
        }
        MPI_Op vm;
        MT_CALL(MPI_Op_create(vec_max, 1, &vm));
        memcpy(vb, vb0, sizeof vb);
        MT_CALL(MPI_Reduce_local(va, vb, E, vec5, vm));
        MT_TRUE(seen_type == vec5, "the user function expected the vector's handle");
        for (int i = 0; i < 5 * E; i++) {
            int j = i % 5;
            int data = j == 0 || j == 2 || j == 4;
            MT_EQ("user max on a vector", data ? (va[i] > vb0[i] ? va[i] : vb0[i]) : vb0[i], vb[i]);
        }
        MT_CALL(MPI_Op_free(&vm));

        /* pairs inside a derived type */
        MPI_Datatype dis;
        MT_CALL(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &dis));
        MT_CALL(MPI_Type_commit(&dis));
        struct { double v; int i; } pa[6], pb[6];
        memset(pa, 0, sizeof pa);
        memset(pb, 0, sizeof pb);
        for (int k = 0; k < 6; k++) {
            pa[k].v = k % 3, pa[k].i = 10 + k;
            pb[k].v = (k + 1) % 3 == 0 ? k % 3 : 1, pb[k].i = 5 + 2 * k;
        }
        struct { double v; int i; } pb0[6];
        memcpy(pb0, pb, sizeof pb);
        if (mt_weft)
            MT_CALL(MPI_Reduce_local(pa, pb, 2, dis, MPI_MAXLOC));
        for (int k = 0; k < 6 && mt_weft; k++) {
            double ev = pa[k].v > pb0[k].v ? pa[k].v : pb0[k].v;
            int ei = pa[k].v > pb0[k].v ? pa[k].i
                     : pa[k].v < pb0[k].v ? pb0[k].i : (pa[k].i < pb0[k].i ? pa[k].i : pb0[k].i);
            MT_TRUE(pb[k].v == ev && pb[k].i == ei,
                    "MPI_MAXLOC on contiguous(3, MPI_DOUBLE_INT) element %d expected (%g,%d) got "
                    "(%g,%d)", k, ev, ei, pb[k].v, pb[k].i);
        }
        MT_CALL(MPI_Type_free(&dis));

        /* a struct of ints only is reducible; int and double mixed is not */
        struct { int p; double q; int r; } sa = { 2, 1.5, 3 }, sb = { 5, 2.5, 7 };
        MPI_Datatype ii, id;
        int bl[2] = { 1, 1 };
        MPI_Aint dsp_ii[2] = { offsetof(__typeof__(sa), p), offsetof(__typeof__(sa), r) };
        MPI_Aint dsp_id[2] = { offsetof(__typeof__(sa), p), offsetof(__typeof__(sa), q) };
        MPI_Datatype tii[2] = { MPI_INT, MPI_INT }, tid[2] = { MPI_INT, MPI_DOUBLE };
        MT_CALL(MPI_Type_create_struct(2, bl, dsp_ii, tii, &ii));
        MT_CALL(MPI_Type_create_struct(2, bl, dsp_id, tid, &id));
        MT_CALL(MPI_Type_commit(&ii));
        MT_CALL(MPI_Type_commit(&id));
        if (mt_weft)
            MT_CALL(MPI_Reduce_local(&sa, &sb, 1, ii, MPI_SUM));
        MT_TRUE(!mt_weft || (sb.p == 7 && sb.r == 10 && sb.q == 2.5),
                "MPI_SUM on struct{int,int} expected (7, 2.5, 10) got (%d, %g, %d)", sb.p, sb.q, sb.r);
        if (mt_weft)
            expect_err("MPI_SUM on struct{int,double}", MPI_ERR_OP,
                       MPI_Reduce_local(&sa, &sb, 1, id, MPI_SUM), "MPI_SUM", "one predefined type");
        MT_CALL(MPI_Type_free(&ii));
        MT_CALL(MPI_Type_free(&id));
        if (mt_weft)
            expect_err("MPI_MINLOC on a vector of MPI_INT",
                       MPI_ERR_OP, MPI_Reduce_local(va, vb, E, vec5, MPI_MINLOC), "MPI_MINLOC",
                       "MPI_INT");
        MT_CALL(MPI_Type_free(&vec5));
        if (mt_weft) {
            /* a type built from a type the user has already freed; a struct whose double block is
             * empty (no double element: reducible as ints) */
            MPI_Datatype tmp, outer, st0;
            MT_CALL(MPI_Type_contiguous(3, MPI_INT, &tmp));
            MT_CALL(MPI_Type_vector(2, 1, 2, tmp, &outer));
            MT_CALL(MPI_Type_free(&tmp));
            MT_CALL(MPI_Type_commit(&outer));
            int oa[9], ob[9], ob0[9];
            for (int i = 0; i < 9; i++)
                oa[i] = i + 1, ob[i] = ob0[i] = 10 * i;
            MT_CALL(MPI_Reduce_local(oa, ob, 1, outer, MPI_BXOR));
            for (int i = 0; i < 9; i++)
                MT_EQ(i < 3 || i >= 6 ? "MPI_BXOR on vector(contiguous) of a freed inner type"
                                      : "gap of vector(contiguous)",
                      i < 3 || i >= 6 ? (oa[i] ^ ob0[i]) : ob0[i], ob[i]);
            MT_CALL(MPI_Type_free(&outer));
            int bl0[2] = { 2, 0 };
            MPI_Aint d0[2] = { 0, 8 };
            MPI_Datatype t0[2] = { MPI_INT, MPI_DOUBLE };
            MT_CALL(MPI_Type_create_struct(2, bl0, d0, t0, &st0));
            MT_CALL(MPI_Type_commit(&st0));
            int sa0[2] = { 3, 4 }, sb0[2] = { 5, 6 };
            MT_CALL(MPI_Reduce_local(sa0, sb0, 1, st0, MPI_MAX));
            MT_TRUE(sb0[0] == 5 && sb0[1] == 6, "MPI_MAX on struct{2 int, 0 double} expected (5,6) got (%d,%d)",
                    sb0[0], sb0[1]);
            MT_CALL(MPI_Type_free(&st0));
        }
        if (mt_weft)   /* vec was never committed */
            expect_err("MPI_Reduce_local on an uncommitted type", MPI_ERR_TYPE,
                       MPI_Reduce_local(va, vb, 1, vec, MPI_SUM), "committed", NULL);
        MT_CALL(MPI_Type_free(&vec));
    }

    /* errors */
    char c1[16] = { 0 }, c2[16] = { 0 };
    if (mt_weft) {
        expect_err("MPI_SUM on MPI_BYTE", MPI_ERR_OP, MPI_Reduce_local(c1, c2, 4, MPI_BYTE, MPI_SUM),
                   "MPI_SUM", "MPI_BYTE");
        expect_err("MPI_MINLOC on MPI_INT", MPI_ERR_OP,
                   MPI_Reduce_local(c1, c2, 2, MPI_INT, MPI_MINLOC), "MPI_MINLOC", "MPI_INT");
        expect_err("MPI_LAND on MPI_DOUBLE", MPI_ERR_OP,
                   MPI_Reduce_local(c1, c2, 2, MPI_DOUBLE, MPI_LAND), "MPI_LAND", "MPI_DOUBLE");
        expect_err("MPI_BAND on MPI_FLOAT", MPI_ERR_OP,
                   MPI_Reduce_local(c1, c2, 2, MPI_FLOAT, MPI_BAND), "MPI_BAND", "MPI_FLOAT");
        expect_err("MPI_MAX on MPI_C_DOUBLE_COMPLEX", MPI_ERR_OP,
                   MPI_Reduce_local(c1, c2, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX), "MPI_MAX",
                   "MPI_C_DOUBLE_COMPLEX");
        expect_err("negative count", MPI_ERR_COUNT,
                   MPI_Reduce_local(c1, c2, -1, MPI_INT, MPI_SUM), "MPI_Reduce_local", NULL);
        expect_err("MPI_IN_PLACE", MPI_ERR_BUFFER,
                   MPI_Reduce_local(MPI_IN_PLACE, c2, 1, MPI_INT, MPI_SUM), NULL, NULL);
    }
    expect_err("MPI_OP_NULL", MPI_ERR_OP, MPI_Reduce_local(c1, c2, 1, MPI_INT, MPI_OP_NULL), NULL,
               NULL);
    if (mt_weft)   /* MPICH 4.0 says MPI_ERR_OP */
        expect_err("MPI_DATATYPE_NULL", MPI_ERR_TYPE,
                   MPI_Reduce_local(c1, c2, 1, MPI_DATATYPE_NULL, MPI_SUM), NULL, NULL);
    MPI_Op sum = MPI_SUM;
    expect_err("MPI_Op_free(MPI_SUM)", MPI_ERR_OP, MPI_Op_free(&sum), "MPI_Op_free", NULL);
    MPI_Op null = MPI_OP_NULL;
    expect_err("MPI_Op_free(MPI_OP_NULL)", MPI_ERR_OP, MPI_Op_free(&null), NULL, NULL);

    /* freeing: the handle becomes MPI_OP_NULL, a copy of it is invalid */
    MPI_Op copy = mm;
    MT_CALL(MPI_Op_free(&mm));
    MT_TRUE(mm == MPI_OP_NULL, "MPI_Op_free expected to set the handle to MPI_OP_NULL");
    if (mt_weft) {
        expect_err("MPI_Reduce_local with a freed op", MPI_ERR_OP,
                   MPI_Reduce_local(a, b, 4, MPI_INT, copy), NULL, NULL);
        expect_err("MPI_Op_free of a freed op", MPI_ERR_OP, MPI_Op_free(&copy), NULL, NULL);
        expect_err("MPI_Op_commutative of a freed op", MPI_ERR_OP, MPI_Op_commutative(copy, &commute),
                   NULL, NULL);
        /* slots are reused: many creations later, the old handle is still invalid */
        for (int i = 0; i < 200; i++) {
            MPI_Op t;
            MT_CALL(MPI_Op_create(matmul_ints, i & 1, &t));
            MT_CALL(MPI_Op_commutative(t, &commute));
            MT_EQ("commute flag of a new op", i & 1, commute);
            MT_CALL(MPI_Op_free(&t));
        }
        expect_err("MPI_Op_commutative of a long-freed op", MPI_ERR_OP,
                   MPI_Op_commutative(copy, &commute), NULL, NULL);
    }
    MT_CALL(MPI_Op_free(&sc));
    return mt_finish("op_user");
}
