/* Logging. Thread-safe (one write(2) per message). The function that first decides an error logs it
 * with wu_log_error and returns a status; callers pass the status up without logging again.
 * WEFT_DEBUG=1 turns on wu_debug output. */
#ifndef WU_LOG_H
#define WU_LOG_H

#include "util/wu_compiler.h"

extern int wu_log_debug_enabled;   /* __atomic: WEFT_DEBUG may change at run time (MPI_T) */
void wu_log_debug_set(int on);

void wu_log_set_prefix(const char *prefix);
void wu_log_msg(const char *level, const char *fmt, ...) WU_PRINTF(2, 3);
void wu_log_fatal(const char *fmt, ...) WU_PRINTF(1, 2) __attribute__((noreturn));

#define wu_log_error(...) wu_log_msg("error", __VA_ARGS__)
#define wu_log_warn(...)  wu_log_msg("warning", __VA_ARGS__)
#define wu_debug(...) \
    do { if (WU_UNLIKELY(__atomic_load_n(&wu_log_debug_enabled, __ATOMIC_RELAXED)))        \
            wu_log_msg("debug", __VA_ARGS__); } while (0)

#endif
