/* The one internal status type. Codes and their strings are written once, side by side, in
 * WU_STATUS_LIST; the MPI layer alone maps them to MPI error classes. */
#ifndef WU_STATUS_H
#define WU_STATUS_H

#define WU_STATUS_LIST(X)                                             \
    X(WU_OK,            "success")                                    \
    X(WU_INPROGRESS,    "operation in progress")                      \
    X(WU_ERR_AGAIN,     "resource temporarily unavailable, retry")    \
    X(WU_ERR_NO_MEMORY, "out of memory")                              \
    X(WU_ERR_INVALID,   "invalid argument")                           \
    X(WU_ERR_TRUNCATE,  "message truncated")                          \
    X(WU_ERR_IO,        "system call failed")                         \
    X(WU_ERR_PMI,       "process manager interface error")            \
    X(WU_ERR_UNSUPPORTED, "operation not supported")                  \
    X(WU_ERR_NOT_FOUND, "not found")                                  \
    X(WU_ERR_TIMEOUT,   "timed out")                                  \
    X(WU_ERR_CANCELLED, "cancelled")                                  \
    X(WU_ERR_INTERNAL,  "internal error")

typedef enum {
#define WU_X(code, str) code,
    WU_STATUS_LIST(WU_X)
#undef WU_X
    WU_STATUS_LAST
} wu_status_t;

const char *wu_status_str(wu_status_t status);

#endif
