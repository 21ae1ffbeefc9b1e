/* Comm_split, Comm_split_type, Comm_create (one group; disjoint groups), Comm_create_group:
 * every new communicator's size, rank and members (world ranks) are checked against lists computed
 * here, and a ring of messages on it, sent after a decoy with the same tag on the parent, must
 * arrive from the right neighbour with the right payload (no matching across communicators).
 * Arguments: --weft adds the checks of Weft's choices for the hardware split types. */
#include "mpitest.h"

static MPI_Group world_group;

/* c must hold exactly want[0..n) (world ranks) in that order; then a ring on c. */
static void check_comm(const char *what, MPI_Comm c, const int *want, int n, MPI_Comm parent)
{
    int size = -1, rank = -1, me = -1;
    for (int i = 0; i < n; i++)
        if (want[i] == mt_rank)
            me = i;
    MT_TRUE(me >= 0, "%s: this rank expected MPI_COMM_NULL got a communicator", what);
    MT_CALL(MPI_Comm_size(c, &size));
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_EQ(what, n, size);
    MT_EQ(what, me, rank);
    MPI_Group g;
    int idx[64], got[64];
    MT_CALL(MPI_Comm_group(c, &g));
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MT_CALL(MPI_Group_translate_ranks(g, n, idx, world_group, got));
    MT_CALL(MPI_Group_free(&g));
    for (int i = 0; i < n; i++)
        if (got[i] != want[i])
            MT_FAIL("%s: member %d expected world rank %d got %d", what, i, want[i], got[i]);
    /* decoy on the parent to the same world rank, same tag, then the ring on c */
    int right = (me + 1) % n, left = (me + n - 1) % n, prank = -1, pright = -1;
    MT_CALL(MPI_Comm_rank(parent, &prank));
    int pw[64];
    MPI_Group pg;
    MT_CALL(MPI_Comm_group(parent, &pg));
    int ws[1] = {want[right]};
    MT_CALL(MPI_Group_translate_ranks(world_group, 1, ws, pg, pw));
    MT_CALL(MPI_Group_free(&pg));
    pright = pw[0];
    int decoy = -7, out[2] = {mt_rank, 1234}, in[2] = {-1, -1}, dv = 0;
    MPI_Request rq[2];
    MT_CALL(MPI_Isend(&decoy, 1, MPI_INT, pright, 3, parent, &rq[0]));
    MT_CALL(MPI_Isend(out, 2, MPI_INT, right, 3, c, &rq[1]));
    MPI_Status st;
    MT_CALL(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
    MT_EQ(what, left, st.MPI_SOURCE);
    MT_EQ(what, want[left], in[0]);
    MT_EQ(what, 1234, in[1]);
    MT_CALL(MPI_Recv(&dv, 1, MPI_INT, MPI_ANY_SOURCE, 3, parent, &st));
    MT_EQ("decoy on the parent", -7, dv);
    MT_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
}

/* ranks a and b on one node: one host (mt_same_node), and the same part of it under
 * WEFT_NODE_SPLIT=split (0: the host is one node) */
static int same_node(int a, int b, int split)
{
    return mt_same_node(a, b) &&
           (split > 0 ? a / split == b / split : split < 0 ? a % -split == b % -split : 1);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    mt_nodes_init();
    int n = mt_size, want[64], k;
    MT_TRUE(n <= 64, "at most 64 ranks");
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no communicator */
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    MPI_Comm parent;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &parent));

    /* split by parity, key = -rank: each half in reverse order */
    MPI_Comm half, none, same, c;
    MT_CALL(MPI_Comm_split(parent, mt_rank % 2, -mt_rank, &half));
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == mt_rank % 2)
            want[k++] = i;
    check_comm("Comm_split by parity, key -rank", half, want, k, parent);
    /* equal keys: parent order; two splits in a row on one parent */
    MT_CALL(MPI_Comm_split(parent, 0, 5, &same));
    MT_CALL(MPI_Comm_split(parent, mt_rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
    for (int i = 0; i < n; i++)
        want[i] = i;
    check_comm("Comm_split, one color, equal keys", same, want, n, parent);
    if (mt_rank == 0) {
        MT_TRUE(none == MPI_COMM_NULL, "Comm_split with MPI_UNDEFINED expected MPI_COMM_NULL");
    } else {
        check_comm("Comm_split without rank 0", none, want + 1, n - 1, parent);
        MT_CALL(MPI_Comm_free(&none));
    }
    /* a split of a split: the halves split again by (rank / 2) % 2 */
    MPI_Comm quarter;
    MT_CALL(MPI_Comm_split(half, (mt_rank / 2) % 2, mt_rank, &quarter));
    k = 0;
    for (int i = 0; i < n; i++)
        if (i % 2 == mt_rank % 2 && (i / 2) % 2 == (mt_rank / 2) % 2)
            want[k++] = i;
    check_comm("Comm_split of a split", quarter, want, k, half);
    MT_CALL(MPI_Comm_free(&quarter));

    /* Comm_create: the even ranks; then disjoint groups (evens on even ranks, odds on odd ones) */
    MPI_Group ge, gmine;
    int r2[1][3] = {{0, n - 1, 2}};
    MT_CALL(MPI_Group_range_incl(world_group, 1, r2, &ge));
    MT_CALL(MPI_Comm_create(parent, ge, &c));
    k = 0;
    for (int i = 0; i < n; i += 2)
        want[k++] = i;
    if (mt_rank % 2) {
        MT_TRUE(c == MPI_COMM_NULL, "Comm_create: a rank outside the group expected MPI_COMM_NULL");
    } else {
        check_comm("Comm_create of the even ranks", c, want, k, parent);
        MT_CALL(MPI_Comm_free(&c));
    }
    if (mt_rank % 2 && n > 1) {
        int r3[1][3] = {{1, n - 1 - (n % 2 == 1), 2}};
        MT_CALL(MPI_Group_range_incl(world_group, 1, r3, &gmine));
    } else {
        MT_CALL(MPI_Group_range_incl(world_group, 1, r2, &gmine));
    }
    MT_CALL(MPI_Comm_create(parent, gmine, &c));
    k = 0;
    for (int i = mt_rank % 2; i < n; i += 2)
        want[k++] = i;
    check_comm("Comm_create with disjoint groups", c, want, k, parent);
    MT_CALL(MPI_Comm_free(&c));
    MT_CALL(MPI_Group_free(&gmine));

    /* Comm_create_group: the even ranks only call it, twice with different tags, in reverse order */
    if (mt_rank % 2 == 0) {
        MPI_Comm c2;
        MT_CALL(MPI_Comm_create_group(parent, ge, 11, &c));
        MT_CALL(MPI_Comm_create_group(parent, ge, 12, &c2));
        k = 0;
        for (int i = 0; i < n; i += 2)
            want[k++] = i;
        check_comm("Comm_create_group of the even ranks", c, want, k, parent);
        check_comm("second Comm_create_group", c2, want, k, parent);
        MT_CALL(MPI_Comm_free(&c));
        MT_CALL(MPI_Comm_free(&c2));
    }
    MT_CALL(MPI_Group_free(&ge));

    /* split_type: shared (the ranks of this host: all on one machine, or with WEFT_NODE_SPLIT=s
     * under --weft those of them with the same r / s, or r % -s when s < 0;
     * tests/mpi/comm_nodes.c checks the nodes independently of the launcher), undefined */
    MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, n - mt_rank, MPI_INFO_NULL, &c));
    const char *ns = getenv("WEFT_NODE_SPLIT");
    int split = mt_weft && ns ? atoi(ns) : 0;   /* s > 0: nodes r / s; s < 0: r % -s */
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (same_node(i, mt_rank, split))
            want[k++] = i;
    check_comm("Comm_split_type(MPI_COMM_TYPE_SHARED, key n - rank)", c, want, k, parent);
    MT_CALL(MPI_Comm_free(&c));
    MT_CALL(MPI_Comm_split_type(parent, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    MT_TRUE(c == MPI_COMM_NULL, "Comm_split_type(MPI_UNDEFINED) expected MPI_COMM_NULL");
    /* unguided: MPI_COMM_NULL or a strict subset holding this rank, the same on every member */
    MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (c != MPI_COMM_NULL) {
        int s = -1;
        MT_CALL(MPI_Comm_size(c, &s));
        MT_TRUE(s < n, "Comm_split_type(HW_UNGUIDED) expected a strict subset got size %d of %d", s, n);
        MT_CALL(MPI_Comm_free(&c));
    }
    /* rank 0 opts out with MPI_UNDEFINED while the others ask for HW_UNGUIDED */
    MT_CALL(MPI_Comm_split_type(parent, mt_rank == 0 ? MPI_UNDEFINED : MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (mt_rank == 0)
        MT_TRUE(c == MPI_COMM_NULL, "Comm_split_type(MPI_UNDEFINED) beside HW_UNGUIDED expected MPI_COMM_NULL");
    if (c != MPI_COMM_NULL)
        MT_CALL(MPI_Comm_free(&c));
    MPI_Info info;
    if (MPI_Info_create(&info) == MPI_SUCCESS) {
        MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
        MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
        k = 0;
        for (int i = 0; i < n; i++)
            if (same_node(i, mt_rank, split))
                want[k++] = i;
        check_comm("Comm_split_type(HW_GUIDED, mpi_shared_memory)", c, want, k, parent);
        MT_CALL(MPI_Comm_free(&c));
        if (mt_weft) {
            /* a type this machine does not have: MPI_COMM_NULL everywhere */
            MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "no such resource"));
            MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
            MT_TRUE(c == MPI_COMM_NULL, "HW_GUIDED with an unknown type expected MPI_COMM_NULL");
            MT_CALL(MPI_Info_set(info, "mpi_hw_resource_type", "Machine"));
            MT_CALL(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
            /* a machine per node: nodes of WEFT_NODE_SPLIT are numbered apart (want: the node) */
            check_comm("Comm_split_type(HW_GUIDED, Machine)", c, want, k, parent);
            MT_CALL(MPI_Comm_free(&c));
        }
        MT_CALL(MPI_Info_free(&info));
    } else if (mt_rank == 0) {
        printf("comm_split: MPI_Info_create unavailable, HW_GUIDED not checked\n");
    }

    /* errors */
    if (mt_weft) { /* error classes and detection are the implementation's choice */
        MT_CLASS_EQ("Comm_split color -2", MPI_ERR_ARG, MPI_Comm_split(parent, -2, 0, &c));
        MT_CLASS_EQ("Comm_split_type 12345", MPI_ERR_ARG, MPI_Comm_split_type(parent, 12345, 0, MPI_INFO_NULL, &c));
        MT_CLASS_EQ("Comm_create with MPI_GROUP_NULL", MPI_ERR_GROUP, MPI_Comm_create(parent, MPI_GROUP_NULL, &c));
        MT_CLASS_EQ("Comm_create_group tag -1", MPI_ERR_TAG, MPI_Comm_create_group(parent, world_group, -1, &c));
        MPI_Comm dead = same;
        MT_CALL(MPI_Comm_free(&same));
        MT_CLASS_EQ("Comm_split of a freed communicator", MPI_ERR_COMM, MPI_Comm_split(dead, 0, 0, &c));
        MT_CLASS_EQ("Comm_create of a freed communicator", MPI_ERR_COMM, MPI_Comm_create(dead, world_group, &c));
    } else {
        MT_CALL(MPI_Comm_free(&same));
    }
    MT_CALL(MPI_Comm_free(&half));
    MT_CALL(MPI_Comm_free(&parent));
    MT_CALL(MPI_Group_free(&world_group));
    return mt_finish("comm_split");
}
