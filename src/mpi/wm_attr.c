/* Attribute caching (see wm_attr.h): the per-object lists, the callbacks, the predefined
 * attributes of communicators, and the MPI entry points for communicators, datatypes, windows and
 * the deprecated MPI-1 names. */
#include "mpi/wm_attr.h"
#include "mpi/wm_errhandler.h"
#include "mpi/wm_internal.h"
#include "mpi/wm_win.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One attribute; a list in the order of setting. */
struct wm_attr_list {
    struct wm_attr_list *next;
    wm_keyval_t         *kv;    /* holds a structural reference */
    void                *val;
};
typedef struct wm_attr_list wm_attr_t;

static pthread_mutex_t wm_attr_lock = PTHREAD_MUTEX_INITIALIZER;   /* every list's links */

static wm_attr_t *wm_attr_find_locked(wm_obj_t *o, const wm_keyval_t *kv)
{
    for (wm_attr_t *a = o->attrs; a; a = a->next)
        if (a->kv == kv)
            return a;
    return NULL;
}

static void wm_attr_append_locked(wm_obj_t *o, wm_attr_t *n)
{
    wm_attr_t **p = &o->attrs;
    while (*p)
        p = &(*p)->next;
    n->next = NULL;
    *p = n;
}

static void wm_attr_unlink_locked(wm_obj_t *o, wm_attr_t *n)
{
    for (wm_attr_t **p = &o->attrs; *p; p = &(*p)->next)
        if (*p == n) {
            *p = n->next;
            return;
        }
}

/* ---- callbacks ------------------------------------------------------------------------------- */

/* Handles are pointers of the same representation for all three kinds; each callback is called
 * through its own type all the same. */
static int wm_attr_call_copy(const wm_keyval_t *kv, uintptr_t h, void *in, void **out_p, int *flag_p)
{
    uintptr_t f = (uintptr_t)kv->copy_fn;
    *flag_p = 0;
    *out_p = NULL;
    if (f == WM_ATTR_NULL_FN)
        return MPI_SUCCESS;
    if (f == WM_ATTR_DUP_FN) {
        *out_p = in;
        *flag_p = 1;
        return MPI_SUCCESS;
    }
    switch (kv->kind) {
    case WM_KV_COMM:
        return ((MPI_Comm_copy_attr_function *)kv->copy_fn)((MPI_Comm)h, kv->value, kv->extra_state,
                                                            in, out_p, flag_p);
    case WM_KV_TYPE:
        return ((MPI_Type_copy_attr_function *)kv->copy_fn)((MPI_Datatype)h, kv->value,
                                                            kv->extra_state, in, out_p, flag_p);
    default:
        return ((MPI_Win_copy_attr_function *)kv->copy_fn)((MPI_Win)h, kv->value, kv->extra_state,
                                                           in, out_p, flag_p);
    }
}

static int wm_attr_call_delete(const wm_keyval_t *kv, uintptr_t h, void *val)
{
    if ((uintptr_t)kv->delete_fn == WM_ATTR_NULL_FN)
        return MPI_SUCCESS;
    switch (kv->kind) {
    case WM_KV_COMM:
        return ((MPI_Comm_delete_attr_function *)kv->delete_fn)((MPI_Comm)h, kv->value, val,
                                                                kv->extra_state);
    case WM_KV_TYPE:
        return ((MPI_Type_delete_attr_function *)kv->delete_fn)((MPI_Datatype)h, kv->value, val,
                                                                kv->extra_state);
    default:
        return ((MPI_Win_delete_attr_function *)kv->delete_fn)((MPI_Win)h, kv->value, val,
                                                               kv->extra_state);
    }
}

/* ---- the hooks ------------------------------------------------------------------------------- */

int wm_attr_delete_all(wm_obj_t *o)
{
    for (;;) {
        /* the last one set goes first */
        pthread_mutex_lock(&wm_attr_lock);
        wm_attr_t *a = o->attrs;
        while (a && a->next)
            a = a->next;
        pthread_mutex_unlock(&wm_attr_lock);
        if (!a)
            return MPI_SUCCESS;
        int rc = wm_attr_call_delete(a->kv, o->handle, a->val);
        if (rc != MPI_SUCCESS)
            return rc;
        pthread_mutex_lock(&wm_attr_lock);
        wm_attr_unlink_locked(o, a);
        pthread_mutex_unlock(&wm_attr_lock);
        wm_keyval_release(a->kv);
        free(a);
    }
}

int wm_attr_copy_all(wm_obj_t *src, wm_obj_t *dst)
{
    /* Snapshot (keyval, value) under the lock, each keyval retained, then call without it. */
    pthread_mutex_lock(&wm_attr_lock);
    size_t n = 0;
    for (wm_attr_t *a = src->attrs; a; a = a->next)
        n++;
    wm_attr_t *snap = n ? malloc(n * sizeof(*snap)) : NULL;
    if (n && !snap) {
        pthread_mutex_unlock(&wm_attr_lock);
        return MPI_ERR_NO_MEM;
    }
    size_t i = 0;
    for (wm_attr_t *a = src->attrs; a; a = a->next, i++) {
        snap[i] = *a;
        wm_obj_retain(&a->kv->obj);
    }
    pthread_mutex_unlock(&wm_attr_lock);

    int rc = MPI_SUCCESS;
    for (i = 0; i < n; i++) {
        if (rc == MPI_SUCCESS) {
            void *out;
            int flag;
            rc = wm_attr_call_copy(snap[i].kv, src->handle, snap[i].val, &out, &flag);
            if (rc == MPI_SUCCESS && flag) {
                wm_attr_t *c = malloc(sizeof(*c));
                if (!c)
                    rc = MPI_ERR_NO_MEM;
                else {
                    c->kv = snap[i].kv;
                    c->val = out;
                    wm_obj_retain(&c->kv->obj);
                    pthread_mutex_lock(&wm_attr_lock);
                    wm_attr_append_locked(dst, c);
                    pthread_mutex_unlock(&wm_attr_lock);
                }
            }
        }
        wm_keyval_release(snap[i].kv);
    }
    free(snap);
    if (rc != MPI_SUCCESS)
        wm_attr_delete_all(dst);   /* the new object goes; what was copied onto it is deleted */
    return rc;
}

/* ---- the predefined attributes of communicators ---------------------------------------------- */

static int wm_attr_tag_ub = WM_TAG_UB;
static int wm_attr_host = MPI_PROC_NULL;          /* no host is special */
static int wm_attr_io = MPI_ANY_SOURCE;           /* every rank can do I/O */
static int wm_attr_wtime_global = 1;              /* one node, one clock */
static int wm_attr_appnum;
static int wm_attr_universe;
static pthread_once_t wm_attr_universe_once = PTHREAD_ONCE_INIT;

static void wm_attr_universe_setup(void)
{
    /* WEFT_UNIVERSE_SIZE if set; under Weft's mpiexec, which can spawn (docs/dynamic.md), at
     * least the slots of the job's hosts (WEFT_MPIEXEC_HOSTS "h1:2,h2:2"), or on one host the
     * CPUs of the machine; elsewhere nothing can be spawned: the job */
    wm_attr_universe = wc_world.size;
    const char *u = getenv("WEFT_UNIVERSE_SIZE");
    const char *hosts = getenv("WEFT_MPIEXEC_HOSTS");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (u && atoi(u) > 0) {
        wm_attr_universe = atoi(u);
    } else if (getenv("WEFT_MPIEXEC") && hosts && *hosts) {
        long slots = 0;
        for (const char *p = strchr(hosts, ':'); p; p = strchr(p + 1, ':'))
            slots += atol(p + 1);
        if (slots > wm_attr_universe && slots < 1L << 30)
            wm_attr_universe = (int)slots;
    } else if (getenv("WEFT_MPIEXEC") && ncpu > wm_attr_universe) {
        wm_attr_universe = (int)ncpu;
    }
    wm_attr_appnum = wc_world.appnum;
}

/* The value of a predefined communicator key, or NULL if key is none. */
static void *wm_attr_predefined(int key)
{
    switch (key) {
    case MPI_TAG_UB: return &wm_attr_tag_ub;
    case MPI_HOST: return &wm_attr_host;
    case MPI_IO: return &wm_attr_io;
    case MPI_WTIME_IS_GLOBAL: return &wm_attr_wtime_global;
    case MPI_APPNUM:
        pthread_once(&wm_attr_universe_once, wm_attr_universe_setup);
        return &wm_attr_appnum;
    case MPI_UNIVERSE_SIZE:
        pthread_once(&wm_attr_universe_once, wm_attr_universe_setup);
        return &wm_attr_universe;
    case MPI_LASTUSEDCODE: return (void *)wm_error_lastused();
    default: return NULL;
    }
}

/* Named one by one: the ABI fixes the keys' values, not their order (MPI_APPNUM < MPI_UNIVERSE_SIZE
 * since the reference header of October 2025). */
static bool wm_attr_key_predefined(int key)
{
    switch (key) {
    case MPI_TAG_UB: case MPI_HOST: case MPI_IO: case MPI_WTIME_IS_GLOBAL: case MPI_APPNUM:
    case MPI_UNIVERSE_SIZE: case MPI_LASTUSEDCODE:
    case MPI_WIN_BASE: case MPI_WIN_DISP_UNIT: case MPI_WIN_SIZE: case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
        return true;
    default:
        return false;
    }
}

/* ---- the generic operations (o: the object; c: the communicator whose handler gets errors) --- */

static int wm_attr_set(const char *fn, wm_comm_t *c, wm_obj_t *o, wm_kv_kind_t kind, int key,
                       void *val)
{
    if (wm_attr_key_predefined(key))
        return wm_error(c, MPI_ERR_KEYVAL, fn, "predefined key %d cannot be set", key);
    wm_keyval_t *kv = wm_keyval_take(key, kind, true);
    if (!kv)
        return wm_error(c, MPI_ERR_KEYVAL, fn, "invalid keyval %d", key);
    pthread_mutex_lock(&wm_attr_lock);
    wm_attr_t *a = wm_attr_find_locked(o, kv);
    void *old = a ? a->val : NULL;
    pthread_mutex_unlock(&wm_attr_lock);
    if (a) {
        /* the old value's delete callback runs first; if it fails the old value stays */
        int rc = wm_attr_call_delete(kv, o->handle, old);
        if (rc == MPI_SUCCESS) {
            pthread_mutex_lock(&wm_attr_lock);
            a->val = val;
            pthread_mutex_unlock(&wm_attr_lock);
        }
        wm_keyval_release(kv);
        return rc == MPI_SUCCESS ? rc : wm_error_raise(c, rc);
    }
    a = malloc(sizeof(*a));
    if (!a) {
        wm_keyval_release(kv);
        return wm_error(c, MPI_ERR_NO_MEM, fn, "no memory for an attribute");
    }
    a->kv = kv;   /* the reference taken above is the attribute's */
    a->val = val;
    pthread_mutex_lock(&wm_attr_lock);
    wm_attr_append_locked(o, a);
    pthread_mutex_unlock(&wm_attr_lock);
    return MPI_SUCCESS;
}

static int wm_attr_get(const char *fn, wm_comm_t *c, wm_obj_t *o, wm_kv_kind_t kind, int key,
                       void *attribute_val, int *flag)
{
    if (!attribute_val || !flag)
        return wm_error(c, MPI_ERR_ARG, fn, "%s is NULL", flag ? "attribute_val" : "flag");
    if (wm_attr_key_predefined(key)) {
        void *v = kind == WM_KV_COMM ? wm_attr_predefined(key) : NULL;
        if (!v)
            return wm_error(c, MPI_ERR_KEYVAL, fn, "predefined key %d is not one of this object's",
                            key);
        *(void **)attribute_val = v;
        *flag = 1;
        return MPI_SUCCESS;
    }
    wm_keyval_t *kv = wm_keyval_take(key, kind, false);
    if (!kv)
        return wm_error(c, MPI_ERR_KEYVAL, fn, "invalid keyval %d", key);
    pthread_mutex_lock(&wm_attr_lock);
    wm_attr_t *a = wm_attr_find_locked(o, kv);
    if (a)
        *(void **)attribute_val = a->val;
    *flag = a != NULL;
    pthread_mutex_unlock(&wm_attr_lock);
    wm_keyval_release(kv);
    return MPI_SUCCESS;
}

/* Deleting an attribute that is not set does nothing. */
static int wm_attr_delete(const char *fn, wm_comm_t *c, wm_obj_t *o, wm_kv_kind_t kind, int key)
{
    if (wm_attr_key_predefined(key))
        return wm_error(c, MPI_ERR_KEYVAL, fn, "predefined key %d cannot be deleted", key);
    wm_keyval_t *kv = wm_keyval_take(key, kind, false);
    if (!kv)
        return wm_error(c, MPI_ERR_KEYVAL, fn, "invalid keyval %d", key);
    pthread_mutex_lock(&wm_attr_lock);
    wm_attr_t *a = wm_attr_find_locked(o, kv);
    void *val = a ? a->val : NULL;
    pthread_mutex_unlock(&wm_attr_lock);
    int rc = a ? wm_attr_call_delete(kv, o->handle, val) : MPI_SUCCESS;
    if (a && rc == MPI_SUCCESS) {
        pthread_mutex_lock(&wm_attr_lock);
        wm_attr_unlink_locked(o, a);
        pthread_mutex_unlock(&wm_attr_lock);
        wm_keyval_release(a->kv);
        free(a);
    }
    wm_keyval_release(kv);
    return rc == MPI_SUCCESS ? rc : wm_error_raise(c, rc);
}

static int wm_attr_create_keyval(const char *fn, wm_kv_kind_t kind, void (*copy_fn)(void),
                                 void (*delete_fn)(void), int *keyval, void *extra_state)
{
    WM_CHECK_INIT(fn);
    if (!keyval)
        return wm_error(NULL, MPI_ERR_ARG, fn, "keyval is NULL");
    int cls = wm_keyval_create(kind, copy_fn, delete_fn, extra_state, keyval);
    if (cls != MPI_SUCCESS)
        return wm_error(NULL, cls, fn, "no room for another keyval");
    return MPI_SUCCESS;
}

static int wm_attr_free_keyval(const char *fn, wm_kv_kind_t kind, int *keyval)
{
    WM_CHECK_INIT(fn);
    if (!keyval)
        return wm_error(NULL, MPI_ERR_ARG, fn, "keyval is NULL");
    if (wm_attr_key_predefined(*keyval))
        return wm_error(NULL, MPI_ERR_KEYVAL, fn, "predefined key %d cannot be freed", *keyval);
    if (!wm_keyval_user_free(*keyval, kind))
        return wm_error(NULL, MPI_ERR_KEYVAL, fn, "invalid keyval %d", *keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

void wm_attr_finalize(void)
{
    /* Callbacks' failures are ignored here: MPI_Finalize goes on. */
    wm_attr_delete_all(&wm_comm_self.obj);
    wm_attr_delete_all(&wm_comm_world.obj);
    for (int i = 0; i < WM_TYPE_COUNT; i++)
        if (wm_type_table[i].extent && wm_type_table[i].obj.attrs)
            wm_attr_delete_all(&wm_type_table[i].obj);
}

/* ---- communicators --------------------------------------------------------------------------- */

int wm_impl_MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                   MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                   int *comm_keyval, void *extra_state)
{
    return wm_attr_create_keyval("MPI_Comm_create_keyval", WM_KV_COMM,
                                 (void (*)(void))comm_copy_attr_fn,
                                 (void (*)(void))comm_delete_attr_fn, comm_keyval, extra_state);
}

int wm_impl_MPI_Comm_free_keyval(int *comm_keyval)
{
    return wm_attr_free_keyval("MPI_Comm_free_keyval", WM_KV_COMM, comm_keyval);
}

int wm_impl_MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Comm_set_attr";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_set(fn, c, &c->obj, WM_KV_COMM, comm_keyval, attribute_val);
}

int wm_impl_MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Comm_get_attr";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_get(fn, c, &c->obj, WM_KV_COMM, comm_keyval, attribute_val, flag);
}

int wm_impl_MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    static const char fn[] = "MPI_Comm_delete_attr";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_delete(fn, c, &c->obj, WM_KV_COMM, comm_keyval);
}

/* ---- the deprecated MPI-1 names (communicators) ---------------------------------------------- */

int wm_impl_MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                              int *keyval, void *extra_state)
{
    return wm_attr_create_keyval("MPI_Keyval_create", WM_KV_COMM, (void (*)(void))copy_fn,
                                 (void (*)(void))delete_fn, keyval, extra_state);
}

int wm_impl_MPI_Keyval_free(int *keyval)
{
    return wm_attr_free_keyval("MPI_Keyval_free", WM_KV_COMM, keyval);
}

int wm_impl_MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Attr_put";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_set(fn, c, &c->obj, WM_KV_COMM, keyval, attribute_val);
}

int wm_impl_MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Attr_get";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_get(fn, c, &c->obj, WM_KV_COMM, keyval, attribute_val, flag);
}

int wm_impl_MPI_Attr_delete(MPI_Comm comm, int keyval)
{
    static const char fn[] = "MPI_Attr_delete";
    WM_COMM_CHECK(fn, comm, c);
    return wm_attr_delete(fn, c, &c->obj, WM_KV_COMM, keyval);
}

/* ---- datatypes ------------------------------------------------------------------------------- */

#define WM_TYPE_CHECK(fn, datatype, o)                                                       \
    WM_CHECK_INIT(fn);                                                                       \
    const wm_datatype_t *t_ = wm_type_get(datatype);                                         \
    if (!t_)                                                                                 \
        return wm_error(NULL, MPI_ERR_TYPE, fn, "invalid datatype %p", (void *)(datatype));  \
    wm_obj_t *o = (wm_obj_t *)&t_->obj   /* attributes are not part of the type's layout */

int wm_impl_MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                                   MPI_Type_delete_attr_function *type_delete_attr_fn,
                                   int *type_keyval, void *extra_state)
{
    return wm_attr_create_keyval("MPI_Type_create_keyval", WM_KV_TYPE,
                                 (void (*)(void))type_copy_attr_fn,
                                 (void (*)(void))type_delete_attr_fn, type_keyval, extra_state);
}

int wm_impl_MPI_Type_free_keyval(int *type_keyval)
{
    return wm_attr_free_keyval("MPI_Type_free_keyval", WM_KV_TYPE, type_keyval);
}

int wm_impl_MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Type_set_attr";
    WM_TYPE_CHECK(fn, datatype, o);
    return wm_attr_set(fn, NULL, o, WM_KV_TYPE, type_keyval, attribute_val);
}

int wm_impl_MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Type_get_attr";
    WM_TYPE_CHECK(fn, datatype, o);
    return wm_attr_get(fn, NULL, o, WM_KV_TYPE, type_keyval, attribute_val, flag);
}

int wm_impl_MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char fn[] = "MPI_Type_delete_attr";
    WM_TYPE_CHECK(fn, datatype, o);
    return wm_attr_delete(fn, NULL, o, WM_KV_TYPE, type_keyval);
}

/* ---- windows: any WM_OBJ_WIN object; the predefined window attributes are the window's fields
 * (wm_win.c) ---- */

#define WM_WIN_CHECK(fn, win, o)                                                             \
    WM_CHECK_INIT(fn);                                                                       \
    wm_obj_t *o = wm_obj_lookup((uintptr_t)(win), WM_OBJ_WIN);                               \
    if (!o)                                                                                  \
        return wm_error(NULL, MPI_ERR_WIN, fn, "invalid window %p", (void *)(win))

int wm_impl_MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                  MPI_Win_delete_attr_function *win_delete_attr_fn,
                                  int *win_keyval, void *extra_state)
{
    return wm_attr_create_keyval("MPI_Win_create_keyval", WM_KV_WIN,
                                 (void (*)(void))win_copy_attr_fn,
                                 (void (*)(void))win_delete_attr_fn, win_keyval, extra_state);
}

int wm_impl_MPI_Win_free_keyval(int *win_keyval)
{
    return wm_attr_free_keyval("MPI_Win_free_keyval", WM_KV_WIN, win_keyval);
}

int wm_impl_MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    WM_WIN_CHECK(fn, win, o);
    return wm_attr_set(fn, NULL, o, WM_KV_WIN, win_keyval, attribute_val);
}

int wm_impl_MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    WM_WIN_CHECK(fn, win, o);
    if (win_keyval >= MPI_WIN_BASE && win_keyval <= MPI_WIN_MODEL && attribute_val && flag)
        return wm_win_attr_predefined(o, win_keyval, attribute_val, flag);
    return wm_attr_get(fn, NULL, o, WM_KV_WIN, win_keyval, attribute_val, flag);
}

int wm_impl_MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    WM_WIN_CHECK(fn, win, o);
    return wm_attr_delete(fn, NULL, o, WM_KV_WIN, win_keyval);
}
