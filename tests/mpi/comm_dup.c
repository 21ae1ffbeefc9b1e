/* Comm_dup, Comm_idup, Comm_dup_with_info, Comm_compare, names, test_inter, get_parent,
 * info hints, Comm_free, and the errors of freed and predefined communicators under
 * MPI_ERRORS_RETURN. Messages on a duplicate never match receives on its parent or on another
 * duplicate: every rank sends the same (tag, size) on three communicators and the receives, posted
 * in the opposite order with MPI_ANY_SOURCE, must each get their own communicator's payload. */
#include "mpitest.h"

/* Each rank sends to its right neighbour on every communicator of cs (tag 0, payload naming the
 * communicator), then receives from anyone in reverse order; returns after checking. */
static void cross_check(const char *what, MPI_Comm *cs, int k)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Request rq[8];
    int out[8], in[8];
    if (k > 8)
        MT_FAIL("cross_check: at most 8 communicators");
    for (int i = 0; i < k; i++) {
        out[i] = 1000 * i + mt_rank;
        MT_CALL(MPI_Isend(&out[i], 1, MPI_INT, right, 0, cs[i], &rq[i]));
    }
    for (int i = k - 1; i >= 0; i--) {
        MPI_Status st;
        MT_CALL(MPI_Recv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, 0, cs[i], &st));
        MT_EQ(what, 1000 * i + left, in[i]);
        MT_EQ("source", left, st.MPI_SOURCE);
    }
    MT_CALL(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    MPI_Comm cs[4], d2;
    cs[0] = MPI_COMM_WORLD;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &cs[1]));
    MPI_Request rq, irq[2];
    /* two in flight, on different parents, completed in the opposite order */
    MT_CALL(MPI_Comm_idup(cs[1], &cs[2], &irq[0]));
    MT_CALL(MPI_Comm_idup(MPI_COMM_WORLD, &d2, &irq[1]));
    MT_CALL(MPI_Wait(&irq[1], MPI_STATUS_IGNORE));
    int done = 0;
    while (!done)
        MT_CALL(MPI_Test(&irq[0], &done, MPI_STATUS_IGNORE));
    MT_TRUE(irq[0] == MPI_REQUEST_NULL && irq[1] == MPI_REQUEST_NULL,
            "completed idup requests expected MPI_REQUEST_NULL");
    cs[3] = d2;
    cross_check("message on its own communicator", cs, 4);
    int r = -1, s = -1, res = -1, flag = -1;
    for (int i = 1; i < 4; i++) {
        MT_CALL(MPI_Comm_rank(cs[i], &r));
        MT_CALL(MPI_Comm_size(cs[i], &s));
        MT_EQ("rank in a duplicate", mt_rank, r);
        MT_EQ("size of a duplicate", mt_size, s);
        MT_CALL(MPI_Comm_compare(cs[i], MPI_COMM_WORLD, &res));
        MT_EQ("Comm_compare(dup, world)", MPI_CONGRUENT, res);
        MT_CALL(MPI_Comm_test_inter(cs[i], &flag));
        MT_EQ("Comm_test_inter of a duplicate", 0, flag);
    }
    MT_CALL(MPI_Comm_compare(cs[1], cs[1], &res));
    MT_EQ("Comm_compare(c, c)", MPI_IDENT, res);
    MT_CALL(MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res));
    MT_EQ("Comm_compare(self, world)", mt_size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, res);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MT_CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MT_TRUE(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "name of MPI_COMM_WORLD got '%s' (%d)", name, len);
    MT_CALL(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    MT_TRUE(strcmp(name, "MPI_COMM_SELF") == 0, "name of MPI_COMM_SELF got '%s'", name);
    MT_CALL(MPI_Comm_get_name(cs[1], name, &len));
    MT_TRUE(len == 0 && name[0] == '\0', "name of a new duplicate expected '' got '%s' (%d)", name, len);
    MT_CALL(MPI_Comm_set_name(cs[1], "first duplicate"));
    MT_CALL(MPI_Comm_get_name(cs[1], name, &len));
    MT_TRUE(strcmp(name, "first duplicate") == 0 && len == 15, "name got '%s' (%d)", name, len);
    MT_CALL(MPI_Comm_set_name(MPI_COMM_WORLD, "world renamed"));
    MT_CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MT_TRUE(strcmp(name, "world renamed") == 0, "renamed world got '%s'", name);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    MT_CALL(MPI_Comm_set_name(cs[2], longname));
    MT_CALL(MPI_Comm_get_name(cs[2], name, &len));
    MT_EQ("length of a truncated name", MPI_MAX_OBJECT_NAME - 1, len);

    /* get_parent, remote_size of an intracommunicator */
    MPI_Comm parent = MPI_COMM_WORLD;
    MT_CALL(MPI_Comm_get_parent(&parent));
    MT_TRUE(parent == MPI_COMM_NULL, "Comm_get_parent expected MPI_COMM_NULL");
    if (mt_weft)
        MT_CLASS_EQ("Comm_remote_size of an intracommunicator", MPI_ERR_COMM, MPI_Comm_remote_size(cs[1], &s));

    /* info hints: only where the info functions are there */
    MPI_Info info;
    if (MPI_Info_create(&info) == MPI_SUCCESS) {
        MT_CALL(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
        MPI_Comm ci;
        MT_CALL(MPI_Comm_dup_with_info(cs[1], info, &ci));
        MT_CALL(MPI_Info_free(&info));
        MPI_Info used;
        char v[64];
        int vl = sizeof v, f = 0;
        MT_CALL(MPI_Comm_get_info(ci, &used));
        MT_CALL(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &vl, v, &f));
        MT_TRUE(f, "Comm_get_info after dup_with_info: key expected");
        MT_CALL(MPI_Info_free(&used));
        MT_CALL(MPI_Info_create(&info));
        MT_CALL(MPI_Info_set(info, "mpi_assert_exact_length", "true"));
        MT_CALL(MPI_Comm_set_info(ci, info));
        MT_CALL(MPI_Info_free(&info));
        MT_CALL(MPI_Comm_get_info(ci, &used));
        vl = sizeof v;
        MT_CALL(MPI_Info_get_string(used, "mpi_assert_exact_length", &vl, v, &f));
        MT_TRUE(f && strcmp(v, "true") == 0, "Comm_get_info after set_info: key expected");
        MT_CALL(MPI_Info_free(&used));
        MT_CALL(MPI_Comm_free(&ci));
    } else if (mt_rank == 0) {
        printf("comm_dup: MPI_Info_create unavailable, info hints not checked\n");
    }

    /* a duplicate of a duplicate, freed before its parent; the parent still works */
    MPI_Comm dd;
    MT_CALL(MPI_Comm_dup(cs[2], &dd));
    MT_CALL(MPI_Comm_free(&cs[2]));
    MT_TRUE(cs[2] == MPI_COMM_NULL, "Comm_free expected MPI_COMM_NULL");
    cs[2] = dd;
    cross_check("message after freeing a parent", cs, 4);

    /* free with a pending receive: the request completes normally afterwards */
    int v = -1, one = 77;
    MT_CALL(MPI_Irecv(&v, 1, MPI_INT, (mt_rank + mt_size - 1) % mt_size, 5, cs[3], &rq));
    MPI_Comm keep = cs[3];
    MT_CALL(MPI_Comm_free(&cs[3]));
    MPI_Request sr[2];
    MT_CALL(MPI_Isend(&one, 1, MPI_INT, (mt_rank + 1) % mt_size, 5, cs[1], &sr[0]));
    MT_CALL(MPI_Isend(&one, 1, MPI_INT, (mt_rank + 1) % mt_size, 5, MPI_COMM_WORLD, &sr[1]));
    int w = -1;
    MT_CALL(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, cs[1], MPI_STATUS_IGNORE));
    MT_CALL(MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
    MT_EQ("receive on a communicator freed while it was pending (sent on nothing yet)", -1, v);
    /* nobody sent on the freed duplicate: cancel the receive */
    MT_CALL(MPI_Cancel(&rq));
    MPI_Status st;
    MT_CALL(MPI_Wait(&rq, &st));
    MT_CALL(MPI_Test_cancelled(&st, &flag));
    MT_TRUE(flag, "receive on a freed communicator expected cancelled");

    /* errors: freed handle, predefined communicators, MPI_COMM_NULL */
    if (mt_weft) { /* using a freed handle is erroneous: Weft reports it */
        MT_CLASS_EQ("Comm_rank of a freed communicator", MPI_ERR_COMM, MPI_Comm_rank(keep, &r));
        MT_CLASS_EQ("Comm_dup of a freed communicator", MPI_ERR_COMM, MPI_Comm_dup(keep, &dd));
        MT_CLASS_EQ("Comm_free of a freed communicator", MPI_ERR_COMM, MPI_Comm_free(&keep));
        MT_CLASS_EQ("Send on a freed communicator", MPI_ERR_COMM, MPI_Send(&one, 1, MPI_INT, 0, 0, keep));
        MPI_Comm w2 = MPI_COMM_WORLD, s2 = MPI_COMM_SELF, nul = MPI_COMM_NULL;
        MT_CLASS_EQ("Comm_free(MPI_COMM_WORLD)", MPI_ERR_COMM, MPI_Comm_free(&w2));
        MT_CLASS_EQ("Comm_free(MPI_COMM_SELF)", MPI_ERR_COMM, MPI_Comm_free(&s2));
        MT_CLASS_EQ("Comm_free(MPI_COMM_NULL)", MPI_ERR_COMM, MPI_Comm_free(&nul));
        MT_CLASS_EQ("Comm_compare with a freed communicator", MPI_ERR_COMM, MPI_Comm_compare(keep, cs[1], &res));
        MT_CLASS_EQ("Comm_set_name of a freed communicator", MPI_ERR_COMM, MPI_Comm_set_name(keep, "x"));
        MT_CLASS_EQ("Comm_group of a freed communicator", MPI_ERR_COMM, MPI_Comm_group(keep, &(MPI_Group){0}));
    }
    /* several idups in a row on one parent, a blocking dup among them, completed in reverse */
    {
        MPI_Comm many[6];
        MPI_Request mr[5];
        for (int i = 0; i < 3; i++)
            MT_CALL(MPI_Comm_idup(cs[1], &many[i], &mr[i]));
        MT_CALL(MPI_Comm_dup(cs[1], &many[3]));
        for (int i = 4; i < 6; i++)
            MT_CALL(MPI_Comm_idup(cs[1], &many[i], &mr[i - 1]));
        for (int i = 4; i >= 0; i--)
            MT_CALL(MPI_Wait(&mr[i], MPI_STATUS_IGNORE));
        cross_check("message on one of several duplicates", many, 6);
        for (int i = 0; i < 6; i++)
            MT_CALL(MPI_Comm_free(&many[i]));
    }

    /* disconnect with a freed send still on its way */
    MPI_Comm dc;
    MT_CALL(MPI_Comm_dup(cs[1], &dc));
    int big[4096], got[4096];
    for (int i = 0; i < 4096; i++)
        big[i] = i ^ mt_rank;
    MT_CALL(MPI_Isend(big, 4096, MPI_INT, (mt_rank + 1) % mt_size, 6, dc, &rq));
    MT_CALL(MPI_Request_free(&rq));
    MT_CALL(MPI_Recv(got, 4096, MPI_INT, (mt_rank + mt_size - 1) % mt_size, 6, dc, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4096; i++)
        MT_EQ("message before Comm_disconnect", i ^ ((mt_rank + mt_size - 1) % mt_size), got[i]);
    MT_CALL(MPI_Comm_disconnect(&dc));
    MT_TRUE(dc == MPI_COMM_NULL, "Comm_disconnect expected MPI_COMM_NULL");

    MT_CALL(MPI_Comm_free(&cs[1]));
    MT_CALL(MPI_Comm_free(&cs[2]));
    MT_CALL(MPI_Comm_dup(MPI_COMM_SELF, &dd));
    MT_CALL(MPI_Comm_size(dd, &s));
    MT_EQ("size of a duplicate of MPI_COMM_SELF", 1, s);
    cs[0] = dd;
    cross_check("self duplicate", cs, mt_size == 1 ? 1 : 0);
    MT_CALL(MPI_Comm_free(&dd));
    return mt_finish("comm_dup");
}
