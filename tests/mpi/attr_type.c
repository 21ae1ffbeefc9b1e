/* Attribute caching on datatypes: type keyvals with copy and delete callbacks on a derived type
 * (MPI_Type_contiguous) and on a predefined one (MPI_INT):
 *  - set, get, set over an existing value, delete_attr, each callback with the right datatype,
 *    keyval, value and extra_state;
 *  - MPI_Type_dup runs the copy callbacks (the flag decides; MPI_TYPE_DUP_FN and
 *    MPI_TYPE_NULL_COPY_FN) and MPI_Type_free the delete callbacks;
 *  - a failing delete callback makes delete_attr fail;
 *  - comm keyvals and predefined keys are not type keyvals (MPI_ERR_KEYVAL), an invalid datatype
 *    gives MPI_ERR_TYPE. */
#include "mpitest.h"

enum { EV_COPY = 1, EV_DELETE };
typedef struct {
    int kind;
    MPI_Datatype type;
    int keyval;
    void *val;
    void *extra;
} event_t;

static event_t events[32];
static int nevents;
static int fail_delete;
static int copy_flag = 1;
static char extra1, extra2;

static int copy_cb(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    if (nevents < 32)
        events[nevents++] = (event_t){EV_COPY, type, keyval, in, extra};
    *(void **)out = (char *)in + 500;
    *flag = copy_flag;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Datatype type, int keyval, void *val, void *extra)
{
    if (nevents < 32)
        events[nevents++] = (event_t){EV_DELETE, type, keyval, val, extra};
    return fail_delete ? fail_delete : MPI_SUCCESS;
}

static void expect_events(const char *what, int n, const event_t *want)
{
    MT_EQ(what, n, nevents);
    for (int i = 0; i < n; i++) {
        const event_t *g = &events[i], *w = &want[i];
        MT_TRUE(g->kind == w->kind && g->type == w->type && g->keyval == w->keyval && g->val == w->val &&
                    g->extra == w->extra,
                "%s: event %d expected %s(keyval %d, val %p, extra %p) got %s(keyval %d, val %p, extra %p)%s",
                what, i, w->kind == EV_COPY ? "copy" : "delete", w->keyval, w->val, w->extra,
                g->kind == EV_COPY ? "copy" : "delete", g->keyval, g->val, g->extra,
                g->type == w->type ? "" : " on another datatype");
    }
    nevents = 0;
}

#define V(x) ((void *)(uintptr_t)(x))

static void *getv(MPI_Datatype t, int keyval, int *flag)
{
    void *v = V(0xdead);
    MT_CALL(MPI_Type_get_attr(t, keyval, &v, flag));
    return v;
}

static void derived(void)
{
    int k1, k2, kdup, knull, flag;
    MPI_Datatype t, d;
    MT_CALL(MPI_Type_create_keyval(copy_cb, delete_cb, &k1, &extra1));
    MT_CALL(MPI_Type_create_keyval(copy_cb, delete_cb, &k2, &extra2));
    MT_CALL(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kdup, NULL));
    MT_CALL(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_cb, &knull, &extra2));
    MT_CALL(MPI_Type_contiguous(3, MPI_INT, &t));
    MT_CALL(MPI_Type_commit(&t));

    getv(t, k1, &flag);
    MT_EQ("flag of an unset type attribute", 0, flag);
    MT_CALL(MPI_Type_set_attr(t, k1, V(1)));
    MT_CALL(MPI_Type_set_attr(t, k2, V(2)));
    MT_CALL(MPI_Type_set_attr(t, kdup, V(3)));
    MT_CALL(MPI_Type_set_attr(t, knull, V(4)));
    MT_CALL(MPI_Type_set_attr(t, k1, V(10)));
    expect_events("set over k1", 1, (event_t[]){{EV_DELETE, t, k1, V(1), &extra1}});
    MT_TRUE(getv(t, k1, &flag) == V(10) && flag, "k1 expected 10");
    MT_TRUE(getv(t, knull, &flag) == V(4) && flag, "knull expected 4");

    copy_flag = 1;
    MT_CALL(MPI_Type_dup(t, &d));
    MT_EQ("copy callbacks of Type_dup", 2, nevents);
    MT_TRUE(events[0].kind == EV_COPY && events[1].kind == EV_COPY && events[0].type == t && events[1].type == t &&
                events[0].keyval != events[1].keyval,
            "Type_dup expected one copy each of k1 and k2 on the old type");
    for (int i = 0; i < 2; i++)
        MT_TRUE(events[i].keyval == k1 ? events[i].val == V(10) && events[i].extra == &extra1
                                       : events[i].keyval == k2 && events[i].val == V(2) && events[i].extra == &extra2,
                "Type_dup copy %d expected the attribute's value and extra_state", i);
    nevents = 0;
    MT_TRUE(getv(d, k1, &flag) == V(510) && flag, "dup's k1 expected 510");
    MT_TRUE(getv(d, k2, &flag) == V(502) && flag, "dup's k2 expected 502");
    MT_TRUE(getv(d, kdup, &flag) == V(3) && flag, "dup's kdup (MPI_TYPE_DUP_FN) expected 3");
    getv(d, knull, &flag);
    MT_EQ("dup's knull (MPI_TYPE_NULL_COPY_FN) flag", 0, flag);

    /* flag 0: nothing copied by copy_cb */
    MPI_Datatype d2;
    copy_flag = 0;
    MT_CALL(MPI_Type_dup(d, &d2));
    copy_flag = 1;
    MT_EQ("copy callbacks of the second dup", 2, nevents);
    nevents = 0;
    getv(d2, k2, &flag);
    MT_EQ("k2 flag when the copy callback said 0", 0, flag);
    MT_CALL(MPI_Type_free(&d2));
    expect_events("free of a type with no callback attributes", 0, NULL);

    /* delete_attr, failing and not */
    fail_delete = MPI_ERR_OTHER;
    MT_CLASS_EQ("Type_delete_attr with a failing callback", MPI_ERR_OTHER, MPI_Type_delete_attr(d, k2));
    expect_events("failing delete", 1, (event_t[]){{EV_DELETE, d, k2, V(502), &extra2}});
    MT_TRUE(getv(d, k2, &flag) == V(502) && flag, "k2 expected still set after a failed delete");
    fail_delete = 0;
    MT_CALL(MPI_Type_delete_attr(d, k2));
    expect_events("delete k2", 1, (event_t[]){{EV_DELETE, d, k2, V(502), &extra2}});

    /* free: the delete callbacks of what is left (k1 on d; k1, k2, knull on t) */
    MPI_Datatype dh = d, th = t;
    MT_CALL(MPI_Type_free_keyval(&k1));   /* attributes using it stay */
    MT_EQ("keyval after Type_free_keyval", MPI_KEYVAL_INVALID, k1);
    MT_CALL(MPI_Type_free(&d));
    MT_TRUE(d == MPI_DATATYPE_NULL, "Type_free expected MPI_DATATYPE_NULL");
    MT_EQ("delete callbacks at the dup's free", 1, nevents);
    MT_TRUE(events[0].kind == EV_DELETE && events[0].type == dh && events[0].val == V(510) &&
                events[0].extra == &extra1,
            "the dup's free expected the delete of k1 (510)");
    nevents = 0;
    MT_CALL(MPI_Type_free(&t));
    MT_EQ("delete callbacks at the type's free", 3, nevents);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        MT_TRUE(events[i].kind == EV_DELETE && events[i].type == th, "type free: event %d expected a delete", i);
        seen |= events[i].val == V(10) ? 1 : events[i].val == V(2) ? 2 : events[i].val == V(4) ? 4 : 8;
    }
    MT_EQ("type free: k1, k2, knull deleted once each (bits)", 7, seen);
    nevents = 0;
    MT_CALL(MPI_Type_free_keyval(&k2));
    MT_CALL(MPI_Type_free_keyval(&kdup));
    MT_CALL(MPI_Type_free_keyval(&knull));
}

static void predefined_type(void)
{
    int k, flag;
    MT_CALL(MPI_Type_create_keyval(copy_cb, delete_cb, &k, &extra1));
    MT_CALL(MPI_Type_set_attr(MPI_INT, k, V(42)));
    MT_TRUE(getv(MPI_INT, k, &flag) == V(42) && flag, "MPI_INT's attribute expected 42");
    getv(MPI_DOUBLE, k, &flag);
    MT_EQ("MPI_DOUBLE flag", 0, flag);
    MPI_Datatype d;
    MT_CALL(MPI_Type_dup(MPI_INT, &d));
    expect_events("dup of MPI_INT", 1, (event_t[]){{EV_COPY, MPI_INT, k, V(42), &extra1}});
    MT_TRUE(getv(d, k, &flag) == V(542) && flag, "dup of MPI_INT expected 542");
    MPI_Datatype dh = d;
    MT_CALL(MPI_Type_free(&d));
    expect_events("free of MPI_INT's dup", 1, (event_t[]){{EV_DELETE, dh, k, V(542), &extra1}});
    MT_CALL(MPI_Type_delete_attr(MPI_INT, k));
    expect_events("delete on MPI_INT", 1, (event_t[]){{EV_DELETE, MPI_INT, k, V(42), &extra1}});

    /* wrong keyvals and types */
    int ck;
    void *v;
    MT_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL));
    MT_CLASS_EQ("comm keyval on a type", MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, ck, V(1)));
    MT_CALL(MPI_Comm_free_keyval(&ck));
    MT_CLASS_EQ("MPI_TAG_UB on a type", MPI_ERR_KEYVAL, MPI_Type_get_attr(MPI_INT, MPI_TAG_UB, &v, &flag));
    MT_CLASS_EQ("MPI_DATATYPE_NULL", MPI_ERR_TYPE, MPI_Type_set_attr(MPI_DATATYPE_NULL, k, V(1)));
    if (mt_weft) {
        MPI_Datatype t;
        MT_CALL(MPI_Type_contiguous(2, MPI_INT, &t));
        MPI_Datatype stale = t;
        MT_CALL(MPI_Type_free(&t));
        MT_CLASS_EQ("a freed type", MPI_ERR_TYPE, MPI_Type_get_attr(stale, k, &v, &flag));
    }
    MT_CALL(MPI_Type_free_keyval(&k));
    expect_events("errors", 0, NULL);
}

int main(int argc, char **argv)
{
    mt_init_args(argc, argv, 0);
    mt_init(&argc, &argv);
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MT_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    derived();
    predefined_type();
    return mt_finish("attr_type");
}
