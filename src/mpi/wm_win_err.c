/* Errors on windows: the window's error handler, and the MPI_Win_*_errhandler entry points. */
#include "mpi/wm_win.h"

#include <stdarg.h>
#include <stdio.h>
#include "mpi/wm_errhandler.h"
#include "mpi/wm_internal.h"
#include "util/wu_log.h"

static int wm_win_raise(wm_win_t *w, int code)
{
    MPI_Errhandler eh = w->errh;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        wm_errh_t *e = (wm_errh_t *)((uintptr_t)eh & ~(uintptr_t)WM_OBJ_GEN_MASK);
        MPI_Win h = (MPI_Win)w->obj.handle;
        int c = code;
        ((MPI_Win_errhandler_function *)e->fn)(&h, &c);
        return code;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MPI_ERR_OTHER;
    PMPI_Error_string(code, msg, &len);
    PMPI_Error_class(code, &cls);
    wu_log_msg("MPI error", "%s%s", msg,
               eh == MPI_ERRORS_ABORT ? " (MPI_ERRORS_ABORT)" : " (MPI_ERRORS_ARE_FATAL)");
    wc_abort(cls > 0 && cls < 256 ? cls : 1, msg);
}

int wm_win_error(wm_win_t *w, int cls, const char *func, const char *fmt, ...)
{
    char buf[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!w)
        return wm_error(NULL, cls, func, "%s", buf);
    return wm_win_raise(w, wm_error_code(cls, func, "%s", buf));
}

int wm_impl_MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Win_set_errhandler";
    WM_WIN_ARG(fn, win, w);
    if (!wm_errh_predefined(errhandler)) {
        wm_errh_t *e = (wm_errh_t *)wm_obj_lookup((uintptr_t)errhandler, WM_OBJ_ERRH);
        if (!e)
            return wm_win_error(w, MPI_ERR_ERRHANDLER, fn, "invalid error handler %p",
                                (void *)errhandler);
        if (e->kind != WM_ERRH_WIN)
            return wm_win_error(w, MPI_ERR_ARG, fn,
                                "error handler %p was not made by MPI_Win_create_errhandler",
                                (void *)errhandler);
    }
    wm_errh_ref(errhandler);
    MPI_Errhandler old = w->errh;
    w->errh = errhandler;
    wm_errh_unref(old);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Win_get_errhandler";
    WM_WIN_ARG(fn, win, w);
    if (!errhandler)
        return wm_win_error(w, MPI_ERR_ARG, fn, "errhandler is NULL");
    wm_errh_ref(w->errh);   /* a new handle the user frees with MPI_Errhandler_free */
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    static const char fn[] = "MPI_Win_call_errhandler";
    WM_WIN_ARG(fn, win, w);
    wm_win_raise(w, errorcode);
    return MPI_SUCCESS;
}
