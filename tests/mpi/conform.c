/* What a conformance suite found wrong in Weft, each checked against the MPI 4.1 text. One
 * section per run, named by the first argument:
 *   info      MPI_Info_* before MPI_Init and after MPI_Finalize (section 11.4.1), Info_create_env,
 *             MPI_Abi_get_info (MPI 5.0 section 20.3)
 *   keyval    a freed keyval lives while attributes use it; a second free is MPI_ERR_KEYVAL (7.7.2)
 *   names     MPI_Comm_get_name / MPI_Type_get_name of the null handles (7.8, 5.1.15; MPI 4.1
 *             change B.1.2 item 18) and of freed handles (MPI_ERR_COMM / MPI_ERR_TYPE)
 *   status    MPI_ERROR of a status is left alone by single-completion calls and set by the
 *             multiple-completion calls only when they return MPI_ERR_IN_STATUS (3.2.5, 3.7.5)
 *   f90       the envelope and contents of MPI_Type_create_f90_* types (5.1.13, 19.1.9)
 *   ext32     external32 sizes and values of long, unsigned long, wchar_t, long double (14.5.2)
 *   group     a group of no process is MPI_GROUP_EMPTY (7.3.2)
 *   errcode   added error codes beyond 4096, removed ones reused (9.5)
 * Errors are returned: MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF. */
#include "mpitest.h"

#include <wchar.h>

#define EXPECT_CLASS(cls, call) MT_CLASS_EQ(#call, (cls), (call))

static void set_return(void)
{
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
}

/* ---- info ---------------------------------------------------------------------------------- */

static void expect_value(MPI_Info info, const char *key, const char *val, const char *what)
{
    char buf[MPI_MAX_INFO_VAL];
    int flag = 0, len = (int)sizeof buf;
    if (MPI_Info_get_string(info, key, &len, buf, &flag) != MPI_SUCCESS)
        MT_FAIL("%s: MPI_Info_get_string(\"%s\") expected MPI_SUCCESS", what, key);
    MT_TRUE(flag && strcmp(buf, val) == 0, "%s: value of \"%s\" expected \"%s\" got flag %d \"%s\"",
            what, key, val, flag, flag ? buf : "");
}

/* Before MPI_Init the default handler is fatal: every call here must succeed. */
static int run_info(int argc, char **argv)
{
    MPI_Info a, b, env;
    char key[MPI_MAX_INFO_KEY];
    int n = -1, flag = 0, vlen = -1;
    if (MPI_Info_create(&a) || MPI_Info_set(a, "k1", "v1") || MPI_Info_set(a, "k2", "v2") ||
        MPI_Info_get_nkeys(a, &n) || MPI_Info_get_nthkey(a, 1, key) ||
        MPI_Info_get_valuelen(a, "k1", &vlen, &flag) || MPI_Info_dup(a, &b) ||
        MPI_Info_delete(b, "k1"))
        MT_FAIL("an MPI_Info call before MPI_Init expected MPI_SUCCESS");
    MT_EQ("nkeys before MPI_Init", 2, n);
    MT_TRUE(strcmp(key, "k2") == 0, "nthkey 1 expected \"k2\" got \"%s\"", key);
    MT_EQ("valuelen of k1", 2, vlen);
    expect_value(a, "k2", "v2", "before MPI_Init");
    MT_CALL(MPI_Info_get_nkeys(b, &n));
    MT_EQ("nkeys of the dup after a delete", 1, n);
    /* MPI_Info_create_env: "command" is argv[0], "argv" the other arguments */
    MT_CALL(MPI_Info_create_env(argc, argv, &env));
    expect_value(env, "command", argv[0], "MPI_Info_create_env before MPI_Init");
    expect_value(env, "argv", "info", "MPI_Info_create_env before MPI_Init");
    MT_CALL(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    MT_TRUE(n >= 1, "MPI_INFO_ENV before MPI_Init expected keys got %d", n);
    /* MPI_Abi_get_info (MPI 5.0 section 20.3): the sizes of MPI_Aint, MPI_Count, MPI_Offset */
    MPI_Info abi;
    char sz[8];
    MT_CALL(MPI_Abi_get_info(&abi));
    MT_TRUE(abi != MPI_INFO_NULL, "MPI_Abi_get_info expected an info object");
    snprintf(sz, sizeof sz, "%d", (int)sizeof(MPI_Aint));
    expect_value(abi, "mpi_aint_size", sz, "MPI_Abi_get_info");
    snprintf(sz, sizeof sz, "%d", (int)sizeof(MPI_Count));
    expect_value(abi, "mpi_count_size", sz, "MPI_Abi_get_info");
    snprintf(sz, sizeof sz, "%d", (int)sizeof(MPI_Offset));
    expect_value(abi, "mpi_offset_size", sz, "MPI_Abi_get_info");
    MT_CALL(MPI_Info_free(&abi));

    mt_init(&argc, &argv);
    set_return();
    expect_value(a, "k1", "v1", "an info made before MPI_Init, after it");
    MPI_Comm dup;
    MT_CALL(MPI_Comm_dup_with_info(MPI_COMM_WORLD, a, &dup));
    MT_CALL(MPI_Comm_free(&dup));
    MPI_Info kept;
    MT_CALL(MPI_Info_create(&kept));
    MT_CALL(MPI_Info_set(kept, "made", "between"));
    MT_CALL(MPI_Barrier(MPI_COMM_WORLD));
    int rank = mt_rank;
    MT_CALL(MPI_Finalize());

    /* after MPI_Finalize: the objects live on, new ones can be made */
    expect_value(a, "k2", "v2", "after MPI_Finalize");
    expect_value(kept, "made", "between", "an info made between Init and Finalize, after Finalize");
    expect_value(env, "command", argv[0], "after MPI_Finalize");
    MPI_Info c, env2;
    if (MPI_Info_create(&c) || MPI_Info_set(c, "x", "y") || MPI_Info_create_env(0, NULL, &env2) ||
        MPI_Info_free(&env2) || MPI_Info_free(&c) || MPI_Info_free(&a) || MPI_Info_free(&b) ||
        MPI_Info_free(&env) || MPI_Info_free(&kept))
        MT_FAIL("an MPI_Info call after MPI_Finalize expected MPI_SUCCESS");
    MT_TRUE(a == MPI_INFO_NULL && c == MPI_INFO_NULL, "MPI_Info_free expected MPI_INFO_NULL");
    if (rank == 0)
        printf("conform info: ok\n");
    return 0;
}

/* ---- keyval -------------------------------------------------------------------------------- */

static int deletes;
static void *deleted_val;

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    deletes++;
    deleted_val = val;
    return MPI_SUCCESS;
}

static int count_type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    deletes++;
    deleted_val = val;
    return MPI_SUCCESS;
}

static void run_keyval(void)
{
    static int v1, v2;
    MPI_Comm c1, c2;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c1));
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c2));
    int key, copy;
    MT_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &key, NULL));
    copy = key;
    MT_CALL(MPI_Comm_set_attr(c1, key, &v1));
    MT_CALL(MPI_Comm_set_attr(c2, key, &v2));
    MT_CALL(MPI_Comm_free_keyval(&key));
    MT_EQ("the keyval after MPI_Comm_free_keyval (MPI_KEYVAL_INVALID)", MPI_KEYVAL_INVALID, key);
    MT_EQ("delete callbacks run by MPI_Comm_free_keyval", 0, deletes);
    /* the attributes still work through the int (a copy of the freed handle) */
    void *got = NULL;
    int flag = 0;
    MT_CALL(MPI_Comm_get_attr(c1, copy, &got, &flag));
    MT_TRUE(flag && got == &v1, "attribute of a freed keyval expected flag 1, &v1 got flag %d %p", flag, got);
    /* a second free of the same keyval is an error, not a crash */
    int again = copy;
    EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&again));
    /* no new attribute on a freed keyval */
    EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, copy, &v1));
    /* deleting one attribute runs its callback; the keyval lives on for the other */
    MT_CALL(MPI_Comm_delete_attr(c1, copy));
    MT_EQ("delete callbacks after MPI_Comm_delete_attr", 1, deletes);
    MT_TRUE(deleted_val == &v1, "deleted value expected &v1 got %p", deleted_val);
    MT_CALL(MPI_Comm_get_attr(c2, copy, &got, &flag));
    MT_TRUE(flag && got == &v2, "attribute of c2 expected &v2 got flag %d %p", flag, got);
    /* MPI_Comm_dup copies nothing (null copy function); the free deletes the last attribute */
    MT_CALL(MPI_Comm_free(&c2));
    MT_EQ("delete callbacks after MPI_Comm_free", 2, deletes);
    MT_TRUE(deleted_val == &v2, "deleted value expected &v2 got %p", deleted_val);
    /* now the keyval is gone */
    EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(c1, copy, &got, &flag));
    EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&again));
    MT_CALL(MPI_Comm_free(&c1));

    /* the same for datatypes, the last attribute going with MPI_Type_free */
    MPI_Datatype t;
    MT_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
    int tkey, tcopy;
    MT_CALL(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_type_delete, &tkey, NULL));
    tcopy = tkey;
    MT_CALL(MPI_Type_set_attr(t, tkey, &v1));
    MT_CALL(MPI_Type_free_keyval(&tkey));
    MT_CALL(MPI_Type_get_attr(t, tcopy, &got, &flag));
    MT_TRUE(flag && got == &v1, "type attribute of a freed keyval expected &v1 got flag %d %p", flag, got);
    EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&tcopy));
    MT_CALL(MPI_Type_free(&t));
    MT_EQ("delete callbacks after MPI_Type_free", 3, deletes);
    MT_TRUE(deleted_val == &v1, "deleted value expected &v1 got %p", deleted_val);

    /* a freed keyval with no attribute is gone at once; many keyvals come and go */
    for (int i = 0; i < 70000; i++) {
        int k;
        MT_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
        int kc = k;
        MT_CALL(MPI_Comm_free_keyval(&k));
        if (i % 10000 == 0)
            EXPECT_CLASS(MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&kc));
    }
}

/* ---- names --------------------------------------------------------------------------------- */

static void run_names(void)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MT_CALL(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    MT_TRUE(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13,
            "name of MPI_COMM_NULL expected \"MPI_COMM_NULL\" (13) got \"%s\" (%d)", name, len);
    MT_CALL(MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len));
    MT_TRUE(strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17,
            "name of MPI_DATATYPE_NULL expected \"MPI_DATATYPE_NULL\" (17) got \"%s\" (%d)", name, len);
    MT_CALL(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MT_TRUE(strcmp(name, "MPI_COMM_WORLD") == 0, "name of MPI_COMM_WORLD got \"%s\"", name);
    MT_CALL(MPI_Type_get_name(MPI_INT, name, &len));
    MT_TRUE(strcmp(name, "MPI_INT") == 0, "name of MPI_INT got \"%s\"", name);
    /* freed handles are invalid: the error classes of the handle kinds */
    MPI_Comm c, c_stale;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    c_stale = c;
    MT_CALL(MPI_Comm_free(&c));
    EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_get_name(c_stale, name, &len));
    MPI_Datatype t, t_stale;
    MT_CALL(MPI_Type_contiguous(3, MPI_INT, &t));
    t_stale = t;
    MT_CALL(MPI_Type_free(&t));
    EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_get_name(t_stale, name, &len));
    /* MPI_COMM_NULL stays invalid elsewhere */
    EXPECT_CLASS(MPI_ERR_COMM, MPI_Comm_set_name(MPI_COMM_NULL, "x"));
    EXPECT_CLASS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));
}

/* ---- status -------------------------------------------------------------------------------- */

#define SENTINEL 0x5eed
#define EXPECT_UNTOUCHED(what, st) MT_EQ(what " MPI_ERROR (left alone)", SENTINEL, (st).MPI_ERROR)

static void fresh(MPI_Status *st, int n)
{
    for (int i = 0; i < n; i++)
        st[i].MPI_ERROR = SENTINEL;
}

static void run_status(void)
{
    MPI_Status st[4];
    int buf[8] = {0}, flag = 0, idx = -1;
    MPI_Request r[4];
    int peer = mt_rank ^ 1;   /* pairs (0,1), (2,3); an odd last rank talks to itself */
    if (peer >= mt_size)
        peer = mt_rank;

    fresh(st, 1);
    MT_CALL(MPI_Sendrecv(buf, 1, MPI_INT, peer, 1, buf + 1, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, st));
    EXPECT_UNTOUCHED("MPI_Sendrecv", st[0]);
    fresh(st, 1);
    MT_CALL(MPI_Sendrecv_replace(buf, 1, MPI_INT, peer, 2, peer, 2, MPI_COMM_WORLD, st));
    EXPECT_UNTOUCHED("MPI_Sendrecv_replace", st[0]);

    MT_CALL(MPI_Isend(buf, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &r[0]));
    fresh(st, 1);
    MT_CALL(MPI_Probe(peer, 3, MPI_COMM_WORLD, st));
    EXPECT_UNTOUCHED("MPI_Probe", st[0]);
    fresh(st, 1);
    do
        MT_CALL(MPI_Iprobe(peer, 3, MPI_COMM_WORLD, &flag, st));
    while (!flag);
    EXPECT_UNTOUCHED("MPI_Iprobe", st[0]);
    fresh(st, 1);
    MT_CALL(MPI_Recv(buf, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, st));
    EXPECT_UNTOUCHED("MPI_Recv", st[0]);
    fresh(st, 1);
    MT_CALL(MPI_Wait(&r[0], st));
    EXPECT_UNTOUCHED("MPI_Wait (send)", st[0]);

    MPI_Message msg;
    MT_CALL(MPI_Isend(buf, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &r[0]));
    fresh(st, 1);
    MT_CALL(MPI_Mprobe(peer, 4, MPI_COMM_WORLD, &msg, st));
    EXPECT_UNTOUCHED("MPI_Mprobe", st[0]);
    fresh(st, 1);
    MT_CALL(MPI_Mrecv(buf, 1, MPI_INT, &msg, st));
    EXPECT_UNTOUCHED("MPI_Mrecv", st[0]);
    MT_CALL(MPI_Wait(&r[0], MPI_STATUS_IGNORE));

    MT_CALL(MPI_Irecv(buf, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Send(buf, 1, MPI_INT, peer, 5, MPI_COMM_WORLD));
    fresh(st, 1);
    do
        MT_CALL(MPI_Test(&r[0], &flag, st));
    while (!flag);
    EXPECT_UNTOUCHED("MPI_Test", st[0]);

    MT_CALL(MPI_Irecv(buf, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Send(buf, 1, MPI_INT, peer, 6, MPI_COMM_WORLD));
    fresh(st, 1);
    do
        MT_CALL(MPI_Request_get_status(r[0], &flag, st));
    while (!flag);
    EXPECT_UNTOUCHED("MPI_Request_get_status", st[0]);
    fresh(st, 1);
    MT_CALL(MPI_Waitany(1, r, &idx, st));
    EXPECT_UNTOUCHED("MPI_Waitany", st[0]);

    MT_CALL(MPI_Irecv(buf, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Send(buf, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
    fresh(st, 1);
    do
        MT_CALL(MPI_Testany(1, r, &idx, &flag, st));
    while (!flag);
    EXPECT_UNTOUCHED("MPI_Testany", st[0]);

    /* MPI_PROC_NULL and null requests: empty statuses, MPI_ERROR still the caller's */
    fresh(st, 1);
    MT_CALL(MPI_Recv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, st));
    EXPECT_UNTOUCHED("MPI_Recv from MPI_PROC_NULL", st[0]);
    r[0] = MPI_REQUEST_NULL;
    fresh(st, 1);
    MT_CALL(MPI_Wait(&r[0], st));
    EXPECT_UNTOUCHED("MPI_Wait of MPI_REQUEST_NULL", st[0]);

    /* multiple completion, all succeeding: MPI_ERROR untouched */
    MT_CALL(MPI_Irecv(buf, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Isend(buf + 1, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[1]));
    fresh(st, 2);
    MT_CALL(MPI_Waitall(2, r, st));
    EXPECT_UNTOUCHED("MPI_Waitall (success) status 0", st[0]);
    EXPECT_UNTOUCHED("MPI_Waitall (success) status 1", st[1]);

    /* a truncated receive among others: MPI_ERR_IN_STATUS, every status's MPI_ERROR set */
    int big[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    MT_CALL(MPI_Isend(big, 8, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Irecv(buf, 2, MPI_INT, peer, 9, MPI_COMM_WORLD, &r[1]));
    r[2] = MPI_REQUEST_NULL;
    fresh(st, 3);
    int rc = MPI_Waitall(3, r, st);
    MT_CLASS_EQ("MPI_Waitall with a truncated receive", MPI_ERR_IN_STATUS, rc);
    MT_CLASS_EQ("status[0].MPI_ERROR (the send)", MPI_SUCCESS, st[0].MPI_ERROR);
    MT_CLASS_EQ("status[1].MPI_ERROR (the truncated receive)", MPI_ERR_TRUNCATE, st[1].MPI_ERROR);
    MT_CLASS_EQ("status[2].MPI_ERROR (a null request)", MPI_SUCCESS, st[2].MPI_ERROR);

    /* the same through MPI_Waitsome, until both completed */
    MT_CALL(MPI_Irecv(buf, 2, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[0]));
    MT_CALL(MPI_Isend(big, 8, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[1]));
    int done = 0, seen_err = 0;
    while (done < 2) {
        int out = 0, ind[2];
        fresh(st, 2);
        rc = MPI_Waitsome(2, r, &out, ind, st);
        MT_TRUE(out >= 1, "MPI_Waitsome outcount expected >= 1 got %d", out);
        for (int i = 0; i < out; i++) {
            if (rc == MPI_SUCCESS) {
                EXPECT_UNTOUCHED("MPI_Waitsome (success)", st[i]);
            } else {
                MT_CLASS_EQ("MPI_Waitsome", MPI_ERR_IN_STATUS, rc);
                MT_CLASS_EQ("MPI_Waitsome status MPI_ERROR", ind[i] == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS,
                            st[i].MPI_ERROR);
                seen_err |= ind[i] == 0;
            }
        }
        done += out;
    }
    MT_TRUE(seen_err, "MPI_Waitsome expected to report the truncated receive");
}

/* ---- f90 ----------------------------------------------------------------------------------- */

static void expect_f90(MPI_Datatype t, int combiner, int ni, const int *ints, int size, const char *what)
{
    int n_i = -1, n_a = -1, n_d = -1, comb = -1, sz = -1;
    MT_CALL(MPI_Type_get_envelope(t, &n_i, &n_a, &n_d, &comb));
    MT_EQ(what, combiner, comb);
    MT_EQ("num_integers", ni, n_i);
    MT_EQ("num_addresses", 0, n_a);
    MT_EQ("num_datatypes", 0, n_d);
    int got[2] = {-7, -7};
    MPI_Aint a[1];
    MPI_Datatype d[1];
    MT_CALL(MPI_Type_get_contents(t, 2, 0, 0, got, a, d));
    for (int i = 0; i < ni; i++)
        MT_EQ("contents integer", ints[i], got[i]);
    MT_CALL(MPI_Type_size(t, &sz));
    MT_EQ("size", size, sz);
}

static void run_f90(void)
{
    MPI_Datatype t;
    MT_CALL(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
    expect_f90(t, MPI_COMBINER_F90_REAL, 2, (int[]){6, MPI_UNDEFINED}, 4, "f90_real(6, UNDEFINED) combiner");
    MT_CALL(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t));
    expect_f90(t, MPI_COMBINER_F90_REAL, 2, (int[]){MPI_UNDEFINED, 300}, 8, "f90_real(UNDEFINED, 300) combiner");
    MT_CALL(MPI_Type_create_f90_complex(15, 300, &t));
    expect_f90(t, MPI_COMBINER_F90_COMPLEX, 2, (int[]){15, 300}, 16, "f90_complex(15, 300) combiner");
    MT_CALL(MPI_Type_create_f90_integer(9, &t));
    expect_f90(t, MPI_COMBINER_F90_INTEGER, 1, (int[]){9}, 4, "f90_integer(9) combiner");
    /* a type built on one shows it as its datatype */
    MPI_Datatype v;
    MT_CALL(MPI_Type_contiguous(2, t, &v));
    int n_i, n_a, n_d, comb;
    MPI_Datatype inner = MPI_DATATYPE_NULL;
    int cnt = 0;
    MPI_Aint a[1];
    MT_CALL(MPI_Type_get_envelope(v, &n_i, &n_a, &n_d, &comb));
    MT_CALL(MPI_Type_get_contents(v, 1, 0, 1, &cnt, a, &inner));
    MT_TRUE(inner == t, "contents of contiguous(2, f90 type) expected the f90 handle");
    MT_CALL(MPI_Type_free(&v));
}

/* ---- ext32 --------------------------------------------------------------------------------- */

static void expect_ext_size(MPI_Datatype t, MPI_Aint size, const char *what)
{
    MPI_Aint got = -1;
    MT_CALL(MPI_Pack_external_size("external32", 1, t, &got));
    MT_EQ(what, size, got);
    MPI_Count gc = -1;
    MT_CALL(MPI_Pack_external_size_c("external32", 3, t, &gc));
    MT_EQ(what, 3 * size, gc);
}

static void expect_bytes(const unsigned char *got, const unsigned char *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        MT_TRUE(got[i] == want[i], "%s: byte %d expected 0x%02x got 0x%02x", what, i, want[i], got[i]);
}

static void run_ext32(void)
{
    expect_ext_size(MPI_LONG, 4, "external32 size of MPI_LONG");
    expect_ext_size(MPI_UNSIGNED_LONG, 4, "external32 size of MPI_UNSIGNED_LONG");
    expect_ext_size(MPI_WCHAR, 2, "external32 size of MPI_WCHAR");
    expect_ext_size(MPI_LONG_DOUBLE, 16, "external32 size of MPI_LONG_DOUBLE");
    expect_ext_size(MPI_C_LONG_DOUBLE_COMPLEX, 32, "external32 size of MPI_C_LONG_DOUBLE_COMPLEX");
    expect_ext_size(MPI_LONG_INT, 8, "external32 size of MPI_LONG_INT");
    expect_ext_size(MPI_LONG_DOUBLE_INT, 20, "external32 size of MPI_LONG_DOUBLE_INT");
    expect_ext_size(MPI_LONG_LONG, 8, "external32 size of MPI_LONG_LONG");
    expect_ext_size(MPI_INT, 4, "external32 size of MPI_INT");
    expect_ext_size(MPI_DOUBLE, 8, "external32 size of MPI_DOUBLE");

    unsigned char buf[256];
    MPI_Aint pos = 0;
    /* long: 4 bytes, big-endian two's complement */
    long l[3] = {-5, 123456, 0x7fffffff};
    MT_CALL(MPI_Pack_external("external32", l, 3, MPI_LONG, buf, sizeof buf, &pos));
    MT_EQ("position after 3 MPI_LONG", 12, pos);
    expect_bytes(buf, (const unsigned char[]){0xff, 0xff, 0xff, 0xfb, 0x00, 0x01, 0xe2, 0x40,
                                              0x7f, 0xff, 0xff, 0xff}, 12, "external32 MPI_LONG");
    long lb[3] = {0};
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 12, &pos, lb, 3, MPI_LONG));
    MT_EQ("position after unpacking 3 MPI_LONG", 12, pos);
    for (int i = 0; i < 3; i++)
        MT_EQ("MPI_LONG back from external32", l[i], lb[i]);
    /* unsigned long */
    unsigned long ul = 0xdeadbeefUL, ulb = 0;
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, buf, sizeof buf, &pos));
    expect_bytes(buf, (const unsigned char[]){0xde, 0xad, 0xbe, 0xef}, 4, "external32 MPI_UNSIGNED_LONG");
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 4, &pos, &ulb, 1, MPI_UNSIGNED_LONG));
    MT_EQ("MPI_UNSIGNED_LONG back from external32", (long long)ul, (long long)ulb);
    /* wchar_t */
    wchar_t w[2] = {L'A', (wchar_t)0x263a}, wb[2] = {0};
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", w, 2, MPI_WCHAR, buf, sizeof buf, &pos));
    MT_EQ("position after 2 MPI_WCHAR", 4, pos);
    expect_bytes(buf, (const unsigned char[]){0x00, 0x41, 0x26, 0x3a}, 4, "external32 MPI_WCHAR");
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 4, &pos, wb, 2, MPI_WCHAR));
    MT_EQ("MPI_WCHAR back", w[0], wb[0]);
    MT_EQ("MPI_WCHAR back", w[1], wb[1]);
    /* long double: IEEE binary128, big-endian (1.5 = 0x3fff8000..., -2 = 0xc0000000...) */
    long double ld[2] = {1.5L, -2.0L}, ldb[2] = {0};
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", ld, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    MT_EQ("position after 2 MPI_LONG_DOUBLE", 32, pos);
    unsigned char q[32] = {0x3f, 0xff, 0x80};
    q[16] = 0xc0;
    expect_bytes(buf, q, 32, "external32 MPI_LONG_DOUBLE");
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 32, &pos, ldb, 2, MPI_LONG_DOUBLE));
    MT_TRUE(ldb[0] == 1.5L && ldb[1] == -2.0L, "MPI_LONG_DOUBLE back expected 1.5, -2 got %Lg, %Lg",
            ldb[0], ldb[1]);
    long double third = 1.0L / 3.0L, thirdb = 0;
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", &third, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 16, &pos, &thirdb, 1, MPI_LONG_DOUBLE));
    MT_TRUE(third == thirdb, "1/3 as MPI_LONG_DOUBLE through external32 changed: %La vs %La", third, thirdb);
    /* MPI_LONG_INT pairs and a derived type: a vector of longs in a struct with a double */
    struct { long a; int b; } li[2] = {{-1, 7}, {65536, -9}}, lib[2];
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", li, 2, MPI_LONG_INT, buf, sizeof buf, &pos));
    MT_EQ("position after 2 MPI_LONG_INT", 16, pos);
    expect_bytes(buf, (const unsigned char[]){0xff, 0xff, 0xff, 0xff, 0, 0, 0, 7, 0, 1, 0, 0,
                                              0xff, 0xff, 0xff, 0xf7}, 16, "external32 MPI_LONG_INT");
    memset(lib, 0, sizeof lib);
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 16, &pos, lib, 2, MPI_LONG_INT));
    MT_TRUE(lib[0].a == -1 && lib[0].b == 7 && lib[1].a == 65536 && lib[1].b == -9,
            "MPI_LONG_INT back got (%ld,%d) (%ld,%d)", lib[0].a, lib[0].b, lib[1].a, lib[1].b);
    MPI_Datatype vec;
    MT_CALL(MPI_Type_vector(2, 1, 2, MPI_LONG, &vec));
    MT_CALL(MPI_Type_commit(&vec));
    expect_ext_size(vec, 8, "external32 size of vector(2, 1, 2, MPI_LONG)");
    long lv[4] = {1, 99, -2, 99}, lvb[4] = {0, 55, 0, 55};
    pos = 0;
    MT_CALL(MPI_Pack_external("external32", lv, 1, vec, buf, sizeof buf, &pos));
    MT_EQ("position after the vector", 8, pos);
    pos = 0;
    MT_CALL(MPI_Unpack_external("external32", buf, 8, &pos, lvb, 1, vec));
    MT_TRUE(lvb[0] == 1 && lvb[1] == 55 && lvb[2] == -2 && lvb[3] == 55,
            "vector of MPI_LONG back got %ld %ld %ld %ld", lvb[0], lvb[1], lvb[2], lvb[3]);
    MT_CALL(MPI_Type_free(&vec));
    /* too small a buffer for the external32 size: MPI_ERR_TRUNCATE */
    pos = 0;
    EXPECT_CLASS(MPI_ERR_TRUNCATE, MPI_Pack_external("external32", l, 3, MPI_LONG, buf, 11, &pos));
}

/* ---- group --------------------------------------------------------------------------------- */

static void expect_empty(MPI_Group g, const char *what)
{
    int size = -1, rank = -1, res = -1;
    MT_CALL(MPI_Group_size(g, &size));
    MT_EQ(what, 0, size);
    MT_CALL(MPI_Group_rank(g, &rank));
    MT_EQ("rank in an empty group (MPI_UNDEFINED)", MPI_UNDEFINED, rank);
    MT_CALL(MPI_Group_compare(g, MPI_GROUP_EMPTY, &res));
    MT_EQ("MPI_Group_compare with MPI_GROUP_EMPTY (MPI_IDENT)", MPI_IDENT, res);
    MT_TRUE(g == MPI_GROUP_EMPTY, "%s: expected the handle MPI_GROUP_EMPTY", what);
}

static void run_group(void)
{
    MPI_Group world, g;
    MT_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int *all = mt_malloc(sizeof(int) * (size_t)mt_size);
    for (int i = 0; i < mt_size; i++)
        all[i] = mt_size - 1 - i;
    MT_CALL(MPI_Group_excl(world, mt_size, all, &g));
    expect_empty(g, "size of MPI_Group_excl of every rank");
    MT_CALL(MPI_Group_free(&g));
    MT_TRUE(g == MPI_GROUP_NULL, "MPI_Group_free expected MPI_GROUP_NULL");
    MT_CALL(MPI_Group_incl(world, 0, all, &g));
    expect_empty(g, "size of MPI_Group_incl of no rank");
    MT_CALL(MPI_Group_free(&g));
    int range[1][3] = {{0, mt_size - 1, 1}};
    MT_CALL(MPI_Group_range_excl(world, 1, range, &g));
    expect_empty(g, "size of MPI_Group_range_excl of every rank");
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_difference(world, world, &g));
    expect_empty(g, "size of MPI_Group_difference of a group with itself");
    MT_CALL(MPI_Group_free(&g));
    MT_CALL(MPI_Group_intersection(world, MPI_GROUP_EMPTY, &g));
    expect_empty(g, "size of MPI_Group_intersection with MPI_GROUP_EMPTY");
    /* an empty group still works as an argument */
    MPI_Group u;
    int res = -1;
    MT_CALL(MPI_Group_union(g, world, &u));
    MT_CALL(MPI_Group_compare(u, world, &res));
    MT_EQ("union of the empty group and world compared with world", MPI_IDENT, res);
    MT_CALL(MPI_Group_free(&u));
    MT_CALL(MPI_Group_free(&g));
    MPI_Comm c;
    MT_CALL(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    MT_TRUE(c == MPI_COMM_NULL, "MPI_Comm_create with MPI_GROUP_EMPTY expected MPI_COMM_NULL");
    MT_CALL(MPI_Group_free(&world));
    free(all);
}

/* ---- errcode ------------------------------------------------------------------------------- */

static void run_errcode(void)
{
    enum { N = 5000 };
    int cls, *codes = mt_malloc(sizeof(int) * N);
    MT_CALL(MPI_Add_error_class(&cls));
    for (int i = 0; i < N; i++) {
        MT_CALL(MPI_Add_error_code(cls, &codes[i]));
        int c = -1;
        MT_CALL(MPI_Error_class(codes[i], &c));
        if (c != cls)
            MT_FAIL("class of added code %d expected %d got %d", i, cls, c);
    }
    MT_CALL(MPI_Add_error_string(codes[N - 1], "the last one"));
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MT_CALL(MPI_Error_string(codes[N - 1], s, &len));
    MT_TRUE(strcmp(s, "the last one") == 0, "string of the last code got \"%s\"", s);
    /* a class with codes cannot go; removed codes are no longer codes */
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_class(cls));
    MT_CALL(MPI_Remove_error_string(codes[N - 1]));
    int maxv = 0;
    for (int i = 0; i < N; i++) {
        MT_CALL(MPI_Remove_error_code(codes[i]));
        if (codes[i] > maxv)
            maxv = codes[i];
    }
    int c = -1;
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Error_class(codes[0], &c));
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Remove_error_code(codes[0]));
    /* new codes reuse the removed values */
    for (int i = 0; i < N; i++) {
        int v;
        MT_CALL(MPI_Add_error_code(cls, &v));
        MT_TRUE(v <= maxv, "added code %d after removals expected a reused value <= %d got %d", i, maxv, v);
        codes[i] = v;
    }
    for (int i = 0; i < N; i++)
        MT_CALL(MPI_Remove_error_code(codes[i]));
    MT_CALL(MPI_Remove_error_class(cls));
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Add_error_code(cls, &c));
    free(codes);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "info") == 0)
        return run_info(argc, argv);
    mt_init(&argc, &argv);
    set_return();
    if (strcmp(what, "keyval") == 0)
        run_keyval();
    else if (strcmp(what, "names") == 0)
        run_names();
    else if (strcmp(what, "status") == 0)
        run_status();
    else if (strcmp(what, "f90") == 0)
        run_f90();
    else if (strcmp(what, "ext32") == 0)
        run_ext32();
    else if (strcmp(what, "group") == 0)
        run_group();
    else if (strcmp(what, "errcode") == 0)
        run_errcode();
    else
        MT_FAIL("section \"%s\" expected one of info keyval names status f90 ext32 group errcode", what);
    char name[64];
    snprintf(name, sizeof name, "conform %s", what);
    return mt_finish(name);
}
