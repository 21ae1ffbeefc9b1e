/* Error codes, strings and handlers.
 *
 * An error code is (slot << 7) | class: the class is in the low 7 bits, the slot names one of the
 * last WM_ERR_SLOTS messages, which say which call failed and which argument was bad. A code
 * whose slot was reused still gives its class and the class's string.
 */
#include "mpi/wm_internal.h"
#include "mpi/wm_unsupported.h"
#include "util/wu_log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WM_ERR_CLASS_BITS 7
#define WM_ERR_SLOTS 1024

static char wm_err_msgs[WM_ERR_SLOTS][MPI_MAX_ERROR_STRING];
static int wm_err_codes[WM_ERR_SLOTS];
static _Atomic unsigned wm_err_next;   /* any thread */

static const char *wm_class_string(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "no error";
    case MPI_ERR_BUFFER: return "invalid buffer pointer";
    case MPI_ERR_COUNT: return "invalid count argument";
    case MPI_ERR_TYPE: return "invalid datatype";
    case MPI_ERR_TAG: return "invalid tag";
    case MPI_ERR_COMM: return "invalid communicator";
    case MPI_ERR_RANK: return "invalid rank";
    case MPI_ERR_REQUEST: return "invalid request";
    case MPI_ERR_ROOT: return "invalid root";
    case MPI_ERR_GROUP: return "invalid group";
    case MPI_ERR_OP: return "invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "invalid topology";
    case MPI_ERR_DIMS: return "invalid dimension argument";
    case MPI_ERR_ARG: return "invalid argument";
    case MPI_ERR_UNKNOWN: return "unknown error";
    case MPI_ERR_TRUNCATE: return "message truncated";
    case MPI_ERR_OTHER: return "other error";
    case MPI_ERR_INTERN: return "internal error";
    case MPI_ERR_PENDING: return "pending request";
    case MPI_ERR_IN_STATUS: return "error code is in status";
    case MPI_ERR_INFO: return "invalid info";
    case MPI_ERR_KEYVAL: return "invalid key value";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_ERRHANDLER: return "invalid error handler";
    case MPI_ERR_PROC_ABORTED: return "a process aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "value too large to store";
    default: return cls > 0 && cls <= 61 ? "error (see the MPI standard's class list)" : "invalid error code";
    }
}

int wm_status_to_class(wu_status_t st)
{
    switch (st) {
    case WU_OK: return MPI_SUCCESS;
    case WU_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case WU_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case WU_ERR_INVALID: return MPI_ERR_ARG;
    case WU_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case WU_ERR_INTERNAL: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;
    }
}

static int wm_error_vcode(int cls, const char *func, const char *fmt, va_list ap)
{
    unsigned slot = atomic_fetch_add_explicit(&wm_err_next, 1, memory_order_relaxed) % WM_ERR_SLOTS;
    char *m = wm_err_msgs[slot];
    int n = snprintf(m, MPI_MAX_ERROR_STRING, "%s: %s: ", func, wm_class_string(cls));
    if (n > 0 && n < MPI_MAX_ERROR_STRING)
        vsnprintf(m + n, (size_t)(MPI_MAX_ERROR_STRING - n), fmt, ap);
    int code = (int)((slot + 1) << WM_ERR_CLASS_BITS) | cls;
    wm_err_codes[slot] = code;
    return code;
}

int wm_error_code(int cls, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = wm_error_vcode(cls, func, fmt, ap);
    va_end(ap);
    return code;
}

static const char *wm_code_message(int code)
{
    if (code < (1 << WM_ERR_CLASS_BITS))
        return wm_class_string(code);
    unsigned slot = ((unsigned)code >> WM_ERR_CLASS_BITS) - 1;
    if (slot < WM_ERR_SLOTS && wm_err_codes[slot] == code)
        return wm_err_msgs[slot];
    return wm_class_string(code & ((1 << WM_ERR_CLASS_BITS) - 1));
}

int wm_error_raise(wm_comm_t *comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!comm)
        comm = &wm_comm_self;   /* MPI 4: errors tied to no communicator go to MPI_COMM_SELF */
    MPI_Errhandler eh = wm_state.initialized && !wm_state.finalized ? comm->errh
                                                                    : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    int cls = code & ((1 << WM_ERR_CLASS_BITS) - 1);
    wu_log_msg("MPI error", "%s%s", wm_code_message(code),
               eh == MPI_ERRORS_ABORT ? " (MPI_ERRORS_ABORT)" : " (MPI_ERRORS_ARE_FATAL)");
    if (wm_state.initialized && !wm_state.finalized)
        wc_abort(cls, wm_code_message(code));
    _exit(cls);
}

int wm_error(wm_comm_t *comm, int cls, const char *func, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int code = wm_error_vcode(cls, func, fmt, ap);
    va_end(ap);
    return wm_error_raise(comm, code);
}

int wm_unsupported(const char *func)
{
    return wm_error(NULL, MPI_ERR_UNSUPPORTED_OPERATION, func,
                    "not implemented in this version of Weft");
}

WM_API int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "%s is NULL",
                        string ? "resultlen" : "string");
    if (errorcode < 0)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
    int n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", wm_code_message(errorcode));
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Error_string)

WM_API int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    if (errorcode < 0)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = errorcode & ((1 << WM_ERR_CLASS_BITS) - 1);
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Error_class)

static bool wm_errh_valid(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

WM_API int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Comm_set_errhandler";
    WM_CHECK_INIT(fn);
    wm_comm_t *c = wm_comm_get(comm);
    if (!c)
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
    if (!wm_errh_valid(errhandler))
        return wm_error(c, MPI_ERR_ARG, fn, "invalid error handler %p", (void *)errhandler);
    c->errh = errhandler;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_set_errhandler)

WM_API int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Comm_get_errhandler";
    WM_CHECK_INIT(fn);
    wm_comm_t *c = wm_comm_get(comm);
    if (!c)
        return wm_error(NULL, MPI_ERR_COMM, fn, "invalid communicator");
    if (!errhandler)
        return wm_error(c, MPI_ERR_ARG, fn, "errhandler is NULL");
    *errhandler = c->errh;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Comm_get_errhandler)

WM_API int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Errhandler_free";
    WM_CHECK_INIT(fn);
    if (!errhandler || !wm_errh_valid(*errhandler))
        return wm_error(NULL, MPI_ERR_ARG, fn, "invalid error handler");
    /* predefined handlers are never freed; the handle becomes null for the caller */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
WM_ALIAS(MPI_Errhandler_free)
