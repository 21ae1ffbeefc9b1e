/* Error codes, classes and strings, and raising an error through a communicator's handler.
 *
 * Numbering (every value is a non-negative int):
 *   0 .. MPI_ERR_ABI, MPI_T_ERR_*   the standard's classes, each its own code
 *   MPI_ERR_LASTCODE+1 ..           classes and codes added by MPI_Add_error_class/_code: the
 *                                   lowest value removed by MPI_Remove_error_class/_code is reused
 *                                   first, else the next new one (MPI_LASTUSEDCODE is the largest
 *                                   class ever added)
 *   WM_ERR_DYN | slot << 7 | class  a code made by wm_error: the class (a standard one, < 128) in
 *                                   the low 7 bits, the slot names one of the last WM_ERR_SLOTS
 *                                   messages, which say which call failed and which argument was
 *                                   bad. A code whose slot was reused still gives its class.
 *
 * Concurrency contract: any thread may make, raise and decode codes. Message slots are claimed
 * with an atomic counter; the table of added classes and codes is guarded by wm_err_lock.
 */
#include "mpi/wm_internal.h"
#include "mpi/wm_errhandler.h"
#include "mpi/wm_unsupported.h"
#include "util/wu_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WM_ERR_CLASS_BITS 7
#define WM_ERR_CLASS_MASK ((1 << WM_ERR_CLASS_BITS) - 1)
#define WM_ERR_DYN 0x40000000
#define WM_ERR_SLOTS 1024
#define WM_ERR_USER_MAX (1 << 24)   /* classes and codes a program may have at once */

static char wm_err_msgs[WM_ERR_SLOTS][MPI_MAX_ERROR_STRING];
static int wm_err_codes[WM_ERR_SLOTS];
static _Atomic unsigned wm_err_next;   /* any thread */

/* Added classes and codes: entry i is the value MPI_ERR_LASTCODE + 1 + i. */
enum { WM_USER_FREE = 0, WM_USER_CLASS, WM_USER_CODE };
typedef struct wm_user_err {
    uint8_t kind;        /* WM_USER_*; FREE once removed */
    int     cls;         /* the class of a code; a class's own value */
    int     ncodes;      /* a class: its codes not removed */
    char   *string;      /* MPI_Add_error_string; NULL: none ("") */
} wm_user_err_t;

static pthread_mutex_t wm_err_lock = PTHREAD_MUTEX_INITIALIZER;
static wm_user_err_t *wm_user_errs;                   /* wm_err_lock; grows */
static int wm_user_cap;                               /* wm_err_lock: entries allocated */
static int wm_user_nfree;                             /* wm_err_lock: removed entries to reuse */
static _Atomic int wm_user_nerrs;                     /* entries handed out; written under the lock */

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
    case MPI_ERR_ACCESS: return "permission denied";
    case MPI_ERR_AMODE: return "invalid file access mode";
    case MPI_ERR_ASSERT: return "invalid assertion";
    case MPI_ERR_BAD_FILE: return "invalid file name";
    case MPI_ERR_BASE: return "invalid base address";
    case MPI_ERR_CONVERSION: return "data conversion failed";
    case MPI_ERR_DISP: return "invalid displacement";
    case MPI_ERR_DUP_DATAREP: return "data representation already defined";
    case MPI_ERR_FILE_EXISTS: return "file exists";
    case MPI_ERR_FILE_IN_USE: return "file in use";
    case MPI_ERR_FILE: return "invalid file";
    case MPI_ERR_IO: return "I/O error";
    case MPI_ERR_LOCKTYPE: return "invalid lock type";
    case MPI_ERR_NAME: return "invalid service name";
    case MPI_ERR_NOT_SAME: return "not the same on every process";
    case MPI_ERR_NO_SPACE: return "no space left";
    case MPI_ERR_NO_SUCH_FILE: return "no such file";
    case MPI_ERR_PORT: return "invalid port name";
    case MPI_ERR_QUOTA: return "quota exceeded";
    case MPI_ERR_READ_ONLY: return "read-only file or file system";
    case MPI_ERR_RMA_ATTACH: return "memory cannot be attached";
    case MPI_ERR_RMA_CONFLICT: return "conflicting accesses to a window";
    case MPI_ERR_RMA_RANGE: return "target memory outside the window";
    case MPI_ERR_RMA_SHARED: return "memory cannot be shared";
    case MPI_ERR_RMA_SYNC: return "wrong synchronization of RMA calls";
    case MPI_ERR_RMA_FLAVOR: return "wrong window flavor";
    case MPI_ERR_SERVICE: return "invalid service";
    case MPI_ERR_SIZE: return "invalid size";
    case MPI_ERR_SPAWN: return "processes could not be spawned";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "unsupported data representation";
    case MPI_ERR_ABI: return "ABI mismatch";
    case MPI_ERR_INFO_KEY: return "invalid info key";
    case MPI_ERR_INFO_NOKEY: return "no such info key";
    case MPI_ERR_INFO_VALUE: return "invalid info value";
    case MPI_ERR_INFO: return "invalid info";
    case MPI_ERR_KEYVAL: return "invalid key value";
    case MPI_ERR_NO_MEM: return "out of memory";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "operation not supported";
    case MPI_ERR_WIN: return "invalid window";
    case MPI_ERR_SESSION: return "invalid session";
    case MPI_ERR_ERRHANDLER: return "invalid error handler";
    case MPI_ERR_PROC_ABORTED: return "a process aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "value too large to store";
    default: return "error of the tool information interface (MPI_T)";
    }
}

static bool wm_class_predefined(int v)
{
    return (v >= MPI_SUCCESS && v <= MPI_ERR_ABI) ||
           (v >= MPI_T_ERR_CANNOT_INIT && v <= MPI_T_ERR_PVAR_NO_ATOMIC);
}

/* The entry of an added class or code, or NULL. Lock held. */
static wm_user_err_t *wm_user_err_locked(int v)
{
    if (v <= MPI_ERR_LASTCODE || v > MPI_ERR_LASTCODE + atomic_load(&wm_user_nerrs))
        return NULL;
    wm_user_err_t *e = &wm_user_errs[v - MPI_ERR_LASTCODE - 1];
    return e->kind == WM_USER_FREE ? NULL : e;
}

/* The class of a valid error code, else -1. */
static int wm_code_class(int code)
{
    if (code < 0)
        return -1;
    if (code & WM_ERR_DYN) {
        int cls = code & WM_ERR_CLASS_MASK;
        return wm_class_predefined(cls) ? cls : -1;
    }
    if (wm_class_predefined(code))
        return code;
    pthread_mutex_lock(&wm_err_lock);
    wm_user_err_t *e = wm_user_err_locked(code);
    int cls = e ? e->cls : -1;
    pthread_mutex_unlock(&wm_err_lock);
    return cls;
}

static int wm_err_lastused = MPI_ERR_LASTCODE;   /* written under wm_err_lock */

const int *wm_error_lastused(void)
{
    return &wm_err_lastused;
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
    if (cls < 0 || cls > WM_ERR_CLASS_MASK)
        return cls;   /* not a standard class: no room for a message */
    unsigned slot = atomic_fetch_add_explicit(&wm_err_next, 1, memory_order_relaxed) % WM_ERR_SLOTS;
    char *m = wm_err_msgs[slot];
    int n = snprintf(m, MPI_MAX_ERROR_STRING, "%s: %s: ", func, wm_class_string(cls));
    if (n > 0 && n < MPI_MAX_ERROR_STRING)
        vsnprintf(m + n, (size_t)(MPI_MAX_ERROR_STRING - n), fmt, ap);
    int code = WM_ERR_DYN | (int)(slot << WM_ERR_CLASS_BITS) | cls;
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

/* The message of a code into buf (MPI_MAX_ERROR_STRING bytes). */
static void wm_code_message(int code, char *buf)
{
    if (code & WM_ERR_DYN && code > 0) {
        unsigned slot = ((unsigned)code & ~(unsigned)WM_ERR_DYN) >> WM_ERR_CLASS_BITS;
        if (slot < WM_ERR_SLOTS && wm_err_codes[slot] == code) {
            snprintf(buf, MPI_MAX_ERROR_STRING, "%s", wm_err_msgs[slot]);
            return;
        }
        code &= WM_ERR_CLASS_MASK;
    }
    if (wm_class_predefined(code)) {
        snprintf(buf, MPI_MAX_ERROR_STRING, "%s", wm_class_string(code));
        return;
    }
    pthread_mutex_lock(&wm_err_lock);
    wm_user_err_t *e = wm_user_err_locked(code);
    snprintf(buf, MPI_MAX_ERROR_STRING, "%s",
             e ? (e->string ? e->string : "") : "invalid error code");
    pthread_mutex_unlock(&wm_err_lock);
}

/* The handler eh gets code: the user's function is called with the communicator comm or, when
 * session is not MPI_SESSION_NULL, with the session. */
static int wm_error_dispatch(MPI_Errhandler eh, MPI_Comm comm, MPI_Session session, int code)
{
    bool up = atomic_load(&wm_state.up);
    if (!up)
        eh = MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT) {
        if (session != MPI_SESSION_NULL)
            wm_errh_call_session(eh, session, code);
        else
            wm_errh_call(eh, comm, code);
        return code;
    }
    char msg[MPI_MAX_ERROR_STRING];
    wm_code_message(code, msg);
    wu_log_msg("MPI error", "%s%s", msg,
               eh == MPI_ERRORS_ABORT ? " (MPI_ERRORS_ABORT)" : " (MPI_ERRORS_ARE_FATAL)");
    int cls = wm_code_class(code);
    int status = cls > 0 && cls < 256 ? cls : 1;   /* the exit status of the job */
    if (up)
        wc_abort(status, msg);
    _exit(status);
}

int wm_error_raise(wm_comm_t *comm, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (!comm)
        comm = &wm_comm_self;   /* MPI 4: errors tied to no communicator go to MPI_COMM_SELF */
    return wm_error_dispatch(comm->errh, wm_comm_handle(comm), MPI_SESSION_NULL, code);
}

/* Errors of a session's calls go to its handler; Session_init's to the handler it was given
 * (session MPI_SESSION_NULL: a user function is then called with a null session, the one handle
 * there is). */
int wm_error_eh(MPI_Errhandler eh, MPI_Session session, int code)
{
    if (code == MPI_SUCCESS)
        return code;
    if (session == MPI_SESSION_NULL && !wm_errh_predefined(eh)) {
        MPI_Session none = MPI_SESSION_NULL;
        if (atomic_load(&wm_state.up))
            wm_errh_call_session(eh, none, code);
        return code;
    }
    return wm_error_dispatch(eh, MPI_COMM_NULL, session, code);
}

/* wc_fatal_fn (set by MPI_Init): an error the core found inside progress, such as an unexpected
 * message past WEFT_UNEXPECTED_MAX. No MPI call can return it and the operation cannot go on, so
 * whatever the error handler the job ends, with the class as its exit status, as
 * MPI_ERRORS_ARE_FATAL would. */
void wm_error_fatal_async(wu_status_t st, const char *msg)
{
    int cls = wm_status_to_class(st);
    const char *name = cls == MPI_ERR_NO_MEM ? "MPI_ERR_NO_MEM"
                       : cls == MPI_ERR_INTERN ? "MPI_ERR_INTERN"
                                               : "MPI_ERR_OTHER";
    wu_log_msg("MPI error", "%s (%s): %s (the job is aborted)", name, wm_class_string(cls), msg);
    wc_abort(cls, msg);
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

/* ---- entry points ---------------------------------------------------------------------------- */

int wm_impl_MPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "%s is NULL",
                        string ? "resultlen" : "string");
    if (wm_code_class(errorcode) < 0)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_string", "invalid error code %d", errorcode);
    wm_code_message(errorcode, string);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    int cls = wm_code_class(errorcode);
    if (cls < 0)
        return wm_error(NULL, MPI_ERR_ARG, "MPI_Error_class", "invalid error code %d", errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}

/* A new entry of the given kind; its value, or -1 when the table is full. Lock held. */
static int wm_user_err_add_locked(uint8_t kind, int cls)
{
    int n = atomic_load(&wm_user_nerrs), i = n;
    if (wm_user_nfree > 0) {
        for (i = 0; i < n && wm_user_errs[i].kind != WM_USER_FREE; i++)
            ;
        wm_user_nfree--;
    } else if (n == WM_ERR_USER_MAX) {
        return -1;
    } else if (n == wm_user_cap) {
        int cap = wm_user_cap ? 2 * wm_user_cap : 256;
        wm_user_err_t *t = realloc(wm_user_errs, (size_t)cap * sizeof(*t));
        if (!t)
            return -1;
        wm_user_errs = t;
        wm_user_cap = cap;
    }
    int v = MPI_ERR_LASTCODE + 1 + i;
    wm_user_errs[i] = (wm_user_err_t){ .kind = kind, .cls = kind == WM_USER_CLASS ? v : cls };
    if (i == n)
        atomic_store(&wm_user_nerrs, n + 1);
    if (kind == WM_USER_CLASS && v > wm_err_lastused)
        wm_err_lastused = v;   /* the standard: the largest class, added ones included */
    return v;
}

int wm_impl_MPI_Add_error_class(int *errorclass)
{
    static const char fn[] = "MPI_Add_error_class";
    if (!errorclass)
        return wm_error(NULL, MPI_ERR_ARG, fn, "errorclass is NULL");
    pthread_mutex_lock(&wm_err_lock);
    int v = wm_user_err_add_locked(WM_USER_CLASS, 0);
    pthread_mutex_unlock(&wm_err_lock);
    if (v < 0)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no room for another added class or code");
    *errorclass = v;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Add_error_code(int errorclass, int *errorcode)
{
    static const char fn[] = "MPI_Add_error_code";
    if (!errorcode)
        return wm_error(NULL, MPI_ERR_ARG, fn, "errorcode is NULL");
    pthread_mutex_lock(&wm_err_lock);
    int v = -2;
    wm_user_err_t *c = wm_user_err_locked(errorclass);
    if (wm_class_predefined(errorclass) || (c && c->kind == WM_USER_CLASS)) {
        bool added = c != NULL;
        v = wm_user_err_add_locked(WM_USER_CODE, errorclass);
        if (v >= 0 && added)
            wm_user_err_locked(errorclass)->ncodes++;   /* the table may have moved */
    }
    pthread_mutex_unlock(&wm_err_lock);
    if (v == -2)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%d is not an error class", errorclass);
    if (v < 0)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no room for another added class or code");
    *errorcode = v;
    return MPI_SUCCESS;
}

int wm_impl_MPI_Add_error_string(int errorcode, const char *string)
{
    static const char fn[] = "MPI_Add_error_string";
    if (!string)
        return wm_error(NULL, MPI_ERR_ARG, fn, "string is NULL");
    char *s = strndup(string, MPI_MAX_ERROR_STRING - 1);   /* longer strings are truncated */
    if (!s)
        return wm_error(NULL, MPI_ERR_NO_MEM, fn, "no memory for the string");
    pthread_mutex_lock(&wm_err_lock);
    wm_user_err_t *e = wm_user_err_locked(errorcode);
    if (e) {
        free(e->string);
        e->string = s;
    }
    pthread_mutex_unlock(&wm_err_lock);
    if (!e) {
        free(s);
        return wm_error(NULL, MPI_ERR_ARG, fn, "%d is not an added error class or code%s", errorcode,
                        errorcode <= MPI_ERR_LASTCODE ? " (the standard's strings are fixed)" : "");
    }
    return MPI_SUCCESS;
}

/* MPI 4.1: a class goes after its codes (its own string with it), a code after its string; each
 * must have been added. */
static int wm_user_err_remove(const char *fn, int v, uint8_t kind)
{
    const char *why = NULL;
    pthread_mutex_lock(&wm_err_lock);
    wm_user_err_t *e = wm_user_err_locked(v);
    if (!e || e->kind != kind)
        why = kind == WM_USER_CLASS ? "not an added error class" : "not an added error code";
    else if (kind == WM_USER_CLASS && e->ncodes > 0)
        why = "its error codes were not removed";
    else if (e->string)   /* MPI 4.1: strings go first (MPI_Remove_error_string), for codes and classes */
        why = "its error string was not removed";
    else {
        if (kind == WM_USER_CODE) {
            wm_user_err_t *c = wm_user_err_locked(e->cls);
            if (c)
                c->ncodes--;
        }
        e->kind = WM_USER_FREE;
        wm_user_nfree++;
    }
    pthread_mutex_unlock(&wm_err_lock);
    if (why)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%d: %s", v, why);
    return MPI_SUCCESS;
}

int wm_impl_MPI_Remove_error_class(int errorclass)
{
    return wm_user_err_remove("MPI_Remove_error_class", errorclass, WM_USER_CLASS);
}

int wm_impl_MPI_Remove_error_code(int errorcode)
{
    return wm_user_err_remove("MPI_Remove_error_code", errorcode, WM_USER_CODE);
}

int wm_impl_MPI_Remove_error_string(int errorcode)
{
    static const char fn[] = "MPI_Remove_error_string";
    pthread_mutex_lock(&wm_err_lock);
    wm_user_err_t *e = wm_user_err_locked(errorcode);
    char *s = e ? e->string : NULL;
    if (s)
        e->string = NULL;
    pthread_mutex_unlock(&wm_err_lock);
    if (!s)
        return wm_error(NULL, MPI_ERR_ARG, fn, "%d has no added error string", errorcode);
    free(s);
    return MPI_SUCCESS;
}
