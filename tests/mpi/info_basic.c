/* Info objects: set/get/delete, MPI 4.0 semantics of MPI_Info_get_string's buflen, the deprecated
 * MPI_Info_get and MPI_Info_get_valuelen, nkeys and nthkey order (first insertion, kept when a
 * value is replaced), dup independence, key and value length limits, MPI_INFO_ENV and
 * MPI_Info_create_env, and error classes for bad arguments and freed handles (MPI_ERRORS_RETURN
 * on MPI_COMM_SELF, where errors tied to no communicator go). With --weft: Weft's contents of
 * MPI_INFO_ENV and the exact limits. */
#include "mpitest.h"

#include <unistd.h>

#define EXPECT_CLASS(cls, call) MT_CLASS_EQ(#call, (cls), (call))
/* Weft's class; another implementation may answer `alt` (MPICH: MPI_ERR_ARG for MPI_INFO_NULL). */
#define EXPECT_CLASS_OR(cls, alt, call)                                                            \
    do {                                                                                           \
        int rc2_ = (call);                                                                         \
        MT_CLASS_EQ(#call, (!mt_weft && mt_class(rc2_) == (alt)) ? (alt) : (cls), rc2_);           \
    } while (0)

/* info must hold exactly keys[i] = vals[i], in that order. */
static void expect_pairs(MPI_Info info, int n, const char *const *keys, const char *const *vals,
                         const char *what)
{
    int nkeys = -1;
    MT_CALL(MPI_Info_get_nkeys(info, &nkeys));
    MT_EQ(what, n, nkeys);
    for (int i = 0; i < n; i++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int flag = 0, buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_nthkey(info, i, key));
        MT_TRUE(strcmp(key, keys[i]) == 0, "%s: nthkey %d expected \"%s\" got \"%s\"", what, i, keys[i], key);
        MT_CALL(MPI_Info_get_string(info, key, &buflen, val, &flag));
        MT_TRUE(flag && strcmp(val, vals[i]) == 0, "%s: value of \"%s\" expected \"%s\" got flag %d \"%s\"",
                what, key, vals[i], flag, flag ? val : "");
        MT_EQ("get_string buflen (length + 1)", (int)strlen(vals[i]) + 1, buflen);
    }
}

static void basics(void)
{
    MPI_Info info, dup;
    MT_CALL(MPI_Info_create(&info));
    MT_TRUE(info != MPI_INFO_NULL, "Info_create expected a handle other than MPI_INFO_NULL");
    int n = -1;
    MT_CALL(MPI_Info_get_nkeys(info, &n));
    MT_EQ("nkeys of a new info", 0, n);

    MT_CALL(MPI_Info_set(info, "alpha", "1"));
    MT_CALL(MPI_Info_set(info, "beta", "two words"));
    MT_CALL(MPI_Info_set(info, "gamma", ""));
    MT_CALL(MPI_Info_set(info, "Alpha", "case matters"));
    const char *k1[] = {"alpha", "beta", "gamma", "Alpha"};
    const char *v1[] = {"1", "two words", "", "case matters"};
    expect_pairs(info, 4, k1, v1, "after 4 sets");

    /* replacing a value keeps the key's place */
    MT_CALL(MPI_Info_set(info, "beta", "replaced"));
    const char *v2[] = {"1", "replaced", "", "case matters"};
    expect_pairs(info, 4, k1, v2, "after replacing beta");

    /* get_string: truncation, buflen 0, missing key */
    char buf[16];
    int flag = -1, buflen = 4;
    memset(buf, 'X', sizeof buf);
    MT_CALL(MPI_Info_get_string(info, "beta", &buflen, buf, &flag));
    MT_TRUE(flag == 1 && strcmp(buf, "rep") == 0 && buf[4] == 'X',
            "get_string with buflen 4 expected \"rep\" and the buffer untouched past it, got flag %d \"%.8s\"",
            flag, buf);
    MT_EQ("get_string buflen after truncation", 9, buflen);
    buflen = 0;
    memset(buf, 'X', sizeof buf);
    MT_CALL(MPI_Info_get_string(info, "beta", &buflen, buf, &flag));
    MT_TRUE(flag == 1 && buf[0] == 'X', "get_string with buflen 0 expected flag 1 and value untouched");
    MT_EQ("get_string buflen 0 -> needed size", 9, buflen);
    buflen = 1;
    MT_CALL(MPI_Info_get_string(info, "beta", &buflen, buf, &flag));
    MT_TRUE(flag == 1 && buf[0] == '\0', "get_string with buflen 1 expected an empty terminated string");
    buflen = 7;
    flag = 1;
    memset(buf, 'X', sizeof buf);
    MT_CALL(MPI_Info_get_string(info, "delta", &buflen, buf, &flag));
    MT_TRUE(flag == 0 && buflen == 7 && buf[0] == 'X',
            "get_string of a missing key expected flag 0, buflen and value unchanged; got flag %d buflen %d",
            flag, buflen);
    buflen = (int)sizeof buf;
    MT_CALL(MPI_Info_get_string(info, "gamma", &buflen, buf, &flag));
    MT_TRUE(flag == 1 && buf[0] == '\0' && buflen == 1, "get_string of an empty value expected \"\" and buflen 1");

    /* deprecated get and get_valuelen */
    int len = -1;
    MT_CALL(MPI_Info_get_valuelen(info, "beta", &len, &flag));
    MT_TRUE(flag == 1 && len == 8, "get_valuelen of beta expected 8 got flag %d len %d", flag, len);
    MT_CALL(MPI_Info_get_valuelen(info, "nope", &len, &flag));
    MT_EQ("get_valuelen flag of a missing key", 0, flag);
    if (mt_weft) {   /* a value longer than valuelen is truncated (MPICH 4.0 returns an error) */
        memset(buf, 'X', sizeof buf);
        MT_CALL(MPI_Info_get(info, "beta", 3, buf, &flag));
        MT_TRUE(flag == 1 && strcmp(buf, "rep") == 0, "Info_get valuelen 3 expected \"rep\" got \"%.8s\"", buf);
    }
    MT_CALL(MPI_Info_get(info, "beta", (int)sizeof buf - 1, buf, &flag));
    MT_TRUE(flag == 1 && strcmp(buf, "replaced") == 0, "Info_get expected \"replaced\" got \"%.15s\"", buf);
    MT_CALL(MPI_Info_get(info, "nope", (int)sizeof buf - 1, buf, &flag));
    MT_EQ("Info_get flag of a missing key", 0, flag);

    /* dup: same pairs, same order, independent afterwards */
    MT_CALL(MPI_Info_dup(info, &dup));
    expect_pairs(dup, 4, k1, v2, "dup");
    MT_CALL(MPI_Info_set(dup, "beta", "only in dup"));
    MT_CALL(MPI_Info_set(dup, "epsilon", "new"));
    MT_CALL(MPI_Info_delete(info, "alpha"));
    const char *k3[] = {"beta", "gamma", "Alpha"};
    const char *v3[] = {"replaced", "", "case matters"};
    expect_pairs(info, 3, k3, v3, "original after changing the dup");
    const char *k4[] = {"alpha", "beta", "gamma", "Alpha", "epsilon"};
    const char *v4[] = {"1", "only in dup", "", "case matters", "new"};
    expect_pairs(dup, 5, k4, v4, "dup after changing both");

    /* delete: order of the rest; a missing key */
    MT_CALL(MPI_Info_delete(dup, "gamma"));
    const char *k5[] = {"alpha", "beta", "Alpha", "epsilon"};
    const char *v5[] = {"1", "only in dup", "case matters", "new"};
    expect_pairs(dup, 4, k5, v5, "dup after deleting gamma");
    EXPECT_CLASS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(dup, "gamma"));
    EXPECT_CLASS(MPI_ERR_INFO_NOKEY, MPI_Info_delete(info, "never"));

    /* nthkey out of range */
    char key[MPI_MAX_INFO_KEY + 1];
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, 3, key));
    EXPECT_CLASS(MPI_ERR_ARG, MPI_Info_get_nthkey(info, -1, key));

    MPI_Info keep = dup;
    MT_CALL(MPI_Info_free(&dup));
    MT_TRUE(dup == MPI_INFO_NULL, "Info_free expected to set MPI_INFO_NULL");
    if (mt_weft) {   /* a freed handle gives MPI_ERR_INFO, not a crash (MPICH does not check) */
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_get_nkeys(keep, &n));
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_set(keep, "a", "b"));
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_free(&keep));
    }
    MT_CALL(MPI_Info_free(&info));
    EXPECT_CLASS_OR(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Info_get_nkeys(MPI_INFO_NULL, &n));
    EXPECT_CLASS_OR(MPI_ERR_INFO, MPI_ERR_ARG, MPI_Info_dup(MPI_INFO_NULL, &dup));
}

static void limits(void)
{
    MPI_Info info;
    MT_CALL(MPI_Info_create(&info));
    static char key[MPI_MAX_INFO_KEY + 8], val[MPI_MAX_INFO_VAL + 8], got[MPI_MAX_INFO_VAL + 8];
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    key[MPI_MAX_INFO_KEY - 1] = '\0';
    memset(val, 'v', MPI_MAX_INFO_VAL - 1);
    val[MPI_MAX_INFO_VAL - 1] = '\0';
    /* the longest key and value */
    MT_CALL(MPI_Info_set(info, key, val));
    int flag = 0, buflen = (int)sizeof got;
    MT_CALL(MPI_Info_get_string(info, key, &buflen, got, &flag));
    MT_TRUE(flag && strcmp(got, val) == 0, "the longest value expected back intact");
    MT_EQ("buflen of the longest value", MPI_MAX_INFO_VAL, buflen);
    char nth[MPI_MAX_INFO_KEY + 1];
    MT_CALL(MPI_Info_get_nthkey(info, 0, nth));
    MT_TRUE(strcmp(nth, key) == 0, "the longest key expected back from nthkey");
    /* too long */
    memset(key, 'k', MPI_MAX_INFO_KEY + 5);
    key[MPI_MAX_INFO_KEY + 5] = '\0';
    EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "x"));
    memset(val, 'v', MPI_MAX_INFO_VAL + 5);
    val[MPI_MAX_INFO_VAL + 5] = '\0';
    EXPECT_CLASS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "short", val));
    if (mt_weft) {   /* exactly one past the limit; an empty key */
        key[MPI_MAX_INFO_KEY] = '\0';
        EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, key, "x"));
        val[MPI_MAX_INFO_VAL] = '\0';
        EXPECT_CLASS(MPI_ERR_INFO_VALUE, MPI_Info_set(info, "short", val));
        EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_set(info, "", "x"));
        EXPECT_CLASS(MPI_ERR_INFO_KEY, MPI_Info_get_string(info, key, &buflen, got, &flag));
    }
    int n = -1;
    MT_CALL(MPI_Info_get_nkeys(info, &n));
    MT_EQ("nkeys after the rejected sets", 1, n);
    MT_CALL(MPI_Info_free(&info));
}

/* Many objects, many keys: values are kept apart and freed (ASan checks the memory). */
static void many(void)
{
    enum { NOBJ = 20, NKEYS = 50 };
    MPI_Info infos[NOBJ];
    char key[32], val[64], got[64];
    for (int i = 0; i < NOBJ; i++) {
        MT_CALL(MPI_Info_create(&infos[i]));
        for (int k = 0; k < NKEYS; k++) {
            snprintf(key, sizeof key, "key%d", k);
            snprintf(val, sizeof val, "value %d of object %d on rank %d", k, i, mt_rank);
            MT_CALL(MPI_Info_set(infos[i], key, val));
        }
    }
    for (int i = 0; i < NOBJ; i++) {
        int n = -1;
        MT_CALL(MPI_Info_get_nkeys(infos[i], &n));
        MT_EQ("nkeys", NKEYS, n);
        for (int k = NKEYS - 1; k >= 0; k--) {
            int flag = 0, buflen = (int)sizeof got;
            snprintf(key, sizeof key, "key%d", k);
            snprintf(val, sizeof val, "value %d of object %d on rank %d", k, i, mt_rank);
            MT_CALL(MPI_Info_get_string(infos[i], key, &buflen, got, &flag));
            MT_TRUE(flag && strcmp(got, val) == 0, "object %d %s expected \"%s\" got \"%s\"", i, key, val, got);
            char nth[MPI_MAX_INFO_KEY + 1];
            MT_CALL(MPI_Info_get_nthkey(infos[i], k, nth));
            MT_TRUE(strcmp(nth, key) == 0, "nthkey %d expected %s got %s", k, key, nth);
        }
    }
    for (int i = 0; i < NOBJ; i++)
        MT_CALL(MPI_Info_free(&infos[i]));
}

static void env(int argc, char **argv)
{
    char val[MPI_MAX_INFO_VAL + 1];
    int flag, buflen, n = -1;
    MT_CALL(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    MT_TRUE(n >= 0, "nkeys of MPI_INFO_ENV expected >= 0 got %d", n);
    for (int i = 0; i < n; i++) {   /* every key has a value */
        char key[MPI_MAX_INFO_KEY + 1];
        MT_CALL(MPI_Info_get_nthkey(MPI_INFO_ENV, i, key));
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, key, &buflen, val, &flag));
        MT_TRUE(flag, "MPI_INFO_ENV key %s expected a value", key);
    }
    MPI_Info copy;
    MT_CALL(MPI_Info_dup(MPI_INFO_ENV, &copy));
    int m = -1;
    MT_CALL(MPI_Info_get_nkeys(copy, &m));
    MT_EQ("nkeys of a dup of MPI_INFO_ENV", n, m);
    MT_CALL(MPI_Info_free(&copy));

    MPI_Info e;
    MT_CALL(MPI_Info_create_env(argc, argv, &e));
    if (mt_weft) {
        const char *base = strrchr(argv[0], '/');
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(e, "command", &buflen, val, &flag));
        MT_TRUE(flag && strcmp(val, argv[0]) == 0, "create_env command expected \"%s\" got \"%s\"", argv[0],
                flag ? val : "(none)");
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(e, "argv", &buflen, val, &flag));
        MT_TRUE(flag && strcmp(val, "--weft") == 0, "create_env argv expected \"--weft\" got \"%s\"",
                flag ? val : "(none)");
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, "command", &buflen, val, &flag));
        MT_TRUE(flag && strstr(val, base ? base + 1 : argv[0]), "MPI_INFO_ENV command expected to end in %s got \"%s\"",
                base ? base + 1 : argv[0], flag ? val : "(none)");
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &buflen, val, &flag));
        MT_TRUE(flag && atoi(val) == mt_size, "maxprocs expected %d got \"%s\"", mt_size, flag ? val : "(none)");
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, "thread_level", &buflen, val, &flag));
        MT_TRUE(flag && strcmp(val, "MPI_THREAD_SINGLE") == 0, "thread_level expected MPI_THREAD_SINGLE got \"%s\"",
                flag ? val : "(none)");
        char host[256] = "", cwd[1024] = "";
        gethostname(host, sizeof host - 1);
        buflen = (int)sizeof val;
        MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, "host", &buflen, val, &flag));
        MT_TRUE(flag && strcmp(val, host) == 0, "host expected %s got \"%s\"", host, flag ? val : "(none)");
        if (getcwd(cwd, sizeof cwd)) {
            buflen = (int)sizeof val;
            MT_CALL(MPI_Info_get_string(MPI_INFO_ENV, "wdir", &buflen, val, &flag));
            MT_TRUE(flag && strcmp(val, cwd) == 0, "wdir expected %s got \"%s\"", cwd, flag ? val : "(none)");
        }
        /* read-only and never freed */
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_set(MPI_INFO_ENV, "a", "b"));
        MPI_Info h = MPI_INFO_ENV;
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_free(&h));
        /* a garbage handle */
        EXPECT_CLASS(MPI_ERR_INFO, MPI_Info_get_nkeys((MPI_Info)(uintptr_t)0x12345678, &n));
    }
    MT_CALL(MPI_Info_free(&e));
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    basics();
    limits();
    many();
    env(argc, argv);
    return mt_finish("info_basic");
}
