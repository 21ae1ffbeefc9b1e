/* PMI-1 wire client. One request line, one response line ("cmd=... key=value ...\n"), over a
 * blocking socket; see wi_pmi.h for the contract, and tools/mpiexec/pmi_server.c for the server
 * side of the same protocol subset. */
#include "pmi/wi_pmi.h"
#include "util/wu_log.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define WI_PMI_LINE_MAX   8192   /* longest line we send or accept */
#define WI_PMI_VAL_WIRE   1024   /* longest value we send even if the server allows more */
#define WI_PMI_CHUNK_MAX  999    /* parts of one long value */

/* The local table of a singleton: wire keys to wire values. */
typedef struct wi_pmi_kv {
    struct wi_pmi_kv *next;
    char *key, *val;
} wi_pmi_kv_t;

static struct {
    bool initialized;
    bool finalized;
    int fd;                                  /* -1: singleton */
    int rank, size;
    size_t keylen_max, vallen_max;           /* from get_maxes, including the terminating NUL */
    char kvsname_wire[256];                  /* as the server spells it */
    char kvsname[WI_PMI_KVSNAME_MAX + 1];    /* file-name-safe copy */
    int appnum;                              /* MPMD section of this process (get_appnum), or 0 */
    char rbuf[WI_PMI_LINE_MAX];              /* received bytes not yet consumed */
    size_t rlen;
    wi_pmi_kv_t *local;                      /* singleton table */
} wi_pmi = { .fd = -1 };

/* ---- wire I/O ----------------------------------------------------------------------------- */

static wu_status_t wi_pmi_send(const char *line)
{
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t n = write(wi_pmi.fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            wu_log_error("PMI: sending '%.*s' to the process manager failed: %s",
                         (int)strcspn(line, " \n"), line, strerror(errno));
            return WU_ERR_PMI;
        }
        off += (size_t)n;
    }
    return WU_OK;
}

/* Reads one line (without its '\n') into line[len]. */
static wu_status_t wi_pmi_recv(char *line, size_t len)
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
        ssize_t n = read(wi_pmi.fd, wi_pmi.rbuf + wi_pmi.rlen, sizeof(wi_pmi.rbuf) - wi_pmi.rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            wu_log_error("PMI: reading from the process manager failed: %s",
                         n == 0 ? "connection closed" : strerror(errno));
            return WU_ERR_PMI;
        }
        wi_pmi.rlen += (size_t)n;
    }
}

/* The value of field `name` in a response line, copied into out[len]; false if absent. Fields are
 * space-separated name=value tokens; a value runs to the next space. */
static bool wi_pmi_field(const char *line, const char *name, char *out, size_t len)
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

/* Sends req (a full line) and reads the response, which must be "cmd=<expect> ...". A response
 * carrying rc other than 0 is an error unless rc_p is given, in which case rc is returned there. */
static wu_status_t wi_pmi_call(const char *req, const char *expect, char *resp, size_t len, int *rc_p)
{
    char cmd[64], rc[16];
    wu_status_t st = wi_pmi_send(req);
    if (st != WU_OK)
        return st;
    st = wi_pmi_recv(resp, len);
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

/* ---- connection --------------------------------------------------------------------------- */

static bool wi_pmi_env_int(const char *name, int *v_p)
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

/* Hydra's -pmi-port mode: connect to host:port, then "cmd=initack pmiid=<PMI_ID>" is answered by
 * cmd=initack and three "cmd=set" lines giving size, rank and debug. */
static wu_status_t wi_pmi_connect_port(const char *hostport)
{
    char host[256], line[256], val[32];
    const char *colon = strrchr(hostport, ':');
    int id;
    if (!colon || (size_t)(colon - hostport) >= sizeof(host) || !wi_pmi_env_int("PMI_ID", &id)) {
        wu_log_error("PMI: cannot use PMI_PORT=%s (want host:port, with PMI_ID set)", hostport);
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

    snprintf(line, sizeof(line), "cmd=initack pmiid=%d\n", id);
    wu_status_t st = wi_pmi_call(line, "initack", line, sizeof(line), NULL);
    wi_pmi.rank = wi_pmi.size = -1;
    for (int i = 0; st == WU_OK && i < 3; i++) {
        st = wi_pmi_recv(line, sizeof(line));
        if (st == WU_OK && wi_pmi_field(line, "size", val, sizeof(val)))
            wi_pmi.size = atoi(val);
        else if (st == WU_OK && wi_pmi_field(line, "rank", val, sizeof(val)))
            wi_pmi.rank = atoi(val);
    }
    if (st == WU_OK && (wi_pmi.rank < 0 || wi_pmi.size <= wi_pmi.rank)) {
        wu_log_error("PMI: the process manager at %s gave no valid rank and size", hostport);
        st = WU_ERR_PMI;
    }
    return st;
}

/* Copies src into the file-name-safe kvsname. */
static void wi_pmi_set_kvsname(const char *src)
{
    size_t i;
    for (i = 0; src[i] && i < WI_PMI_KVSNAME_MAX; i++) {
        char c = src[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || (c == '.' && i > 0);
        wi_pmi.kvsname[i] = ok ? c : '_';
    }
    wi_pmi.kvsname[i] = '\0';
}

static wu_status_t wi_pmi_init_singleton(void)
{
    struct timespec ts;
    char name[64];
    clock_gettime(CLOCK_REALTIME, &ts);
    uint32_t salt = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
    snprintf(name, sizeof(name), "weft-%ld-%08x", (long)getpid(), salt);
    wi_pmi_set_kvsname(name);
    wi_pmi.rank = 0;
    wi_pmi.size = 1;
    wi_pmi.keylen_max = 256;
    wi_pmi.vallen_max = WI_PMI_VAL_WIRE;
    return WU_OK;
}

static wu_status_t wi_pmi_init_wire(void)
{
    char line[WI_PMI_LINE_MAX], val[256];
    wu_status_t st;

    st = wi_pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init",
                     line, sizeof(line), NULL);
    if (st != WU_OK)
        return st;
    st = wi_pmi_call("cmd=get_maxes\n", "maxes", line, sizeof(line), NULL);
    if (st != WU_OK)
        return st;
    wi_pmi.keylen_max = 64;    /* PMI-1's usual limits, if the server does not say */
    wi_pmi.vallen_max = 256;
    if (wi_pmi_field(line, "keylen_max", val, sizeof(val)))
        wi_pmi.keylen_max = strtoul(val, NULL, 10);
    if (wi_pmi_field(line, "vallen_max", val, sizeof(val)))
        wi_pmi.vallen_max = strtoul(val, NULL, 10);
    if (wi_pmi.vallen_max > WI_PMI_VAL_WIRE)
        wi_pmi.vallen_max = WI_PMI_VAL_WIRE;
    if (wi_pmi.vallen_max < 32 || wi_pmi.keylen_max < 16) {
        wu_log_error("PMI: the process manager's limits are too small (keylen_max %zu, vallen_max %zu)",
                     wi_pmi.keylen_max, wi_pmi.vallen_max);
        return WU_ERR_PMI;
    }
    st = wi_pmi_call("cmd=get_my_kvsname\n", "my_kvsname", line, sizeof(line), NULL);
    if (st != WU_OK)
        return st;
    if (!wi_pmi_field(line, "kvsname", wi_pmi.kvsname_wire, sizeof(wi_pmi.kvsname_wire)) ||
        !wi_pmi.kvsname_wire[0]) {
        wu_log_error("PMI: get_my_kvsname answer has no kvsname: '%.200s'", line);
        return WU_ERR_PMI;
    }
    wi_pmi_set_kvsname(wi_pmi.kvsname_wire);
    /* The MPMD section; a launcher that does not answer leaves it 0 (one application). */
    int rc = 0;
    if (wi_pmi_call("cmd=get_appnum\n", "appnum", line, sizeof(line), &rc) == WU_OK && rc == 0 &&
        wi_pmi_field(line, "appnum", val, sizeof(val)))
        wi_pmi.appnum = atoi(val);
    return WU_OK;
}

int wi_pmi_appnum(void)
{
    return wi_pmi.appnum;
}

wu_status_t wi_pmi_init(int *rank_p, int *size_p, bool *singleton_p)
{
    wu_status_t st;
    const char *port = getenv("PMI_PORT");
    int fd;

    if (wi_pmi.initialized) {
        wu_log_error("PMI: wi_pmi_init called twice");
        return WU_ERR_INVALID;
    }
    if (wi_pmi_env_int("PMI_FD", &fd)) {
        if (!wi_pmi_env_int("PMI_RANK", &wi_pmi.rank) || !wi_pmi_env_int("PMI_SIZE", &wi_pmi.size) ||
            wi_pmi.rank >= wi_pmi.size) {
            wu_log_error("PMI: PMI_FD is set but PMI_RANK=%s PMI_SIZE=%s are not a valid rank and size",
                         getenv("PMI_RANK") ? getenv("PMI_RANK") : "(unset)",
                         getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "(unset)");
            return WU_ERR_PMI;
        }
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
            wu_log_error("PMI: PMI_FD=%d is not an open descriptor: %s", fd, strerror(errno));
            return WU_ERR_PMI;
        }
        wi_pmi.fd = fd;
        st = wi_pmi_init_wire();
    } else if (port && *port) {
        st = wi_pmi_connect_port(port);
        if (st == WU_OK)
            st = wi_pmi_init_wire();
    } else {
        st = wi_pmi_init_singleton();
    }
    if (st != WU_OK) {
        if (wi_pmi.fd >= 0)
            close(wi_pmi.fd);
        wi_pmi.fd = -1;
        wi_pmi.rlen = 0;
        return st;
    }
    wi_pmi.initialized = true;
    wu_debug("PMI: rank %d of %d, kvs %s%s", wi_pmi.rank, wi_pmi.size, wi_pmi.kvsname,
             wi_pmi.fd < 0 ? " (singleton)" : "");
    *rank_p = wi_pmi.rank;
    *size_p = wi_pmi.size;
    *singleton_p = wi_pmi.fd < 0;
    return WU_OK;
}

const char *wi_pmi_kvsname(void)
{
    return wi_pmi.kvsname;
}

/* ---- key-value store ---------------------------------------------------------------------- */

static wu_status_t wi_pmi_check_ready(const char *what)
{
    if (!wi_pmi.initialized || wi_pmi.finalized) {
        wu_log_error("PMI: %s called %s", what, wi_pmi.finalized ? "after finalize" : "before init");
        return WU_ERR_INVALID;
    }
    return WU_OK;
}

static wi_pmi_kv_t *wi_pmi_local_find(const char *key)
{
    for (wi_pmi_kv_t *kv = wi_pmi.local; kv; kv = kv->next)
        if (!strcmp(kv->key, key))
            return kv;
    return NULL;
}

/* Stores one wire-ready key and value: on the server, or in the singleton's table. */
static wu_status_t wi_pmi_put_raw(const char *key, const char *val)
{
    if (strlen(key) >= wi_pmi.keylen_max) {
        wu_log_error("PMI: key %s is longer than the process manager allows (%zu)", key,
                     wi_pmi.keylen_max - 1);
        return WU_ERR_INVALID;
    }
    if (wi_pmi.fd < 0) {
        wi_pmi_kv_t *kv = wi_pmi_local_find(key);
        char *v = strdup(val);
        if (!v)
            return WU_ERR_NO_MEMORY;
        if (!kv) {
            kv = calloc(1, sizeof(*kv));
            if (!kv || !(kv->key = strdup(key))) {
                free(kv);
                free(v);
                return WU_ERR_NO_MEMORY;
            }
            kv->next = wi_pmi.local;
            wi_pmi.local = kv;
        }
        free(kv->val);
        kv->val = v;
        return WU_OK;
    }
    char line[WI_PMI_LINE_MAX];
    snprintf(line, sizeof(line), "cmd=put kvsname=%s key=%s value=%s\n", wi_pmi.kvsname_wire, key, val);
    return wi_pmi_call(line, "put_result", line, sizeof(line), NULL);
}

/* Fetches one wire key into val[len]; WU_ERR_NOT_FOUND if absent. */
static wu_status_t wi_pmi_get_raw(const char *key, char *val, size_t len)
{
    if (wi_pmi.fd < 0) {
        wi_pmi_kv_t *kv = wi_pmi_local_find(key);
        if (!kv)
            return WU_ERR_NOT_FOUND;
        snprintf(val, len, "%s", kv->val);
        return WU_OK;
    }
    char line[WI_PMI_LINE_MAX];
    int rc;
    snprintf(line, sizeof(line), "cmd=get kvsname=%s key=%s\n", wi_pmi.kvsname_wire, key);
    wu_status_t st = wi_pmi_call(line, "get_result", line, sizeof(line), &rc);
    if (st != WU_OK)
        return st;
    if (rc != 0)
        return WU_ERR_NOT_FOUND;
    if (!wi_pmi_field(line, "value", val, len)) {
        wu_log_error("PMI: get of %s answered without a value: '%.200s'", key, line);
        return WU_ERR_PMI;
    }
    return WU_OK;
}

static bool wi_pmi_key_valid(const char *key)
{
    size_t n = strlen(key);
    if (n == 0 || n > WI_PMI_KEY_MAX)
        return false;
    return strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-") == n;
}

/* Bytes that travel unescaped; everything else becomes %XX. '*' is escaped, so a stored value
 * starting with '*' is the head of a split value: "*<parts>". */
static bool wi_pmi_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("-_.,:/+@()[]{}", c) != NULL;
}

static int wi_pmi_hex(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

wu_status_t wi_pmi_put(const char *key, const char *val)
{
    static const char hex[] = "0123456789ABCDEF";
    char wkey[WI_PMI_KEY_MAX + 32];
    wu_status_t st = wi_pmi_check_ready("wi_pmi_put");
    if (st != WU_OK)
        return st;
    if (!wi_pmi_key_valid(key) || !val) {
        wu_log_error("PMI: put of invalid key '%s' (1..%d chars of [A-Za-z0-9_.:-]) or NULL value",
                     key, WI_PMI_KEY_MAX);
        return WU_ERR_INVALID;
    }

    size_t vlen = strlen(val), elen = 0;
    char *enc = malloc(3 * vlen + 1);
    if (!enc)
        return WU_ERR_NO_MEMORY;
    for (size_t i = 0; i < vlen; i++) {
        unsigned char c = (unsigned char)val[i];
        if (wi_pmi_plain(c)) {
            enc[elen++] = (char)c;
        } else {
            enc[elen++] = '%';
            enc[elen++] = hex[c >> 4];
            enc[elen++] = hex[c & 15];
        }
    }
    enc[elen] = '\0';

    /* A part must not end inside a %XX escape; parts are at most vallen_max - 1 bytes. */
    size_t part_max = wi_pmi.vallen_max - 1;
    if (elen <= part_max) {
        snprintf(wkey, sizeof(wkey), "%s-%d", key, wi_pmi.rank);
        st = wi_pmi_put_raw(wkey, enc);
        free(enc);
        return st;
    }
    int parts = 0;
    for (size_t off = 0; off < elen && st == WU_OK; parts++) {
        size_t n = elen - off < part_max ? elen - off : part_max;
        if (n < elen - off && n >= 1 && enc[off + n - 1] == '%')
            n -= 1;
        else if (n < elen - off && n >= 2 && enc[off + n - 2] == '%')
            n -= 2;
        if (parts == WI_PMI_CHUNK_MAX) {
            wu_log_error("PMI: value of key '%s' is too long (%zu bytes)", key, vlen);
            st = WU_ERR_INVALID;
            break;
        }
        char save = enc[off + n];
        enc[off + n] = '\0';
        snprintf(wkey, sizeof(wkey), "%s-%d.%d", key, wi_pmi.rank, parts);
        st = wi_pmi_put_raw(wkey, enc + off);
        enc[off + n] = save;
        off += n;
    }
    free(enc);
    if (st != WU_OK)
        return st;
    char head[16];
    snprintf(head, sizeof(head), "*%d", parts);
    snprintf(wkey, sizeof(wkey), "%s-%d", key, wi_pmi.rank);
    return wi_pmi_put_raw(wkey, head);
}

/* Decodes src onto the end of val (holding *used bytes, capacity len). */
static wu_status_t wi_pmi_decode(const char *key, int rank, const char *src, char *val, size_t len,
                                 size_t *used)
{
    for (const char *p = src; *p; p++) {
        int c = (unsigned char)*p;
        if (c == '%') {
            int hi = wi_pmi_hex(p[1]), lo = hi < 0 ? -1 : wi_pmi_hex(p[2]);
            if (lo < 0) {
                wu_log_error("PMI: value of key '%s' of rank %d is malformed", key, rank);
                return WU_ERR_PMI;
            }
            c = hi * 16 + lo;
            p += 2;
        }
        if (*used + 1 >= len) {
            wu_log_error("PMI: value of key '%s' of rank %d does not fit in %zu bytes", key, rank, len);
            return WU_ERR_TRUNCATE;
        }
        val[(*used)++] = (char)c;
    }
    val[*used] = '\0';
    return WU_OK;
}

wu_status_t wi_pmi_get(int rank, const char *key, char *val, size_t len)
{
    char wkey[WI_PMI_KEY_MAX + 32], raw[WI_PMI_VAL_WIRE + 1];
    size_t used = 0;
    wu_status_t st = wi_pmi_check_ready("wi_pmi_get");
    if (st != WU_OK)
        return st;
    if (!wi_pmi_key_valid(key) || rank < 0 || rank >= wi_pmi.size || !val || len == 0) {
        wu_log_error("PMI: get of key '%s' of rank %d: invalid argument", key, rank);
        return WU_ERR_INVALID;
    }
    snprintf(wkey, sizeof(wkey), "%s-%d", key, rank);
    st = wi_pmi_get_raw(wkey, raw, sizeof(raw));
    if (st != WU_OK)
        return st;
    if (raw[0] != '*') {
        char *tmp = malloc(len);   /* outputs are set only on success */
        if (!tmp)
            return WU_ERR_NO_MEMORY;
        st = wi_pmi_decode(key, rank, raw, tmp, len, &used);
        if (st == WU_OK)
            memcpy(val, tmp, used + 1);
        free(tmp);
        return st;
    }

    int parts = atoi(raw + 1);
    if (parts <= 0 || parts > WI_PMI_CHUNK_MAX) {
        wu_log_error("PMI: key '%s' of rank %d has a malformed head '%s'", key, rank, raw);
        return WU_ERR_PMI;
    }
    char *tmp = malloc(len);
    if (!tmp)
        return WU_ERR_NO_MEMORY;
    tmp[0] = '\0';
    for (int i = 0; i < parts && st == WU_OK; i++) {
        snprintf(wkey, sizeof(wkey), "%s-%d.%d", key, rank, i);
        st = wi_pmi_get_raw(wkey, raw, sizeof(raw));
        if (st == WU_ERR_NOT_FOUND) {
            wu_log_error("PMI: part %d of %d of key '%s' of rank %d is missing", i, parts, key, rank);
            st = WU_ERR_PMI;
        }
        if (st == WU_OK)
            st = wi_pmi_decode(key, rank, raw, tmp, len, &used);
    }
    if (st == WU_OK)
        memcpy(val, tmp, used + 1);
    free(tmp);
    return st;
}

wu_status_t wi_pmi_fence(void)
{
    char line[256];
    wu_status_t st = wi_pmi_check_ready("wi_pmi_fence");
    if (st != WU_OK || wi_pmi.fd < 0)
        return st;
    /* PMI-1 puts are stored by the server as they arrive, so the barrier is the whole fence. */
    return wi_pmi_call("cmd=barrier_in\n", "barrier_out", line, sizeof(line), NULL);
}

/* ---- the end ------------------------------------------------------------------------------ */

void wi_pmi_abort(int code, const char *msg)
{
    if (msg && *msg)
        wu_log_error("%s", msg);
    if (wi_pmi.initialized && !wi_pmi.finalized && wi_pmi.fd >= 0) {
        char line[64];
        snprintf(line, sizeof(line), "cmd=abort exitcode=%d\n", code);
        (void)wi_pmi_send(line);   /* no answer comes: the launcher ends the job */
    }
    _exit(code);
}

wu_status_t wi_pmi_finalize(void)
{
    char line[256];
    wu_status_t st = wi_pmi_check_ready("wi_pmi_finalize");
    if (st != WU_OK)
        return st;
    if (wi_pmi.fd >= 0) {
        st = wi_pmi_call("cmd=finalize\n", "finalize_ack", line, sizeof(line), NULL);
        close(wi_pmi.fd);
        wi_pmi.fd = -1;
    }
    while (wi_pmi.local) {
        wi_pmi_kv_t *kv = wi_pmi.local;
        wi_pmi.local = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
    wi_pmi.finalized = true;
    return st;
}
