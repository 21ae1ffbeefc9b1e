/* MPI_T performance variables: sessions and handles over the tables of wm_t.c.
 *
 * A counter's handle is a private view of a process-wide sum (wu_counter_sum): it keeps what it
 * counted while started (`accum`) and the sum when it was last started, reset or written
 * (`base`), so sessions never disturb each other nor the counting threads. A started counter
 * handle is a watcher of the counters (wu_counters_watch): the engine counts only while there is
 * one, since nothing else can see a count. The unexpected-queue
 * variables are continuous and read-only: a handle reads the endpoint's value as it is.
 *
 * Concurrency contract (wm_t.h): sessions and their handles are created, changed and freed under
 * wm_t_lock; a session or handle given to a call is looked up in the live list under that lock,
 * so a bad or freed one gives MPI_T_ERR_INVALID_SESSION / _HANDLE instead of a crash. */
#include "mpi/wm_internal.h"
#include "mpi/wm_t.h"
#include "util/wu_counters.h"

#include <stdlib.h>
#include <string.h>

struct MPI_T_pvar_handle_t {
    struct MPI_T_pvar_handle_t *next;   /* in its session */
    int index;
    bool started;
    uint64_t base, accum;
};

struct MPI_T_pvar_session_t {
    struct MPI_T_pvar_session_t *next;  /* wm_t_sessions */
    struct MPI_T_pvar_handle_t *handles;
};

static struct MPI_T_pvar_session_t *wm_t_sessions;   /* wm_t_lock */

int wm_impl_MPI_T_pvar_get_num(int *num_pvar)
{
    WM_T_CHECK();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = wm_t_pvar_num();
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                                int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                                char *desc, int *desc_len, int *bind, int *readonly,
                                int *continuous, int *atomic)
{
    WM_T_CHECK();
    if (pvar_index < 0 || pvar_index >= wm_t_pvar_num())
        return MPI_T_ERR_INVALID_INDEX;
    const wm_t_pvar_t *p = wm_t_pvar(pvar_index);
    wm_t_str(p->name, name, name_len);
    wm_t_str(p->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class)
        *var_class = p->var_class;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = p->readonly;
    if (continuous)
        *continuous = p->continuous;
    if (atomic)
        *atomic = 0;   /* MPI_T_pvar_readreset is a read, then a reset */
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    WM_T_CHECK();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < wm_t_pvar_num(); i++) {
        const wm_t_pvar_t *p = wm_t_pvar(i);
        if (p->var_class == var_class && !strcmp(name, p->name)) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

/* ---- sessions ------------------------------------------------------------------------------- */

static bool wm_t_session_live(MPI_T_pvar_session s)
{
    for (MPI_T_pvar_session x = wm_t_sessions; x; x = x->next)
        if (x == s)
            return true;
    return false;
}

static bool wm_t_handle_live(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    for (MPI_T_pvar_handle x = s->handles; x; x = x->next)
        if (x == h)
            return true;
    return false;
}

int wm_impl_MPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    WM_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_session s = calloc(1, sizeof(*s));
    if (!s)
        return MPI_T_ERR_MEMORY;
    pthread_mutex_lock(&wm_t_lock);
    s->next = wm_t_sessions;
    wm_t_sessions = s;
    pthread_mutex_unlock(&wm_t_lock);
    *session = s;
    return MPI_SUCCESS;
}

/* A counter's handle counts as a watcher of the counters (wu_counters_watch) while it is
 * started: the engine counts only while some handle may see it. */
static bool wm_t_handle_watches(MPI_T_pvar_handle h)
{
    return h->started && wm_t_pvar(h->index)->counter >= 0;
}

static void wm_t_handle_destroy(MPI_T_pvar_handle h)
{
    if (wm_t_handle_watches(h))
        wu_counters_watch(-1);
    free(h);
}

static void wm_t_session_destroy(MPI_T_pvar_session s)
{
    while (s->handles) {
        MPI_T_pvar_handle h = s->handles;
        s->handles = h->next;
        wm_t_handle_destroy(h);
    }
    free(s);
}

int wm_impl_MPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    WM_T_CHECK();
    if (!session)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&wm_t_lock);
    MPI_T_pvar_session *pp = &wm_t_sessions;
    while (*pp && *pp != *session)
        pp = &(*pp)->next;
    if (!*pp) {
        pthread_mutex_unlock(&wm_t_lock);
        return MPI_T_ERR_INVALID_SESSION;
    }
    MPI_T_pvar_session s = *pp;
    *pp = s->next;
    pthread_mutex_unlock(&wm_t_lock);
    wm_t_session_destroy(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

void wm_t_pvar_release_all(void)
{
    while (wm_t_sessions) {
        MPI_T_pvar_session s = wm_t_sessions;
        wm_t_sessions = s->next;
        wm_t_session_destroy(s);
    }
}

/* ---- handles ------------------------------------------------------------------------------- */

int wm_impl_MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                                    MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle;   /* MPI_T_BIND_NO_OBJECT */
    WM_T_CHECK();
    if (pvar_index < 0 || pvar_index >= wm_t_pvar_num())
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    MPI_T_pvar_handle h = calloc(1, sizeof(*h));
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = pvar_index;
    h->started = wm_t_pvar(pvar_index)->continuous;
    pthread_mutex_lock(&wm_t_lock);
    if (!wm_t_session_live(session)) {
        pthread_mutex_unlock(&wm_t_lock);
        free(h);
        return MPI_T_ERR_INVALID_SESSION;
    }
    h->next = session->handles;
    session->handles = h;
    pthread_mutex_unlock(&wm_t_lock);
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}

int wm_impl_MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    WM_T_CHECK();
    if (!handle)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&wm_t_lock);
    int rc = MPI_SUCCESS;
    if (!wm_t_session_live(session)) {
        rc = MPI_T_ERR_INVALID_SESSION;
    } else {
        MPI_T_pvar_handle *pp = &session->handles;
        while (*pp && *pp != *handle)
            pp = &(*pp)->next;
        if (!*pp || *handle == MPI_T_PVAR_ALL_HANDLES) {
            rc = MPI_T_ERR_INVALID_HANDLE;
        } else {
            MPI_T_pvar_handle h = *pp;
            *pp = h->next;
            wm_t_handle_destroy(h);
            *handle = MPI_T_PVAR_HANDLE_NULL;
        }
    }
    pthread_mutex_unlock(&wm_t_lock);
    return rc;
}

/* The value handle h shows now. */
static uint64_t wm_t_handle_value(MPI_T_pvar_handle h)
{
    const wm_t_pvar_t *p = wm_t_pvar(h->index);
    if (p->counter < 0)
        return wm_t_pvar_raw(h->index);
    return h->started ? h->accum + (wm_t_pvar_raw(h->index) - h->base) : h->accum;
}

typedef enum { WM_T_START, WM_T_STOP, WM_T_RESET } wm_t_op_t;

/* One of start, stop, reset on h (wm_t_lock held). */
static int wm_t_handle_op(MPI_T_pvar_handle h, wm_t_op_t op)
{
    const wm_t_pvar_t *p = wm_t_pvar(h->index);
    switch (op) {
    case WM_T_START:
        if (p->continuous)
            return MPI_T_ERR_PVAR_NO_STARTSTOP;
        if (!h->started) {
            wu_counters_watch(1);   /* before the base: what it reads is counted from here on */
            h->base = wm_t_pvar_raw(h->index);
            h->started = true;
        }
        return MPI_SUCCESS;
    case WM_T_STOP:
        if (p->continuous)
            return MPI_T_ERR_PVAR_NO_STARTSTOP;
        if (h->started) {
            h->accum += wm_t_pvar_raw(h->index) - h->base;
            h->started = false;
            wu_counters_watch(-1);
        }
        return MPI_SUCCESS;
    case WM_T_RESET:
        if (p->readonly)
            return MPI_T_ERR_PVAR_NO_WRITE;
        h->accum = 0;
        h->base = wm_t_pvar_raw(h->index);
        return MPI_SUCCESS;
    }
    return MPI_T_ERR_INVALID;
}

/* Start, stop or reset one handle, or with MPI_T_PVAR_ALL_HANDLES every handle of the session to
 * which the operation applies (the others are skipped, as the standard says). */
static int wm_t_pvar_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, wm_t_op_t op)
{
    WM_T_CHECK();
    pthread_mutex_lock(&wm_t_lock);
    int rc = MPI_SUCCESS;
    if (!wm_t_session_live(session)) {
        rc = MPI_T_ERR_INVALID_SESSION;
    } else if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (MPI_T_pvar_handle h = session->handles; h; h = h->next)
            (void)wm_t_handle_op(h, op);
    } else if (!wm_t_handle_live(session, handle)) {
        rc = MPI_T_ERR_INVALID_HANDLE;
    } else {
        rc = wm_t_handle_op(handle, op);
    }
    pthread_mutex_unlock(&wm_t_lock);
    return rc;
}

int wm_impl_MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return wm_t_pvar_op(session, handle, WM_T_START);
}

int wm_impl_MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return wm_t_pvar_op(session, handle, WM_T_STOP);
}

int wm_impl_MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return wm_t_pvar_op(session, handle, WM_T_RESET);
}

/* Read (and with reset, then reset) one handle; MPI_T_PVAR_ALL_HANDLES is not allowed here. */
static int wm_t_pvar_rw(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *out,
                        const void *in, bool reset)
{
    WM_T_CHECK();
    if (!out && !in)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&wm_t_lock);
    int rc = MPI_SUCCESS;
    if (!wm_t_session_live(session)) {
        rc = MPI_T_ERR_INVALID_SESSION;
    } else if (handle == MPI_T_PVAR_ALL_HANDLES || !wm_t_handle_live(session, handle)) {
        rc = MPI_T_ERR_INVALID_HANDLE;
    } else if ((in || reset) && wm_t_pvar(handle->index)->readonly) {
        rc = MPI_T_ERR_PVAR_NO_WRITE;
    } else if (in) {
        uint64_t v;
        memcpy(&v, in, sizeof(v));
        handle->accum = v;
        handle->base = wm_t_pvar_raw(handle->index);
    } else {
        uint64_t v = wm_t_handle_value(handle);
        memcpy(out, &v, sizeof(v));
        if (reset)
            (void)wm_t_handle_op(handle, WM_T_RESET);
    }
    pthread_mutex_unlock(&wm_t_lock);
    return rc;
}

int wm_impl_MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (!buf)
        return wm_t_check_init() != MPI_SUCCESS ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID;
    return wm_t_pvar_rw(session, handle, buf, NULL, false);
}

int wm_impl_MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                             const void *buf)
{
    if (!buf)
        return wm_t_check_init() != MPI_SUCCESS ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID;
    return wm_t_pvar_rw(session, handle, NULL, buf, false);
}

int wm_impl_MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (!buf)
        return wm_t_check_init() != MPI_SUCCESS ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID;
    return wm_t_pvar_rw(session, handle, buf, NULL, true);
}
