/* Every MPI_Group_* call on groups made from MPI_COMM_WORLD's group: members (as world ranks, via
 * translate_ranks) checked against lists computed here, set operations, compare, the calling
 * process's rank, argument errors (MPI_ERR_RANK / MPI_ERR_ARG) and freed handles (MPI_ERR_GROUP)
 * under MPI_ERRORS_RETURN. Runs at any size. */
#include "mpitest.h"

static MPI_Group world;

/* The members of g as world ranks. */
static int members(MPI_Group g, int *out)
{
    int n = -1;
    MT_CALL(MPI_Group_size(g, &n));
    int *idx = mt_malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MT_CALL(MPI_Group_translate_ranks(g, n, idx, world, out));
    free(idx);
    return n;
}

/* g must hold exactly want[0..n) in that order, and the calling process's rank must follow. */
static void expect(const char *what, MPI_Group g, const int *want, int n)
{
    int got[256];
    int k = members(g, got);
    MT_EQ(what, n, k);
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            MT_FAIL("%s: member %d expected world rank %d got %d", what, i, want[i], got[i]);
    int r = -2, er = MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (want[i] == mt_rank)
            er = i;
    MT_CALL(MPI_Group_rank(g, &r));
    MT_EQ(what, er, r);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    int n = mt_size;
    MT_TRUE(n <= 64, "at most 64 ranks");
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int all[64] = {0}, want[64] = {0}, k;
    for (int i = 0; i < n; i++)
        all[i] = i;
    expect("world group", world, all, n);

    /* incl: reversed order */
    int rev[64];
    for (int i = 0; i < n; i++)
        rev[i] = n - 1 - i;
    MPI_Group grev, geven, godd, g;
    MT_CALL(MPI_Group_incl(world, n, rev, &grev));
    expect("Group_incl reversed", grev, rev, n);
    /* excl of the odd ranks: the even ones in order */
    int odds[64], nodd = 0, evens[64], neven = 0;
    for (int i = 0; i < n; i++) {
        if (i % 2)
            odds[nodd++] = i;
        else
            evens[neven++] = i;
    }
    MT_CALL(MPI_Group_excl(world, nodd, odds, &geven));
    expect("Group_excl of the odd ranks", geven, evens, neven);
    /* range_incl (1, n-1, 2): the odd ranks; range_excl (0, n-1, 2): the odd ones too */
    int r1[1][3] = {{1 < n ? 1 : 0, n - 1, 2}};
    if (n > 1) {
        MT_CALL(MPI_Group_range_incl(world, 1, r1, &godd));
        expect("Group_range_incl (1, n-1, 2)", godd, odds, nodd);
        MT_CALL(MPI_Group_free(&godd));
    }
    int r2[1][3] = {{0, n - 1, 2}};
    MT_CALL(MPI_Group_range_excl(world, 1, r2, &godd));
    expect("Group_range_excl (0, n-1, 2)", godd, odds, nodd);
    /* a range whose stride goes away from last is empty (MPI 4.1 7.3.2: k runs to a negative
     * floor), whatever last is; last need not be a rank when it is not reached */
    int re[2][3] = {{0, -1, 1}, {n - 1, n, -1}};
    MT_CALL(MPI_Group_range_incl(world, 2, re, &g));
    int esize = -1;
    MT_CALL(MPI_Group_size(g, &esize));
    MT_EQ("Group_range_incl of (0, -1, 1), (n-1, n, -1): empty", 0, esize);
    MT_TRUE(g == MPI_GROUP_EMPTY, "an empty range gives MPI_GROUP_EMPTY");
    MT_CALL(MPI_Group_range_excl(world, 1, re, &g));
    expect("Group_range_excl of an empty range", g, all, n);
    MT_CALL(MPI_Group_free(&g));
    int rl[1][3] = {{0, n, 2}};   /* last = n is not a rank, but the ranks computed are */
    k = 0;
    for (int i = 0; i <= n - 1; i += 2)
        want[k++] = i;
    if (n % 2 == 1) {   /* n odd: the last rank computed is n - 1; n even would compute rank n */
        MT_CALL(MPI_Group_range_incl(world, 1, rl, &g));
        expect("Group_range_incl (0, n, 2)", g, want, k);
        MT_CALL(MPI_Group_free(&g));
    }
    /* descending range with negative stride, then a second range */
    int r3[2][3] = {{n - 1, 0, -2}, {n - 2 >= 0 ? n - 2 : 0, n - 2 >= 0 ? n - 2 : 0, 1}};
    k = 0;
    for (int i = n - 1; i >= 0; i -= 2)
        want[k++] = i;
    int nr = n >= 2 ? 2 : 1;
    if (nr == 2)
        want[k++] = n - 2;
    MT_CALL(MPI_Group_range_incl(world, nr, r3, &g));
    expect("Group_range_incl (n-1, 0, -2), (n-2, n-2, 1)", g, want, k);
    MT_CALL(MPI_Group_free(&g));
    MT_TRUE(g == MPI_GROUP_NULL, "Group_free expected MPI_GROUP_NULL");

    /* set operations: union(odd, even) = odds then evens; intersection(rev, even) = evens in rev
     * order; difference(world, even) = odds */
    MT_CALL(MPI_Group_union(godd, geven, &g));
    k = 0;
    for (int i = 0; i < nodd; i++)
        want[k++] = odds[i];
    for (int i = 0; i < neven; i++)
        want[k++] = evens[i];
    expect("Group_union(odd, even)", g, want, k);
    int res = -1;
    MT_CALL(MPI_Group_compare(g, world, &res));
    MT_EQ("Group_compare(union, world): MPI_SIMILAR unless n <= 1", n <= 1 ? MPI_IDENT : MPI_SIMILAR, res);
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_union(world, grev, &g));
    expect("Group_union(world, reversed)", g, all, n);
    MT_CALL(MPI_Group_compare(g, world, &res));
    MT_EQ("Group_compare(union(world, rev), world)", MPI_IDENT, res);
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_intersection(grev, geven, &g));
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == 0)
            want[k++] = i;
    expect("Group_intersection(reversed, even)", g, want, k);
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_difference(world, geven, &g));
    expect("Group_difference(world, even)", g, odds, nodd);
    MT_CALL(MPI_Group_compare(g, godd, &res));
    MT_EQ("Group_compare(difference, odd)", MPI_IDENT, res);
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_difference(world, world, &g));
    expect("Group_difference(world, world)", g, all, 0);
    MT_CALL(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
    MT_EQ("Group_compare(empty difference, MPI_GROUP_EMPTY)", MPI_IDENT, res);
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_compare(grev, world, &res));
    MT_EQ("Group_compare(reversed, world)", n == 1 ? MPI_IDENT : MPI_SIMILAR, res);
    MT_CALL(MPI_Group_compare(geven, world, &res));
    MT_EQ("Group_compare(even, world)", n == 1 ? MPI_IDENT : MPI_UNEQUAL, res);
    expect("MPI_GROUP_EMPTY", MPI_GROUP_EMPTY, all, 0);
    MT_CALL(MPI_Group_incl(world, 0, NULL, &g));
    expect("Group_incl of nothing", g, all, 0);
    MT_CALL(MPI_Group_free(&g));

    /* translate_ranks: MPI_PROC_NULL maps to itself, absent members to MPI_UNDEFINED */
    int in[3] = {MPI_PROC_NULL, 0, n - 1}, out[3];
    MT_CALL(MPI_Group_translate_ranks(world, 3, in, geven, out));
    MT_EQ("translate MPI_PROC_NULL", MPI_PROC_NULL, out[0]);
    MT_EQ("translate world 0 into even", 0, out[1]);
    MT_EQ("translate world n-1 into even", (n - 1) % 2 ? MPI_UNDEFINED : (n - 1) / 2, out[2]);
    MT_CALL(MPI_Group_translate_ranks(world, 3, in, grev, out));
    MT_EQ("translate world n-1 into reversed", 0, out[2]);

    /* errors */
    if (mt_weft) { /* error classes and detection are the implementation's choice */
        int bad[2] = {0, n};
        MT_CLASS_EQ("Group_incl rank n", MPI_ERR_RANK, MPI_Group_incl(world, 1, &bad[1], &g));
        int dup2[2] = {0, 0};
        if (n >= 2)
            MT_CLASS_EQ("Group_incl rank twice", MPI_ERR_RANK, MPI_Group_incl(world, 2, dup2, &g));
        MT_CLASS_EQ("Group_excl rank -1", MPI_ERR_RANK, MPI_Group_excl(world, 1, (int[]){-1}, &g));
        MT_CLASS_EQ("Group_incl n = -1", MPI_ERR_ARG, MPI_Group_incl(world, -1, bad, &g));
        int z[1][3] = {{0, n - 1, 0}};
        MT_CLASS_EQ("Group_range_incl stride 0", MPI_ERR_ARG, MPI_Group_range_incl(world, 1, z, &g));
        int o[1][3] = {{0, n, 1}};
        MT_CLASS_EQ("Group_range_incl last = n", MPI_ERR_RANK, MPI_Group_range_incl(world, 1, o, &g));
        MT_CLASS_EQ("Group_range_excl last = n", MPI_ERR_RANK, MPI_Group_range_excl(world, 1, o, &g));
        int t[1] = {n};
        MT_CLASS_EQ("translate rank n", MPI_ERR_RANK, MPI_Group_translate_ranks(world, 1, t, grev, out));
        MPI_Group freed = grev;
        MT_CALL(MPI_Group_free(&grev));
        MT_CLASS_EQ("Group_size of a freed group", MPI_ERR_GROUP, MPI_Group_size(freed, &k));
        MT_CLASS_EQ("Group_free of a freed group", MPI_ERR_GROUP, MPI_Group_free(&freed));
        MT_CLASS_EQ("Group_union with a freed group", MPI_ERR_GROUP, MPI_Group_union(freed, world, &g));
        MT_CLASS_EQ("Group_rank of MPI_GROUP_NULL", MPI_ERR_GROUP, MPI_Group_rank(MPI_GROUP_NULL, &k));
        MT_CLASS_EQ("Comm_remote_group of an intracommunicator", MPI_ERR_COMM,
                    MPI_Comm_remote_group(MPI_COMM_WORLD, &g));
    }

    /* Comm_group of MPI_COMM_SELF: this process only */
    MT_CALL(MPI_Comm_group(MPI_COMM_SELF, &g));
    expect("group of MPI_COMM_SELF", g, &mt_rank, 1);
    MT_CALL(MPI_Group_free(&g));

    MT_CALL(MPI_Group_free(&geven));
    MT_CALL(MPI_Group_free(&godd));
    MT_CALL(MPI_Group_free(&world));
    return mt_finish("group_ops");
}
