/* User error handlers and added error classes, codes and strings.
 *  - a handler set on a communicator is called once per error, with that communicator and the
 *    error's code, and the failing call returns the code when the handler returns;
 *  - MPI_Comm_call_errhandler passes the code unchanged and returns MPI_SUCCESS;
 *  - MPI_Comm_dup inherits the handler; MPI_Comm_get_errhandler returns it (a new reference, freed
 *    with MPI_Errhandler_free) and a handler freed while attached keeps working;
 *  - errors tied to no communicator go to MPI_COMM_SELF's handler;
 *  - MPI_Add_error_class/_code/_string round-trip through MPI_Error_class/_string, and
 *    MPI_LASTUSEDCODE follows; with MPI 4.1, MPI_Remove_error_*.
 * With --weft: freed and garbage handler handles give MPI_ERR_ERRHANDLER, and Weft's choices for
 * erroneous calls of the error-class functions. */
#include "mpitest.h"

#if MPI_VERSION < 4 || (MPI_VERSION == 4 && MPI_SUBVERSION < 1)   /* a class of MPI 4.1 */
#define MPI_ERR_ERRHANDLER MPI_ERR_ARG
#endif

static int calls;            /* handler invocations */
static MPI_Comm last_comm;   /* what the handler got */
static int last_code;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static int calls2;
static void handler2(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    calls2++;
}

/* call must fail through the user handler: called once, on comm, with the code returned. */
#define EXPECT_HANDLED(comm, cls, call)                                                            \
    do {                                                                                           \
        int before_ = calls;                                                                       \
        int rc_ = (call);                                                                          \
        MT_TRUE(rc_ != MPI_SUCCESS, "%s expected to fail", #call);                                 \
        MT_CLASS_EQ(#call, (cls), rc_);                                                            \
        MT_EQ("handler calls for " #call, before_ + 1, calls);                                     \
        MT_TRUE(last_comm == (comm), "%s: the handler expected the communicator %s", #call, #comm); \
        MT_EQ("code passed to the handler by " #call, rc_, last_code);                             \
    } while (0)

static void handlers(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm dup, dup2;
    int v = 0;
    MT_CALL(MPI_Comm_create_errhandler(handler, &eh));
    MT_TRUE(eh != MPI_ERRHANDLER_NULL, "Comm_create_errhandler expected a handle");
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CALL(MPI_Comm_set_errhandler(dup, eh));
    MT_CALL(MPI_Comm_get_errhandler(dup, &got));
    MT_TRUE(got == eh, "Comm_get_errhandler expected the handler just set");
    MT_CALL(MPI_Errhandler_free(&got));   /* the reference get returned */
    MT_TRUE(got == MPI_ERRHANDLER_NULL, "Errhandler_free expected to set MPI_ERRHANDLER_NULL");

    EXPECT_HANDLED(dup, MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, mt_size, 0, dup));
    EXPECT_HANDLED(dup, MPI_ERR_TAG, MPI_Send(&v, 1, MPI_INT, 0, -5, dup));
    EXPECT_HANDLED(dup, MPI_ERR_COUNT, MPI_Recv(&v, -1, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE));

    /* call_errhandler: the code unchanged, MPI_SUCCESS back */
    int before = calls;
    MT_CALL(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    MT_EQ("handler calls by Comm_call_errhandler", before + 1, calls);
    MT_EQ("code passed by Comm_call_errhandler", MPI_ERR_OTHER, last_code);
    MT_TRUE(last_comm == dup, "Comm_call_errhandler: the handler expected the dup");

    /* the user frees its handle: the communicator keeps the handler */
    MT_CALL(MPI_Errhandler_free(&eh));
    EXPECT_HANDLED(dup, MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, -7, 0, dup));

    /* a dup inherits it, and it goes to the dup's own handle */
    MT_CALL(MPI_Comm_dup(dup, &dup2));
    EXPECT_HANDLED(dup2, MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, mt_size + 1, 0, dup2));
    MT_CALL(MPI_Comm_get_errhandler(dup2, &got));
    MT_CALL(MPI_Comm_free(&dup));
    EXPECT_HANDLED(dup2, MPI_ERR_TAG, MPI_Send(&v, 1, MPI_INT, 0, MPI_ANY_TAG, dup2));

    /* replacing the handler: the new one is called, not the old */
    MPI_Errhandler eh2;
    MT_CALL(MPI_Comm_create_errhandler(handler2, &eh2));
    MT_CALL(MPI_Comm_set_errhandler(dup2, eh2));
    before = calls;
    int rc = MPI_Send(&v, 1, MPI_INT, mt_size, 0, dup2);
    MT_CLASS_EQ("Send with the second handler", MPI_ERR_RANK, rc);
    MT_EQ("first handler calls after replacing it", before, calls);
    MT_EQ("second handler calls", 1, calls2);
    /* the handle from get still names the first handler: set it back */
    MT_CALL(MPI_Comm_set_errhandler(dup2, got));
    MT_CALL(MPI_Errhandler_free(&got));
    MT_CALL(MPI_Errhandler_free(&eh2));
    EXPECT_HANDLED(dup2, MPI_ERR_RANK, MPI_Send(&v, 1, MPI_INT, mt_size, 0, dup2));
    MT_CALL(MPI_Comm_set_errhandler(dup2, MPI_ERRORS_RETURN));
    before = calls;
    rc = MPI_Send(&v, 1, MPI_INT, mt_size, 0, dup2);
    MT_CLASS_EQ("Send under MPI_ERRORS_RETURN", MPI_ERR_RANK, rc);
    MT_EQ("no handler call under MPI_ERRORS_RETURN", before, calls);
    MT_CALL(MPI_Comm_free(&dup2));

    /* predefined handlers: free gives MPI_ERRHANDLER_NULL, the handler stays */
    got = MPI_ERRORS_RETURN;
    MT_CALL(MPI_Errhandler_free(&got));
    MT_TRUE(got == MPI_ERRHANDLER_NULL, "Errhandler_free of a predefined handler expected MPI_ERRHANDLER_NULL");

    if (mt_weft) {   /* freed and garbage handles (MPICH does not check freed ones) */
        MPI_Errhandler stale;
        MT_CALL(MPI_Comm_create_errhandler(handler2, &stale));
        MPI_Errhandler copy = stale;
        MT_CALL(MPI_Errhandler_free(&stale));
        MT_CLASS_EQ("set a freed handler", MPI_ERR_ERRHANDLER, MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy));
        MT_CLASS_EQ("free a freed handler", MPI_ERR_ERRHANDLER, MPI_Errhandler_free(&copy));
        copy = (MPI_Errhandler)(uintptr_t)0x7654321;
        MT_CLASS_EQ("set a garbage handler", MPI_ERR_ERRHANDLER, MPI_Comm_set_errhandler(MPI_COMM_WORLD, copy));
        MT_CLASS_EQ("set MPI_ERRHANDLER_NULL", MPI_ERR_ERRHANDLER,
                    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL));
        /* a window's handler is not a communicator's */
        MPI_Errhandler weh;
        MT_CALL(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)handler2, &weh));
        MT_CLASS_EQ("set a window handler on a communicator", MPI_ERR_ARG, MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh));
        MT_CALL(MPI_Errhandler_free(&weh));
        MT_TRUE(weh == MPI_ERRHANDLER_NULL, "Errhandler_free of a window handler expected MPI_ERRHANDLER_NULL");
    }
}

/* Errors tied to no communicator go to MPI_COMM_SELF's handler (MPI 4.0; MPICH 4.0.2 does not). */
static void self_handler(void)
{
    if (!mt_weft)
        return;
    MPI_Errhandler eh;
    MT_CALL(MPI_Comm_create_errhandler(handler, &eh));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, eh));
    MT_CALL(MPI_Errhandler_free(&eh));
    int before = calls;
    int rc = MPI_Info_delete(MPI_INFO_NULL, "key");
    MT_TRUE(rc != MPI_SUCCESS, "Info_delete(MPI_INFO_NULL) expected to fail");
    MT_EQ("SELF's handler calls", before + 1, calls);
    MT_TRUE(last_comm == MPI_COMM_SELF, "the handler expected MPI_COMM_SELF");
    MT_EQ("code given to SELF's handler", rc, last_code);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

static void error_classes(void)
{
    int c1, c2, k1, k2, k3, cls, len, flag;
    int *lastused;
    char msg[MPI_MAX_ERROR_STRING];
    MT_CALL(MPI_Add_error_class(&c1));
    MT_CALL(MPI_Add_error_class(&c2));
    MT_TRUE(c1 > MPI_ERR_LASTCODE && c2 > MPI_ERR_LASTCODE && c1 != c2,
            "added classes expected distinct and > MPI_ERR_LASTCODE (%d) got %d %d", MPI_ERR_LASTCODE, c1, c2);
    MT_CALL(MPI_Add_error_code(c1, &k1));
    MT_CALL(MPI_Add_error_code(c1, &k2));
    MT_CALL(MPI_Add_error_code(MPI_ERR_ARG, &k3));
    MT_TRUE(k1 != k2 && k1 != c1 && k1 != c2 && k2 != c2 && k3 != MPI_ERR_ARG, "added codes expected distinct");
    MT_CALL(MPI_Error_class(c1, &cls));
    MT_EQ("class of an added class", c1, cls);
    MT_CALL(MPI_Error_class(c2, &cls));
    MT_EQ("class of an added class", c2, cls);
    MT_CALL(MPI_Error_class(k1, &cls));
    MT_EQ("class of an added code", c1, cls);
    MT_CALL(MPI_Error_class(k2, &cls));
    MT_EQ("class of an added code", c1, cls);
    MT_CALL(MPI_Error_class(k3, &cls));
    MT_EQ("class of a code added to MPI_ERR_ARG", MPI_ERR_ARG, cls);

    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastused, &flag));
    MT_TRUE(flag, "MPI_LASTUSEDCODE expected set");
    /* the standard: "the current maximum error class including the user-defined ones" */
    int top = c1 > c2 ? c1 : c2;
    MT_TRUE(*lastused >= top, "MPI_LASTUSEDCODE expected >= %d got %d", top, *lastused);
    if (mt_weft)
        MT_EQ("MPI_LASTUSEDCODE (the last class added)", top, *lastused);
    top = k1 > top ? k1 : top;
    top = k2 > top ? k2 : top;
    top = k3 > top ? k3 : top;   /* larger than every added class and code */

    /* strings: none yet is "", then the added ones, replaced on a second call */
    len = -1;
    MT_CALL(MPI_Error_string(k1, msg, &len));
    MT_TRUE(len == 0 && msg[0] == '\0', "Error_string of a code without string expected \"\" got \"%s\"", msg);
    MT_CALL(MPI_Add_error_string(c1, "my class one"));
    MT_CALL(MPI_Add_error_string(k1, "first code"));
    MT_CALL(MPI_Add_error_string(k2, "second code"));
    MT_CALL(MPI_Add_error_string(k2, "second code, replaced"));
    MT_CALL(MPI_Error_string(c1, msg, &len));
    MT_TRUE(strcmp(msg, "my class one") == 0 && len == 12, "Error_string(c1) got \"%s\" (%d)", msg, len);
    MT_CALL(MPI_Error_string(k1, msg, &len));
    MT_TRUE(strcmp(msg, "first code") == 0 && len == 10, "Error_string(k1) got \"%s\" (%d)", msg, len);
    MT_CALL(MPI_Error_string(k2, msg, &len));
    MT_TRUE(strcmp(msg, "second code, replaced") == 0, "Error_string(k2) got \"%s\"", msg);

    /* a user code through a user handler */
    MPI_Errhandler eh;
    MT_CALL(MPI_Comm_create_errhandler(handler, &eh));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    int before = calls;
    MT_CALL(MPI_Comm_call_errhandler(MPI_COMM_WORLD, k2));
    MT_EQ("handler calls", before + 1, calls);
    MT_EQ("added code passed to the handler", k2, last_code);
    MT_TRUE(last_comm == MPI_COMM_WORLD, "the handler expected MPI_COMM_WORLD");
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Errhandler_free(&eh));

    if (mt_weft) {   /* erroneous uses Weft detects */
        MT_CLASS_EQ("string for a standard class", MPI_ERR_ARG, MPI_Add_error_string(MPI_ERR_ARG, "no"));
        MT_CLASS_EQ("code of a code", MPI_ERR_ARG, MPI_Add_error_code(k1, &k3));
        MT_CLASS_EQ("code of no class", MPI_ERR_ARG, MPI_Add_error_code(top + 100, &k3));
        MT_CLASS_EQ("class of no code", MPI_ERR_ARG, MPI_Error_class(top + 100, &cls));
        MT_CLASS_EQ("string of no code", MPI_ERR_ARG, MPI_Error_string(top + 100, msg, &len));
    }

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* MPI 4.1: strings go before their codes, codes before their classes */
    if (mt_weft) {
        MT_CLASS_EQ("remove a code with a string", MPI_ERR_ARG, MPI_Remove_error_code(k1));
        MT_CLASS_EQ("remove a class with codes", MPI_ERR_ARG, MPI_Remove_error_class(c1));
    }
    MT_CALL(MPI_Remove_error_string(k1));
    MT_CALL(MPI_Remove_error_string(k2));
    MT_CALL(MPI_Remove_error_code(k1));
    MT_CALL(MPI_Remove_error_code(k2));
    if (mt_weft)
        MT_CLASS_EQ("remove a class with a string", MPI_ERR_ARG, MPI_Remove_error_class(c1));
    MT_CALL(MPI_Remove_error_string(c1));
    MT_CALL(MPI_Remove_error_class(c1));
    MT_CALL(MPI_Remove_error_class(c2));
    if (mt_weft) {
        MT_CLASS_EQ("class of a removed code", MPI_ERR_ARG, MPI_Error_class(k1, &cls));
        MT_CLASS_EQ("remove a removed class", MPI_ERR_ARG, MPI_Remove_error_class(c2));
    }
#endif
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    handlers();
    self_handler();
    error_classes();
    return mt_finish("errh_user");
}
