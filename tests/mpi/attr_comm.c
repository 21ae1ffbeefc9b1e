/* Attribute caching on communicators: keyvals with copy and delete callbacks, checked call by call
 * (which callback, how many times, with which communicator, keyval, value and extra_state):
 *  - set, get, set over an existing value (the old value's delete callback first), delete;
 *  - MPI_Comm_dup runs the copy callbacks and the flag they return decides whether the attribute
 *    is copied; MPI_COMM_DUP_FN copies the value, MPI_COMM_NULL_COPY_FN does not;
 *  - MPI_Comm_free runs the delete callbacks of every attribute;
 *  - a freed keyval: its int is MPI_KEYVAL_INVALID for the caller, the attributes using it stay
 *    until deleted and their delete callback still runs;
 *  - a failing delete callback makes delete_attr and Comm_free fail, a failing copy callback makes
 *    Comm_dup fail;
 *  - the predefined attributes of MPI_COMM_WORLD and their values, which cannot be set or deleted;
 *  - the deprecated MPI-1 names (Keyval_create, Attr_put/get/delete, Keyval_free);
 *  - error classes for invalid keyvals.
 * With --weft: Weft's values for the implementation-defined predefined attributes and checks of
 * stale keyvals. */
#include "mpitest.h"

#include <unistd.h>

enum { EV_COPY = 1, EV_DELETE };
typedef struct {
    int kind;
    MPI_Comm comm;
    int keyval;
    void *val;
    void *extra;
} event_t;

static event_t events[64];
static int nevents;
static int fail_delete, fail_copy;   /* the callbacks return this instead of MPI_SUCCESS if set */
static int copy_flag = 1;            /* the flag the copy callback returns */
static char extra1, extra2;          /* extra_state pointers */

static int copy_cb(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    if (nevents < 64)
        events[nevents++] = (event_t){EV_COPY, comm, keyval, in, extra};
    if (fail_copy)
        return fail_copy;
    *(void **)out = (char *)in + 1000;   /* a value the test can tell from the original */
    *flag = copy_flag;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Comm comm, int keyval, void *val, void *extra)
{
    if (nevents < 64)
        events[nevents++] = (event_t){EV_DELETE, comm, keyval, val, extra};
    return fail_delete ? fail_delete : MPI_SUCCESS;
}

/* The events since the last check must be exactly these. */
static void expect_events(const char *what, int n, const event_t *want)
{
    MT_EQ(what, n, nevents);
    for (int i = 0; i < n; i++) {
        const event_t *g = &events[i], *w = &want[i];
        MT_TRUE(g->kind == w->kind && g->comm == w->comm && g->keyval == w->keyval && g->val == w->val &&
                    g->extra == w->extra,
                "%s: event %d expected %s(keyval %d, val %p, extra %p) got %s(keyval %d, val %p, extra %p)%s",
                what, i, w->kind == EV_COPY ? "copy" : "delete", w->keyval, w->val, w->extra,
                g->kind == EV_COPY ? "copy" : "delete", g->keyval, g->val, g->extra,
                g->comm == w->comm ? "" : " on another communicator");
    }
    nevents = 0;
}

static void *getv(MPI_Comm comm, int keyval, int *flag)
{
    void *v = (void *)(uintptr_t)0xdead;
    MT_CALL(MPI_Comm_get_attr(comm, keyval, &v, flag));
    return v;
}

#define V(x) ((void *)(uintptr_t)(x))

static void callbacks(void)
{
    int k1, k2, kdup, knull;
    int flag;
    MPI_Comm a, b;
    MT_CALL(MPI_Comm_create_keyval(copy_cb, delete_cb, &k1, &extra1));
    MT_CALL(MPI_Comm_create_keyval(copy_cb, delete_cb, &k2, &extra2));
    MT_CALL(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL));
    MT_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_cb, &knull, &extra1));
    MT_TRUE(k1 != k2 && k1 != kdup && k2 != knull && k1 != MPI_KEYVAL_INVALID, "keyvals expected distinct");
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &a));

    /* not set yet */
    getv(a, k1, &flag);
    MT_EQ("flag of an unset attribute", 0, flag);

    /* set, get */
    MT_CALL(MPI_Comm_set_attr(a, k1, V(11)));
    MT_CALL(MPI_Comm_set_attr(a, k2, V(22)));
    MT_CALL(MPI_Comm_set_attr(a, kdup, V(33)));
    MT_CALL(MPI_Comm_set_attr(a, knull, V(44)));
    expect_events("callbacks of first sets", 0, NULL);
    MT_TRUE(getv(a, k1, &flag) == V(11) && flag, "get k1 expected 11");
    MT_TRUE(getv(a, k2, &flag) == V(22) && flag, "get k2 expected 22");
    MT_TRUE(getv(a, kdup, &flag) == V(33) && flag, "get kdup expected 33");
    getv(MPI_COMM_WORLD, k1, &flag);
    MT_EQ("flag of k1 on another communicator", 0, flag);

    /* set over an existing value: the old value's delete callback first */
    MT_CALL(MPI_Comm_set_attr(a, k1, V(12)));
    expect_events("set over k1", 1, (event_t[]){{EV_DELETE, a, k1, V(11), &extra1}});
    MT_TRUE(getv(a, k1, &flag) == V(12) && flag, "get k1 expected 12 after the second set");

    /* dup: copy callbacks, in some order; the flag decides */
    MT_CALL(MPI_Comm_dup(a, &b));
    MT_EQ("callbacks of a dup (copies of k1, k2)", 2, nevents);
    for (int i = 0; i < 2; i++) {
        event_t *e = &events[i];
        int which = e->keyval == k1 ? 0 : 1;
        MT_TRUE(e->kind == EV_COPY && e->comm == a && (e->keyval == k1 || e->keyval == k2) &&
                    e->val == (which ? V(22) : V(12)) && e->extra == (which ? (void *)&extra2 : (void *)&extra1),
                "dup: event %d expected a copy of k1 or k2 on the old communicator with its value and extra", i);
    }
    MT_TRUE(events[0].keyval != events[1].keyval, "dup: k1 and k2 expected copied once each");
    nevents = 0;
    MT_TRUE(getv(b, k1, &flag) == V(1012) && flag, "dup's k1 expected the copy callback's value 1012");
    MT_TRUE(getv(b, k2, &flag) == V(1022) && flag, "dup's k2 expected 1022");
    MT_TRUE(getv(b, kdup, &flag) == V(33) && flag, "dup's kdup (MPI_COMM_DUP_FN) expected 33");
    getv(b, knull, &flag);
    MT_EQ("dup's knull (MPI_COMM_NULL_COPY_FN) flag", 0, flag);
    MT_TRUE(getv(a, k1, &flag) == V(12) && flag, "the original's k1 expected unchanged");

    /* copy flag 0: not copied */
    MPI_Comm c;
    copy_flag = 0;
    MT_CALL(MPI_Comm_dup(b, &c));
    copy_flag = 1;
    MT_EQ("callbacks of a dup with flag 0", 2, nevents);
    nevents = 0;
    getv(c, k1, &flag);
    MT_EQ("k1 flag on a dup whose copy callback said 0", 0, flag);
    MT_TRUE(getv(c, kdup, &flag) == V(33) && flag, "kdup expected copied to the second dup");
    MT_CALL(MPI_Comm_free(&c));
    expect_events("free of a dup without callback attributes", 0, NULL);

    /* delete_attr */
    MT_CALL(MPI_Comm_delete_attr(b, k2));
    expect_events("delete_attr k2", 1, (event_t[]){{EV_DELETE, b, k2, V(1022), &extra2}});
    getv(b, k2, &flag);
    MT_EQ("flag after delete_attr", 0, flag);

    /* a freed keyval: the int goes, the attributes stay */
    int k1_saved = k1;
    MT_CALL(MPI_Comm_free_keyval(&k1));
    MT_EQ("keyval after Comm_free_keyval", MPI_KEYVAL_INVALID, k1);
    expect_events("free_keyval", 0, NULL);

    /* free: every remaining attribute's delete callback */
    MPI_Comm b_handle = b;
    MT_CALL(MPI_Comm_free(&b));
    MT_TRUE(b == MPI_COMM_NULL, "Comm_free expected to set MPI_COMM_NULL");
    expect_events("free of the dup", 1, (event_t[]){{EV_DELETE, b_handle, k1_saved, V(1012), &extra1}});

    /* a failing delete callback: the call fails, the attribute stays */
    fail_delete = MPI_ERR_OTHER;
    int rc = MPI_Comm_delete_attr(a, k2);
    MT_CLASS_EQ("delete_attr with a failing callback", MPI_ERR_OTHER, rc);
    expect_events("failing delete", 1, (event_t[]){{EV_DELETE, a, k2, V(22), &extra2}});
    MT_TRUE(getv(a, k2, &flag) == V(22) && flag, "k2 expected still set after its delete callback failed");
    if (mt_weft) {   /* what remains of a communicator whose free failed is Weft's choice: all of it */
        rc = MPI_Comm_free(&a);
        MT_CLASS_EQ("Comm_free with a failing delete callback", MPI_ERR_OTHER, rc);
        MT_TRUE(a != MPI_COMM_NULL, "a failed Comm_free expected to leave the handle");
    }
    nevents = 0;
    fail_delete = 0;

    /* a failing copy callback: the dup fails (MPICH 4.0.2 lets it succeed) */
    if (mt_weft) {
        fail_copy = MPI_ERR_OTHER;
        c = MPI_COMM_NULL;
        rc = MPI_Comm_dup(a, &c);
        MT_CLASS_EQ("Comm_dup with a failing copy callback", MPI_ERR_OTHER, rc);
        fail_copy = 0;
        nevents = 0;
    }

    /* the rest goes at the free: k1 (freed keyval, its int saved) and k2 and knull */
    MPI_Comm a_handle = a;
    MT_CALL(MPI_Comm_free(&a));
    MT_EQ("delete callbacks at the last free", 3, nevents);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        event_t *e = &events[i];
        MT_TRUE(e->kind == EV_DELETE && e->comm == a_handle, "last free: event %d expected a delete on the freed comm", i);
        if (e->keyval == k1_saved && e->val == V(12) && e->extra == &extra1)
            seen |= 1;
        if (e->keyval == k2 && e->val == V(22) && e->extra == &extra2)
            seen |= 2;
        if (e->keyval == knull && e->val == V(44) && e->extra == &extra1)
            seen |= 4;
    }
    MT_EQ("last free: k1, k2 and knull each deleted once (bits)", 7, seen);
    nevents = 0;
    MT_CALL(MPI_Comm_free_keyval(&k2));
    MT_CALL(MPI_Comm_free_keyval(&kdup));
    MT_CALL(MPI_Comm_free_keyval(&knull));

    if (mt_weft) {   /* stale keyvals (MPICH does not check every case) */
        MT_CLASS_EQ("get with a freed keyval", MPI_ERR_KEYVAL,
                    MPI_Comm_get_attr(MPI_COMM_WORLD, k1_saved, &a, &flag));
        MT_CLASS_EQ("free a freed keyval", MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k1_saved));
    }
}

/* Attributes on MPI_COMM_WORLD itself, and the deprecated names. */
static void world_and_mpi1(void)
{
    int k, flag;
    MT_CALL(MPI_Comm_create_keyval(copy_cb, delete_cb, &k, &extra2));
    MT_CALL(MPI_Comm_set_attr(MPI_COMM_WORLD, k, V(5)));
    MT_TRUE(getv(MPI_COMM_WORLD, k, &flag) == V(5) && flag, "WORLD's attribute expected 5");
    MPI_Comm d;
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    expect_events("dup of WORLD", 1, (event_t[]){{EV_COPY, MPI_COMM_WORLD, k, V(5), &extra2}});
    MPI_Comm d_handle = d;
    MT_CALL(MPI_Comm_free(&d));
    expect_events("free of WORLD's dup", 1, (event_t[]){{EV_DELETE, d_handle, k, V(1005), &extra2}});
    MT_CALL(MPI_Comm_delete_attr(MPI_COMM_WORLD, k));
    expect_events("delete on WORLD", 1, (event_t[]){{EV_DELETE, MPI_COMM_WORLD, k, V(5), &extra2}});
    MT_CALL(MPI_Comm_free_keyval(&k));

    int old;
    MT_CALL(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &old, NULL));
    MT_CALL(MPI_Attr_put(MPI_COMM_WORLD, old, V(77)));
    void *v = NULL;
    MT_CALL(MPI_Attr_get(MPI_COMM_WORLD, old, &v, &flag));
    MT_TRUE(flag && v == V(77), "Attr_get expected 77");
    MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MT_TRUE(getv(d, old, &flag) == V(77) && flag, "MPI_DUP_FN expected to copy 77");
    MT_CALL(MPI_Comm_free(&d));
    MT_CALL(MPI_Attr_delete(MPI_COMM_WORLD, old));
    MT_CALL(MPI_Attr_get(MPI_COMM_WORLD, old, &v, &flag));
    MT_EQ("Attr_get flag after Attr_delete", 0, flag);
    MT_CALL(MPI_Keyval_free(&old));
    MT_EQ("Keyval_free sets MPI_KEYVAL_INVALID", MPI_KEYVAL_INVALID, old);
    expect_events("deprecated names", 0, NULL);
}

static void predefined(void)
{
    int *v, flag;
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MT_TRUE(flag && *v >= 32767, "MPI_TAG_UB expected >= 32767 got flag %d", flag);
    int tag_ub = *v;
    if (mt_weft)
        MT_EQ("MPI_TAG_UB", 0x3fffffff, tag_ub);
    /* the largest tag works */
    int x = mt_rank, y = -1;
    MT_CALL(MPI_Sendrecv(&x, 1, MPI_INT, mt_rank, tag_ub, &y, 1, MPI_INT, mt_rank, tag_ub, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE));
    MT_EQ("message with tag MPI_TAG_UB", mt_rank, y);

    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    MT_TRUE(flag, "MPI_HOST expected set");
    MT_TRUE(*v == MPI_PROC_NULL || (*v >= 0 && *v < mt_size), "MPI_HOST expected a rank or MPI_PROC_NULL got %d", *v);
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    MT_TRUE(flag, "MPI_IO expected set");
    MT_TRUE(*v == MPI_ANY_SOURCE || *v == MPI_PROC_NULL || (*v >= 0 && *v < mt_size),
            "MPI_IO expected a rank, MPI_ANY_SOURCE or MPI_PROC_NULL got %d", *v);
    if (mt_weft)
        MT_EQ("MPI_IO", MPI_ANY_SOURCE, *v);
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    if (flag)
        MT_TRUE(*v == 0 || *v == 1, "MPI_WTIME_IS_GLOBAL expected 0 or 1 got %d", *v);
    if (mt_weft)
        MT_TRUE(flag && *v == 1, "MPI_WTIME_IS_GLOBAL expected 1");
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    if (flag)
        MT_TRUE(*v >= mt_size, "MPI_UNIVERSE_SIZE expected >= %d got %d", mt_size, *v);
    if (mt_weft) {
        /* docs/dynamic.md: WEFT_UNIVERSE_SIZE, else under Weft's mpiexec (which can spawn) at
         * least the machine's CPUs, else the job */
        const char *u = getenv("WEFT_UNIVERSE_SIZE");
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        long expect = u && atoi(u) > 0 ? atoi(u)
                      : getenv("WEFT_MPIEXEC") && ncpu > mt_size ? ncpu : mt_size;
        MT_TRUE(flag && *v == expect, "MPI_UNIVERSE_SIZE expected %ld got %d", expect, flag ? *v : -1);
    }
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    if (mt_weft)
        MT_TRUE(flag && *v == 0, "MPI_APPNUM expected 0");
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    MT_TRUE(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE expected >= MPI_ERR_LASTCODE");

    /* they cannot be set, deleted or freed */
    int key = MPI_TAG_UB;
    MT_CLASS_EQ("set MPI_TAG_UB", MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, V(1)));
    MT_CLASS_EQ("delete MPI_TAG_UB", MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB));
    MT_CLASS_EQ("free MPI_TAG_UB", MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&key));
    MT_CALL(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    MT_TRUE(flag && *v == tag_ub, "MPI_TAG_UB expected unchanged");
    if (mt_weft) {   /* also on other communicators */
        MPI_Comm d;
        MT_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        MT_CALL(MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag));
        MT_TRUE(flag && *v == tag_ub, "MPI_TAG_UB of a dup expected the same");
        MT_CALL(MPI_Comm_free(&d));
        MT_CALL(MPI_Comm_get_attr(MPI_COMM_SELF, MPI_TAG_UB, &v, &flag));
        MT_TRUE(flag && *v == tag_ub, "MPI_TAG_UB of MPI_COMM_SELF expected the same");
    }
}

static void errors(void)
{
    int flag, k;
    void *v;
    MT_CLASS_EQ("get with MPI_KEYVAL_INVALID", MPI_ERR_KEYVAL,
                MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag));
    MT_CLASS_EQ("set with MPI_KEYVAL_INVALID", MPI_ERR_KEYVAL,
                MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, V(1)));
    MT_CLASS_EQ("set on MPI_COMM_NULL", MPI_ERR_COMM, MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, V(1)));
    k = MPI_KEYVAL_INVALID;
    MT_CLASS_EQ("free MPI_KEYVAL_INVALID", MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&k));
    /* window keyvals exist without windows; MPI_WIN_NULL is no window */
    int wk;
    MT_CALL(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL));
    MT_CLASS_EQ("Win_set_attr on MPI_WIN_NULL", MPI_ERR_WIN, MPI_Win_set_attr(MPI_WIN_NULL, wk, V(1)));
    MT_CLASS_EQ("Win_get_attr on MPI_WIN_NULL", MPI_ERR_WIN, MPI_Win_get_attr(MPI_WIN_NULL, wk, &v, &flag));
    MT_CALL(MPI_Win_free_keyval(&wk));
    MT_EQ("Win_free_keyval sets MPI_KEYVAL_INVALID", MPI_KEYVAL_INVALID, wk);
    if (mt_weft) {
        /* a type keyval on a communicator, garbage ints */
        int tk;
        MT_CALL(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
        MT_CLASS_EQ("type keyval on a communicator", MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, tk, V(1)));
        MT_CLASS_EQ("type keyval freed as a comm keyval", MPI_ERR_KEYVAL, MPI_Comm_free_keyval(&tk));
        MT_CALL(MPI_Type_free_keyval(&tk));
        MT_CLASS_EQ("garbage keyval", MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, 123456, &v, &flag));
        MT_CLASS_EQ("garbage keyval", MPI_ERR_KEYVAL, MPI_Comm_delete_attr(MPI_COMM_WORLD, -3));
    }
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    callbacks();
    world_and_mpi1();
    predefined();
    errors();
    return mt_finish("attr_comm");
}
