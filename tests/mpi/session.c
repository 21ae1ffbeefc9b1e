/* Sessions (MPI 4.1 section 11.3) and the communicators made from their groups, with and without
 * the world model. One mode per run (first argument):
 *   before      MPI_Session_init before MPI_Init, a second session nested inside the world model,
 *               both finalized before MPI_Finalize
 *   only        sessions only, never MPI_Init: three sessions one after the other, then two at once
 *   after       MPI_Init, a session opened and finalized, MPI_Finalize, then a session again (MPI 4
 *               allows sessions after the world model ended)
 * In every session: the process sets (count, names, the length query, "mpi_size" of each, a group
 * of each of the right size holding the right processes), MPI_Session_get_info's "thread_level",
 * Comm_create_from_group on mpi://WORLD and on the caller's node then a ring of messages and an
 * Allreduce on it, the same stringtag twice in a row (two communicators that must not share
 * messages), Intercomm_create_from_groups between the lower and upper halves of the world with
 * messages across and an Allreduce, a buffered send from a session's buffer, and the session's
 * error handlers (MPI_ERRORS_RETURN gives MPI_ERR_ARG for a bad pset name, a bad n, a comm
 * error handler on a session; a user handler is called by Session_call_errhandler and by an error,
 * with the session and the code). --weft: Weft's pset names (weft://node, weft://node/<k>). */
#include "mpitest.h"

static int world_n, world_me;   /* from the mpi://WORLD group */

/* ---- a user error handler on sessions ---- */
static int handler_calls, handler_code;
static MPI_Session handler_session;
static void session_handler(MPI_Session *s, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_session = *s;
}

static int pset_size(MPI_Session s, const char *name)
{
    MPI_Info info;
    MT_CALL(MPI_Session_get_pset_info(s, name, &info));
    char val[32];
    int len = (int)sizeof(val), flag = 0;
    MT_CALL(MPI_Info_get_string(info, "mpi_size", &len, val, &flag));
    MT_TRUE(flag, "pset %s: no mpi_size in its info", name);
    MT_CALL(MPI_Info_free(&info));
    return atoi(val);
}

static MPI_Group pset_group(MPI_Session s, const char *name)
{
    MPI_Group g;
    MT_CALL(MPI_Group_from_session_pset(s, name, &g));
    int n = -1;
    MT_CALL(MPI_Group_size(g, &n));
    MT_EQ(name, pset_size(s, name), n);
    return g;
}

static void check_psets(MPI_Session s)
{
    int n = -1;
    MT_CALL(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    MT_TRUE(n >= 2, "at least mpi://WORLD and mpi://SELF expected, got %d psets", n);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MT_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        MT_TRUE(len >= 2 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d name length %d", i, len);
        char *name = mt_malloc((size_t)len);
        int len2 = len;
        MT_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len2, name));
        MT_EQ("pset name length, second query", len, len2);
        MT_EQ("pset name length", len - 1, (int)strlen(name));
        /* a short buffer gets a truncated, terminated name */
        char shortbuf[4];
        int len3 = 4;
        MT_CALL(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len3, shortbuf));
        MT_TRUE(strlen(shortbuf) == 3 && strncmp(shortbuf, name, 3) == 0, "truncated name %s", shortbuf);
        int size = pset_size(s, name);
        MPI_Group g = pset_group(s, name), wg = MPI_GROUP_NULL;
        int me = MPI_UNDEFINED;
        MT_CALL(MPI_Group_rank(g, &me));
        if (strcmp(name, "mpi://WORLD") == 0) {
            seen_world = 1;
            MT_EQ("mpi://WORLD size", world_n, size);
            MT_EQ("my rank in mpi://WORLD", world_me, me);
        } else if (strcmp(name, "mpi://SELF") == 0) {
            seen_self = 1;
            MT_EQ("mpi://SELF size", 1, size);
            MT_EQ("my rank in mpi://SELF", 0, me);
        } else {
            MT_TRUE(size >= 0 && size <= world_n, "pset %s size %d", name, size);
        }
        if (mt_weft) {
            const char *want[3] = { "mpi://WORLD", "mpi://SELF", "weft://node" };
            char node[32];
            snprintf(node, sizeof(node), "weft://node/%d", i - 3);
            MT_TRUE(strcmp(name, i < 3 ? want[i] : node) == 0, "pset %d named %s", i, name);
            if (i >= 2 && i < 3)
                MT_TRUE(me != MPI_UNDEFINED, "the caller is in %s", name);
        }
        /* every member is a process of mpi://WORLD */
        MT_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
        int *idx = mt_malloc(sizeof(int) * (size_t)(size + 1)), *out = mt_malloc(sizeof(int) * (size_t)(size + 1));
        for (int k = 0; k < size; k++)
            idx[k] = k;
        MT_CALL(MPI_Group_translate_ranks(g, size, idx, wg, out));
        for (int k = 0; k < size; k++)
            MT_TRUE(out[k] >= 0 && out[k] < world_n, "member %d of %s is world rank %d", k, name, out[k]);
        free(idx);
        free(out);
        MT_CALL(MPI_Group_free(&wg));
        MT_CALL(MPI_Group_free(&g));
        free(name);
    }
    MT_TRUE(seen_world && seen_self, "mpi://WORLD and mpi://SELF listed (%d %d)", seen_world, seen_self);
}

/* A ring on c (message from the left, to the right) and an Allreduce of the ranks. */
static void use_intra(MPI_Comm c, int tag, const char *what)
{
    int n, r;
    MT_CALL(MPI_Comm_size(c, &n));
    MT_CALL(MPI_Comm_rank(c, &r));
    int out[2] = { r, tag }, in[2] = { -1, -1 };
    MT_CALL(MPI_Sendrecv(out, 2, MPI_INT, (r + 1) % n, tag, in, 2, MPI_INT, (r + n - 1) % n, tag, c,
                         MPI_STATUS_IGNORE));
    MT_EQ(what, (r + n - 1) % n, in[0]);
    MT_EQ(what, tag, in[1]);
    int sum = -1;
    MT_CALL(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    MT_EQ(what, n * (n - 1) / 2, sum);
}

static void check_comms(MPI_Session s, int round)
{
    MPI_Group wg = pset_group(s, "mpi://WORLD");
    MPI_Comm c;
    MT_CALL(MPI_Comm_create_from_group(wg, "org.weft.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int n, r;
    MT_CALL(MPI_Comm_size(c, &n));
    MT_CALL(MPI_Comm_rank(c, &r));
    MT_EQ("size of the world's communicator", world_n, n);
    MT_EQ("rank in the world's communicator", world_me, r);
    MPI_Errhandler eh;
    MT_CALL(MPI_Comm_get_errhandler(c, &eh));
    MT_TRUE(eh == MPI_ERRORS_RETURN, "the new communicator has the error handler given");
    MT_CALL(MPI_Errhandler_free(&eh));
    use_intra(c, 10 + round, "ring on the world's communicator");

    /* the same stringtag and group again: a second communicator whose messages stay its own */
    MPI_Comm c2;
    MT_CALL(MPI_Comm_create_from_group(wg, "org.weft.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c2));
    int result = -1;
    MT_CALL(MPI_Comm_compare(c, c2, &result));
    MT_EQ("compare two communicators of one group", MPI_CONGRUENT, result);
    if (n > 1) {
        int a = 100 + r, b = 200 + r, ga = -1, gb = -1, right = (r + 1) % n, left = (r + n - 1) % n;
        MPI_Request q[4];
        /* c2's message sent first, received second, same tag: a shared context would swap them */
        MT_CALL(MPI_Isend(&b, 1, MPI_INT, right, 3, c2, &q[0]));
        MT_CALL(MPI_Isend(&a, 1, MPI_INT, right, 3, c, &q[1]));
        MT_CALL(MPI_Irecv(&ga, 1, MPI_INT, left, 3, c, &q[2]));
        MT_CALL(MPI_Irecv(&gb, 1, MPI_INT, left, 3, c2, &q[3]));
        MT_CALL(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        MT_EQ("message on the first communicator", 100 + left, ga);
        MT_EQ("message on the second communicator", 200 + left, gb);
    }
    use_intra(c2, 20 + round, "ring on the second communicator");
    MT_CALL(MPI_Comm_free(&c2));

    /* a buffered send from the session's buffer (c has none of its own) */
    {
        int bsize = 4 * MPI_BSEND_OVERHEAD + 64, out = 7000 + r, in = -1, got = 0;
        char *buf = mt_malloc((size_t)bsize);
        void *back = NULL;
        MT_CALL(MPI_Session_attach_buffer(s, buf, bsize));
        MT_CALL(MPI_Bsend(&out, 1, MPI_INT, (r + 1) % n, 4, c));
        MT_CALL(MPI_Recv(&in, 1, MPI_INT, (r + n - 1) % n, 4, c, MPI_STATUS_IGNORE));
        MT_EQ("buffered message", 7000 + (r + n - 1) % n, in);
        MPI_Request fr;
        MT_CALL(MPI_Session_iflush_buffer(s, &fr));
        MT_CALL(MPI_Wait(&fr, MPI_STATUS_IGNORE));
        MT_CALL(MPI_Session_flush_buffer(s));
        MT_CALL(MPI_Session_detach_buffer(s, &back, &got));
        MT_TRUE(back == buf && got == bsize, "detached %p/%d expected %p/%d", back, got, (void *)buf, bsize);
        free(buf);
    }
    MT_CALL(MPI_Comm_free(&c));

    /* the caller's node, if the implementation names it (Weft: weft://node) */
    if (mt_weft) {
        MPI_Group ng = pset_group(s, "weft://node");
        MPI_Comm nc;
        MT_CALL(MPI_Comm_create_from_group(ng, "org.weft.test.node", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &nc));
        use_intra(nc, 30 + round, "ring on the node's communicator");
        MT_CALL(MPI_Comm_free(&nc));
        MT_CALL(MPI_Group_free(&ng));
    }

    /* an intercommunicator between the halves */
    if (world_n >= 2) {
        int nlow = world_n / 2, low = world_me < nlow;
        int rl[1][3] = { { 0, nlow - 1, 1 } }, ru[1][3] = { { nlow, world_n - 1, 1 } };
        MPI_Group lower, upper;
        MT_CALL(MPI_Group_range_incl(wg, 1, rl, &lower));
        MT_CALL(MPI_Group_range_incl(wg, 1, ru, &upper));
        MPI_Comm ic;
        MT_CALL(MPI_Intercomm_create_from_groups(low ? lower : upper, 0, low ? upper : lower, 0,
                                                 "org.weft.test.halves", MPI_INFO_NULL,
                                                 MPI_ERRORS_ARE_FATAL, &ic));
        int flag = 0, ln, rn, lr;
        MT_CALL(MPI_Comm_test_inter(ic, &flag));
        MT_EQ("intercommunicator", 1, flag);
        MT_CALL(MPI_Comm_size(ic, &ln));
        MT_CALL(MPI_Comm_remote_size(ic, &rn));
        MT_CALL(MPI_Comm_rank(ic, &lr));
        MT_EQ("local size", low ? nlow : world_n - nlow, ln);
        MT_EQ("remote size", low ? world_n - nlow : nlow, rn);
        MT_EQ("local rank", low ? world_me : world_me - nlow, lr);
        /* local rank k sends to remote rank k % rn; receive what comes from every remote rank j
         * with j % ln == lr */
        int out = 1000 * world_me + round, nexp = 0;
        MPI_Request sq;
        MT_CALL(MPI_Isend(&out, 1, MPI_INT, lr % rn, 9, ic, &sq));
        for (int j = 0; j < rn; j++)
            if (j % ln == lr) {
                int in = -1;
                MT_CALL(MPI_Recv(&in, 1, MPI_INT, j, 9, ic, MPI_STATUS_IGNORE));
                MT_EQ("message across", 1000 * ((low ? nlow : 0) + j) + round, in);
                nexp++;
            }
        MT_CALL(MPI_Wait(&sq, MPI_STATUS_IGNORE));
        int sum = -1, mine = world_me;
        MT_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic));
        int rsum = 0;   /* the remote group's world ranks */
        for (int k = low ? nlow : 0; k < (low ? world_n : nlow); k++)
            rsum += k;
        MT_EQ("Allreduce across the intercommunicator", rsum, sum);
        MT_CALL(MPI_Comm_free(&ic));
        MT_CALL(MPI_Group_free(&lower));
        MT_CALL(MPI_Group_free(&upper));
    }
    MT_CALL(MPI_Group_free(&wg));
}

static void check_errors(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    MT_CALL(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MT_CLASS_EQ("Group_from_session_pset of an unknown pset", MPI_ERR_ARG,
                MPI_Group_from_session_pset(s, "mpi://NO-SUCH-SET", &g));
    MT_TRUE(g == MPI_GROUP_NULL, "no group on error");
    MPI_Info info = MPI_INFO_NULL;
    MT_CLASS_EQ("Session_get_pset_info of an unknown pset", MPI_ERR_ARG,
                MPI_Session_get_pset_info(s, "no-such-set", &info));
    int n = 0, len = 0;
    MT_CALL(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    MT_CLASS_EQ("Session_get_nth_pset past the end", MPI_ERR_ARG,
                MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, NULL));
    MT_CLASS_EQ("Session_get_nth_pset of -1", MPI_ERR_ARG,
                MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, NULL));
    MPI_Errhandler ceh;
    MT_CALL(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))session_handler, &ceh));
    MT_CLASS_EQ("a communicator's handler on a session", MPI_ERR_ARG, MPI_Session_set_errhandler(s, ceh));
    MT_CALL(MPI_Errhandler_free(&ceh));

    MPI_Errhandler eh, got;
    MT_CALL(MPI_Session_create_errhandler(session_handler, &eh));
    MT_CALL(MPI_Session_set_errhandler(s, eh));
    MT_CALL(MPI_Session_get_errhandler(s, &got));
    MT_TRUE(got == eh, "Session_get_errhandler gives the handler set");
    MT_CALL(MPI_Errhandler_free(&got));
    handler_calls = 0;
    MT_CALL(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    MT_EQ("handler calls", 1, handler_calls);
    MT_EQ("code given to the handler", MPI_ERR_OTHER, handler_code);
    MT_TRUE(handler_session == s, "the handler gets the session");
    int rc = MPI_Group_from_session_pset(s, "no-such-set", &g);
    MT_EQ("handler calls after an error", 2, handler_calls);
    MT_CLASS_EQ("the code the handler got", MPI_ERR_ARG, handler_code);
    MT_CLASS_EQ("the code returned", MPI_ERR_ARG, rc);
    MT_CALL(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Errhandler_free(&eh));
}

static MPI_Session open_session(void)
{
    MPI_Session s = MPI_SESSION_NULL;
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    MT_CALL(MPI_Info_set(info, "org.weft.test", "yes"));
    MT_CALL(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    MT_CALL(MPI_Info_free(&info));
    MT_TRUE(s != MPI_SESSION_NULL, "a session");
    MPI_Info used;
    MT_CALL(MPI_Session_get_info(s, &used));
    char val[64];
    int len = (int)sizeof(val), flag = 0;
    MT_CALL(MPI_Info_get_string(used, "thread_level", &len, val, &flag));
    MT_TRUE(flag && strncmp(val, "MPI_THREAD_", 11) == 0, "thread_level in the session's info: %s",
            flag ? val : "(none)");
    MT_CALL(MPI_Info_free(&used));
    MPI_Group wg;
    MT_CALL(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg));
    MT_CALL(MPI_Group_size(wg, &world_n));
    MT_CALL(MPI_Group_rank(wg, &world_me));
    MT_CALL(MPI_Group_free(&wg));
    mt_rank = world_me;
    return s;
}

static void close_session(MPI_Session *s)
{
    MT_CALL(MPI_Session_finalize(s));
    MT_TRUE(*s == MPI_SESSION_NULL, "Session_finalize sets the handle to MPI_SESSION_NULL");
}

static void exercise(MPI_Session s, int round)
{
    check_psets(s);
    check_comms(s, round);
    check_errors(s);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "before";
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--weft") == 0)
            mt_weft = 1;
    int flag = 1;
    if (strcmp(mode, "before") == 0) {
        MPI_Session s1 = open_session();
        MT_CALL(MPI_Initialized(&flag));
        MT_EQ("MPI_Initialized with only a session", 0, flag);
        exercise(s1, 0);
        mt_init(&argc, &argv);
        MT_EQ("world rank and mpi://WORLD rank", mt_rank, world_me);
        MPI_Session s2 = open_session();
        exercise(s2, 1);
        exercise(s1, 2);
        close_session(&s2);
        close_session(&s1);
        MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
        return mt_finish("session before");
    }
    if (strcmp(mode, "only") == 0) {
        for (int round = 0; round < 3; round++) {
            MPI_Session s = open_session();
            exercise(s, round);
            close_session(&s);
        }
        MPI_Session a = open_session(), b = open_session();
        exercise(b, 3);
        exercise(a, 4);
        close_session(&a);
        close_session(&b);
        MT_CALL(MPI_Initialized(&flag));
        MT_EQ("MPI_Initialized, sessions only", 0, flag);
        if (world_me == 0)
            printf("session only: %d ranks ok\n", world_n);
        return 0;
    }
    if (strcmp(mode, "after") == 0) {
        mt_init(&argc, &argv);
        MPI_Session s = open_session();
        exercise(s, 0);
        close_session(&s);
        MT_CALL(MPI_Finalize());
        MT_CALL(MPI_Finalized(&flag));
        MT_EQ("MPI_Finalized", 1, flag);
        s = open_session();
        exercise(s, 1);
        close_session(&s);
        if (world_me == 0)
            printf("session after: %d ranks ok\n", world_n);
        return 0;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
