#include "util/wu_config.h"
#include "util/wu_log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const wu_config_desc_t wu_config_table[WU_CONFIG_COUNT] = {
#define WU_X(name, type, def, min, max, words, scope, desc)                                        \
    [WU_CONFIG_##name] = { #name, WU_CONFIG_##type, def, min, max, words, WU_CONFIG_##scope, desc },
    WU_CONFIG_VARS(WU_X)
#undef WU_X
};

static long wu_config_values[WU_CONFIG_COUNT];
static int wu_config_ready;
static wu_status_t wu_config_result;

/* 65536 -> "64k": sizes as the user would write them, when exact. */
static void wu_config_size_fmt(long v, char *buf, size_t len)
{
    static const char suffix[] = "kmgt";
    int k = -1;
    while (v != 0 && v % 1024 == 0 && k < 3) {
        v /= 1024;
        k++;
    }
    if (k < 0)
        snprintf(buf, len, "%ld", v);
    else
        snprintf(buf, len, "%ld%c", v, suffix[k]);
}

/* Word number i of "a|b|c" into buf; false past the last. */
static bool wu_config_word(const char *words, int i, char *buf, size_t len)
{
    const char *w = words;
    for (; i > 0; i--) {
        w = strchr(w, '|');
        if (!w)
            return false;
        w++;
    }
    size_t n = strcspn(w, "|");
    snprintf(buf, len, "%.*s", (int)n, w);
    return true;
}

const char *wu_config_range_str(wu_config_id_t id, char *buf, size_t len)
{
    const wu_config_desc_t *d = &wu_config_table[id];
    char lo[32], hi[32], w[64];
    switch (d->type) {
    case WU_CONFIG_BOOL:
        snprintf(buf, len, "0 or 1 (also no/yes, false/true, off/on)");
        break;
    case WU_CONFIG_INT:
        snprintf(buf, len, "%ld to %ld", d->min, d->max);
        break;
    case WU_CONFIG_SIZE:
        wu_config_size_fmt(d->min, lo, sizeof(lo));
        wu_config_size_fmt(d->max, hi, sizeof(hi));
        snprintf(buf, len, "%s to %s bytes (k, m, g, t: KiB, MiB, GiB, TiB)", lo, hi);
        break;
    case WU_CONFIG_STR:
        if (!d->words) {
            snprintf(buf, len, "any text");
            break;
        }
        buf[0] = '\0';
        for (int i = 0; wu_config_word(d->words, i, w, sizeof(w)); i++) {
            bool last = !wu_config_word(d->words, i + 1, lo, sizeof(lo));
            size_t n = strlen(buf);
            snprintf(buf + n, len - n, "%s%s", i == 0 ? "" : last ? " or " : ", ", w);
        }
        break;
    }
    return buf;
}

/* Strict decimal: [-]digits, then for SIZE one of k/m/g/t; no spaces, no other base. */
static wu_status_t wu_config_parse_num(const wu_config_desc_t *d, const char *s, long *v_p,
                                       const char **why_p)
{
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (!isdigit((unsigned char)*p)) {
        *why_p = "not a number";
        return WU_ERR_INVALID;
    }
    unsigned long long v = 0;
    bool overflow = false;
    for (; isdigit((unsigned char)*p); p++) {
        if (__builtin_mul_overflow(v, 10ull, &v) ||
            __builtin_add_overflow(v, (unsigned long long)(*p - '0'), &v))
            overflow = true;
    }
    if (d->type == WU_CONFIG_SIZE && *p) {
        const char *units = "kmgt";
        const char *u = strchr(units, tolower((unsigned char)*p));
        if (u) {
            unsigned shift = 10u * (unsigned)(u - units + 1);
            if (v > (~0ull >> shift))
                overflow = true;
            v <<= shift;
            p++;
        }
    }
    if (*p) {
        *why_p = d->type == WU_CONFIG_SIZE ? "not a size" : "not a number";
        return WU_ERR_INVALID;
    }
    if (overflow || v > (unsigned long long)WU_CONFIG_TIB * 1024 * 1024) {
        *why_p = "too large";
        return WU_ERR_INVALID;
    }
    long x = neg ? -(long)v : (long)v;
    if (x < d->min || x > d->max) {
        *why_p = "out of range";
        return WU_ERR_INVALID;
    }
    *v_p = x;
    return WU_OK;
}

wu_status_t wu_config_parse(wu_config_id_t id, const char *s, long *value_p, char *why, size_t len)
{
    const wu_config_desc_t *d = &wu_config_table[id];
    const char *reason = NULL;
    long v = 0;
    wu_status_t st = WU_OK;
    if (!s || !*s)
        s = d->def;
    switch (d->type) {
    case WU_CONFIG_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "true") ||
            !strcasecmp(s, "on"))
            v = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "false") ||
                 !strcasecmp(s, "off"))
            v = 0;
        else
            st = WU_ERR_INVALID, reason = "not a boolean";
        break;
    case WU_CONFIG_INT:
    case WU_CONFIG_SIZE:
        st = wu_config_parse_num(d, s, &v, &reason);
        break;
    case WU_CONFIG_STR:
        if (d->words) {
            char w[64];
            int i = 0;
            while (wu_config_word(d->words, i, w, sizeof(w)) && strcmp(w, s))
                i++;
            if (!wu_config_word(d->words, i, w, sizeof(w)))
                st = WU_ERR_INVALID, reason = "not one of the accepted words";
            v = i;
        }
        break;
    }
    if (st != WU_OK) {
        char range[160];
        snprintf(why, len, "WEFT_%s=%.64s%s: %s; accepted: %s", d->name, s,
                 strlen(s) > 64 ? "..." : "", reason, wu_config_range_str(id, range, sizeof(range)));
        return st;
    }
    *value_p = v;
    return WU_OK;
}

wu_status_t wu_config_check_values(const long values[WU_CONFIG_COUNT], char *why, size_t len)
{
    /* the largest packet of shm and self is the larger of the two: both 0, nothing fits */
    if (values[WU_CONFIG_SHM_EAGER_MAX] == 0 && values[WU_CONFIG_SHM_FRAG_SIZE] == 0) {
        snprintf(why, len, "WEFT_SHM_EAGER_MAX and WEFT_SHM_FRAG_SIZE are both 0: shared memory "
                           "could send no message of 1 byte or more; set either above 0");
        return WU_ERR_INVALID;
    }
    /* ofi: WEFT_OFI_FRAG_SIZE's minimum (1024) already keeps every packet buffer useful */
    return WU_OK;
}

static const char *wu_config_env(wu_config_id_t id)
{
    char name[96];
    snprintf(name, sizeof(name), "WEFT_%s", wu_config_table[id].name);
    const char *s = getenv(name);
    return s && *s ? s : NULL;
}

const char *wu_config_str(wu_config_id_t id)
{
    const char *s = wu_config_env(id);
    return s ? s : wu_config_table[id].def;
}

bool wu_config_is_set(wu_config_id_t id)
{
    return wu_config_env(id) != NULL;
}

wu_status_t wu_config_init(void)
{
    if (wu_config_ready)
        return wu_config_result;
    wu_status_t result = WU_OK;
    char why[512];
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        const wu_config_desc_t *d = &wu_config_table[i];
        long v = 0;
        (void)wu_config_parse((wu_config_id_t)i, d->def, &v, why, sizeof(why));
        wu_config_values[i] = v;
        if (d->scope == WU_CONFIG_LAUNCH)
            continue;   /* mpiexec's: it checks them, the ranks never read them */
        if (wu_config_parse((wu_config_id_t)i, wu_config_str((wu_config_id_t)i), &v, why,
                            sizeof(why)) == WU_OK) {
            wu_config_values[i] = v;
        } else {
            wu_log_error("%s", why);
            result = WU_ERR_INVALID;
        }
    }
    if (result == WU_OK && wu_config_check_values(wu_config_values, why, sizeof(why)) != WU_OK) {
        wu_log_error("%s", why);
        result = WU_ERR_INVALID;
    }
    wu_log_debug_set((int)wu_config_values[WU_CONFIG_DEBUG]);
    wu_config_result = result;
    wu_config_ready = 1;
    return result;
}

long wu_config_int(wu_config_id_t id)
{
    if (!wu_config_ready)
        (void)wu_config_init();
    return __atomic_load_n(&wu_config_values[id], __ATOMIC_RELAXED);
}

wu_status_t wu_config_set(wu_config_id_t id, long value, char *why, size_t len)
{
    const wu_config_desc_t *d = &wu_config_table[id];
    char range[160];
    if (d->scope != WU_CONFIG_RUN) {
        snprintf(why, len, "WEFT_%s is read once at start-up: it cannot change at run time",
                 d->name);
        return WU_ERR_UNSUPPORTED;
    }
    bool ok;
    switch (d->type) {
    case WU_CONFIG_BOOL:
        ok = value == 0 || value == 1;
        break;
    case WU_CONFIG_STR: {
        char w[64];
        ok = d->words && value >= 0 && wu_config_word(d->words, (int)value, w, sizeof(w));
        break;
    }
    default:
        ok = value >= d->min && value <= d->max;
        break;
    }
    if (!ok) {
        snprintf(why, len, "WEFT_%s=%ld: out of range; accepted: %s", d->name, value,
                 wu_config_range_str(id, range, sizeof(range)));
        return WU_ERR_INVALID;
    }
    if (!wu_config_ready)
        (void)wu_config_init();
    __atomic_store_n(&wu_config_values[id], value, __ATOMIC_RELAXED);
    return WU_OK;
}

const wu_config_desc_t *wu_config_desc(wu_config_id_t id)
{
    return &wu_config_table[id];
}

bool wu_config_word_at(wu_config_id_t id, int i, char *buf, size_t len)
{
    const char *words = wu_config_table[id].words;
    return words && i >= 0 && wu_config_word(words, i, buf, len);
}

/* ---- settings that must agree across ranks ---- */

#define WU_CONFIG_JOB_TAG "cfg1"

void wu_config_job_encode(char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, WU_CONFIG_JOB_TAG);
    for (int i = 0; i < WU_CONFIG_COUNT && n < len; i++)
        if (wu_config_table[i].scope == WU_CONFIG_JOB)
            n += (size_t)snprintf(buf + n, len - n, ":%ld", wu_config_int((wu_config_id_t)i));
}

/* The value of variable id as the user writes it. */
static void wu_config_value_fmt(wu_config_id_t id, long v, char *buf, size_t len)
{
    const wu_config_desc_t *d = &wu_config_table[id];
    if (d->type == WU_CONFIG_STR && d->words && wu_config_word(d->words, (int)v, buf, len))
        return;
    snprintf(buf, len, "%ld", v);
}

wu_status_t wu_config_job_diff(const char *mine, const char *theirs, wu_config_id_t *id_p,
                               char *mine_val, char *theirs_val, size_t len)
{
    size_t tag = strlen(WU_CONFIG_JOB_TAG);
    if (strncmp(mine, WU_CONFIG_JOB_TAG, tag) || strncmp(theirs, WU_CONFIG_JOB_TAG, tag))
        return WU_ERR_INVALID;
    const char *a = mine + tag, *b = theirs + tag;
    for (int i = 0; i < WU_CONFIG_COUNT; i++) {
        if (wu_config_table[i].scope != WU_CONFIG_JOB)
            continue;
        char *ea, *eb;
        if (*a != ':' || *b != ':')
            return WU_ERR_INVALID;
        long va = strtol(a + 1, &ea, 10), vb = strtol(b + 1, &eb, 10);
        if (ea == a + 1 || eb == b + 1)
            return WU_ERR_INVALID;
        if (va != vb) {
            wu_config_value_fmt((wu_config_id_t)i, va, mine_val, len);
            wu_config_value_fmt((wu_config_id_t)i, vb, theirs_val, len);
            *id_p = (wu_config_id_t)i;
            return WU_OK;
        }
        a = ea;
        b = eb;
    }
    return *a || *b ? WU_ERR_INVALID : WU_ERR_NOT_FOUND;
}
