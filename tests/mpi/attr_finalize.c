/* MPI_Finalize deletes the attributes of MPI_COMM_SELF first, "as if MPI_Comm_free(MPI_COMM_SELF)"
 * (MPI 4.0 11.2.4), last set first, while MPI is still fully usable (the callbacks may call MPI):
 * the standard's way to run code at the end of MPI. Those of MPI_COMM_WORLD are deleted too (MPICH
 * does the same; with --weft: after SELF's, last set first). */
#include "mpitest.h"

static int order[16], norder;
static int keys[5];

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)extra;
    int fin = 1, rank = -1;
    MPI_Finalized(&fin);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (fin || rank != mt_rank)
        MT_FAIL("delete callback of keyval %d expected MPI still up (finalized %d, rank %d)", keyval, fin, rank);
    int which = (int)(intptr_t)val;
    if ((which < 3) != (comm == MPI_COMM_SELF))
        MT_FAIL("attribute %d deleted on the wrong communicator", which);
    if (norder < 16)
        order[norder++] = which;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    for (int i = 0; i < 5; i++)
        MT_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &keys[i], NULL));
    /* set in the order 1, 0, 2 on SELF (so the order of keyvals does not decide), 3, 4 on WORLD */
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_SELF, keys[1], (void *)1));
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_SELF, keys[0], (void *)0));
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_SELF, keys[2], (void *)2));
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_WORLD, keys[3], (void *)3));
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_WORLD, keys[4], (void *)4));
    for (int i = 0; i < 5; i++)
        MT_CALL(MPI_Comm_free_keyval(&keys[i]));   /* the attributes stay */
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int rank = mt_rank;
    MT_CALL(MPI_Finalize());

    static const int self_order[3] = {2, 0, 1};
    int nself = 0;
    for (int i = 0; i < norder; i++)
        nself += order[i] < 3;
    MT_EQ("SELF's delete callbacks at MPI_Finalize", 3, nself);
    for (int i = 0, j = 0; i < norder; i++)
        if (order[i] < 3) {
            MT_EQ("SELF's attribute deleted (last set first)", self_order[j], order[i]);
            j++;
        }
    if (mt_weft) {
        static const int all[5] = {2, 0, 1, 4, 3};
        MT_EQ("delete callbacks at MPI_Finalize", 5, norder);
        for (int i = 0; i < 5; i++)
            MT_EQ("attribute deleted at MPI_Finalize (SELF's, then WORLD's, last set first)", all[i], order[i]);
    }
    if (rank == 0)
        printf("attr_finalize: ok\n");
    return 0;
}
