/* MPI 4 requests (MPI 4.1 sections 3.7, 3.10.2, 13.2): MPI_Isendrecv and MPI_Isendrecv_replace
 * (statuses, truncation, MPI_PROC_NULL, datatypes, Request_free), MPI_Request_get_status_all /
 * _any / _some (they leave the requests active), generalized requests (query_fn and free_fn order
 * and arguments, errors of query_fn, MPI_Request_free before MPI_Grequest_complete,
 * MPI_Status_set_cancelled, mixed with point-to-point requests in Waitall/Waitany/Testsome).
 * Every rank exchanges with its neighbours on a ring. */
#include "mpitest.h"

#define EXPECT_CLASS(cls, call) MT_CLASS_EQ(#call, (cls), (call))

static int right, left;

static void isendrecv(void)
{
    enum { N = 1000 };
    int *out = mt_malloc(N * sizeof(int)), *in = mt_malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) {
        out[i] = mt_rank * 100000 + i;
        in[i] = -1;
    }
    MPI_Request r;
    MPI_Status st;
    MT_CALL(MPI_Isendrecv(out, N, MPI_INT, right, 11, in, N, MPI_INT, left, 11, MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Wait(&r, &st));
    MT_TRUE(r == MPI_REQUEST_NULL, "MPI_Wait of an Isendrecv request expected MPI_REQUEST_NULL");
    MT_STATUS("MPI_Isendrecv", st, left, 11, N * sizeof(int));
    for (int i = 0; i < N; i++)
        MT_EQ("MPI_Isendrecv received", left * 100000 + i, in[i]);

    /* large (rendezvous) with a derived receive type, completed by MPI_Test */
    enum { M = 1 << 18 };
    double *big = mt_malloc(M * sizeof(double)), *bin = mt_malloc(2 * M * sizeof(double));
    for (int i = 0; i < M; i++)
        big[i] = mt_rank + i * 0.5;
    MPI_Datatype strided;
    MT_CALL(MPI_Type_vector(M, 1, 2, MPI_DOUBLE, &strided));
    MT_CALL(MPI_Type_commit(&strided));
    MT_CALL(MPI_Isendrecv(big, M, MPI_DOUBLE, right, 12, bin, 1, strided, left, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Type_free(&strided));   /* the request keeps it alive */
    int flag = 0;
    while (!flag)
        MT_CALL(MPI_Test(&r, &flag, &st));
    MT_STATUS("MPI_Isendrecv (large, vector)", st, left, 12, M * sizeof(double));
    for (int i = 0; i < M; i += 997)
        MT_TRUE(bin[2 * i] == left + i * 0.5, "large Isendrecv element %d expected %g got %g", i,
                left + i * 0.5, bin[2 * i]);

    /* replace, contiguous and with a vector type */
    for (int i = 0; i < N; i++)
        out[i] = mt_rank * 7 + i;
    MT_CALL(MPI_Isendrecv_replace(out, N, MPI_INT, right, 13, left, 13, MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Wait(&r, &st));
    MT_STATUS("MPI_Isendrecv_replace", st, left, 13, N * sizeof(int));
    for (int i = 0; i < N; i++)
        MT_EQ("MPI_Isendrecv_replace result", left * 7 + i, out[i]);
    MPI_Datatype every3;
    MT_CALL(MPI_Type_vector(N / 3, 1, 3, MPI_INT, &every3));
    MT_CALL(MPI_Type_commit(&every3));
    for (int i = 0; i < N; i++)
        out[i] = i % 3 ? -5 : mt_rank * 1000 + i;
    MT_CALL(MPI_Isendrecv_replace_c(out, 1, every3, right, 14, left, 14, MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < N - 2; i++)
        MT_EQ("MPI_Isendrecv_replace_c (vector) result", i % 3 ? -5 : left * 1000 + i, out[i]);
    MT_CALL(MPI_Type_free(&every3));

    /* MPI_PROC_NULL on either side */
    MT_CALL(MPI_Isendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 15, in, 1, MPI_INT, MPI_PROC_NULL, 15,
                          MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Wait(&r, &st));
    MT_STATUS_PROC_NULL("MPI_Isendrecv with MPI_PROC_NULL", st);
    MT_CALL(MPI_Isendrecv(out, 3, MPI_INT, right, 16, in, 3, MPI_INT, MPI_PROC_NULL, 16,
                          MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Recv(in, 3, MPI_INT, left, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&r, &st));
    MT_STATUS_PROC_NULL("MPI_Isendrecv receiving from MPI_PROC_NULL", st);

    /* truncation: the receive's error, with the counts of what fit */
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Isendrecv(out, 10, MPI_INT, right, 17, in, 4, MPI_INT, left, 17, MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Wait(&r, &st));
    MT_EQ("source of a truncated Isendrecv", left, st.MPI_SOURCE);
    /* bad arguments */
    EXPECT_CLASS(MPI_ERR_RANK, MPI_Isendrecv(out, 1, MPI_INT, mt_size, 0, in, 1, MPI_INT, left, 0,
                                             MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_ERR_TAG, MPI_Isendrecv(out, 1, MPI_INT, right, -3, in, 1, MPI_INT, left, 0,
                                            MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_ERR_TYPE, MPI_Isendrecv_replace(out, 1, MPI_DATATYPE_NULL, right, 0, left, 0,
                                                     MPI_COMM_WORLD, &r));
    EXPECT_CLASS(MPI_ERR_COMM, MPI_Isendrecv(out, 1, MPI_INT, right, 0, in, 1, MPI_INT, left, 0,
                                             MPI_COMM_NULL, &r));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));

    /* freed before completion: it completes anyway, the data arrives */
    static int fout[5], fin[5];   /* still in use after the call: never freed */
    MT_CALL(MPI_Isendrecv(fout, 5, MPI_INT, right, 18, fin, 5, MPI_INT, left, 18, MPI_COMM_WORLD, &r));
    MT_CALL(MPI_Request_free(&r));
    MT_TRUE(r == MPI_REQUEST_NULL, "MPI_Request_free expected MPI_REQUEST_NULL");
    free(out);
    free(in);
    free(big);
    free(bin);
}

static void get_status(void)
{
    int a = mt_rank, b = -1;
    MPI_Request r[3];
    MPI_Status st[3];
    int flag = 0, idx = -1, out = -1, ind[3];
    MT_CALL(MPI_Irecv(&b, 1, MPI_INT, left, 21, MPI_COMM_WORLD, &r[0]));
    r[1] = MPI_REQUEST_NULL;
    /* nobody sends before the barrier below: not complete */
    MT_CALL(MPI_Request_get_status_all(2, r, &flag, st));
    MT_EQ("MPI_Request_get_status_all before the message", 0, flag);
    MT_CALL(MPI_Request_get_status_any(2, r, &idx, &flag, st));
    MT_TRUE(flag == 0 && idx == MPI_UNDEFINED, "get_status_any before the message expected flag 0 "
            "index MPI_UNDEFINED got %d %d", flag, idx);
    MT_CALL(MPI_Request_get_status_some(2, r, &out, ind, st));
    MT_EQ("MPI_Request_get_status_some outcount before the message", 0, out);
    /* no active request at all: flag true, MPI_UNDEFINED, the empty status (MPI_ERROR too) */
    {
        MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Status e;
        e.MPI_SOURCE = e.MPI_TAG = e.MPI_ERROR = 12345;
        MT_CALL(MPI_Request_get_status_any(2, nulls, &idx, &flag, &e));
        MT_TRUE(flag == 1 && idx == MPI_UNDEFINED, "get_status_any of null requests expected flag 1 "
                "index MPI_UNDEFINED got %d %d", flag, idx);
        MT_TRUE(e.MPI_SOURCE == MPI_ANY_SOURCE && e.MPI_TAG == MPI_ANY_TAG && e.MPI_ERROR == MPI_SUCCESS,
                "get_status_any of null requests: empty status expected, got source %d tag %d error %d",
                e.MPI_SOURCE, e.MPI_TAG, e.MPI_ERROR);
    }
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MT_CALL(MPI_Send(&a, 1, MPI_INT, right, 21, MPI_COMM_WORLD));
    do
        MT_CALL(MPI_Request_get_status_any(2, r, &idx, &flag, &st[0]));
    while (!flag);
    MT_EQ("MPI_Request_get_status_any index", 0, idx);
    MT_STATUS("MPI_Request_get_status_any", st[0], left, 21, sizeof(int));
    MT_TRUE(r[0] != MPI_REQUEST_NULL, "MPI_Request_get_status_any freed the request");
    MT_CALL(MPI_Request_get_status_some(2, r, &out, ind, st));
    MT_TRUE(out == 1 && ind[0] == 0, "get_status_some expected 1 (index 0) got %d (%d)", out, ind[0]);
    MT_STATUS("MPI_Request_get_status_some", st[0], left, 21, sizeof(int));
    MT_CALL(MPI_Request_get_status_all(2, r, &flag, st));
    MT_EQ("MPI_Request_get_status_all flag", 1, flag);
    MT_STATUS("MPI_Request_get_status_all [0]", st[0], left, 21, sizeof(int));
    MT_STATUS_EMPTY("MPI_Request_get_status_all [1] (null request)", st[1]);
    /* still active: a wait completes it */
    MT_CALL(MPI_Wait(&r[0], &st[0]));
    MT_STATUS("MPI_Wait after get_status", st[0], left, 21, sizeof(int));
    MT_EQ("received", left, b);
    /* no active request */
    MT_CALL(MPI_Request_get_status_any(2, r, &idx, &flag, &st[0]));
    MT_TRUE(flag == 1 && idx == MPI_UNDEFINED, "get_status_any of null requests expected flag 1, "
            "MPI_UNDEFINED got %d %d", flag, idx);
    MT_CALL(MPI_Request_get_status_some(2, r, &out, ind, st));
    MT_EQ("get_status_some of null requests", MPI_UNDEFINED, out);
    MT_CALL(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    MT_EQ("get_status_all of nothing", 1, flag);
}

/* ---- generalized requests ---- */

typedef struct {
    int id;
    int queries, frees, cancels, last_complete;
    int query_rc;
    int cancelled;
    int order;        /* 1 after query, 2 after free (checks query before free) */
} greq_state_t;

static int q_fn(void *extra, MPI_Status *status)
{
    greq_state_t *g = extra;
    g->queries++;
    if (g->order != 0 && g->order != 1)
        MT_FAIL("greq %d: query_fn after free_fn", g->id);
    g->order = 1;
    MT_CALL(MPI_Status_set_source(status, 1000 + g->id));
    MT_CALL(MPI_Status_set_tag(status, 2000 + g->id));
    MT_CALL(MPI_Status_set_elements(status, MPI_INT, g->id + 1));
    MT_CALL(MPI_Status_set_cancelled(status, g->cancelled));
    return g->query_rc;
}

static int f_fn(void *extra)
{
    greq_state_t *g = extra;
    g->frees++;
    g->order = 2;
    return MPI_SUCCESS;
}

static int c_fn(void *extra, int complete)
{
    greq_state_t *g = extra;
    g->cancels++;
    g->last_complete = complete;
    return MPI_SUCCESS;
}

static void expect_greq_status(const MPI_Status *st, int id, int cancelled, const char *what)
{
    int count = -1, c = -1;
    MT_EQ(what, 1000 + id, st->MPI_SOURCE);
    MT_EQ(what, 2000 + id, st->MPI_TAG);
    MT_CALL(MPI_Get_count(st, MPI_INT, &count));
    MT_EQ(what, id + 1, count);
    MT_CALL(MPI_Test_cancelled(st, &c));
    MT_EQ(what, cancelled, c);
}

static void greq(void)
{
    greq_state_t g[4] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}};
    MPI_Request r[4];
    MPI_Status st[4];
    int flag = -1;
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[0], &r[0]));
    MT_CALL(MPI_Test(&r[0], &flag, &st[0]));
    MT_EQ("MPI_Test of a generalized request not completed", 0, flag);
    MT_EQ("query_fn calls before completion", 0, g[0].queries);
    MT_CALL(MPI_Request_get_status(r[0], &flag, &st[0]));
    MT_EQ("MPI_Request_get_status before completion", 0, flag);
    MT_CALL(MPI_Grequest_complete(r[0]));
    MT_CALL(MPI_Request_get_status(r[0], &flag, &st[0]));
    MT_EQ("MPI_Request_get_status after completion", 1, flag);
    MT_EQ("query_fn calls of Request_get_status", 1, g[0].queries);
    MT_EQ("free_fn calls of Request_get_status", 0, g[0].frees);
    expect_greq_status(&st[0], 0, 0, "status of MPI_Request_get_status (greq)");
    g[0].cancelled = 1;
    MT_CALL(MPI_Wait(&r[0], &st[0]));
    MT_TRUE(r[0] == MPI_REQUEST_NULL, "MPI_Wait of a generalized request expected MPI_REQUEST_NULL");
    MT_TRUE(g[0].queries == 2 && g[0].frees == 1 && g[0].order == 2,
            "MPI_Wait: query_fn then free_fn once expected got %d queries %d frees", g[0].queries,
            g[0].frees);
    expect_greq_status(&st[0], 0, 1, "status of MPI_Wait (greq, MPI_Status_set_cancelled)");
    MT_EQ("cancel_fn never called", 0, g[0].cancels);

    /* query_fn's error is the call's: MPI_Wait returns it, MPI_Waitall puts it in the status */
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    g[1].query_rc = MPI_ERR_OTHER;
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[1], &r[1]));
    MT_CALL(MPI_Grequest_complete(r[1]));
    EXPECT_CLASS(MPI_ERR_OTHER, MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MT_EQ("free_fn after a failed query_fn", 1, g[1].frees);
    g[1] = (greq_state_t){.id = 1, .query_rc = MPI_ERR_ARG};
    int x = 0, y = -1;
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[1], &r[0]));
    MT_CALL(MPI_Isend(&x, 1, MPI_INT, right, 31, MPI_COMM_WORLD, &r[1]));
    MT_CALL(MPI_Irecv(&y, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &r[2]));
    MT_CALL(MPI_Grequest_complete(r[0]));
    int rc = MPI_Waitall(3, r, st);
    MT_CLASS_EQ("MPI_Waitall with a failing query_fn", MPI_ERR_IN_STATUS, rc);
    MT_CLASS_EQ("MPI_ERROR of the generalized request", MPI_ERR_ARG, st[0].MPI_ERROR);
    MT_CLASS_EQ("MPI_ERROR of the send", MPI_SUCCESS, st[1].MPI_ERROR);
    MT_CLASS_EQ("MPI_ERROR of the receive", MPI_SUCCESS, st[2].MPI_ERROR);
    MT_STATUS("receive in the Waitall", st[2], left, 31, sizeof(int));
    MT_EQ("free_fn in Waitall", 1, g[1].frees);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    /* MPI_Request_free first: free_fn runs in MPI_Grequest_complete, query_fn never */
    MPI_Request keep;
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[2], &r[0]));
    keep = r[0];
    MT_CALL(MPI_Request_free(&r[0]));
    MT_TRUE(r[0] == MPI_REQUEST_NULL, "MPI_Request_free expected MPI_REQUEST_NULL");
    MT_EQ("free_fn before MPI_Grequest_complete", 0, g[2].frees);
    MT_CALL(MPI_Grequest_complete(keep));
    MT_TRUE(g[2].frees == 1 && g[2].queries == 0, "after Grequest_complete of a freed request "
            "expected 1 free, 0 queries got %d, %d", g[2].frees, g[2].queries);
    /* MPI_Request_free after completion: free_fn at once */
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[3], &r[0]));
    MT_CALL(MPI_Grequest_complete(r[0]));
    MT_CALL(MPI_Request_free(&r[0]));
    MT_EQ("free_fn of Request_free after completion", 1, g[3].frees);

    /* MPI_Cancel calls cancel_fn with complete = whether MPI_Grequest_complete was called; the
     * request still completes through Grequest_complete and a wait (MPI 4.1 §13.2) */
    g[3] = (greq_state_t){.id = 3};
    MT_CALL(MPI_Grequest_start(q_fn, f_fn, c_fn, &g[3], &r[0]));
    MT_CALL(MPI_Cancel(&r[0]));
    MT_TRUE(g[3].cancels == 1 && g[3].last_complete == 0,
            "MPI_Cancel of a pending greq: cancel_fn(complete=0) once expected, got %d calls, "
            "complete=%d", g[3].cancels, g[3].last_complete);
    g[3].cancelled = 1;
    MT_CALL(MPI_Grequest_complete(r[0]));
    MT_CALL(MPI_Cancel(&r[0]));
    MT_TRUE(g[3].cancels == 2 && g[3].last_complete == 1,
            "MPI_Cancel of a completed greq: cancel_fn(complete=1) expected, got %d calls, "
            "complete=%d", g[3].cancels, g[3].last_complete);
    MT_CALL(MPI_Wait(&r[0], &st[0]));
    expect_greq_status(&st[0], 3, 1, "status of a cancelled generalized request");
    MT_EQ("free_fn of the cancelled greq", 1, g[3].frees);

    /* Waitany and Testsome over generalized and point-to-point requests */
    greq_state_t h[3] = {{.id = 5}, {.id = 6}, {.id = 7}};
    for (int i = 0; i < 3; i++)
        MT_CALL(MPI_Grequest_start(q_fn, f_fn, NULL, &h[i], &r[i]));
    MT_CALL(MPI_Irecv(&y, 1, MPI_INT, left, 32, MPI_COMM_WORLD, &r[3]));
    MT_CALL(MPI_Grequest_complete(r[1]));
    int idx = -1;
    MT_CALL(MPI_Waitany(4, r, &idx, &st[0]));
    MT_EQ("MPI_Waitany index (the completed generalized request)", 1, idx);
    expect_greq_status(&st[0], 6, 0, "status of MPI_Waitany (greq)");
    MT_CALL(MPI_Grequest_complete(r[0]));
    MT_CALL(MPI_Grequest_complete(r[2]));
    MT_CALL(MPI_Send(&x, 1, MPI_INT, right, 32, MPI_COMM_WORLD));
    int done = 0, out, ind[4];
    while (done < 3) {
        MT_CALL(MPI_Testsome(4, r, &out, ind, st));
        for (int i = 0; i < out; i++) {
            if (ind[i] == 3)
                MT_STATUS("receive in Testsome", st[i], left, 32, sizeof(int));
            else
                expect_greq_status(&st[i], 5 + ind[i], 0, "status of MPI_Testsome (greq)");
        }
        done += out;
    }
    for (int i = 0; i < 3; i++)
        MT_TRUE(h[i].frees == 1 && h[i].queries == 1, "greq %d: 1 query, 1 free expected got %d, %d",
                5 + i, h[i].queries, h[i].frees);
    /* errors */
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Grequest_start(q_fn, f_fn, c_fn, NULL, NULL));
    MT_CALL(MPI_Isend(&x, 1, MPI_INT, right, 33, MPI_COMM_WORLD, &r[0]));
    EXPECT_CLASS(MPI_ERR_REQUEST, MPI_Grequest_complete(r[0]));
    MT_CALL(MPI_Recv(&y, 1, MPI_INT, left, 33, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CALL(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Status_set_cancelled(MPI_STATUS_IGNORE, 1));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    right = (mt_rank + 1) % mt_size;
    left = (mt_rank + mt_size - 1) % mt_size;
    isendrecv();
    get_status();
    greq();
    return mt_finish("req_ext");
}
