#include "util/wu_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int wu_log_debug_enabled;

void wu_log_debug_set(int on)
{
    __atomic_store_n(&wu_log_debug_enabled, on, __ATOMIC_RELAXED);
}
static char wu_log_prefix[64] = "weft";

void wu_log_set_prefix(const char *prefix)
{
    snprintf(wu_log_prefix, sizeof(wu_log_prefix), "%s", prefix);
}

static void wu_log_vmsg(const char *level, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof(buf), "[%s] %s: ", wu_log_prefix, level);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(buf))
        n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
    if ((size_t)n >= sizeof(buf) - 1)
        n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    ssize_t w WU_UNUSED = write(STDERR_FILENO, buf, (size_t)n);
}

void wu_log_msg(const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wu_log_vmsg(level, fmt, ap);
    va_end(ap);
}

void wu_log_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    wu_log_vmsg("fatal", fmt, ap);
    va_end(ap);
    abort();
}
