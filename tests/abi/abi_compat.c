/* One program, built twice: with Weft's mpicc and with another implementation's standard-ABI
 * wrapper (MPICH's mpicc_abi), then run on Weft's library and launcher (test_mpich_abi.sh).  It
 * exercises the constants whose values a binary carries: predefined error handlers, error
 * classes returned under MPI_ERRORS_RETURN, predefined attribute keys, combiners, datatypes and
 * ops, in point-to-point and collective calls.  Every result is checked here against the value
 * the standard gives, and rank 0 prints a transcript of them; the driver compares the transcripts
 * of the two builds.
 *
 *   abi_compat [APPNUM]   the checks; APPNUM is the MPMD section the process was started in
 *   abi_compat --abort    installs MPI_ERRORS_ABORT on MPI_COMM_SELF and makes an error there:
 *                         the job must end with a non-zero status */
#include "../mpi/mpitest.h"

#include <stdarg.h>

static char transcript[8192];
static size_t transcript_len;

/* Appends one line to rank 0's transcript (every rank computes the same lines). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(transcript + transcript_len, sizeof(transcript) - transcript_len, fmt, ap);
    va_end(ap);
    MT_TRUE(n >= 0 && (size_t)n < sizeof(transcript) - transcript_len - 1, "transcript too long");
    transcript_len += (size_t)n;
    transcript[transcript_len++] = '\n';
    transcript[transcript_len] = '\0';
}

static int handler_calls, handler_last_code;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_last_code = *code;
}

/* MPI_ERRORS_RETURN must return each error's class instead of ending the job. */
static void check_errors_return(void)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MT_CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    MT_TRUE(eh == MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD's default handler is not MPI_ERRORS_ARE_FATAL");
    MT_CALL(MPI_Errhandler_free(&eh));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    MT_TRUE(eh == MPI_ERRORS_RETURN, "MPI_Comm_get_errhandler does not give back MPI_ERRORS_RETURN");
    MT_CALL(MPI_Errhandler_free(&eh));

    int x = 0;
    MT_CLASS_EQ("MPI_Send to rank size", MPI_ERR_RANK, MPI_Send(&x, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Send with tag -5", MPI_ERR_TAG, MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Send with count -1", MPI_ERR_COUNT, MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Send of MPI_DATATYPE_NULL", MPI_ERR_TYPE,
                MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Allreduce with MPI_OP_NULL", MPI_ERR_OP,
                MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
    MT_CLASS_EQ("MPI_Bcast with root size", MPI_ERR_ROOT, MPI_Bcast(&x, 1, MPI_INT, mt_size, MPI_COMM_WORLD));
    int keyval = MPI_KEYVAL_INVALID;
    MT_CLASS_EQ("MPI_Comm_set_attr of MPI_APPNUM", MPI_ERR_KEYVAL,
                MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_APPNUM, &keyval));
    MT_CLASS_EQ("MPI_Comm_set_attr of MPI_UNIVERSE_SIZE", MPI_ERR_KEYVAL,
                MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &keyval));

    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MT_CALL(MPI_Error_string(MPI_ERR_RANK, msg, &len));
    MT_TRUE(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len,
            "MPI_Error_string(MPI_ERR_RANK) gave length %d", len);
    say("errors_return: RANK=%d TAG=%d COUNT=%d TYPE=%d OP=%d ROOT=%d KEYVAL=%d", MPI_ERR_RANK,
        MPI_ERR_TAG, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_OP, MPI_ERR_ROOT, MPI_ERR_KEYVAL);

    /* A user handler on a duplicate, called by an error and by MPI_Comm_call_errhandler. */
    MPI_Comm dup;
    MPI_Errhandler user;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CALL(MPI_Comm_create_errhandler(count_errors, &user));
    MT_CALL(MPI_Comm_set_errhandler(dup, user));
    MT_CALL(MPI_Errhandler_free(&user));
    /* What the call returns after a user handler returned is left to the implementation. */
    (void)MPI_Send(&x, 1, MPI_INT, mt_size + 3, 0, dup);
    MT_EQ("user handler calls after one error", 1, handler_calls);
    MT_CLASS_EQ("the code the user handler saw", MPI_ERR_RANK, handler_last_code);
    MT_CALL(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    MT_EQ("user handler calls after MPI_Comm_call_errhandler", 2, handler_calls);
    MT_EQ("the code passed to MPI_Comm_call_errhandler", MPI_ERR_OTHER, handler_last_code);
    MT_CALL(MPI_Comm_free(&dup));
    say("user_handler: calls=%d last=%d", handler_calls, handler_last_code);
}

/* The predefined keys of MPI_COMM_WORLD. */
static void check_attributes(int appnum)
{
    int *val = NULL, flag = 0;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &val, &flag));
    MT_EQ("MPI_APPNUM flag", 1, flag);
    MT_EQ("MPI_APPNUM", appnum, *val);
    /* The standard lets MPI_UNIVERSE_SIZE be unset (MPICH under Hydra); Weft always sets it. */
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &val, &flag));
    if (mt_weft)
        MT_EQ("MPI_UNIVERSE_SIZE flag", 1, flag);
    MT_TRUE(!flag || *val >= mt_size, "MPI_UNIVERSE_SIZE %d is below the job's size %d", *val,
            mt_size);
    int universe = flag ? *val : -1;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, &flag));
    MT_EQ("MPI_TAG_UB flag", 1, flag);
    MT_TRUE(*val >= 32767, "MPI_TAG_UB %d is below 32767", *val);
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &val, &flag));
    MT_TRUE(!flag || *val == 0 || *val == 1, "MPI_WTIME_IS_GLOBAL is %d", *val);

    int *last = NULL;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    MT_EQ("MPI_LASTUSEDCODE flag", 1, flag);
    int first_last = *last;
    MT_TRUE(first_last >= MPI_ERR_ABI, "MPI_LASTUSEDCODE %d is below MPI_ERR_ABI", first_last);
    int cls = 0;
    MT_CALL(MPI_Add_error_class(&cls));
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    MT_TRUE(*last >= cls && cls > first_last, "MPI_LASTUSEDCODE %d after adding class %d (was %d)",
            *last, cls, first_last);
    say("attributes: appnum=%d universe=%d", appnum, universe);
}

/* Combiners of derived types, and the F90 constructors' combiners. */
static void check_combiners(void)
{
    MPI_Datatype t;
    int ni, na, nd, comb;
    MT_CALL(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    MT_CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MT_EQ("combiner of a vector", MPI_COMBINER_VECTOR, comb);
    MT_CALL(MPI_Type_free(&t));
    MT_CALL(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    MT_EQ("combiner of MPI_DOUBLE", MPI_COMBINER_NAMED, comb);

    MT_CALL(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
    MT_CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MT_EQ("combiner of MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, comb);
    MT_CALL(MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &t));
    MT_CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MT_EQ("combiner of MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, comb);
    MT_CALL(MPI_Type_create_f90_integer(9, &t));
    MT_CALL(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    MT_EQ("combiner of MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, comb);
    int size = 0;
    MT_CALL(MPI_Type_size(t, &size));
    MT_EQ("size of MPI_Type_create_f90_integer(9)", 4, size);
    say("combiners: VECTOR=%d F90_REAL=%d F90_COMPLEX=%d F90_INTEGER=%d", MPI_COMBINER_VECTOR,
        MPI_COMBINER_F90_REAL, MPI_COMBINER_F90_COMPLEX, MPI_COMBINER_F90_INTEGER);
}

/* A ring of sends with a wildcard receive, a strided datatype and a status. */
static void check_pt2pt(void)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    int out[8], in[8];
    for (int i = 0; i < 8; i++)
        out[i] = mt_rank * 100 + i;
    MPI_Request req;
    MPI_Status st;
    MT_CALL(MPI_Irecv(in, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
    MT_CALL(MPI_Send(out, 8, MPI_INT, right, 7, MPI_COMM_WORLD));
    MT_CALL(MPI_Wait(&req, &st));
    MT_EQ("ring MPI_SOURCE", left, st.MPI_SOURCE);
    MT_EQ("ring MPI_TAG", 7, st.MPI_TAG);
    int count = -1;
    MT_CALL(MPI_Get_count(&st, MPI_INT, &count));
    MT_EQ("ring count", 8, count);
    for (int i = 0; i < 8; i++)
        MT_EQ("ring payload", left * 100 + i, in[i]);

    /* Every second int of out, into a contiguous buffer on the other side. */
    MPI_Datatype every2;
    MT_CALL(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
    MT_CALL(MPI_Type_commit(&every2));
    memset(in, 0, sizeof(in));
    MT_CALL(MPI_Sendrecv(out, 1, every2, right, 8, in, 4, MPI_INT, left, 8, MPI_COMM_WORLD, &st));
    MT_CALL(MPI_Type_free(&every2));
    for (int i = 0; i < 4; i++)
        MT_EQ("strided payload", left * 100 + 2 * i, in[i]);
    MT_CALL(MPI_Get_count(&st, MPI_INT, &count));
    MT_EQ("strided count", 4, count);

    MT_CALL(MPI_Sendrecv(out, 1, MPI_INT, MPI_PROC_NULL, 0, in, 1, MPI_INT, MPI_PROC_NULL, 0,
                         MPI_COMM_WORLD, &st));
    MT_EQ("MPI_PROC_NULL source", MPI_PROC_NULL, st.MPI_SOURCE);
    MT_EQ("MPI_PROC_NULL tag", MPI_ANY_TAG, st.MPI_TAG);
    say("pt2pt: ring and strided ok, ANY_SOURCE=%d ANY_TAG=%d PROC_NULL=%d", MPI_ANY_SOURCE,
        MPI_ANY_TAG, MPI_PROC_NULL);
}

static void check_collectives(void)
{
    int n = mt_size;
    long sum = 0, expect = 0;
    long mine = mt_rank + 1;
    MT_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
        expect += r + 1;
    MT_EQ("Allreduce SUM", expect, sum);

    double dmax = 0, dmine = 0.5 * mt_rank;
    MT_CALL(MPI_Allreduce(&dmine, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    MT_TRUE(dmax == 0.5 * (n - 1), "Allreduce MAX gave %g", dmax);

    struct { int v, r; } pair = {(mt_rank * 7) % n, mt_rank}, minloc = {-1, -1};
    MT_CALL(MPI_Reduce(&pair, &minloc, 1, MPI_2INT, MPI_MINLOC, 0, MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_EQ("MINLOC value", 0, minloc.v);
        MT_EQ("MINLOC rank", 0, minloc.r);
    }

    int root_val = mt_rank == n - 1 ? 4242 : 0;
    MT_CALL(MPI_Bcast(&root_val, 1, MPI_INT, n - 1, MPI_COMM_WORLD));
    MT_EQ("Bcast", 4242, root_val);

    int *all = mt_malloc(sizeof(int) * (size_t)n * 2);
    int two[2] = {mt_rank, -mt_rank};
    MT_CALL(MPI_Allgather(two, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++) {
        MT_EQ("Allgather first", r, all[2 * r]);
        MT_EQ("Allgather second", -r, all[2 * r + 1]);
    }
    int *to = mt_malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; r++)
        to[r] = mt_rank * 1000 + r;
    MT_CALL(MPI_Alltoall(to, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < n; r++)
        MT_EQ("Alltoall", r * 1000 + mt_rank, all[r]);
    free(to);
    free(all);

    int scan = 0, one = 1;
    MT_CALL(MPI_Scan(&one, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_EQ("Scan", mt_rank + 1, scan);
    MPI_Request req;
    long isum = 0;
    MT_CALL(MPI_Iallreduce(&mine, &isum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &req));
    MT_CALL(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MT_EQ("Iallreduce SUM", expect, isum);
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    say("collectives: sum=%ld max=%g bcast=%d scan_last=%d", sum, dmax, root_val, n);
}

int main(int argc, char **argv)
{
    MT_CALL(MPI_Init(&argc, &argv));
    MT_CALL(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_CALL(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));

    if (argc > 1 && strcmp(argv[1], "--abort") == 0) {
        /* Only rank 0 errs; the others wait in a barrier that the abort must end. */
        if (mt_rank == 0) {
            MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT));
            int x = 0;
            MPI_Send(&x, 1, MPI_INT, 5, 0, MPI_COMM_SELF);   /* rank 5 of a 1-process comm */
            printf("MPI_ERRORS_ABORT returned\n");
            fflush(stdout);
            return 3;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        return 4;
    }

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MT_CALL(MPI_Get_library_version(lib, &len));
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    mt_weft = strncmp(lib, "Weft ", 5) == 0;
    int major = 0, minor = 0;
    MT_CALL(MPI_Abi_get_version(&major, &minor));
    MT_TRUE(major == MPI_ABI_VERSION && minor >= 0,
            "the library speaks ABI %d.%d, the program was built for %d.%d", major, minor,
            MPI_ABI_VERSION, MPI_ABI_SUBVERSION);

    check_errors_return();
    check_attributes(argc > 1 ? atoi(argv[1]) : 0);
    check_combiners();
    check_pt2pt();
    check_collectives();

    if (mt_rank == 0) {
        printf("library: %s\n", lib);
        printf("size: %d\n%s", mt_size, transcript);
        fflush(stdout);
    }
    MT_CALL(MPI_Finalize());
    return 0;
}
