/* Blocking I/O on the launcher's socket, shared by the PMI-1 and PMI-2 backends (wi_pmi_int.h). */
#include "pmi/wi_pmi_int.h"
#include "util/wu_log.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

wu_status_t wi_pmi_wire_send(const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(wi_pmi.fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            wu_log_error("PMI: sending '%.*s' to the process manager failed: %s",
                         (int)strcspn(buf, " ;\n"), buf, strerror(errno));
            return WU_ERR_PMI;
        }
        off += (size_t)n;
    }
    return WU_OK;
}

/* Reads more bytes into rbuf; false (logged) at EOF or error. */
static bool wi_pmi_wire_fill(void)
{
    for (;;) {
        ssize_t n = read(wi_pmi.fd, wi_pmi.rbuf + wi_pmi.rlen, sizeof(wi_pmi.rbuf) - wi_pmi.rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            wu_log_error("PMI: reading from the process manager failed: %s",
                         n == 0 ? "connection closed" : strerror(errno));
            return false;
        }
        wi_pmi.rlen += (size_t)n;
        return true;
    }
}

wu_status_t wi_pmi_wire_recv_line(char *line, size_t len)
{
    for (;;) {
        char *nl = memchr(wi_pmi.rbuf, '\n', wi_pmi.rlen);
        if (nl) {
            size_t n = (size_t)(nl - wi_pmi.rbuf);
            if (n >= len) {
                wu_log_error("PMI: response line of %zu bytes is longer than %zu", n, len - 1);
                return WU_ERR_PMI;
            }
            memcpy(line, wi_pmi.rbuf, n);
            line[n] = '\0';
            wi_pmi.rlen -= n + 1;
            memmove(wi_pmi.rbuf, nl + 1, wi_pmi.rlen);
            return WU_OK;
        }
        if (wi_pmi.rlen == sizeof(wi_pmi.rbuf)) {
            wu_log_error("PMI: response line longer than %zu bytes", sizeof(wi_pmi.rbuf));
            return WU_ERR_PMI;
        }
        if (!wi_pmi_wire_fill())
            return WU_ERR_PMI;
    }
}

wu_status_t wi_pmi_wire_recv_exact(char *buf, size_t len)
{
    while (len > 0) {
        if (wi_pmi.rlen == 0 && !wi_pmi_wire_fill())
            return WU_ERR_PMI;
        size_t n = wi_pmi.rlen < len ? wi_pmi.rlen : len;
        memcpy(buf, wi_pmi.rbuf, n);
        wi_pmi.rlen -= n;
        memmove(wi_pmi.rbuf, wi_pmi.rbuf + n, wi_pmi.rlen);
        buf += n;
        len -= n;
    }
    return WU_OK;
}

bool wi_pmi_field(const char *line, const char *name, char *out, size_t len)
{
    size_t nlen = strlen(name);
    const char *p = line;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *end = p + strcspn(p, " ");
        if ((size_t)(end - p) > nlen && !strncmp(p, name, nlen) && p[nlen] == '=') {
            size_t vlen = (size_t)(end - p) - nlen - 1;
            if (vlen >= len)
                vlen = len - 1;
            memcpy(out, p + nlen + 1, vlen);
            out[vlen] = '\0';
            return true;
        }
        p = end;
    }
    return false;
}

wu_status_t wi_pmi_call(const char *req, const char *expect, char *resp, size_t len, int *rc_p)
{
    char cmd[64], rc[16];
    wu_status_t st = wi_pmi_wire_send(req, strlen(req));
    if (st != WU_OK)
        return st;
    st = wi_pmi_wire_recv_line(resp, len);
    if (st != WU_OK)
        return st;
    if (!wi_pmi_field(resp, "cmd", cmd, sizeof(cmd)) || strcmp(cmd, expect)) {
        wu_log_error("PMI: expected cmd=%s in answer to '%.*s', got '%.200s'", expect,
                     (int)strcspn(req, " \n"), req, resp);
        return WU_ERR_PMI;
    }
    int code = wi_pmi_field(resp, "rc", rc, sizeof(rc)) ? atoi(rc) : 0;
    if (rc_p) {
        *rc_p = code;
    } else if (code != 0) {
        wu_log_error("PMI: '%.*s' failed: %.200s", (int)strcspn(req, " \n"), req, resp);
        return WU_ERR_PMI;
    }
    return WU_OK;
}

bool wi_pmi_env_int(const char *name, int *v_p)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return false;
    long v = strtol(s, &end, 10);
    if (*end || v < 0 || v > INT32_MAX)
        return false;
    *v_p = (int)v;
    return true;
}

wu_status_t wi_pmi_wire_connect(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host)) {
        wu_log_error("PMI: cannot use PMI_PORT=%s (want host:port)", hostport);
        return WU_ERR_PMI;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';

    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
    int rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0) {
        wu_log_error("PMI: cannot resolve PMI_PORT=%s: %s", hostport, gai_strerror(rc));
        return WU_ERR_PMI;
    }
    for (a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            wi_pmi.fd = fd;
            break;
        }
        close(fd);
    }
    freeaddrinfo(ai);
    if (wi_pmi.fd < 0) {
        wu_log_error("PMI: cannot connect to the process manager at PMI_PORT=%s", hostport);
        return WU_ERR_PMI;
    }
    return WU_OK;
}
