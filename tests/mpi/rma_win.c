/* Windows of every flavor and what they tell about themselves (MPI 4.1 sections 12.2, 12.3.1-12.3.2,
 * 12.2.7 attributes, 12.6 error handlers): Win_create, Win_allocate, Win_allocate_shared with
 * Win_shared_query, Win_free, Win_get_group, the predefined attributes, names, info and error
 * handlers. Each rank's window is (rank + 1) * 64 bytes with disp_unit (rank % 2 ? 4 : 8). */
#include "mpitest.h"

static int errh_calls, errh_last;
static void win_errh(MPI_Win *win, int *code, ...)
{
    (void)win;
    errh_calls++;
    errh_last = *code;
}

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int du, int flavor)
{
    void *v;
    int flag = 0;
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag));
    MT_EQ("WIN_BASE flag", 1, flag);
    MT_TRUE(v == base, "WIN_BASE expected %p got %p", base, v);
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag));
    MT_EQ("WIN_SIZE", size, *(MPI_Aint *)v);
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag));
    MT_EQ("WIN_DISP_UNIT", du, *(int *)v);
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag));
    MT_EQ("WIN_CREATE_FLAVOR", flavor, *(int *)v);
    MT_CALL(MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag));
    MT_EQ("WIN_MODEL", MPI_WIN_UNIFIED, *(int *)v);
}

static void check_common(MPI_Win win)
{
    MPI_Group wg, cg;
    int cmp;
    MT_CALL(MPI_Win_get_group(win, &wg));
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &cg));
    MT_CALL(MPI_Group_compare(wg, cg, &cmp));
    MT_EQ("Win_get_group vs world group (MPI_IDENT)", MPI_IDENT, cmp);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MT_CALL(MPI_Win_get_name(win, name, &len));
    MT_EQ("name length of a new window", 0, len);
    MT_CALL(MPI_Win_set_name(win, "halo window"));
    MT_CALL(MPI_Win_get_name(win, name, &len));
    MT_TRUE(strcmp(name, "halo window") == 0 && len == 11, "name expected 'halo window' got '%s'",
            name);

    /* info: the keys given at creation come back, the others with their values in use */
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL];
    int flag = 0;
    MT_CALL(MPI_Win_get_info(win, &used));
    MT_CALL(MPI_Info_get_string(used, "accumulate_ordering", &(int){sizeof(val)}, val, &flag));
    MT_TRUE(flag && strcmp(val, "none") == 0, "accumulate_ordering expected none got %s",
            flag ? val : "(unset)");
    MT_CALL(MPI_Info_get_string(used, "no_locks", &(int){sizeof(val)}, val, &flag));
    MT_TRUE(flag && strcmp(val, "false") == 0, "no_locks expected false got %s",
            flag ? val : "(unset)");
    MPI_Info_free(&used);
    MPI_Info set;
    MPI_Info_create(&set);
    MPI_Info_set(set, "accumulate_ops", "same_op");
    MT_CALL(MPI_Win_set_info(win, set));
    MPI_Info_free(&set);
    MT_CALL(MPI_Win_get_info(win, &used));
    MT_CALL(MPI_Info_get_string(used, "accumulate_ops", &(int){sizeof(val)}, val, &flag));
    MT_TRUE(flag && strcmp(val, "same_op") == 0, "accumulate_ops expected same_op got %s",
            flag ? val : "(unset)");
    MPI_Info_free(&used);

    /* error handlers: the default is MPI_ERRORS_ARE_FATAL; a user one is called by
     * Win_call_errhandler and by an error on the window */
    MPI_Errhandler eh, got;
    MT_CALL(MPI_Win_get_errhandler(win, &got));
    MT_TRUE(got == MPI_ERRORS_ARE_FATAL, "default window error handler is not MPI_ERRORS_ARE_FATAL");
    MT_CALL(MPI_Win_create_errhandler(win_errh, &eh));
    MT_CALL(MPI_Win_set_errhandler(win, eh));
    MT_CALL(MPI_Errhandler_free(&eh));
    errh_calls = 0;
    MT_CALL(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    MT_EQ("handler calls after Win_call_errhandler", 1, errh_calls);
    MT_EQ("code given to the handler", MPI_ERR_OTHER, errh_last);
    int rc = MPI_Win_unlock(0, win);   /* nothing locked */
    MT_EQ("handler calls after a failing Win_unlock", 2, errh_calls);
    MT_CLASS_EQ("Win_unlock without a lock", MPI_ERR_RMA_SYNC, rc);
    MT_CLASS_EQ("the handler's code", MPI_ERR_RMA_SYNC, errh_last);
    MT_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MPI_Aint size = (mt_rank + 1) * 64;
    int du = mt_rank % 2 ? 4 : 8;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");

    /* Win_create on user memory, and one with size 0 and base NULL */
    char *mem = malloc((size_t)size);
    MPI_Win win;
    MT_CALL(MPI_Win_create(mem, size, du, info, MPI_COMM_WORLD, &win));
    check_attrs(win, mem, size, du, MPI_WIN_FLAVOR_CREATE);
    check_common(win);
    MT_CALL(MPI_Win_free(&win));
    MT_TRUE(win == MPI_WIN_NULL, "Win_free did not set MPI_WIN_NULL");
    MT_CALL(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MT_CALL(MPI_Win_free(&win));
    free(mem);

    /* Win_allocate: memory of the library, usable at once */
    char *base = NULL;
    MT_CALL(MPI_Win_allocate(size, du, info, MPI_COMM_WORLD, &base, &win));
    MT_TRUE(base != NULL, "Win_allocate gave a NULL base");
    memset(base, 0x5a, (size_t)size);
    check_attrs(win, base, size, du, MPI_WIN_FLAVOR_ALLOCATE);
    check_common(win);
    MT_CALL(MPI_Win_free(&win));

    /* Win_allocate_shared: every rank's part on this node is reachable with loads and stores;
     * on several nodes (WEFT_NODE_SPLIT, fake hosts) the others' query gives size 0 and NULL */
    MPI_Comm node;
    MT_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int nsize, first_here = mt_size;
    MPI_Comm_size(node, &nsize);
    int *here = mt_malloc(sizeof(int) * (size_t)mt_size);
    int *nranks = mt_malloc(sizeof(int) * (size_t)nsize);
    MT_CALL(MPI_Allgather(&mt_rank, 1, MPI_INT, nranks, 1, MPI_INT, node));
    for (int r = 0; r < mt_size; r++)
        here[r] = 0;
    for (int i = 0; i < nsize; i++) {
        here[nranks[i]] = 1;
        if (nranks[i] < first_here)
            first_here = nranks[i];
    }
    MPI_Comm_free(&node);
    MT_CALL(MPI_Win_allocate_shared(size, du, info, MPI_COMM_WORLD, &base, &win));
    check_attrs(win, base, size, du, MPI_WIN_FLAVOR_SHARED);
    check_common(win);
    for (MPI_Aint i = 0; i < size; i++)
        base[i] = (char)(mt_rank * 7 + i);
    MT_CALL(MPI_Win_fence(0, win));
    for (int r = 0; r < mt_size; r++) {
        MPI_Aint qs;
        int qdu;
        char *qb;
        MT_CALL(MPI_Win_shared_query(win, r, &qs, &qdu, &qb));
        MT_EQ("shared_query size", here[r] ? (r + 1) * 64 : 0, qs);
        MT_EQ("shared_query disp_unit", r % 2 ? 4 : 8, qdu);
        MT_TRUE(here[r] || qb == NULL, "shared_query of rank %d on another node is not NULL", r);
        for (MPI_Aint i = 0; i < qs; i++)
            MT_EQ("byte read through shared_query", (char)(r * 7 + i), qb[i]);
        if (r == mt_rank)
            MT_TRUE(qb == base, "shared_query of my rank is not my base");
    }
    MPI_Aint qs;
    MPI_Aint qdu_c;
    char *qb;
    MT_CALL(MPI_Win_shared_query_c(win, MPI_PROC_NULL, &qs, &qdu_c, &qb));
    MT_EQ("shared_query(MPI_PROC_NULL) size: the node's first rank's", (first_here + 1) * 64, qs);
    free(here);
    free(nranks);
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Win_free(&win));

    /* a window on a sub-communicator: ranks of the window, not of MPI_COMM_WORLD */
    MPI_Comm half;
    MT_CALL(MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half));
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    int *hb;
    MT_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, half, &hb, &win));
    *hb = -1;
    MT_CALL(MPI_Win_fence(0, win));
    MT_CALL(MPI_Put(&mt_rank, 1, MPI_INT, (hr + 1) % hs, 0, 1, MPI_INT, win));
    MT_CALL(MPI_Win_fence(0, win));
    MPI_Group hg, wg;
    MPI_Comm_group(half, &hg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int from = (hr - 1 + hs) % hs, wfrom;
    MPI_Group_translate_ranks(hg, 1, &from, wg, &wfrom);
    MT_EQ("value put by the previous rank of the half communicator", wfrom, *hb);
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    MT_CALL(MPI_Win_free(&win));
    MPI_Comm_free(&half);

    MPI_Info_free(&info);
    return mt_finish("rma_win");
}
