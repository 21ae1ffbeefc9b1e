/* Error handler objects: create, set, get, free, call (see wm_errhandler.h). Windows' set/get/call
 * are in wm_win_err.c, sessions' in wm_session.c. Files do not exist yet: their handlers can be
 * created and freed, and the set/get/call entry points of that family stay generated stubs. */
#include "mpi/wm_errhandler.h"
#include "mpi/wm_internal.h"

/* The object of a handle some holder keeps alive (no lookup: the user may have freed its own
 * handles already). NULL for the predefined handlers. */
static wm_errh_t *wm_errh_held(MPI_Errhandler eh)
{
    if (eh == MPI_ERRHANDLER_NULL || wm_errh_predefined(eh))
        return NULL;
    return (wm_errh_t *)((uintptr_t)eh & ~(uintptr_t)WM_OBJ_GEN_MASK);
}

/* A handle the user passes in: a live user handler, else NULL. */
static wm_errh_t *wm_errh_lookup(MPI_Errhandler eh)
{
    return (wm_errh_t *)wm_obj_lookup((uintptr_t)eh, WM_OBJ_ERRH);
}

static void wm_errh_use(wm_errh_t *e)
{
    atomic_fetch_add_explicit(&e->uses, 1, memory_order_relaxed);
}

static void wm_errh_unuse(wm_errh_t *e)
{
    if (atomic_fetch_sub_explicit(&e->uses, 1, memory_order_acq_rel) == 1)
        wm_obj_user_free(&e->obj);
}

void wm_errh_ref(MPI_Errhandler eh)
{
    wm_errh_t *e = wm_errh_held(eh);
    if (e)
        wm_errh_use(e);
}

void wm_errh_unref(MPI_Errhandler eh)
{
    wm_errh_t *e = wm_errh_held(eh);
    if (e)
        wm_errh_unuse(e);
}

void wm_errh_call(MPI_Errhandler eh, MPI_Comm comm, int code)
{
    wm_errh_t *e = wm_errh_held(eh);
    if (!e || !e->fn)
        return;
    MPI_Comm h = comm;
    int c = code;
    ((MPI_Comm_errhandler_function *)e->fn)(&h, &c);
}

void wm_errh_call_session(MPI_Errhandler eh, MPI_Session session, int code)
{
    wm_errh_t *e = wm_errh_held(eh);
    if (!e || !e->fn)
        return;
    MPI_Session h = session;
    int c = code;
    ((MPI_Session_errhandler_function *)e->fn)(&h, &c);
}

int wm_errh_check(MPI_Errhandler eh, wm_errh_kind_t kind)
{
    if (wm_errh_predefined(eh))
        return MPI_SUCCESS;
    wm_errh_t *e = wm_errh_lookup(eh);
    if (!e)
        return MPI_ERR_ERRHANDLER;
    return e->kind == kind ? MPI_SUCCESS : MPI_ERR_ARG;
}

static int wm_errh_create(const char *fn, wm_errh_kind_t kind, void (*f)(void),
                          MPI_Errhandler *errhandler)
{
    if (kind != WM_ERRH_SESSION)   /* a session's may be made before MPI_Session_init (MPI 4.1
                                      11.4.1), to be given to it */
        WM_CHECK_INIT(fn);
    if (!f)
        return wm_error(NULL, MPI_ERR_ARG, fn, "the handler function is NULL");
    if (!errhandler)
        return wm_error(NULL, MPI_ERR_ARG, fn, "errhandler is NULL");
    wm_errh_t *e = wm_obj_create(WM_OBJ_ERRH, sizeof(*e), NULL);
    if (!e)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for an error handler");
    e->kind = kind;
    e->fn = f;
    atomic_store_explicit(&e->uses, 1, memory_order_relaxed);
    *errhandler = (MPI_Errhandler)e->obj.handle;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                       MPI_Errhandler *errhandler)
{
    return wm_errh_create("MPI_Comm_create_errhandler", WM_ERRH_COMM,
                          (void (*)(void))comm_errhandler_fn, errhandler);
}

int wm_impl_MPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                                      MPI_Errhandler *errhandler)
{
    return wm_errh_create("MPI_Win_create_errhandler", WM_ERRH_WIN,
                          (void (*)(void))win_errhandler_fn, errhandler);
}

int wm_impl_MPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                       MPI_Errhandler *errhandler)
{
    return wm_errh_create("MPI_File_create_errhandler", WM_ERRH_FILE,
                          (void (*)(void))file_errhandler_fn, errhandler);
}

int wm_impl_MPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                          MPI_Errhandler *errhandler)
{
    return wm_errh_create("MPI_Session_create_errhandler", WM_ERRH_SESSION,
                          (void (*)(void))session_errhandler_fn, errhandler);
}

int wm_impl_MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Comm_set_errhandler";
    WM_COMM_CHECK(fn, comm, c);
    if (!wm_errh_predefined(errhandler)) {
        wm_errh_t *e = wm_errh_lookup(errhandler);
        if (!e)
            return wm_error(c, MPI_ERR_ERRHANDLER, fn, "invalid error handler %p",
                            (void *)errhandler);
        if (e->kind != WM_ERRH_COMM)
            return wm_error(c, MPI_ERR_ARG, fn,
                            "error handler %p was not made by MPI_Comm_create_errhandler",
                            (void *)errhandler);
        wm_errh_use(e);
    }
    MPI_Errhandler old = c->errh;
    c->errh = errhandler;
    wm_errh_unref(old);
    return MPI_SUCCESS;
}

/* The standard: the handle returned is a new reference the user frees with MPI_Errhandler_free. */
int wm_impl_MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Comm_get_errhandler";
    WM_COMM_CHECK(fn, comm, c);
    if (!errhandler)
        return wm_error(c, MPI_ERR_ARG, fn, "errhandler is NULL");
    MPI_Errhandler eh = c->errh;
    wm_errh_ref(eh);
    *errhandler = eh;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Errhandler_free";
    /* no WM_CHECK_INIT: a session's handler may be made and freed around MPI_Session_init */
    if (!errhandler)
        return wm_error(NULL, MPI_ERR_ARG, fn, "errhandler is NULL");
    if (!wm_errh_predefined(*errhandler)) {
        wm_errh_t *e = wm_errh_lookup(*errhandler);
        if (!e)
            return wm_error(NULL, MPI_ERR_ERRHANDLER, fn, "invalid error handler %p",
                            (void *)*errhandler);
        wm_errh_unuse(e);
    }
    /* predefined handlers are never freed; the handle becomes null for the caller */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* The standard: returns MPI_SUCCESS once the handler was called and returned (MPI_ERRORS_RETURN
 * does nothing; the fatal handlers end the job). */
int wm_impl_MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char fn[] = "MPI_Comm_call_errhandler";
    WM_COMM_CHECK(fn, comm, c);
    wm_error_raise(c, errorcode);
    return MPI_SUCCESS;
}
