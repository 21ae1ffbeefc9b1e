/* Intercommunicators: Intercomm_create between the lower and the upper part of MPI_COMM_WORLD
 * (sizes n/2 and n - n/2, so 3 ranks give unequal groups), its groups and sizes, messages across
 * (every local rank r sends to remote rank r % remote size; every expected message arrives once,
 * with its payload), Comm_dup / Comm_idup / Comm_split / Comm_create on it, Comm_compare, and
 * Intercomm_merge with each ordering of the high flags. --weft: equal flags put the group of the
 * lower world leader first. Needs 2 or more ranks. */
#include "mpitest.h"

static MPI_Group world_group;
static int n, nlow, low; /* low: this rank is in the lower part */

static void group_members(MPI_Group g, int *out, int *k)
{
    int idx[64];
    MT_CALL(MPI_Group_size(g, k));
    for (int i = 0; i < *k; i++)
        idx[i] = i;
    MT_CALL(MPI_Group_translate_ranks(g, *k, idx, world_group, out));
}

/* c must be an intercommunicator between local[0..nl) and remote[0..nr) (world ranks); messages
 * across are checked. */
static void check_inter(const char *what, MPI_Comm c, const int *local, int nl, const int *remote, int nr)
{
    int flag = 0, size = -1, rsize = -1, rank = -1, got[64], k;
    MT_CALL(MPI_Comm_test_inter(c, &flag));
    MT_EQ(what, 1, flag);
    MT_CALL(MPI_Comm_size(c, &size));
    MT_CALL(MPI_Comm_remote_size(c, &rsize));
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_EQ(what, nl, size);
    MT_EQ(what, nr, rsize);
    MT_TRUE(rank >= 0 && rank < nl && local[rank] == mt_rank, "%s: rank %d is not this process", what, rank);
    MPI_Group g;
    MT_CALL(MPI_Comm_group(c, &g));
    group_members(g, got, &k);
    MT_CALL(MPI_Group_free(&g));
    for (int i = 0; i < nl; i++)
        MT_EQ("local group member", local[i], got[i]);
    MT_CALL(MPI_Comm_remote_group(c, &g));
    group_members(g, got, &k);
    MT_CALL(MPI_Group_free(&g));
    MT_EQ(what, nr, k);
    for (int i = 0; i < nr; i++)
        MT_EQ("remote group member", remote[i], got[i]);
    /* across: local r -> remote r % nr; this rank receives from every remote s with s % nl == rank */
    int out[2] = {mt_rank, rank}, in[2];
    MPI_Request rq;
    MT_CALL(MPI_Isend(out, 2, MPI_INT, rank % nr, 8, c, &rq));
    int expect = 0, seen[64] = {0};
    for (int s = 0; s < nr; s++)
        expect += s % nl == rank;
    for (int i = 0; i < expect; i++) {
        MPI_Status st;
        MT_CALL(MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 8, c, &st));
        MT_TRUE(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < nr && st.MPI_SOURCE % nl == rank && !seen[st.MPI_SOURCE],
                "%s: message from remote rank %d unexpected", what, st.MPI_SOURCE);
        seen[st.MPI_SOURCE] = 1;
        MT_EQ(what, remote[st.MPI_SOURCE], in[0]);
        MT_EQ(what, st.MPI_SOURCE, in[1]);
    }
    MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
}

static void check_intra(const char *what, MPI_Comm c, const int *want, int k)
{
    int flag = 1, size = -1, rank = -1, got[64], kk;
    MT_CALL(MPI_Comm_test_inter(c, &flag));
    MT_EQ(what, 0, flag);
    MT_CALL(MPI_Comm_size(c, &size));
    MT_CALL(MPI_Comm_rank(c, &rank));
    MT_EQ(what, k, size);
    MPI_Group g;
    MT_CALL(MPI_Comm_group(c, &g));
    group_members(g, got, &kk);
    MT_CALL(MPI_Group_free(&g));
    for (int i = 0; i < k; i++)
        if (got[i] != want[i])
            MT_FAIL("%s: member %d expected world rank %d got %d", what, i, want[i], got[i]);
    MT_EQ(what, mt_rank, want[rank]);
    /* a ring on the merged communicator */
    int out = mt_rank, in = -1;
    MT_CALL(MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % k, 4, &in, 1, MPI_INT, (rank + k - 1) % k, 4, c,
                         MPI_STATUS_IGNORE));
    MT_EQ(what, want[(rank + k - 1) % k], in);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    n = mt_size;
    MT_TRUE(n >= 2 && n <= 64, "run with 2..64 ranks");
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)); /* errors of no communicator */
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    nlow = n / 2;
    low = mt_rank < nlow;
    int lowr[64], highr[64], nhigh = n - nlow;
    for (int i = 0; i < nlow; i++)
        lowr[i] = i;
    for (int i = 0; i < nhigh; i++)
        highr[i] = nlow + i;
    const int *mine = low ? lowr : highr, *theirs = low ? highr : lowr;
    int nm = low ? nlow : nhigh, nt = low ? nhigh : nlow;

    MPI_Comm half, ic, ic2, m;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, low, 0, &half));
    /* leaders: world 0 and world nlow; a decoy with the same tag on MPI_COMM_WORLD first */
    int decoy = -1;
    if (mt_rank == 0)
        MT_CALL(MPI_Send(&decoy, 1, MPI_INT, nlow, 42, MPI_COMM_WORLD));
    MT_CALL(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? nlow : 0, 42, &ic));
    if (mt_rank == nlow) {
        MT_CALL(MPI_Recv(&decoy, 1, MPI_INT, 0, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_EQ("decoy", -1, decoy);
    }
    check_inter("Intercomm_create", ic, mine, nm, theirs, nt);

    /* point-to-point peers are the remote group: MPI_PROC_NULL, a Sendrecv across, rank checks */
    {
        int lr = -1, v = mt_rank, w = -1;
        MPI_Status st;
        MT_CALL(MPI_Comm_rank(ic, &lr));
        MT_CALL(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, ic));
        MT_CALL(MPI_Recv(&w, 1, MPI_INT, MPI_PROC_NULL, 0, ic, &st));
        MT_EQ("Recv from MPI_PROC_NULL on an intercommunicator: source", MPI_PROC_NULL, st.MPI_SOURCE);
        if (nm == nt) { /* local rank r with remote rank r, both ways */
            MT_CALL(MPI_Sendrecv(&v, 1, MPI_INT, lr, 9, &w, 1, MPI_INT, lr, 9, ic, &st));
            MT_EQ("Sendrecv across: payload", theirs[lr], w);
            MT_EQ("Sendrecv across: source", lr, st.MPI_SOURCE);
        }
        if (mt_weft) {
            MT_CLASS_EQ("Send to remote rank = remote size", MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, nt, 0, ic));
            MT_CLASS_EQ("Recv from remote rank = remote size", MPI_ERR_RANK,
                        MPI_Recv(&w, 1, MPI_INT, nt, 0, ic, MPI_STATUS_IGNORE));
        }
    }

    /* dup, idup, compare */
    MT_CALL(MPI_Comm_dup(ic, &ic2));
    check_inter("Comm_dup of an intercommunicator", ic2, mine, nm, theirs, nt);
    int res = -1;
    MT_CALL(MPI_Comm_compare(ic, ic2, &res));
    MT_EQ("Comm_compare(intercomm, its dup)", MPI_CONGRUENT, res);
    MT_CALL(MPI_Comm_compare(ic, half, &res));
    MT_EQ("Comm_compare(intercomm, intracomm)", MPI_UNEQUAL, res);
    MT_CALL(MPI_Comm_free(&ic2));
    MPI_Request rq;
    MT_CALL(MPI_Comm_idup(ic, &ic2, &rq));
    MT_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_inter("Comm_idup of an intercommunicator", ic2, mine, nm, theirs, nt);
    MT_CALL(MPI_Comm_free(&ic2));

    /* merge: low first, high first */
    int all[64], k = 0;
    MT_CALL(MPI_Intercomm_merge(ic, !low, &m));
    for (int i = 0; i < n; i++)
        all[i] = i;
    check_intra("Intercomm_merge, upper part high", m, all, n);
    MT_CALL(MPI_Comm_free(&m));
    MT_CALL(MPI_Intercomm_merge(ic, low, &m));
    for (int i = 0; i < nhigh; i++)
        all[k++] = highr[i];
    for (int i = 0; i < nlow; i++)
        all[k++] = lowr[i];
    check_intra("Intercomm_merge, lower part high", m, all, n);
    MT_CALL(MPI_Comm_free(&m));
    MT_CALL(MPI_Intercomm_merge(ic, 1, &m));
    if (mt_weft) {
        for (int i = 0; i < n; i++)
            all[i] = i;
        check_intra("Intercomm_merge, equal flags", m, all, n);
    }
    MT_CALL(MPI_Comm_free(&m));

    /* split of an intercommunicator: color = local rank % 2 */
    int lrank = -1;
    MT_CALL(MPI_Comm_rank(ic, &lrank));
    MPI_Comm sc;
    MT_CALL(MPI_Comm_split(ic, lrank % 2, -lrank, &sc));
    int sl[64], sr[64], ksl = 0, ksr = 0;
    for (int i = nm - 1; i >= 0; i--)
        if (i % 2 == lrank % 2)
            sl[ksl++] = mine[i];
    for (int i = nt - 1; i >= 0; i--)
        if (i % 2 == lrank % 2)
            sr[ksr++] = theirs[i];
    if (ksr == 0) {
        MT_TRUE(sc == MPI_COMM_NULL, "Comm_split of an intercommunicator, no remote partner: MPI_COMM_NULL");
    } else {
        check_inter("Comm_split of an intercommunicator", sc, sl, ksl, sr, ksr);
        MT_CALL(MPI_Comm_free(&sc));
    }

    /* create on an intercommunicator: each side without its last member (if it has two or more) */
    MPI_Group lg, sub;
    MT_CALL(MPI_Comm_group(ic, &lg));
    int last[1] = {nm - 1};
    int drop_l = nm >= 2, drop_r = nt >= 2;
    MT_CALL(MPI_Group_excl(lg, drop_l, last, &sub));
    MT_CALL(MPI_Comm_create(ic, sub, &sc));
    if (drop_l && lrank == nm - 1) {
        MT_TRUE(sc == MPI_COMM_NULL, "Comm_create on an intercommunicator, outside: MPI_COMM_NULL");
    } else {
        check_inter("Comm_create on an intercommunicator", sc, mine, nm - drop_l, theirs, nt - drop_r);
        MT_CALL(MPI_Comm_free(&sc));
    }
    MT_CALL(MPI_Group_free(&sub));
    MT_CALL(MPI_Group_free(&lg));

    /* errors */
    if (mt_weft) { /* error classes and detection are the implementation's choice */
        MT_CLASS_EQ("Intercomm_merge of an intracommunicator", MPI_ERR_COMM, MPI_Intercomm_merge(half, 0, &m));
        MT_CLASS_EQ("Comm_remote_size of an intracommunicator", MPI_ERR_COMM, MPI_Comm_remote_size(half, &k));
        MPI_Comm dead = ic;
        MT_CALL(MPI_Comm_free(&ic));
        MT_CLASS_EQ("Comm_remote_size of a freed intercommunicator", MPI_ERR_COMM, MPI_Comm_remote_size(dead, &k));
        MT_CLASS_EQ("Intercomm_merge of a freed intercommunicator", MPI_ERR_COMM, MPI_Intercomm_merge(dead, 0, &m));
    } else {
        MT_CALL(MPI_Comm_free(&ic));
    }
    MT_CALL(MPI_Comm_free(&half));
    MT_CALL(MPI_Group_free(&world_group));
    return mt_finish("comm_inter");
}
