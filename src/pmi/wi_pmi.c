/* The PMI layer's front: picks a backend (wi_pmi_int.h) from WEFT_PMI and the environment, and
 * does what every backend shares: key checks, value escaping and the splitting of long values,
 * the singleton's local table. See wi_pmi.h for the contract. */
#include "pmi/wi_pmi_int.h"
#include "util/wu_config.h"
#include "util/wu_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WI_PMI_CHUNK_MAX  999    /* parts of one long value */

wi_pmi_state_t wi_pmi = { .fd = -1 };

/* ---- the singleton: a local table of wire keys and values --------------------------------- */

typedef struct wi_pmi_kv {
    struct wi_pmi_kv *next;
    char *key, *val;
} wi_pmi_kv_t;

static wi_pmi_kv_t *wi_pmi_local;

static wi_pmi_kv_t *wi_pmi_local_find(const char *key)
{
    for (wi_pmi_kv_t *kv = wi_pmi_local; kv; kv = kv->next)
        if (!strcmp(kv->key, key))
            return kv;
    return NULL;
}

static wu_status_t wi_pmi_local_put(const char *key, const char *val)
{
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
        kv->next = wi_pmi_local;
        wi_pmi_local = kv;
    }
    free(kv->val);
    kv->val = v;
    return WU_OK;
}

static wu_status_t wi_pmi_local_get(int rank, const char *key, char *val, size_t len)
{
    wi_pmi_kv_t *kv = wi_pmi_local_find(key);
    (void)rank;
    if (!kv)
        return WU_ERR_NOT_FOUND;
    snprintf(val, len, "%s", kv->val);
    return WU_OK;
}

static wu_status_t wi_pmi_local_fence(void)
{
    return WU_OK;
}

static void wi_pmi_local_abort(int code, const char *msg)
{
    (void)code;
    (void)msg;
}

static wu_status_t wi_pmi_local_finalize(void)
{
    while (wi_pmi_local) {
        wi_pmi_kv_t *kv = wi_pmi_local;
        wi_pmi_local = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
    return WU_OK;
}

static const wi_pmi_ops_t wi_pmi_singleton_ops = {
    .name = "singleton",
    .put = wi_pmi_local_put,
    .get = wi_pmi_local_get,
    .fence = wi_pmi_local_fence,
    .abort = wi_pmi_local_abort,
    .finalize = wi_pmi_local_finalize,
};

static const wi_pmi_ops_t *wi_pmi_init_singleton(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint32_t salt = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u;
    snprintf(wi_pmi.kvsname_wire, sizeof(wi_pmi.kvsname_wire), "weft-%ld-%08x", (long)getpid(), salt);
    wi_pmi.rank = 0;
    wi_pmi.size = 1;
    wi_pmi.keylen_max = 256;
    wi_pmi.vallen_max = WI_PMI_VAL_WIRE;
    return &wi_pmi_singleton_ops;
}

/* ---- choosing the backend ----------------------------------------------------------------- */

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

/* PMI_FD with PMI_RANK and PMI_SIZE: the inherited socket into wi_pmi.fd. */
static wu_status_t wi_pmi_take_fd(int fd)
{
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
    return WU_OK;
}

/* WEFT_PMI, checked against its table entry: auto, pmix, pmi2 or pmi1 (the index in the words). */
enum { WI_PMI_AUTO, WI_PMI_PMIX, WI_PMI_PMI2, WI_PMI_PMI1 };

static wu_status_t wi_pmi_choice(int *choice_p)
{
    char why[256];
    long v;
    if (wu_config_parse(WU_CONFIG_PMI, getenv("WEFT_PMI"), &v, why, sizeof(why)) != WU_OK) {
        wu_log_error("PMI: %s", why);
        return WU_ERR_INVALID;
    }
    *choice_p = (int)v;
    return WU_OK;
}

/* Which launcher is there, and which protocol to speak with it:
 *   PMIX_NAMESPACE and PMIX_RANK   PMIx (srun --mpi=pmix, prterun), if built with libpmix
 *   PMI_FD (PMI_RANK, PMI_SIZE)    PMI-2 when PMI_JOBID is set too (Slurm's mpi/pmi2), else
 *                                  PMI-1 (our mpiexec, Hydra: both also serve PMI-2)
 *   PMI_PORT (PMI_ID)              PMI-1 (Hydra's -pmi-port)
 *   nothing                        a singleton
 * WEFT_PMI=pmix|pmi2|pmi1 forces the protocol; it is an error when the launcher does not offer it
 * (never a silent job of singletons). Without any launcher the process is a singleton. */
static const wi_pmi_ops_t *wi_pmi_select(wu_status_t *st_p)
{
    static const char *const names[] = { "auto", "pmix", "pmi2", "pmi1" };
    const char *port = getenv("PMI_PORT"), *ns = getenv("PMIX_NAMESPACE");
    const char *jobid = getenv("PMI_JOBID");
    bool pmix_env = ns && *ns && getenv("PMIX_RANK");
    int choice, fd;
    *st_p = WU_ERR_PMI;
    if (wi_pmi_choice(&choice) != WU_OK) {
        *st_p = WU_ERR_INVALID;
        return NULL;
    }
    bool have_fd = wi_pmi_env_int("PMI_FD", &fd), have_port = !have_fd && port && *port;
    bool have_wire = have_fd || have_port;

    if (!pmix_env && !have_wire)
        return wi_pmi_init_singleton();
    if (choice == WI_PMI_PMIX && !pmix_env) {
        wu_log_error("PMI: WEFT_PMI=pmix, but the launcher offers no PMIx (PMIX_NAMESPACE is "
                     "unset; it offers %s: use WEFT_PMI=auto, pmi2 or pmi1)",
                     have_fd ? "PMI_FD" : "PMI_PORT");
        return NULL;
    }
    if ((choice == WI_PMI_PMI2 || choice == WI_PMI_PMI1) && !have_wire) {
        wu_log_error("PMI: WEFT_PMI=%s, but the launcher offers only PMIx (PMI_FD and PMI_PORT are "
                     "unset: use WEFT_PMI=auto or pmix)", names[choice]);
        return NULL;
    }
    if (choice == WI_PMI_PMIX || (choice == WI_PMI_AUTO && pmix_env)) {
#ifdef WEFT_HAVE_PMIX
        return wi_pmix_init();
#else
        if (choice == WI_PMI_PMIX || !have_wire) {
            wu_log_error("PMI: %s, but this Weft was built without PMIx (no libpmix found at build "
                         "time; Debian: libpmix-dev)", choice == WI_PMI_PMIX ?
                         "WEFT_PMI=pmix" : "the launcher offers only PMIx (PMIX_NAMESPACE is set)");
            return NULL;
        }
#endif
    }
    if (have_fd ? wi_pmi_take_fd(fd) != WU_OK : wi_pmi_wire_connect(port) != WU_OK)
        return NULL;
    bool pmi2 = choice == WI_PMI_PMI2 || (choice == WI_PMI_AUTO && have_fd && jobid && *jobid);
    return pmi2 ? wi_pmi2_init(have_port) : wi_pmi1_init(have_port);
}

wu_status_t wi_pmi_init(int *rank_p, int *size_p, bool *singleton_p)
{
    if (wi_pmi.initialized) {
        wu_log_error("PMI: wi_pmi_init called twice");
        return WU_ERR_INVALID;
    }
    wu_status_t st;
    const wi_pmi_ops_t *ops = wi_pmi_select(&st);
    if (!ops) {
        if (wi_pmi.fd >= 0)
            close(wi_pmi.fd);
        wi_pmi.fd = -1;
        wi_pmi.rlen = 0;
        return st;
    }
    wi_pmi.ops = ops;
    wi_pmi_set_kvsname(wi_pmi.kvsname_wire);
    wi_pmi.initialized = true;
    wu_debug("PMI: rank %d of %d, kvs %s, %s", wi_pmi.rank, wi_pmi.size, wi_pmi.kvsname, ops->name);
    *rank_p = wi_pmi.rank;
    *size_p = wi_pmi.size;
    *singleton_p = ops == &wi_pmi_singleton_ops;
    return WU_OK;
}

const char *wi_pmi_kvsname(void)
{
    return wi_pmi.kvsname;
}

const char *wi_pmi_method(void)
{
    return wi_pmi.ops ? wi_pmi.ops->name : "none";
}

int wi_pmi_appnum(void)
{
    return wi_pmi.appnum;
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

/* Stores one wire-ready key and value through the backend. */
static wu_status_t wi_pmi_put_raw(const char *key, const char *val)
{
    if (strlen(key) >= wi_pmi.keylen_max) {
        wu_log_error("PMI: key %s is longer than the process manager allows (%zu)", key,
                     wi_pmi.keylen_max - 1);
        return WU_ERR_INVALID;
    }
    return wi_pmi.ops->put(key, val);
}

static wu_status_t wi_pmi_get_raw(int rank, const char *key, char *val, size_t len)
{
    return wi_pmi.ops->get(rank, key, val, len);
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
    st = wi_pmi_get_raw(rank, wkey, raw, sizeof(raw));
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
        st = wi_pmi_get_raw(rank, wkey, raw, sizeof(raw));
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
    wu_status_t st = wi_pmi_check_ready("wi_pmi_fence");
    return st != WU_OK ? st : wi_pmi.ops->fence();
}

/* ---- the end ------------------------------------------------------------------------------ */

void wi_pmi_abort(int code, const char *msg)
{
    if (msg && *msg)
        wu_log_error("%s", msg);
    if (wi_pmi.initialized && !wi_pmi.finalized)
        wi_pmi.ops->abort(code, msg);
    _exit(code);
}

wu_status_t wi_pmi_finalize(void)
{
    wu_status_t st = wi_pmi_check_ready("wi_pmi_finalize");
    if (st != WU_OK)
        return st;
    st = wi_pmi.ops->finalize();
    if (wi_pmi.fd >= 0)
        close(wi_pmi.fd);
    wi_pmi.fd = -1;
    wi_pmi.finalized = true;
    return st;
}
